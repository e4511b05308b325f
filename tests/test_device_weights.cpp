// A family's weights on a device are bound again, by the family's own binding code, against a
// copy of every tensor the model's store bound (drivers::DeviceWeights): the list of weights
// is written once. Checked here without a GPU on every shipped family: the copies hold the
// file's values (int8 matrices as int8, beside their scales), the placed store hands them out
// by name, shape and dtype, and the drivers, run on an op set that is the CPU's but says its memory is not the
// host's (so that they upload and bind their weights as on a GPU), give the same logits as on
// the CPU. The drivers copy their weights only in a build with a device op set
// (-DATTNLITE_CUDA=ON; no GPU needed): the cuda stage of tools/test.sh runs that case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <memory>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "drivers/op_memory.h"
#include "families/bahdanau/bahdanau.h"
#include "families/lm/lm.h"
#include "families/transformer/transformer.h"
#include "families/vit/vit.h"
#include "fixture.h"
#include "model/model_impl.h"
#include "st_writer.h"

using namespace attnlite;

namespace {

// The CPU's ops in memory the host "cannot read": every op runs on the CPU, memory comes from
// alloc() and moves by upload() / download(), as a device op set's does.
// bf16: the set holds linear layers' matrices in bfloat16 (Ops::bf16_weights), as
// ops::cuda(true) does; its ops widen them to fp32 (bf16_value) and run the CPU's.
class RemoteCpu final : public ops::Ops {
 public:
  explicit RemoteCpu(bool bf16 = false) : bf16_(bf16) {}
  const char* name() const override { return bf16_ ? "remote-cpu-bf16" : "remote-cpu"; }
  bool host_memory() const override { return false; }
  bool bf16_weights() const override { return bf16_; }
  void linear(float* y, const float* x, const Linear& w, int M, ops::Act act) const override {
    std::vector<float> wide;
    c().linear(y, x, widened(w, &wide), M, act);
  }
  void add_layer_norm(float* out, const float* x, const float* y, const float* g, const float* b,
                      int R, int n, float eps, Arena& s) const override {
    c().add_layer_norm(out, x, y, g, b, R, n, eps, s);
  }
  void add(float* y, const float* a, const float* b, long n) const override { c().add(y, a, b, n); }
  void patches(float* out, const float* im, int B, int C, int H, int W, int p, float sc) const override {
    c().patches(out, im, B, C, H, W, p, sc);
  }
  void embed(float* x, int ldx, const Embedding& t, const int* ids, int R, float sc) const override {
    c().embed(x, ldx, t, ids, R, sc);
  }
  void add_positions(float* x, const float* P, int B, int Tn, int H, const int* pos) const override {
    c().add_positions(x, P, B, Tn, H, pos);
  }
  void attend(float* ctx, const ops::AttnOut& a, const float* q, const float* k, const float* v,
              int kv, int B, int Tq, int Tk, int H, int NH, const ops::ValidLens& vl,
              Arena& s) const override {
    c().attend(ctx, a, q, k, v, kv, B, Tq, Tk, H, NH, vl, s);
  }
  void additive_attend(float* ctx, int ldc, float* attn, const float* qp, const float* kp,
                       const float* v, const Linear& w_v, int B, int Tk, int Hh, int Dv,
                       const ops::ValidLens& vl, Arena& s) const override {
    std::vector<float> wide;
    c().additive_attend(ctx, ldc, attn, qp, kp, v, widened(w_v, &wide), B, Tk, Hh, Dv, vl, s);
  }
  void rnn_cell(float* h, float* cc, float* gi, float* gh, ops::Cell cell, int B, int Hh) const override {
    c().rnn_cell(h, cc, gi, gh, cell, B, Hh);
  }
  void gru_step(float* h, const float* x, float* gi, const Linear& ih, const Linear& hh,
                const float* packed, int B, Arena& s) const override {
    if (ih.bf16() || hh.bf16()) return Ops::gru_step(h, x, gi, ih, hh, packed, B, s);  // through linear()
    c().gru_step(h, x, gi, ih, hh, packed, B, s);
  }
  void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V,
                   Arena& s) const override {
    c().argmax_rows(ids, probs, logp, logits, R, V, s);
  }
  void top_rows(int* ids, float* vals, float* mx, double* sum, const float* logits, long ld, int R,
                int V, int n, Arena& s) const override {
    c().top_rows(ids, vals, mx, sum, logits, ld, R, V, n, s);
  }
  void permute_blocks(float* rows, long stride, long len, const int* from, int nb, int K,
                      float* tmp) const override {
    c().permute_blocks(rows, stride, len, from, nb, K, tmp);
  }
  void keep_rows(float* rows, long stride, long len, const int* keep, int n) const override {
    c().keep_rows(rows, stride, len, keep, n);
  }
  void copy(void* d, const void* s, size_t n) const override { c().copy(d, s, n); }
  void copy_2d(void* d, size_t dp, const void* s, size_t sp, size_t n, int rows) const override {
    c().copy_2d(d, dp, s, sp, n, rows);
  }
  void zero(void* d, size_t n) const override { c().zero(d, n); }
  void upload(void* d, const void* h, size_t n) const override { if (n) std::memcpy(d, h, n); }
  void download(void* h, const void* s, size_t n) const override { if (n) std::memcpy(h, s, n); }
  void* alloc(size_t n) const override { return c().alloc(n); }
  void release(void* p) const override { c().release(p); }

