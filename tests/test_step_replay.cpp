// Ops::replay's contract, checked without a GPU: a step handed to replay must issue the same
// ops with the same arguments whenever its key is equal (a CUDA graph replays the launches
// it captured, so a host value that reaches a launch but not the key would replay a stale
// one), and must not read results back to the host. An op set that is the CPU's logs every
// op's arguments while a step runs and compares the logs of equal keys; the Transformer
// driver runs greedy-like steps over batches whose source lengths repeat, with and without
// attention weights, one and two hypotheses a sentence, both position modes in one session.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <type_traits>
#include <vector>

#include "attnlite/model.h"
#include "families/family.h"
#include "fixture.h"
#include "model/model_impl.h"

using namespace attnlite;

namespace {

// The CPU's ops; while a step handed to replay runs, every op's arguments are logged (pointers,
// sizes, the scratch offset, host scalars such as positions).
class LoggingCpu final : public ops::Ops {
 public:
  struct Logs final : ops::Recording {
    std::vector<std::pair<ops::StepKey, std::vector<long long>>> steps;
  };
  mutable long compared = 0, recorded = 0, host_reads = 0;
  mutable std::set<std::vector<long>> keys;

  const char* name() const override { return "logging-cpu"; }
  bool host_memory() const override { return true; }

  void replay(std::unique_ptr<ops::Recording>& rec, const ops::StepKey& key, int rows, ops::Reuse,
              void (*fn)(void*), void* arg) const override {
    if (!rec) rec = std::make_unique<Logs>();
    auto& logs = static_cast<Logs&>(*rec);
    log_.clear();
    on_ = true;
    fn(arg);
    on_ = false;
    log_.push_back(rows);
    keys.insert(std::vector<long>(key.v, key.v + ops::StepKey::kSlots));
    for (const auto& [k, l] : logs.steps)
      if (k == key) {
        ++compared;
        INFO("a step with an equal key issued other ops or arguments");
        REQUIRE(l == log_);
        return;
      }
    logs.steps.push_back({key, log_});
    ++recorded;
  }

