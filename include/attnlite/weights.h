// attnlite — weights by their d2l state_dict() names, used in place in the file image where
// they can be (int8 tensors, and F32 tensors at 4-byte aligned offsets: a mapped file or the
// caller's buffer is then the weights, nothing is copied), copied once into one aligned block
// otherwise (integer tensors read as float, misaligned F32). Every lookup states the shape the config implies; a mismatch, a missing name, a wrong
// dtype, or a NaN/Inf is an error that names the tensor. `unused()` lists the names nobody
// asked for, so a loader can reject unexpected tensors.
//
// Int8 weights: a matrix "<name>.weight" (rows, cols) may be stored as I8 together with
// "<name>.weight_scale" F32 (rows): symmetric per-row (= per output channel) quantization,
// weight[r][c] = weight_scale[r] * q[r][c] (tools/quantize.py). Linear layers and embedding
// tables accept either form; every other tensor is F32.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/ops/operands.h"
#include "attnlite/safetensors.h"

namespace attnlite {

class WeightStore {
 public:
  // A tensor as a store hands it out: its name, shape, dtype and where its values lie.
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    DType dtype;
    const void* data;
    // Read only as a linear layer's matrix (get_linear), never by get(): a device may hold it
    // in bfloat16 (drivers::DeviceWeights). A tied embedding table is read both ways.
    bool linear_only = false;
  };

  WeightStore() = default;
  explicit WeightStore(const SafeTensors& st);
  // A store of fp32, int8 and bfloat16 tensors that lie where the host may not read them (a
  // device's copy of a model's weights, drivers/op_memory.h): lookups check the name, shape
  // and dtype and hand out the pointers; nothing is read, and binding derives no layout from
  // the values (readable()). `expand`: op memory for any one of its int8 or bfloat16 matrices
  // in fp32, which the linear layers bound from it carry (Linear::expand), or nullptr.
  static WeightStore placed(const std::vector<Tensor>& tensors, float* expand = nullptr);
  bool readable() const { return placed_.empty(); }
  // A placed store's room to expand an int8 matrix (above); nullptr for a file's store.
  float* expansion() const { return expand_; }

  const float* get(const std::string& name, std::initializer_list<int64_t> shape);
  const float* get(const std::string& name, const std::vector<int64_t>& shape);
  // get() for a linear layer's matrix: the same checks and pointer, and the tensor stays
  // Tensor::linear_only unless get() reads it too.
  const float* get_linear(const std::string& name, const std::vector<int64_t>& shape);
  const int8_t* get_i8(const std::string& name, const std::vector<int64_t>& shape);
  // A placed store's bfloat16 matrix (bf16_bits, ops/operands.h); throws for a file's store.
  const uint16_t* get_bf16(const std::string& name, const std::vector<int64_t>& shape);
  // The stored dtype of a tensor (throws when it is missing); while the source is bound.
  DType dtype(const std::string& name) const;
  bool has(const std::string& name) const {
    return readable() ? index_.count(name) != 0 : placed_.count(name) != 0;
  }
  // Every tensor bound so far, in binding order (kept after release_source()).
  const std::vector<Tensor>& bound_tensors() const { return bound_list_; }
  std::vector<std::string> unused() const;
  // Bytes of the weights bound so far (in place or copied), of the copies alone, and of the
  // layouts derived from them (below).
  size_t bytes() const { return bound_; }
  size_t copied_bytes() const { return block_.size(); }
  size_t derived_bytes() const { return derived_bytes_; }
  // n floats owned by the store for a layout derived from the weights at load (a kernel's
  // packing), Arena::kAlign-aligned; counted in derived_bytes(). Layouts of 1 MiB and more
  // share blocks of huge pages (AlignedBuffer::huge), the others get their own block.
  float* derived(size_t n);
  // n floats of a weight that a derived layout now stands for: where they lie in a mapped
  // file, its pages leave resident memory (SafeTensors::release_pages), so that packing a
  // layer does not keep two copies of it in memory.
  void spare(const float* w, size_t n) const {
    if (st_) st_->release_pages(w, n * sizeof(float));
  }
  // Forget the source file's index once every weight is bound: the copies stay, and so does
  // the file image when a weight is used in place.
  void release_source();

