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

using namespace attnlite;

namespace {

// The CPU's ops in memory the host "cannot read": every op runs on the CPU, memory comes from
// alloc() and moves by upload() / download(), as a device op set's does.
class RemoteCpu final : public ops::Ops {
 public:
  const char* name() const override { return "remote-cpu"; }
  bool host_memory() const override { return false; }
  void linear(float* y, const float* x, const Linear& w, int M, ops::Act act) const override {
    c().linear(y, x, w, M, act);
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
    c().additive_attend(ctx, ldc, attn, qp, kp, v, w_v, B, Tk, Hh, Dv, vl, s);
  }
  void rnn_cell(float* h, float* cc, float* gi, float* gh, ops::Cell cell, int B, int Hh) const override {
    c().rnn_cell(h, cc, gi, gh, cell, B, Hh);
  }
  void gru_step(float* h, const float* x, float* gi, const Linear& ih, const Linear& hh,
                const float* packed, int B, Arena& s) const override {
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
};

const families::FamilyModel& family_of(const Model& m) { return *m.impl().model; }

// The file's models, and the int8 ones of the fixtures.
// A shipped model, or a test fixture (the int8 models; vit_lab224: the lab's ViT shape, its
// patch convolution int8 (D, C, p, p)).
std::shared_ptr<const Model> load(const std::string& name) {
  return Model::load(name.find("int8") != std::string::npos || name.rfind("vit_", 0) == 0
                         ? test::fixture_path(name)
                         : test::model_path(name));
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
    std::shared_ptr<const Model> as_stored;
    const auto table = ops::kernel_table();
    ops::use_kernels(ops::KernelTable::Scalar);
    try {
      as_stored = load(name);
    } catch (...) {
      ops::use_kernels(table);
      throw;
    }
    ops::use_kernels(table);
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
