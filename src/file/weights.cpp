#include "attnlite/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnlite/error.h"
#include "attnlite/ops/ops.h"

namespace attnlite {

namespace {
std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}
}  // namespace

WeightStore::WeightStore(const SafeTensors& st) : st_(&st) {
  size_t total = 0;
  for (const auto& t : st.tensors()) {
    // int8 tensors stay int8 (get_i8) and lie anywhere; F32 tensors are read in place when
    // aligned for float; everything else is copied as fp32 (get).
    const bool in_place =
        t.dtype == DType::I8 ||
        (t.dtype == DType::F32 && reinterpret_cast<uintptr_t>(st.data(t)) % alignof(float) == 0);
    index_[t.name] = Entry{&t, in_place ? 0 : total, false, in_place};
    if (!in_place) total += Arena::round_up(t.numel * sizeof(float));
  }
  block_ = AlignedBuffer(total);
}

WeightStore WeightStore::placed(const std::vector<Tensor>& tensors, float* expand) {
  WeightStore s;
  for (const Tensor& t : tensors) s.placed_[t.name] = t;
  s.expand_ = expand;
  return s;
}

const WeightStore::Tensor& WeightStore::placed_checked(const std::string& name,
                                                       const std::vector<int64_t>& shape,
                                                       DType dtype) const {
  auto it = placed_.find(name);
  if (it == placed_.end()) throw Error("missing tensor '" + name + "'");
  if (it->second.shape != shape)
    throw Error("tensor '" + name + "' has shape " + shape_str(it->second.shape) + ", expected " +
                shape_str(shape));
  if (it->second.dtype != dtype)
    throw Error("tensor '" + name + "' has dtype " + dtype_name(it->second.dtype) + ", expected " +
                dtype_name(dtype));
  return it->second;
}

float* WeightStore::derived(size_t n) {
  const size_t bytes = n * sizeof(float);
  derived_bytes_ += bytes;
  if (bytes < (size_t(1) << 20)) {
    derived_.emplace_back(bytes);
    return static_cast<float*>(derived_.back().data());
  }
  // Blocks of at least 32 MiB, whole huge pages; the last one's tail is left unused.
  const size_t need = Arena::round_up(bytes);
  if (need > huge_left_) {
    const size_t block = std::max<size_t>(size_t(32) << 20, need + AlignedBuffer::kHugeAlign - 1) /
                         AlignedBuffer::kHugeAlign * AlignedBuffer::kHugeAlign;
    derived_.push_back(AlignedBuffer::huge(block));
    huge_next_ = static_cast<uint8_t*>(derived_.back().data());
    huge_left_ = block;
  }
  float* p = reinterpret_cast<float*>(huge_next_);
  huge_next_ += need;
  huge_left_ -= need;
  return p;
}

void WeightStore::release_source() {
  for (const auto& [name, e] : index_)
    if (e.used && e.in_place && e.info->numel) {
      image_ = st_->storage();
      break;
    }
  st_ = nullptr;
  for (auto& [name, e] : index_) e.info = nullptr;  // they pointed into the source
}

void WeightStore::bind(Entry& e) {
  if (e.used) return;
  e.used = true;
  bound_ += (size_t)e.info->numel * (e.info->dtype == DType::I8 ? 1 : sizeof(float));
}

const float* WeightStore::get(const std::string& name, std::initializer_list<int64_t> shape) {
  return get(name, std::vector<int64_t>(shape));
}

template <class Index>
auto& WeightStore::entry(Index& index, const std::string& name) {
  auto it = index.find(name);
  if (it == index.end()) throw Error("missing tensor '" + name + "'");
  return it->second;
}

WeightStore::Entry& WeightStore::checked(const std::string& name,
                                         const std::vector<int64_t>& shape, DType dtype) {
  Entry& e = entry(index_, name);
  const TensorInfo& t = *e.info;
  if (t.shape != shape)
    throw Error("tensor '" + name + "' has shape " + shape_str(t.shape) + ", expected " +
                shape_str(shape) + " from the config");
  if (t.dtype != dtype)
    throw Error("tensor '" + name + "' has dtype " + dtype_name(t.dtype) + ", expected " +
                dtype_name(dtype));
  return e;
}

