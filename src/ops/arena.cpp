#include "attnlite/arena.h"

#include <new>
#include <string>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

namespace attnlite {

void Arena::check_block(size_t bytes) {
  if (bytes > kMaxBytes)
    throw Error("the workspace these limits need (" + std::to_string(bytes) +
                " bytes) is more than one block can hold here (" + std::to_string(kMaxBytes) +
                " bytes); lower the session's limits");
}

AlignedBuffer::AlignedBuffer(size_t bytes) : n_(bytes) {
  p_ = ::operator new(bytes ? bytes : 1, std::align_val_t(Arena::kAlign));
}

AlignedBuffer AlignedBuffer::huge(size_t bytes) {
  AlignedBuffer b;
  b.n_ = bytes;
  b.align_ = kHugeAlign;
  b.p_ = ::operator new(bytes ? bytes : 1, std::align_val_t(kHugeAlign));
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  ::madvise(b.p_, bytes, MADV_HUGEPAGE);  // advice: refused (no THP) changes nothing
#endif
  return b;
}

AlignedBuffer::~AlignedBuffer() {
  if (p_) ::operator delete(p_, std::align_val_t(align_));
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) ::operator delete(p_, std::align_val_t(align_));
    p_ = o.p_; n_ = o.n_; align_ = o.align_;
    o.p_ = nullptr; o.n_ = 0;
  }
  return *this;
}

}  // namespace attnlite
