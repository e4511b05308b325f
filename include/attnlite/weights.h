// attnlite — weights by their d2l state_dict() names, copied once into one aligned block.
// Every lookup states the shape the config implies; a mismatch, a missing name, a non-F32
// dtype, or a NaN/Inf is an error that names the tensor. `unused()` lists the names nobody
// asked for, so a loader can reject unexpected tensors.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/safetensors.h"

namespace attnlite {

class WeightStore {
 public:
  WeightStore() = default;
  explicit WeightStore(const SafeTensors& st);

  const float* get(const std::string& name, std::initializer_list<int64_t> shape);
  const float* get(const std::string& name, const std::vector<int64_t>& shape);
  bool has(const std::string& name) const { return index_.count(name) != 0; }
  std::vector<std::string> unused() const;
  size_t bytes() const { return block_.size(); }
  // Forget the source file once every weight is bound (the copies stay).
  void release_source() { st_ = nullptr; }

 private:
  struct Entry { const TensorInfo* info; size_t offset; bool used; };
  const SafeTensors* st_ = nullptr;
  AlignedBuffer block_;
  std::map<std::string, Entry> index_;
};

// y (M, out) = x (M, in) · Wᵀ + b, the nn.Linear layout.
struct Linear {
  const float* w = nullptr;  // (out, in)
  const float* b = nullptr;  // (out) or nullptr
  int out = 0, in = 0;
};
Linear bind_linear(WeightStore& ws, const std::string& prefix, int in, int out, bool bias);
void linear(float* y, const Linear& l, const float* x, int M);

}  // namespace attnlite
