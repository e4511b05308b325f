// attnlite — one aligned block, carved into buffers. Sizing and carving run the same code:
// an Arena without memory (base == nullptr) only counts, so required sizes are computed
// from the very sequence of requests that later hands out the pointers. Sessions also run
// their forward passes once on a counting arena with the dry-run op set (ops::counting())
// to measure their scratch.
#pragma once
#include <cstddef>
#include <cstdint>

#include "attnlite/error.h"

namespace attnlite {

class Arena {
 public:
  static constexpr size_t kAlign = 64;
  // Beyond a quarter of the address space, sizes could wrap (32-bit WASM included).
  static constexpr size_t kMaxBytes = SIZE_MAX / 4;

  Arena() = default;                                   // counting arena
  Arena(void* base, size_t capacity) : base_(static_cast<uint8_t*>(base)), cap_(capacity) {}

  bool counting() const { return base_ == nullptr; }
  size_t used() const { return off_; }
  size_t peak() const { return peak_; }
  size_t capacity() const { return cap_; }

  template <class T>
  T* take(size_t n) {
    if (n > kMaxBytes / sizeof(T) || off_ > kMaxBytes)
      throw Error("workspace request of " + std::to_string(n) + " elements overflows the " +
                  "size limit (the session limits are too large)");
    size_t bytes = round_up(n * sizeof(T));
    if (!counting() && off_ + bytes > cap_)
      throw Error("workspace exhausted: need " + std::to_string(off_ + bytes) + " bytes, have " +
                  std::to_string(cap_) + " (the request exceeds the session limits)");
    // A counting arena hands out placeholder addresses (never dereferenced, never null), so
    // code that offsets them during a sizing pass stays well-defined for the sanitizers.
    T* p = counting() ? reinterpret_cast<T*>(kAlign + off_) : reinterpret_cast<T*>(base_ + off_);
    off_ += bytes;
    if (off_ > peak_) peak_ = off_;
    return p;
  }
  float* floats(size_t n) { return take<float>(n); }

  size_t mark() const { return off_; }
  void reset(size_t m) { off_ = m; }

  static size_t round_up(size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }
  // Throws unless one block of `bytes` can be carved (bytes <= kMaxBytes): a session's buffers
  // measured on several counting arenas, before the block that holds them all is allocated.
  static void check_block(size_t bytes);

 private:
  uint8_t* base_ = nullptr;
  size_t cap_ = 0, off_ = 0, peak_ = 0;
};

// Restores the arena to its mark on scope exit: scratch for one call.
class ArenaScope {
 public:
  explicit ArenaScope(Arena& a) : a_(a), m_(a.mark()) {}
  ~ArenaScope() { a_.reset(m_); }
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  Arena& a_;
  size_t m_;
};

// An owned, aligned block of bytes.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  ~AlignedBuffer();
  // A block aligned to 2 MiB that the kernel is asked to back with huge pages where it can
  // (Linux, transparent huge pages in "madvise" or "always" mode): weights streamed from
  // memory at every step then cost one TLB entry per 2 MiB instead of per 4 KiB.
  static AlignedBuffer huge(size_t bytes);
  static constexpr size_t kHugeAlign = size_t(2) << 20;
  AlignedBuffer(AlignedBuffer&& o) noexcept : p_(o.p_), n_(o.n_), align_(o.align_) {
    o.p_ = nullptr;
    o.n_ = 0;
  }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  void* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  void* p_ = nullptr;
  size_t n_ = 0;
  size_t align_ = Arena::kAlign;
};

}  // namespace attnlite