const float* WeightStore::get(const std::string& name, const std::vector<int64_t>& shape) {
  return get_f32(name, shape, false);
}

const float* WeightStore::get_linear(const std::string& name, const std::vector<int64_t>& shape) {
  return get_f32(name, shape, true);
}

const float* WeightStore::get_f32(const std::string& name, const std::vector<int64_t>& shape,
                                  bool linear) {
  if (!readable()) return static_cast<const float*>(placed_checked(name, shape, DType::F32).data);
  Entry& e = checked(name, shape, DType::F32);
  // read by anything but a linear layer: not linear_only, whichever came first
  if (e.used && !linear) bound_list_[(size_t)e.bound].linear_only = false;
  const TensorInfo& t = *e.info;
  float* copy = e.in_place ? nullptr
                           : reinterpret_cast<float*>(static_cast<uint8_t*>(block_.data()) + e.offset);
  const float* w = copy ? copy : reinterpret_cast<const float*>(st_->data(t));
  if (!e.used) {
    if (copy) st_->copy_f32(t, copy);
    for (int64_t i = 0; i < t.numel; ++i)
      if (!std::isfinite(w[i]))
        throw Error("tensor '" + name + "' contains " + (std::isnan(w[i]) ? "NaN" : "Inf") +
                    " at index " + std::to_string(i));
    bind(e);
    e.bound = (long)bound_list_.size();
    bound_list_.push_back({name, shape, DType::F32, w, linear});
  }
  return w;
}

const uint16_t* WeightStore::get_bf16(const std::string& name, const std::vector<int64_t>& shape) {
  if (readable())
    throw Error("tensor '" + name + "': bfloat16 weights are read only from a device's copy");
  return static_cast<const uint16_t*>(placed_checked(name, shape, DType::BF16).data);
}

const int8_t* WeightStore::get_i8(const std::string& name, const std::vector<int64_t>& shape) {
  if (!readable()) return static_cast<const int8_t*>(placed_checked(name, shape, DType::I8).data);
  Entry& e = checked(name, shape, DType::I8);  // always in place
  const int8_t* q = reinterpret_cast<const int8_t*>(st_->data(*e.info));
  if (!e.used) bound_list_.push_back({name, shape, DType::I8, q});
  bind(e);
  return q;
}

DType WeightStore::dtype(const std::string& name) const {
  if (!readable()) {
    auto it = placed_.find(name);
    if (it == placed_.end()) throw Error("missing tensor '" + name + "'");
    return it->second.dtype;
  }
  return entry(index_, name).info->dtype;
}

std::vector<std::string> WeightStore::unused() const {
  std::vector<std::string> r;
  for (const auto& [n, e] : index_)
    if (!e.used) r.push_back(n);
  return r;
}

Linear bind_linear(WeightStore& ws, const std::string& prefix, int in, int out, bool bias) {
  return bind_linear_named(ws, prefix + ".weight", bias ? prefix + ".bias" : "", in, out);
}

Linear bind_linear_named(WeightStore& ws, const std::string& weight, const std::string& bias,
                         int in, int out) {
  if (ws.dtype(weight) != DType::I8) {
    Linear l = bind_linear_plain(ws, weight, bias, in, out);
    if (l.w) pack_linear(ws, l);
    return l;
  }
  Linear l;
  l.in = in;
  l.out = out;
  l.q = ws.get_i8(weight, {out, in});
  l.scale = ws.get(weight + "_scale", {out});
  l.expand = ws.expansion();
  l.b = bias.empty() ? nullptr : ws.get(bias, {out});
  return l;
}

