#include "attnlite/arena.h"

#include <new>

namespace attnlite {

AlignedBuffer::AlignedBuffer(size_t bytes) : n_(bytes) {
  p_ = ::operator new(bytes ? bytes : 1, std::align_val_t(Arena::kAlign));
}

AlignedBuffer::~AlignedBuffer() {
  if (p_) ::operator delete(p_, std::align_val_t(Arena::kAlign));
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) ::operator delete(p_, std::align_val_t(Arena::kAlign));
    p_ = o.p_; n_ = o.n_;
    o.p_ = nullptr; o.n_ = 0;
  }
  return *this;
}

}  // namespace attnlite