  void linear(float* y, const float* x, const Linear& w, int M, ops::Act act) const override {
    rec(1, y, x, &w, w.w, w.b, w.out, w.in, M, (int)act);
    c().linear(y, x, w, M, act);
  }
  void linear_n(float* const* ys, const Linear* const* ws, int n, const float* x, int M,
                Arena& s) const override {
    rec(2, n, x, M, s.used());
    for (int i = 0; i < n; ++i) rec(3, ys[i], ws[i]);
    c().linear_n(ys, ws, n, x, M, s);
  }
  void add_layer_norm(float* out, const float* x, const float* y, const float* g, const float* b,
                      int R, int n, float eps, Arena& s) const override {
    rec(4, out, x, y, g, b, R, n, bits(eps), s.used());
    c().add_layer_norm(out, x, y, g, b, R, n, eps, s);
  }
  void add(float* y, const float* a, const float* b, long n) const override {
    rec(5, y, a, b, n);
    c().add(y, a, b, n);
  }
  void patches(float* out, const float* im, int B, int C, int H, int W, int p, float sc) const override {
    rec(6, out, im, B, C, H, W, p, bits(sc));
    c().patches(out, im, B, C, H, W, p, sc);
  }
  void embed(float* x, int ldx, const Embedding& t, const int* ids, int R, float sc) const override {
    rec(7, x, ldx, &t, t.w, ids, R, bits(sc));
    c().embed(x, ldx, t, ids, R, sc);
  }
  void add_positions(float* x, const float* P, int B, int Tn, int H, const int* pos) const override {
    rec(8, x, P, B, Tn, H, pos != nullptr);
    for (int t = 0; pos && t < Tn; ++t) rec(9, pos[t]);  // host values, read at launch
    c().add_positions(x, P, B, Tn, H, pos);
  }
  void attend(float* ctx, const ops::AttnOut& a, const float* q, const float* k, const float* v,
              int kv, int B, int Tq, int Tk, int H, int NH, const ops::ValidLens& vl,
              Arena& s) const override {
    rec(10, ctx, a.data, a.b_stride, a.h_stride, a.ld, q, k, v, kv, B, Tq, Tk, H, NH);
    rec(11, (int)vl.kind, vl.data, vl.offset, s.used());
    c().attend(ctx, a, q, k, v, kv, B, Tq, Tk, H, NH, vl, s);
  }
  void additive_attend(float* ctx, int ldc, float* attn, const float* qp, const float* kp,
                       const float* v, const Linear& w_v, int B, int Tk, int Hh, int Dv,
                       const ops::ValidLens& vl, Arena& s) const override {
    rec(12, ctx, ldc, attn, qp, kp, v, &w_v, B, Tk, Hh, Dv, (int)vl.kind, vl.data, s.used());
    c().additive_attend(ctx, ldc, attn, qp, kp, v, w_v, B, Tk, Hh, Dv, vl, s);
  }
  void rnn_cell(float* h, float* cc, float* gi, float* gh, ops::Cell cell, int B, int Hh) const override {
    rec(13, h, cc, gi, gh, (int)cell, B, Hh);
    c().rnn_cell(h, cc, gi, gh, cell, B, Hh);
  }
  void gru_step(float* h, const float* x, float* gi, const Linear& ih, const Linear& hh,
                const float* packed, int B, Arena& s) const override {
    rec(14, h, x, gi, &ih, &hh, packed, B, s.used());
    c().gru_step(h, x, gi, ih, hh, packed, B, s);
  }
  void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V,
                   Arena& s) const override {
    if (on_) ++host_reads;  // its results are host arrays: never inside a recorded step
    c().argmax_rows(ids, probs, logp, logits, R, V, s);
  }
  void top_rows(int* ids, float* vals, float* mx, double* sum, const float* logits, long ld, int R,
                int V, int n, Arena& s) const override {
    if (on_) ++host_reads;  // as argmax_rows
    c().top_rows(ids, vals, mx, sum, logits, ld, R, V, n, s);
  }
  void permute_blocks(float* rows, long stride, long len, const int* from, int nb, int K,
                      float* tmp) const override {
    rec(18, rows, stride, len, from, nb, K, tmp);
    c().permute_blocks(rows, stride, len, from, nb, K, tmp);
  }
  void keep_rows(float* rows, long stride, long len, const int* keep, int n) const override {
    rec(19, rows, stride, len, keep, n);
    c().keep_rows(rows, stride, len, keep, n);
  }
  void copy(void* d, const void* s, size_t n) const override {
    rec(15, d, s, (long long)n);
    c().copy(d, s, n);
  }
  void copy_2d(void* d, size_t dp, const void* s, size_t sp, size_t n, int rows) const override {
    rec(16, d, (long long)dp, s, (long long)sp, (long long)n, rows);
    c().copy_2d(d, dp, s, sp, n, rows);
  }
  void zero(void* d, size_t n) const override {
    rec(17, d, (long long)n);
    c().zero(d, n);
  }
  void upload(void* d, const void* h, size_t n) const override {
    if (on_) ++host_reads;  // a host source: a graph would replay the captured copy's bytes
    c().upload(d, h, n);
  }
  void download(void* h, const void* s, size_t n) const override {
    if (on_) ++host_reads;
    c().download(h, s, n);
  }
  void* alloc(size_t n) const override { return c().alloc(n); }
  void release(void* p) const override { c().release(p); }

 private:
  static const ops::Ops& c() { return ops::cpu(); }
  static long long bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  template <class T>
  static long long as_ll(T v) {
    if constexpr (std::is_pointer_v<T>)
      return (long long)reinterpret_cast<intptr_t>(v);
    else
      return (long long)v;
  }
  template <class... A>
  void rec(int op, A... a) const {
    if (!on_) return;
    log_.push_back(op);
    (log_.push_back(as_ll(a)), ...);
  }
  mutable bool on_ = false;
  mutable std::vector<long long> log_;
};

}  // namespace