Linear bind_linear_plain(WeightStore& ws, const std::string& weight, const std::string& bias,
                         int in, int out) {
  Linear l;
  l.in = in;
  l.out = out;
  if (!ws.readable() && ws.dtype(weight) == DType::BF16) {  // a device's bfloat16 copy
    l.h = ws.get_bf16(weight, {out, in});
    l.expand = ws.expansion();
  } else {
    l.w = ws.get_linear(weight, {out, in});
  }
  l.b = bias.empty() ? nullptr : ws.get(bias, {out});
  return l;
}

void bind_linear_stack(WeightStore& ws, const std::string& prefix, const char* const* names, int n,
                       Linear* ls, int in, int out, bool bias) {
#if !defined(ATTNLITE_PACKED_WEIGHTS) || ATTNLITE_PACKED_WEIGHTS
  const size_t floats = ops::cpu().linear_packed_floats(out, in);
  bool stack = ws.readable() && n > 1 && floats > 0 && out % kLinearPanel == 0;
  for (int i = 0; stack && i < n; ++i) stack = ws.dtype(prefix + names[i] + ".weight") == DType::F32;
  if (stack) {
    float* wp = ws.derived(floats * (size_t)n);
    float* b = bias ? ws.derived((size_t)out * n) : nullptr;
    for (int i = 0; i < n; ++i) {
      Linear& l = ls[i];
      const std::string p = prefix + names[i];
      l = Linear{ws.get_linear(p + ".weight", {out, in}), nullptr, out, in};
      pack_linear(ws, l, wp);
      wp += floats;  // whole panels: the layout is the matrix's size
      if (b) {
        const float* bi = ws.get(p + ".bias", {out});
        std::copy(bi, bi + out, b);
        l.b = b;
        b += out;
      }
    }
    return;
  }
#endif
  // the small core packs nothing (ATTNLITE_PACKED_WEIGHTS=0): one by one
  for (int i = 0; i < n; ++i) ls[i] = bind_linear(ws, prefix + names[i], in, out, bias);
}

void pack_linear(WeightStore& ws, Linear& l, float* wp) {
  const size_t n = ws.readable() ? ops::cpu().linear_packed_floats(l.out, l.in) : 0;
  if (!n) return;
  if (!wp) wp = ws.derived(n);
  ops::cpu().linear_pack(wp, l);
  l.wp = wp;
  ws.spare(l.w, (size_t)l.out * l.in);
}

Linear linear_rows(const Linear& l, int first, int n) {
  Linear r = l;
  r.out = n;
  if (l.w) r.w = l.w + (long)first * l.in;
  // a view of whole panels keeps the packed layout
  r.wp = l.wp && first % kLinearPanel == 0 ? l.wp + (long)first * l.in : nullptr;
  if (l.q) r.q = l.q + (long)first * l.in;
  if (l.h) r.h = l.h + (long)first * l.in;
  if (l.scale) r.scale = l.scale + first;
  if (l.b) r.b = l.b + first;
  return r;
}

Embedding bind_embedding(WeightStore& ws, const std::string& name, int rows, int dim) {
  Embedding e;
  e.rows = rows;
  e.dim = dim;
  if (ws.dtype(name) == DType::I8) {
    e.q = ws.get_i8(name, {rows, dim});
    e.scale = ws.get(name + "_scale", {rows});
  } else {
    e.w = ws.get(name, {rows, dim});
  }
  return e;
}

void embedding_rows(float* out, const Embedding& t, const int* ids, int n, float mult) {
  for (int i = 0; i < n; ++i) {
    float* o = out + (long)i * t.dim;
    if (t.q) {
      const int8_t* row = t.q + (long)ids[i] * t.dim;
      const float s = t.scale[ids[i]];
      for (int d = 0; d < t.dim; ++d) o[d] = (s * (float)row[d]) * mult;
    } else {
      const float* row = t.w + (long)ids[i] * t.dim;
      for (int d = 0; d < t.dim; ++d) o[d] = row[d] * mult;
    }
  }
}

std::vector<float> dequantize(const int8_t* q, const float* scale, int rows, int cols) {
  std::vector<float> w((size_t)rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) w[(size_t)r * cols + c] = scale[r] * (float)q[(size_t)r * cols + c];
  return w;
}

}  // namespace attnlite