 private:
  static const ops::Ops& c() { return ops::cpu(); }
  // w itself, or for a bfloat16 matrix the fp32 layer of its widened values (in *wide).
  static Linear widened(const Linear& w, std::vector<float>* wide) {
    if (!w.bf16()) return w;
    wide->resize((size_t)w.out * w.in);
    for (size_t i = 0; i < wide->size(); ++i) (*wide)[i] = bf16_value(w.h[i]);
    Linear f = w;
    f.h = nullptr;
    f.expand = nullptr;
    f.w = wide->data();
    return f;
  }
  const bool bf16_;
};

const families::FamilyModel& family_of(const Model& m) { return *m.impl().model; }

// A shipped model, or a test fixture (the int8 models; vit_lab224: the lab's ViT shape, its
// patch convolution int8 (D, C, p, p); lm_*: fp32 language models).
std::string path_of(const std::string& name) {
  return name.find("int8") != std::string::npos || name.rfind("vit_", 0) == 0 || name.rfind("lm_", 0) == 0
             ? test::fixture_path(name)
             : test::model_path(name);
}
std::shared_ptr<const Model> load(const std::string& name) { return Model::load(path_of(name)); }

// make() with the scalar kernel table active: a model loaded then reads its weights as stored
// (no packed layout), as a device's op set does.
template <class Make>
std::shared_ptr<const Model> with_scalar_kernels(Make&& make) {
  const auto table = ops::kernel_table();
  ops::use_kernels(ops::KernelTable::Scalar);
  std::shared_ptr<const Model> m;
  try {
    m = make();
  } catch (...) {
    ops::use_kernels(table);
    throw;
  }
  ops::use_kernels(table);
  return m;
}

// The scales (rows) of int8 matrix `name` in a store.
const float* scale_of(const WeightStore& ws, const std::string& name) {
  for (const auto& t : ws.bound_tensors())
    if (t.name == name + "_scale") return static_cast<const float*>(t.data);
  throw Error("no scales for " + name);
}

