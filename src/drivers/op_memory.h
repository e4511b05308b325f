// attnlite — op memory owned by a session (internal): one block from Ops::alloc, and a copy
// of a model's weights in op memory for op sets that cannot read host memory (CUDA).
#pragma once
#include <cstring>
#include <map>
#include <string>
#include <utility>
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

// A model's weights in op memory, for op sets that cannot read host memory (CUDA): every
// tensor the model's store bound, copied into one block (int8 matrices dequantized with their
// "<name>_scale" rows: the device kernels are fp32), plus host arrays a driver computed
// (positional tables, the zeros of bias-free norms). store() hands the copies out by name, so
// a family binds its weights for the device with the same code that bound them from the file:
// the list of a family's weights is written once.
class DeviceWeights {
 public:
  DeviceWeights() = default;
  DeviceWeights(const WeightStore& host, const ops::Ops& op,
                const std::vector<std::pair<const float*, size_t>>& extra = {}) {
    std::map<std::string, const WeightStore::Tensor*> by_name;
    for (const auto& t : host.bound_tensors()) by_name[t.name] = &t;
    struct Copy {
      WeightStore::Tensor t;
      std::vector<float> values;  // int8 dequantized; else empty (t.data is fp32)
    };
    std::vector<Copy> copies;
    for (const auto& t : host.bound_tensors()) {
      const size_t suffix = sizeof("_scale") - 1;
      if (t.name.size() > suffix && t.name.compare(t.name.size() - suffix, suffix, "_scale") == 0) {
        auto q = by_name.find(t.name.substr(0, t.name.size() - suffix));
        if (q != by_name.end() && q->second->dtype == DType::I8) continue;  // folded into it
      }
      Copy c{t, {}};
      if (t.dtype == DType::I8) {  // rows = the first dimension (a conv's output channels)
        const int rows = (int)t.shape[0];
        c.values = dequantize(static_cast<const int8_t*>(t.data),
                              static_cast<const float*>(by_name.at(t.name + "_scale")->data),
                              rows, rows ? (int)(numel(t) / (size_t)rows) : 0);
        c.t.dtype = DType::F32;
        c.t.data = c.values.data();
      }
      copies.push_back(std::move(c));
    }
    size_t total = 0;
    for (const Copy& c : copies) total += round(numel(c.t));
    for (const auto& e : extra) total += round(e.second);
    block_ = OpBlock(op, total);
    char* at = static_cast<char*>(block_.data());
    std::vector<WeightStore::Tensor> placed;
    for (Copy& c : copies) {
      op.upload(at, c.t.data, numel(c.t) * sizeof(float));
      c.t.data = at;
      placed.push_back(std::move(c.t));
      at += round(numel(placed.back()));
    }
    for (const auto& e : extra) {
      op.upload(at, e.first, e.second * sizeof(float));
      extra_.push_back(reinterpret_cast<const float*>(at));
      at += round(e.second);
    }
    op.sync();
    store_ = WeightStore::placed(placed);
  }
  // The copies by name, to bind against.
  WeightStore& store() { return store_; }
  // The copy of extra array i.
  const float* extra(size_t i) const { return extra_[i]; }
  bool empty() const { return !block_.data(); }

 private:
  static size_t numel(const WeightStore::Tensor& t) {
    size_t n = 1;
    for (int64_t d : t.shape) n *= (size_t)d;
    return n;
  }
  static size_t round(size_t n) { return (n * sizeof(float) + 255) / 256 * 256; }
  OpBlock block_;
  WeightStore store_;
  std::vector<const float*> extra_;
};

}  // namespace attnlite::drivers
