// attnlite — op memory owned by a session (internal): one block from Ops::alloc, and a copy
// of a model's weights in op memory for op sets that cannot read host memory (CUDA).
#pragma once
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnlite/error.h"
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

// A model's weights in op memory, for op sets that cannot read host memory (CUDA): every
// tensor the model's store bound, copied as stored (int8 matrices stay int8, beside their
// "<name>_scale" rows), or, where the op set holds weights in bfloat16 (Ops::bf16_weights),
// each fp32 matrix that only linear layers read rounded to bfloat16 (bf16_bits; embedding
// tables, norms, biases and tied tables stay fp32), plus host arrays a driver computed
// (positional tables, the zeros of bias-free norms), plus room for the largest int8 or
// bfloat16 matrix in fp32, or for a slice of it of Linear::kExpandFloats (Linear::expand: a
// device's GEMM of many rows expands the layer there first), all in one block. store() hands
// the copies out by name, so a family binds its weights for the device with the same code
// that bound them from the file: the list of a family's weights is written once.
class DeviceWeights {
 public:
  DeviceWeights() = default;
  DeviceWeights(const WeightStore& host, const ops::Ops& op,
                const std::vector<std::pair<const float*, size_t>>& extra = {}) {
    const auto& tensors = host.bound_tensors();
    const bool bf16 = op.bf16_weights();
    auto halved = [&](const WeightStore::Tensor& t) {
      return bf16 && t.dtype == DType::F32 && t.linear_only && t.shape.size() == 2;
    };
    size_t total = 0, expand = 0;
    for (const auto& t : tensors) {
      const DType dt = halved(t) ? DType::BF16 : t.dtype;
      total += round(numel(t) * dtype_size(dt));
      if (dt != DType::F32 && !t.shape.empty() && t.shape[0] > 0) {
        const long rows = t.shape[0], cols = (long)(numel(t) / (size_t)rows);
        expand = std::max(expand, (size_t)(Linear::expand_rows(rows, cols) * cols));
      }
    }
    for (const auto& e : extra) total += round(e.second * sizeof(float));
    total += expand * sizeof(float);
    block_ = OpBlock(op, total);
    char* at = static_cast<char*>(block_.data());
    std::vector<WeightStore::Tensor> placed;
    std::vector<uint16_t> bits;
    for (const auto& t : tensors) {
      placed.push_back(t);
      placed.back().data = at;
      if (halved(t)) {
        const float* w = static_cast<const float*>(t.data);
        bits.resize(numel(t));
        for (size_t i = 0; i < bits.size(); ++i)
          if (!bf16_finite(bits[i] = bf16_bits(w[i])))
            throw Error("tensor '" + t.name + "' holds " + std::to_string(w[i]) +
                        " at index " + std::to_string(i) +
                        ", past bfloat16's range: load it at fp32 precision");
        op.upload(at, bits.data(), bits.size() * sizeof(uint16_t));
        placed.back().dtype = DType::BF16;
        at += round(bits.size() * sizeof(uint16_t));
        continue;
      }
      op.upload(at, t.data, size_of(t));
      at += round(size_of(t));
    }
    for (const auto& e : extra) {
      op.upload(at, e.first, e.second * sizeof(float));
      extra_.push_back(reinterpret_cast<const float*>(at));
      at += round(e.second * sizeof(float));
    }
    op.sync();
    store_ = WeightStore::placed(placed, expand ? reinterpret_cast<float*>(at) : nullptr);
  }
  // The copies by name, to bind against.
  WeightStore& store() { return store_; }
  // The copy of extra array i.
  const float* extra(size_t i) const { return extra_[i]; }
  bool empty() const { return !block_.data(); }
  // Bytes of op memory the copy holds (the block).
  size_t bytes() const { return block_.size(); }

 private:
  static size_t numel(const WeightStore::Tensor& t) {
    size_t n = 1;
    for (int64_t d : t.shape) n *= (size_t)d;
    return n;
  }
  static size_t size_of(const WeightStore::Tensor& t) { return numel(t) * dtype_size(t.dtype); }
  static size_t round(size_t bytes) { return (bytes + 255) / 256 * 256; }
  OpBlock block_;
  WeightStore store_;
  std::vector<const float*> extra_;
};

}  // namespace attnlite::drivers