// Logits of a few decoder steps of a translator on op set `op` (greedy: row 0's argmax).
std::vector<float> seq2seq_logits(const Model& m, const ops::Ops& op) {
  const drivers::Limits lim{1, 1, m.num_steps(), 4};
  auto d = family_of(m).seq2seq_driver(op, lim);
  test::DriverBlocks b([&](Arena& h, Arena& mem) { d->carve(h, mem); }, size_t(64) << 20);
  const ops::Ctx cx{op, b.scratch_arena};
  std::vector<int> src((size_t)lim.S, m.src_vocab().pad_id);
  const std::vector<std::string> words{"i", "'m", "home", "."};
  for (int i = 0; i < 4 && i < lim.S; ++i) src[(size_t)i] = m.src_vocab().lookup(words[(size_t)i]);
  if (lim.S > 4) src[4] = m.src_vocab().eos_id;
  const int valid = std::min(5, lim.S);
  d->encode(src.data(), &valid, 1, 1, true, cx);
  const int V = m.tgt_vocab().size();
  std::vector<float> out;
  int token = m.tgt_vocab().bos_id;
  for (int t = 0; t < lim.T; ++t) {
    const float* z = d->step(&token, 1, t, t, true, cx);
    std::vector<float> row((size_t)V);
    op.download(row.data(), z, sizeof(float) * (size_t)V);
    token = (int)(std::max_element(row.begin(), row.end()) - row.begin());
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<float> lm_logits(const Model& m, const ops::Ops& op) {
  auto d = family_of(m).text_driver(op);
  test::DriverBlocks b([&](Arena&, Arena& mem) { d->carve(mem); }, size_t(64) << 20);
  const ops::Ctx cx{op, b.scratch_arena};
  const std::vector<int> prompt{m.tgt_vocab().bos_id, 5, 6, 7};
  const float* z = d->forward(prompt.data(), (int)prompt.size(), 0, true, true, cx);
  std::vector<float> out(prompt.size() * (size_t)d->vocab());
  op.download(out.data(), z, sizeof(float) * out.size());
  return out;
}

std::vector<float> vit_logits(const Model& m, const ops::Ops& op) {
  auto d = family_of(m).image_driver(op, 2);
  test::DriverBlocks b([&](Arena&, Arena& mem) { d->carve(mem); }, size_t(64) << 20);
  const ops::Ctx cx{op, b.scratch_arena};
  std::vector<float> images(2 * (size_t)d->image_floats());
  for (size_t i = 0; i < images.size(); ++i) images[i] = (float)((i * 7919) % 17) / 16.f;
  const float* z = d->forward(images.data(), 2, true, cx);
  std::vector<float> out(2 * (size_t)m.labels().size());
  op.download(out.data(), z, sizeof(float) * out.size());
  return out;
}

std::vector<float> logits(const Model& m, const ops::Ops& op) {
  switch (m.task()) {
    case Task::Translate: return seq2seq_logits(m, op);
    case Task::Generate: return lm_logits(m, op);
    default: return vit_logits(m, op);
  }
}

}  // namespace

TEST_CASE("DeviceWeights copies every bound tensor as stored and hands the copies out by name",
          "[device][weights]") {
  for (const char* name : {"transformer-d2l", "transformer-d2l-int8", "bahdanau-d2l-int8", "vit_lab224",
                           "transformer-fra-bpe"}) {
    INFO(name);
    auto m = load(name);
    const WeightStore& host = *family_of(*m).store;
    REQUIRE(!host.bound_tensors().empty());
    drivers::DeviceWeights dev(host, ops::cpu());
    WeightStore& placed = dev.store();
    REQUIRE_FALSE(placed.readable());
    // the bytes of the weights in fp32, of the copies (each 256-byte aligned), the largest
    // int8 matrix or slice of one that a device expands at a time (Linear::expand_rows)
    size_t fp32 = 0, copies = 0, largest_i8 = 0;
    for (const auto& t : host.bound_tensors()) {
      size_t n = 1;
      for (int64_t s : t.shape) n *= (size_t)s;
      fp32 += n * sizeof(float);
      copies += (n * (t.dtype == DType::I8 ? 1 : sizeof(float)) + 255) / 256 * 256;
      REQUIRE(placed.dtype(t.name) == t.dtype);
      if (t.dtype == DType::I8) {  // every byte: a conv's (D, C, p, p) too
        const long rows = t.shape[0], cols = (long)n / rows;
        largest_i8 = std::max(largest_i8, (size_t)(Linear::expand_rows(rows, cols) * cols));
        const int8_t* got = placed.get_i8(t.name, t.shape);
        REQUIRE(static_cast<const void*>(got) != t.data);
        REQUIRE(std::memcmp(got, t.data, n) == 0);
        REQUIRE_THROWS_WITH(placed.get(t.name, t.shape), Catch::Contains("has dtype I8"));
        // its scales, one a row, are a tensor of their own
        const float* sc = placed.get(t.name + "_scale", {t.shape[0]});
        REQUIRE(std::memcmp(sc, scale_of(host, t.name), (size_t)t.shape[0] * sizeof(float)) == 0);
      } else {
        const float* got = placed.get(t.name, t.shape);
        REQUIRE(static_cast<const void*>(got) != t.data);
        REQUIRE(std::memcmp(got, t.data, n * sizeof(float)) == 0);
        REQUIRE_THROWS_WITH(placed.get_i8(t.name, t.shape), Catch::Contains("has dtype F32"));
      }
    }
    // room to expand the largest int8 matrix in fp32, inside the one block; none without int8
    REQUIRE(dev.bytes() == copies + largest_i8 * sizeof(float));
    if (m->is_int8()) {
      REQUIRE(placed.expansion() != nullptr);
      // past every copy, and inside the block, which starts at the first copy
      const char* ex = reinterpret_cast<const char*>(placed.expansion());
      const char* first = nullptr;
      for (const auto& t : host.bound_tensors()) {
        const char* at = t.dtype == DType::I8
                             ? reinterpret_cast<const char*>(placed.get_i8(t.name, t.shape))
                             : reinterpret_cast<const char*>(placed.get(t.name, t.shape));
        REQUIRE(at < ex);
        if (!first || at < first) first = at;
      }
      REQUIRE(ex + largest_i8 * sizeof(float) <= first + dev.bytes());
      // the int8 matrices stay int8: the shipped translator (int8 but for its biases, norms
      // and scales) takes under 40% of its fp32 bytes, its room to expand included
      INFO("device bytes " << dev.bytes() << ", fp32 " << fp32);
      if (std::string(name) == "transformer-fra-bpe") REQUIRE(dev.bytes() * 10 < fp32 * 4);
    } else {
      REQUIRE(placed.expansion() == nullptr);
      REQUIRE(dev.bytes() >= fp32);
    }
    std::vector<int64_t> wrong = host.bound_tensors().front().shape;
    wrong.push_back(2);
    REQUIRE_THROWS_WITH(placed.get(host.bound_tensors().front().name, wrong),
                        Catch::Contains("has shape"));
    REQUIRE_THROWS_WITH(placed.get("no.such.tensor", {1}), Catch::Contains("missing tensor"));
  }
}

TEST_CASE("drivers on an op set outside host memory give the CPU's logits", "[device][weights]") {
  if (!drivers::kDeviceOpSets) {
    WARN("this build has no device op set: drivers never copy their weights (ATTNLITE_CUDA=ON builds run this)");
    return;
  }
  const RemoteCpu remote;
  for (const char* name : {"transformer-d2l", "bahdanau-d2l", "lm-fra", "vit-digits",
                           "transformer-d2l-int8", "bahdanau-d2l-int8", "vit_lab224"}) {
    INFO(name);
    // The host's fp32 linear layers are packed at load for the SIMD kernels (Linear::wp); the
    // device's copies are bound as stored. A model loaded while the scalar table is active
    // reads its weights as stored too, so both sides then run the same kernels on the same
    // values; the packed model agrees as closely as other roundings allow.
    auto as_stored = with_scalar_kernels([&] { return load(name); });
    auto m = load(name);
    const std::vector<float> want = logits(*as_stored, ops::cpu()), got = logits(*as_stored, remote);
    REQUIRE(got.size() == want.size());
    // Bitwise (int8 weights too: the same int8 kernels read the copies), but for the GRU (run
    // as its two products and the cell there: the fused step reads a layout packed on the host
    // at load), which computes the same values with other roundings.
    if (std::string(m->kind_name()) != "bahdanau") {
      REQUIRE(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
    } else {
      const auto d = test::max_abs_diff(got.data(), want.data(), got.size());
      INFO("largest difference " << d.max << " at " << d.at);
      CHECK(d.max < 1e-4);
    }
    const std::vector<float> packed = logits(*m, ops::cpu()), remote_of_packed = logits(*m, remote);
    const auto d = test::max_abs_diff(remote_of_packed.data(), packed.data(), packed.size());
    INFO("packed host model: largest difference " << d.max << " at " << d.at);
    CHECK(d.max < 1e-4);
  }
}

namespace {

// Whether the device holds tensor t in bfloat16, by the rule of test::StFile::held_in_bf16.
bool held_in_bf16(const WeightStore::Tensor& t) {
  test::StTensor st;
  st.dtype = dtype_name(t.dtype);
  st.shape = t.shape;
  return test::StFile::held_in_bf16(t.name, st);
}

// Model `name` with those matrices rounded to bfloat16 (test::StFile::round_to_bf16), loaded
// with the scalar kernel table, so that it reads its weights as stored (no packed layout), as
// a device's op set does.
std::shared_ptr<const Model> rounded_to_bf16(const std::string& name) {
  test::StFile f = test::StFile::from(SafeTensors::load(path_of(name)));
  f.round_to_bf16();
  const auto bytes = f.bytes();
  return with_scalar_kernels([&] { return Model::from_bytes(bytes.data(), bytes.size()); });
}

}  // namespace

TEST_CASE("bf16_bits rounds fp32 to bfloat16 as PyTorch does", "[device][weights][bf16]") {
  // tests/fixtures/bf16_rounding.safetensors (tools/make_bf16_fixtures.py): ties to even,
  // the largest bfloat16 and past it, subnormals, infinities, weights, every exponent
  test::Fixture fx("bf16_rounding");
  const std::vector<float> x = fx.f("in.x");
  const std::vector<int64_t> want = fx.st.i64("out.bits");
  REQUIRE(x.size() == want.size());
  REQUIRE(x.size() > 5000);
  size_t infinite = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x[" << i << "] = " << x[i]);
    const uint16_t h = bf16_bits(x[i]);
    REQUIRE((int64_t)h == want[i]);
    REQUIRE(bf16_finite(h) == std::isfinite(bf16_value(h)));
    if (!bf16_finite(h)) ++infinite;
    // widening is exact: the value's upper 16 bits, and rounding it again changes nothing
    REQUIRE(bf16_bits(bf16_value(h)) == h);
    if (bf16_finite(h) && std::isfinite(x[i]))
      REQUIRE(std::fabs(bf16_value(h) - x[i]) <= std::fabs(x[i]) * (1.f / 256) + 1e-38f);
  }
  REQUIRE(infinite == 4);  // +-inf, and the largest fp32 values either way
  REQUIRE(bf16_bits(std::nanf("")) != bf16_bits(INFINITY));
  REQUIRE_FALSE(bf16_finite(bf16_bits(std::nanf(""))));
}

TEST_CASE("DeviceWeights in bfloat16: linear layers' fp32 matrices halved, the rest as stored",
          "[device][weights][bf16]") {
  const RemoteCpu bf16(true);
  for (const char* name : {"transformer-d2l", "bahdanau-d2l", "lm-fra", "lm_pre_gelu_eps6", "vit-digits",
                           "transformer-d2l-int8", "transformer-fra-bpe", "vit_lab224"}) {
    INFO(name);
    auto m = load(name);
    const WeightStore& host = *family_of(*m).store;
    drivers::DeviceWeights dev(host, bf16);
    WeightStore& placed = dev.store();
    size_t copies = 0, largest = 0, halved = 0, fp32_bytes = 0;
    for (const auto& t : host.bound_tensors()) {
      INFO(t.name);
      size_t n = 1;
      for (int64_t d : t.shape) n *= (size_t)d;
      // the store knows the linear layers' matrices by how they were bound
      REQUIRE(t.linear_only == (t.dtype == DType::F32 && held_in_bf16(t)));
      if (held_in_bf16(t)) {
        REQUIRE(placed.dtype(t.name) == DType::BF16);
        const uint16_t* got = placed.get_bf16(t.name, t.shape);
        const float* w = static_cast<const float*>(t.data);
        for (size_t i = 0; i < n; ++i) REQUIRE(got[i] == bf16_bits(w[i]));
        REQUIRE_THROWS_WITH(placed.get(t.name, t.shape), Catch::Contains("has dtype BF16"));
        copies += (n * 2 + 255) / 256 * 256;
        ++halved;
        fp32_bytes += n * sizeof(float);
      } else {
        REQUIRE(placed.dtype(t.name) == t.dtype);
        const size_t bytes = n * (t.dtype == DType::I8 ? 1 : sizeof(float));
        REQUIRE(std::memcmp(t.dtype == DType::I8 ? static_cast<const void*>(placed.get_i8(t.name, t.shape))
                                                 : static_cast<const void*>(placed.get(t.name, t.shape)),
                            t.data, bytes) == 0);
        REQUIRE_THROWS_WITH(placed.get_bf16(t.name, t.shape), Catch::Contains("expected BF16"));
        copies += (bytes + 255) / 256 * 256;
      }
      if (placed.dtype(t.name) != DType::F32) {
        const long rows = t.shape[0], cols = (long)n / rows;
        largest = std::max(largest, (size_t)(Linear::expand_rows(rows, cols) * cols));
      }
    }
    // every fp32 model has matrices to halve; the int8 ones have none left in fp32
    REQUIRE((halved > 0) == !m->is_int8());
    REQUIRE(dev.bytes() == copies + largest * sizeof(float));
    REQUIRE((placed.expansion() != nullptr) == (largest > 0));
    INFO("bfloat16 copies of " << fp32_bytes << " fp32 bytes; device bytes " << dev.bytes());
  }
  // a file's store never hands out bfloat16: only a device's copy holds it
  const SafeTensors file = SafeTensors::load(test::model_path("transformer-d2l"));
  WeightStore ws(file);
  REQUIRE_THROWS_WITH(ws.get_bf16("decoder.dense.weight", {1, 1}), Catch::Contains("only from a device's copy"));
}

TEST_CASE("DeviceWeights in bfloat16 refuses a weight past bfloat16's range", "[device][weights][bf16]") {
  test::StFile f = test::StFile::from(SafeTensors::load(test::model_path("transformer-d2l")));
  test::StTensor* t = f.find("encoder.blks.block0.ffn.dense1.weight");
  REQUIRE(t);
  const float big = 3.4e38f;  // finite in fp32 (the loader takes it), infinite in bfloat16
  std::memcpy(t->bytes.data() + 4 * 7, &big, 4);
  const auto bytes = f.bytes();
  auto m = Model::from_bytes(bytes.data(), bytes.size());
  const RemoteCpu bf16(true);
  REQUIRE_THROWS_WITH(drivers::DeviceWeights(*family_of(*m).store, bf16),
                      Catch::Contains("tensor 'encoder.blks.block0.ffn.dense1.weight' holds") &&
                          Catch::Contains("at index 7, past bfloat16's range: load it at fp32 precision"));
  // at fp32 it is copied as it is
  REQUIRE_NOTHROW(drivers::DeviceWeights(*family_of(*m).store, RemoteCpu(false)));
}

TEST_CASE("drivers holding bfloat16 weights give the CPU's logits on the rounded weights",
          "[device][weights][bf16]") {
  if (!drivers::kDeviceOpSets) {
    WARN("this build has no device op set: drivers never copy their weights (ATTNLITE_CUDA=ON builds run this)");
    return;
  }
  const RemoteCpu bf16(true);
  for (const char* name : {"transformer-d2l", "bahdanau-d2l", "lm_pre_gelu_eps6", "lm_post_relu", "vit-digits",
                           "transformer-d2l-int8", "lm-fra"}) {
    INFO(name);
    auto as_stored = with_scalar_kernels([&] { return load(name); });
    auto rounded = rounded_to_bf16(name);
    const std::vector<float> want = logits(*rounded, ops::cpu()), got = logits(*as_stored, bf16);
    REQUIRE(got.size() == want.size());
    if (std::string(as_stored->kind_name()) != "bahdanau") {  // as in the fp32 case above
      REQUIRE(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
    } else {
      const auto d = test::max_abs_diff(got.data(), want.data(), got.size());
      INFO("largest difference " << d.max << " at " << d.at);
      CHECK(d.max < 1e-4);
    }
    // the rounding is there to see (but not in the int8 model, which has nothing to round)
    const std::vector<float> fp32 = logits(*as_stored, ops::cpu());
    const auto d = test::max_abs_diff(got.data(), fp32.data(), fp32.size());
    INFO("bf16 against fp32: largest difference " << d.max);
    if (as_stored->is_int8()) REQUIRE(d.max == 0);
    else REQUIRE(d.max > 1e-3);
  }
}