 private:
  // in_place: the tensor is read where it lies in the file image (offset unused).
  // bound: its place in bound_list_ once bound, else -1.
  struct Entry { const TensorInfo* info; size_t offset; bool used; bool in_place; long bound = -1; };
  // The entry of `name` in index (const or not); throws when missing.
  template <class Index>
  static auto& entry(Index& index, const std::string& name);
  // The entry of `name` after checking its shape and dtype; throws naming the mismatch.
  Entry& checked(const std::string& name, const std::vector<int64_t>& shape, DType dtype);
  void bind(Entry& e);  // marks e used and counts its bytes
  const float* get_f32(const std::string& name, const std::vector<int64_t>& shape, bool linear);
  // A placed store's tensor `name` after checking its shape and dtype; throws naming the
  // mismatch.
  const Tensor& placed_checked(const std::string& name, const std::vector<int64_t>& shape,
                               DType dtype) const;
  const SafeTensors* st_ = nullptr;
  size_t bound_ = 0;
  std::shared_ptr<const void> image_;  // the file image, while a weight lies in it
  AlignedBuffer block_;
  std::vector<AlignedBuffer> derived_;
  size_t derived_bytes_ = 0;
  uint8_t* huge_next_ = nullptr;  // the free part of the last huge block
  size_t huge_left_ = 0;
  std::map<std::string, Entry> index_;
  std::vector<Tensor> bound_list_;
  std::map<std::string, Tensor> placed_;  // a placed store's tensors
  float* expand_ = nullptr;
};

// Linear and Embedding (ops/operands.h) from the store, by their state_dict() names.
Linear bind_linear(WeightStore& ws, const std::string& prefix, int in, int out, bool bias);
// The same by full tensor names (PyTorch's packed "in_proj_weight"); bias "" = none. An int8
// weight's scale is the weight's name + "_scale".
Linear bind_linear_named(WeightStore& ws, const std::string& weight, const std::string& bias,
                         int in, int out);
// bind_linear_named for a layer that takes neither int8 weights nor a packed layout (a
// recurrent layer's matrices, which the CPU's fused step lays out its own way): the matrix
// fp32, or from a device's copy bfloat16 (Linear::h).
Linear bind_linear_plain(WeightStore& ws, const std::string& weight, const std::string& bias,
                         int in, int out);
// n layers of the same shape that read the same input (attention's W_q, W_k, W_v), by their
// state_dict() prefixes prefix + names[i], into ls[0, n): as bind_linear each, but where the
// CPU packs them all (fp32, a readable store, outputs in whole panels), their packed panels
// and their biases are laid end to end in one derived block each, so Ops::linear_n runs them
// as one product.
void bind_linear_stack(WeightStore& ws, const std::string& prefix, const char* const* names, int n,
                       Linear* ls, int in, int out, bool bias);
// The CPU kernels' layout of the fp32 layer l (l.w), made once at load where the host can read
// the store and the kernels have a layout: into wp (linear_packed_floats(l.out, l.in) floats)
// or, when wp is null, a block of ws.derived(); l.wp points at it and the weight's own pages
// are spared. Where nothing is packed, l stays as it is.
void pack_linear(WeightStore& ws, Linear& l, float* wp = nullptr);
// Output features [first, first + n) of l: a view of its rows (the Q, K and V blocks of a
// packed in_proj).
Linear linear_rows(const Linear& l, int first, int n);

Embedding bind_embedding(WeightStore& ws, const std::string& name, int rows, int dim);
// out (n, dim) = table[ids[i]] * mult.
void embedding_rows(float* out, const Embedding& table, const int* ids, int n, float mult = 1.f);

// The fp32 values of an int8 matrix q (rows, cols) with per-row scales (for op sets without
// int8 kernels): scale[r] * q[r][c].
std::vector<float> dequantize(const int8_t* q, const float* scale, int rows, int cols);

}  // namespace attnlite