TEST_CASE("a replayed step issues the same ops for an equal key (Transformer driver)", "[ops]") {
  auto model = Model::load(attnlite::test::model_path("transformer-d2l"));
  const families::FamilyModel& fam = *model->impl().model;
  const int S = model->num_steps(), V = model->tgt_vocab().size();
  // batches of two sentences (valid lengths): longest 4 three times, 7 twice, S (10) once
  const std::vector<std::vector<int>> batches = {{4, 3}, {4, 2}, {7, 7}, {4, 3}, {7, 2}, {S, 3}};
  for (const int K : {1, 2}) {
    INFO("K " << K);
    LoggingCpu op;
    const drivers::Limits lim{2, K, S, 6};
    auto d = fam.seq2seq_driver(op, lim);
    test::DriverBlocks b([&](Arena& h, Arena& m) { d->carve(h, m); }, size_t(64) << 20);
    const ops::Ctx cx{op, b.scratch_arena};
    // one session: without and with attention weights, positions t and the book's position 0
    for (const bool attention : {false, true}) {
      for (const bool compat : {false, true}) {
        for (const auto& lens : batches) {
          std::vector<int> src((size_t)2 * S, model->src_vocab().pad_id);
          for (int i = 0; i < 2; ++i)
            for (int j = 0; j < lens[(size_t)i]; ++j)
              src[(size_t)i * S + j] = 4 + (i * 5 + j * 3) % 40;
          d->encode(src.data(), lens.data(), 2, K, attention, cx);
          std::vector<int> tokens((size_t)2 * K, model->tgt_vocab().bos_id);
          for (int t = 0; t < lim.T; ++t) {
            const float* z = d->step(tokens.data(), 2 * K, t, compat ? 0 : t, attention, cx);
            for (int r = 0; r < 2 * K; ++r)  // feed back each row's arg max
              tokens[(size_t)r] = (int)(std::max_element(z + (long)r * V, z + (long)(r + 1) * V) - (z + (long)r * V));
          }
        }
      }
    }
    // The source lengths the steps see: without attention weights the encoder stops at the
    // batch's longest valid length (4, 7 or S here), with them it runs all S steps (and the
    // steps write weights: other launches than without, at the same length S). One key per
    // (attention, length, step, position): T steps at positions t, T - 1 more at position 0
    // (step 0 is at position 0 in both modes). Every other step is compared with the first of
    // its key; no host read inside a step.
    const long lengths = 3 + 1, steps = 2 * 2 * (long)batches.size() * lim.T;
    REQUIRE(op.recorded == lengths * (2 * lim.T - 1));
    REQUIRE(op.compared == steps - op.recorded);
    REQUIRE((long)op.keys.size() == op.recorded);
    REQUIRE(op.host_reads == 0);
  }
}

TEST_CASE("a replayed forward pass issues the same ops for an equal key (ViT driver)", "[ops]") {
  auto model = Model::load(attnlite::test::model_path("vit-digits"));
  const families::FamilyModel& fam = *model->impl().model;
  LoggingCpu op;
  constexpr int kBatch = 5;
  auto d = fam.image_driver(op, kBatch);
  test::DriverBlocks b([&](Arena&, Arena& m) { d->carve(m); }, size_t(16) << 20);
  const ops::Ctx cx{op, b.scratch_arena};
  std::vector<float> images((size_t)kBatch * d->image_floats());
  for (size_t i = 0; i < images.size(); ++i) images[i] = (float)((i * 7) % 17);
  // batches of 5, 3, 1 and 5 images again, without and with attention weights, twice: one key
  // per (batch size, attention), every later pass compared with the first of its key
  const std::vector<int> sizes = {kBatch, 3, 1, kBatch};
  std::vector<float> first;
  for (int round = 0; round < 2; ++round)
    for (const bool attention : {false, true})
      for (const int n : sizes) {
        const float* z = d->forward(images.data(), n, attention, cx);
        if (n != kBatch || attention) continue;
        if (first.empty()) first.assign(z, z + 10);
        {
          INFO("a replayed pass gives the first pass's logits");
          REQUIRE(std::vector<float>(z, z + 10) == first);
        }
      }
  REQUIRE(op.recorded == 3 * 2);
  REQUIRE(op.compared == 2 * 2 * (long)sizes.size() - op.recorded);
  REQUIRE((long)op.keys.size() == op.recorded);
  REQUIRE(op.host_reads == 0);
}
