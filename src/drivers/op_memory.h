// attnlite — op memory owned by a session (internal): one block from Ops::alloc, and a copy
// of a model's weights in op memory for op sets that cannot read host memory (CUDA). Int8
// weights are copied dequantized there (the device kernels are fp32).
#pragma once
#include <cstring>
#include <vector>

#include "attnlite/ops/ops.h"
#include "attnlite/weights.h"

namespace attnlite::drivers {

// Whether this build has an op set outside host memory (chosen at build time). Without one,
// drivers never copy weights, and the copying code is not compiled in (WASM, CPU builds).
#if ATTNLITE_HAVE_CUDA
constexpr bool kDeviceOpSets = true;
#else
constexpr bool kDeviceOpSets = false;
#endif

// One block of op memory, released with the owner.
class OpBlock {
 public:
  OpBlock() = default;
  OpBlock(const ops::Ops& op, size_t bytes) : op_(&op), p_(op.alloc(bytes)), n_(bytes) {}
  ~OpBlock() { if (p_) op_->release(p_); }
  OpBlock(OpBlock&& o) noexcept : op_(o.op_), p_(o.p_), n_(o.n_) { o.p_ = nullptr; }
  OpBlock& operator=(OpBlock&& o) noexcept {
    std::swap(op_, o.op_);
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  void* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  const ops::Ops* op_ = nullptr;
  void* p_ = nullptr;
  size_t n_ = 0;
};

// Collects the fp32 tensors a weight struct points at, then moves them to op memory in one
// block and repoints the struct: add every tensor, then upload().
class WeightMirror {
 public:
  void add(const float*& p, size_t n) {
    if (p) jobs_.push_back({&p, p, n});
  }
  void add(Linear& l) {
    if (l.int8()) {
      owned_.push_back(dequantize(l));
      l.w = owned_.back().data();
      l.q = nullptr;
      l.scale = nullptr;
    }
    add(l.w, (size_t)l.out * l.in);
    add(l.b, (size_t)l.out);
  }
  void add(Embedding& e) {
    if (e.int8()) {
      owned_.push_back(dequantize(e));
      e.w = owned_.back().data();
      e.q = nullptr;
      e.scale = nullptr;
    }
    add(e.w, (size_t)e.rows * e.dim);
  }
  // Copies everything into one block of op memory, pointing every added field at its copy.
  OpBlock upload(const ops::Ops& op) {
    size_t total = 0;
    for (const Job& j : jobs_) total += round(j.n);
    OpBlock block(op, total);
    char* at = static_cast<char*>(block.data());
    for (const Job& j : jobs_) {
      op.upload(at, j.src, j.n * sizeof(float));
      *j.field = reinterpret_cast<const float*>(at);
      at += round(j.n);
    }
    op.sync();
    jobs_.clear();
    owned_.clear();
    return block;
  }

 private:
  struct Job {
    const float** field;
    const float* src;
    size_t n;
  };
  static size_t round(size_t n) { return (n * sizeof(float) + 255) / 256 * 256; }
  std::vector<Job> jobs_;
  std::vector<std::vector<float>> owned_;
};

}  // namespace attnlite::drivers
