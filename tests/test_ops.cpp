// Every op of ops::Ops on every op set against the scalar CPU set: the CPU with the SIMD
// kernel table, and CUDA where a CUDA build finds a device (skipped cleanly otherwise).
// Inputs go through the op set's own memory (alloc, upload, download), at sizes below, at
// and above the vector widths.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "attnlite/ops/ops.h"
#include "attnlite/translate.h"
#include "fixture.h"
#include "ops/scratch.h"
#include "st_writer.h"

using attnlite::ops::ValidLens;

using namespace attnlite;

namespace {

using Floats = std::vector<float>;

Floats rnd(size_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.f, scale);
  Floats v(n);
  for (float& x : v) x = d(g);
  return v;
}

// Host data in an op set's memory, released at the end of the scope.
class Mem {
 public:
  explicit Mem(const ops::Ops& op) : op_(op) {}
  ~Mem() {
    for (void* p : blocks_) op_.release(p);
  }
  template <class T>
  T* put(const std::vector<T>& h) {
    void* p = op_.alloc(sizeof(T) * std::max<size_t>(1, h.size()));
    blocks_.push_back(p);
    op_.upload(p, h.data(), sizeof(T) * h.size());
    return static_cast<T*>(p);
  }
  Floats get(const float* p, size_t n) const {
    Floats h(n);
    op_.download(h.data(), p, sizeof(float) * n);
    return h;
  }

 private:
  const ops::Ops& op_;
  std::vector<void*> blocks_;
};

struct OpSet {
  std::string name;
  const ops::Ops* op;
  double tol;
};

// The op sets to hold against the scalar reference.
std::vector<OpSet> op_sets() {
  std::vector<OpSet> sets;
  if (ops::simd_kernels()) sets.push_back({"cpu-simd", &ops::cpu(), 1e-5});
  if (cuda_available()) sets.push_back({"cuda", &ops::cuda(), 1e-4});
#if ATTNLITE_HAVE_CUDA
  else WARN("no CUDA device: the CUDA op set is not checked (" << cuda_device_name() << ")");
#endif
  return sets;
}

// Runs f(op, mem) -> outputs on the scalar CPU set and on every other set; compares.
void each_set(const std::function<std::vector<Floats>(const ops::Ops&, Mem&, bool simd)>& f) {
  ops::use_kernels(ops::KernelTable::Scalar);
  std::vector<Floats> ref;
  {
    Mem mem(ops::cpu());
    ref = f(ops::cpu(), mem, false);
  }
  for (const OpSet& s : op_sets()) {
    INFO("op set " << s.name);
    if (s.name == "cpu-simd") ops::use_kernels(ops::KernelTable::Simd);
    std::vector<Floats> got;
    {
      Mem mem(*s.op);
      got = f(*s.op, mem, s.name == "cpu-simd");
      s.op->sync();
    }
    ops::use_kernels(ops::KernelTable::Scalar);
    REQUIRE(got.size() == ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      INFO("output " << i);
      REQUIRE_CLOSE(got[i], ref[i], s.tol);
    }
  }
}

}  // namespace

TEST_CASE("ops: linear (bias, ReLU, int8 on the CPU) on every op set", "[ops]") {
  for (int M : {1, 3, 9})
    for (int N : {1, 7, 8, 17, 33})
      for (int K : {1, 5, 8, 31, 64}) {
        INFO("M " << M << " N " << N << " K " << K);
        const Floats x = rnd((size_t)M * K, 1), w = rnd((size_t)N * K, 2), b = rnd(N, 3);
        each_set([&](const ops::Ops& op, Mem& mem, bool) {
          Linear l{mem.put(w), mem.put(b), N, K};
          float* y = mem.put(Floats((size_t)M * N));
          float* yr = mem.put(Floats((size_t)M * N));
          const float* dx = mem.put(x);
          op.linear(y, dx, l, M);
          op.linear(yr, dx, l, M, ops::Act::Relu);
          return std::vector<Floats>{mem.get(y, (size_t)M * N), mem.get(yr, (size_t)M * N)};
        });
      }
  // int8 weights: the CPU op sets (the device sets receive dequantized copies)
  const int M = 5, N = 19, K = 37;
  std::vector<int8_t> q((size_t)N * K);
  for (size_t i = 0; i < q.size(); ++i) q[i] = (int8_t)((int)(i * 37 % 255) - 127);
  const Floats x = rnd((size_t)M * K, 4), scale = rnd(N, 5, 0.01f), b = rnd(N, 6);
  ops::use_kernels(ops::KernelTable::Scalar);
  Floats ref((size_t)M * N), got(ref.size());
  ops::cpu().linear(ref.data(), x.data(), Linear{nullptr, b.data(), N, K, q.data(), scale.data()}, M);
  if (ops::simd_kernels()) {
    ops::use_kernels(ops::KernelTable::Simd);
    ops::cpu().linear(got.data(), x.data(), Linear{nullptr, b.data(), N, K, q.data(), scale.data()}, M);
    ops::use_kernels(ops::KernelTable::Scalar);
    REQUIRE_CLOSE(got, ref, 1e-4);
  }
}

TEST_CASE("ops: add_layer_norm, embed, add_positions on every op set", "[ops]") {
  for (int n : {1, 7, 8, 24, 33}) {
    INFO("n " << n);
    const int R = 5;
    const Floats x = rnd((size_t)R * n, 7), y = rnd((size_t)R * n, 8), g = rnd(n, 9), b = rnd(n, 10);
    each_set([&](const ops::Ops& op, Mem& mem, bool) {
      AlignedBuffer buf(1 << 16);
      Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena();
      float* out = mem.put(Floats((size_t)R * n));
      op.add_layer_norm(out, mem.put(x), mem.put(y), mem.put(g), mem.put(b), R, n, 1e-5f, scratch);
      return std::vector<Floats>{mem.get(out, (size_t)R * n)};
    });
  }
  const int V = 11, dim = 6, R = 8, ldx = 9, B = 2, Tn = 4;
  const Floats table = rnd((size_t)V * dim, 11), P = rnd((size_t)20 * dim, 12);
  const std::vector<int> ids = {0, 3, 10, 2, 2, 5, 9, 1};
  each_set([&](const ops::Ops& op, Mem& mem, bool) {
    Embedding e{mem.put(table), nullptr, nullptr, V, dim};
    float* wide = mem.put(Floats((size_t)R * ldx, 0.f));
    op.embed(wide, ldx, e, mem.put(ids), R, 2.5f);  // rows inside wider rows
    float* x = mem.put(Floats((size_t)R * dim));
    const int* dids = mem.put(ids);
    op.embed(x, dim, e, dids, R, 1.f);
    op.add_positions(x, mem.put(P), B, Tn, dim, nullptr);  // positions 0..Tn-1
    float* one = mem.put(Floats((size_t)B * dim));
    op.embed(one, dim, e, dids, B, 1.f);
    const int pos13 = 13, several[Tn] = {3, 0, 7, 19};
    op.add_positions(one, mem.put(P), B, 1, dim, &pos13);  // one decoding step at position 13
    float* many = mem.put(Floats((size_t)R * dim));
    op.embed(many, dim, e, dids, R, 1.f);
    op.add_positions(many, mem.put(P), B, Tn, dim, several);
    return std::vector<Floats>{mem.get(wide, (size_t)R * ldx), mem.get(x, (size_t)R * dim),
                               mem.get(one, (size_t)B * dim), mem.get(many, (size_t)R * dim)};
  });
}

TEST_CASE("ops: linear_add_layer_norm on every op set and as linear then add_layer_norm", "[ops]") {
  // rows for CUDA's GEMV (bias fused), SGEMM + the bias in the norm's pass (9 to 64), and
  // cuBLASLt's epilogue (65 and more); with and without a bias; out apart from res or on it
  for (int M : {1, 8, 9, 32, 64, 65, 70})
    for (int N : {7, 33, 512})
      for (int K : {5, 64})
        for (bool bias : {false, true})
          for (bool on_res : {false, true}) {
            INFO("M " << M << " N " << N << " K " << K << " bias " << bias << " out on res " << on_res);
            const Floats x = rnd((size_t)M * K, 70), w = rnd((size_t)N * K, 71), b = rnd(N, 72),
                         res = rnd((size_t)M * N, 73), g = rnd(N, 74), be = rnd(N, 75);
            each_set([&](const ops::Ops& op, Mem& mem, bool) {
              AlignedBuffer buf(1 << 16);
              Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena();
              const Linear l{mem.put(w), bias ? mem.put(b) : nullptr, N, K};
              float* r = mem.put(res);
              float* out = on_res ? r : mem.put(Floats((size_t)M * N));
              float* y = mem.put(Floats((size_t)M * N));
              op.linear_add_layer_norm(out, y, mem.put(x), l, r, mem.put(g), mem.put(be), M, 1e-5f, scratch);
              return std::vector<Floats>{mem.get(out, (size_t)M * N)};
            });
            // on the CPU, exactly the two ops it stands for (the models' outputs stay as they
            // were), with either kernel table, and without scratch (as the dry run counts it)
            for (const auto table : {ops::KernelTable::Scalar, ops::KernelTable::Simd}) {
              if (table == ops::KernelTable::Simd && !ops::simd_kernels()) continue;
              INFO((table == ops::KernelTable::Simd ? "SIMD" : "scalar") << " kernels");
              ops::use_kernels(table);
              AlignedBuffer buf(1 << 20);
              Arena scratch(buf.data(), buf.size());
              const Linear l{w.data(), bias ? b.data() : nullptr, N, K};
              Floats y((size_t)M * N), ref((size_t)M * N), got = res, room((size_t)M * N);
              ops::cpu().linear(y.data(), x.data(), l, M);
              ops::cpu().add_layer_norm(ref.data(), res.data(), y.data(), g.data(), be.data(), M, N, 1e-5f, scratch);
              Arena none(buf.data(), buf.size());
              ops::cpu().linear_add_layer_norm(got.data(), room.data(), x.data(), l, got.data(), g.data(),
                                               be.data(), M, 1e-5f, none);
              Arena counted(buf.data(), buf.size());
              ops::counting().linear_add_layer_norm(nullptr, nullptr, nullptr, l, nullptr, nullptr, nullptr, M,
                                                    1e-5f, counted);
              ops::use_kernels(ops::KernelTable::Scalar);
              REQUIRE(got == ref);
              REQUIRE(none.peak() == 0);
              REQUIRE(counted.peak() == 0);
            }
          }
}

TEST_CASE("ops: GELU linear, plain LayerNorm and add on every op set", "[ops][lm]") {
  const int M = 3, N = 17, K = 9;
  const Floats x = rnd((size_t)M * K, 31), w = rnd((size_t)N * K, 32), b = rnd(N, 33);
  // the formulas themselves, in float64: gelu(z) = z (1 + erf(z / sqrt 2)) / 2
  {
    ops::use_kernels(ops::KernelTable::Scalar);
    Floats y((size_t)M * N), ref((size_t)M * N);
    ops::cpu().linear(y.data(), x.data(), Linear{w.data(), b.data(), N, K}, M, ops::Act::Gelu);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double z = b[n];
        for (int k = 0; k < K; ++k) z += (double)x[m * K + k] * w[n * K + k];
        ref[m * N + n] = (float)(0.5 * z * (1 + std::erf(z / std::sqrt(2.0))));
      }
    REQUIRE_CLOSE(y, ref, 1e-5);
    const int R = 4, n = 10;
    const Floats a = rnd((size_t)R * n, 34), g = rnd(n, 35), be = rnd(n, 36);
    AlignedBuffer buf(1 << 16);
    Arena scratch(buf.data(), buf.size());
    Floats out((size_t)R * n), lref((size_t)R * n);
    ops::cpu().add_layer_norm(out.data(), a.data(), nullptr, g.data(), be.data(), R, n, 1e-6f, scratch);
    for (int r = 0; r < R; ++r) {
      double mu = 0, var = 0;
      for (int i = 0; i < n; ++i) mu += a[r * n + i];
      mu /= n;
      for (int i = 0; i < n; ++i) var += (a[r * n + i] - mu) * (a[r * n + i] - mu);
      var /= n;
      for (int i = 0; i < n; ++i)
        lref[r * n + i] = (float)((a[r * n + i] - mu) / std::sqrt(var + 1e-6) * g[i] + be[i]);
    }
    REQUIRE_CLOSE(out, lref, 1e-5);
  }
  each_set([&](const ops::Ops& op, Mem& mem, bool) {
    Linear l{mem.put(w), mem.put(b), N, K};
    float* y = mem.put(Floats((size_t)M * N));
    op.linear(y, mem.put(x), l, M, ops::Act::Gelu);
    AlignedBuffer buf(1 << 16);
    Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena();
    const int n = 33;
    const Floats a = rnd((size_t)M * n, 37), g = rnd(n, 38), be = rnd(n, 39);
    float* ln = mem.put(Floats((size_t)M * n));
    float* da = mem.put(a);
    op.add_layer_norm(ln, da, nullptr, mem.put(g), mem.put(be), M, n, 1e-5f, scratch);
    float* sum = mem.put(Floats((size_t)M * n));
    op.add(sum, da, ln, (long)M * n);
    op.add(sum, sum, da, (long)M * n);  // in place
    return std::vector<Floats>{mem.get(y, (size_t)M * N), mem.get(ln, (size_t)M * n),
                               mem.get(sum, (size_t)M * n)};
  });
}

TEST_CASE("ops: attend with every kind of valid length on every op set", "[ops]") {
  const int B = 2, H = 12, NH = 3;
  for (int Tq : {1, 4})
    for (int Tk : {1, 5, 9}) {
      const int kv_stride = Tk + 2;
      const Floats q = rnd((size_t)B * Tq * H, 13), k = rnd((size_t)B * kv_stride * H, 14),
                   v = rnd((size_t)B * kv_stride * H, 15);
      const std::vector<int> per_batch = {std::min(2, Tk), Tk}, per_query = [&] {
        std::vector<int> p((size_t)B * Tq);
        for (size_t i = 0; i < p.size(); ++i) p[i] = 1 + (int)(i % (size_t)Tk);
        return p;
      }();
      for (int kind = 0; kind < 4; ++kind)
        for (bool record : {false, true}) {
          INFO("Tq " << Tq << " Tk " << Tk << " valid-length kind " << kind << " record " << record);
          each_set([&](const ops::Ops& op, Mem& mem, bool) {
            AlignedBuffer buf(1 << 16);
            Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena();
            const ValidLens vl = kind == 0   ? ValidLens::none()
                                 : kind == 1 ? ValidLens::per_batch(mem.put(per_batch))
                                 : kind == 2 ? ValidLens::per_query(mem.put(per_query))
                                             : ValidLens::causal(Tk - Tq > 0 ? Tk - Tq : 0);
            float* ctx = mem.put(Floats((size_t)B * Tq * H));
            float* att = mem.put(Floats((size_t)B * NH * Tq * Tk, 0.f));
            op.attend(ctx, record ? ops::AttnOut::dense(att, NH, Tq, Tk) : ops::AttnOut{}, mem.put(q),
                      mem.put(k), mem.put(v), kv_stride, B, Tq, Tk, H, NH, vl, scratch);
            return std::vector<Floats>{mem.get(ctx, (size_t)B * Tq * H), mem.get(att, (size_t)B * NH * Tq * Tk)};
          });
        }
    }
}

// A decoder's self-attention over its growing cache: the CUDA set writes the new keys and
// values inside its attention kernel; every set gives what the two copies and attend give,
// bit for bit on its own arithmetic, and the scalar CPU's results to the set's tolerance.
TEST_CASE("ops: append_attend on every op set is the cache's two copies then attend", "[ops]") {
  for (auto [H, NH] : std::vector<std::pair<int, int>>{{12, 3}, {10, 2}})  // float4 rows, or not
    for (int Tq : {1, 3})
      for (int t0 : {0, 4})
        for (int kind = 0; kind < 3; ++kind) {
          const int B = 2, Tk = t0 + Tq, kv_stride = Tk + 2;
          INFO("H " << H << " NH " << NH << " Tq " << Tq << " t0 " << t0 << " valid-length kind " << kind);
          const Floats q = rnd((size_t)B * Tq * H, 21), kn = rnd((size_t)B * Tq * H, 22),
                       vn = rnd((size_t)B * Tq * H, 23), kc0 = rnd((size_t)B * kv_stride * H, 24),
                       vc0 = rnd((size_t)B * kv_stride * H, 25);
          const std::vector<int> per_batch = {std::min(2, Tk), Tk};
          each_set([&](const ops::Ops& op, Mem& mem, bool) {
            AlignedBuffer buf(1 << 16);
            Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena();
            const ValidLens vl = kind == 0   ? ValidLens::none()
                                 : kind == 1 ? ValidLens::per_batch(mem.put(per_batch))
                                             : ValidLens::causal(t0);
            const size_t n = (size_t)B * Tq * H, na = (size_t)B * NH * Tq * Tk, nc = kc0.size();
            const float *dq = mem.put(q), *dk = mem.put(kn), *dv = mem.put(vn);
            std::vector<Floats> out[2];  // append_attend; the copies, then attend
            for (int way = 0; way < 2; ++way) {
              float *kc = mem.put(kc0), *vc = mem.put(vc0), *ctx = mem.put(Floats(n));
              float* att = mem.put(Floats(na, 0.f));
              const ops::AttnOut ao = ops::AttnOut::dense(att, NH, Tq, Tk);
              if (way == 0) {
                op.append_attend(ctx, ao, dq, dk, dv, kc, vc, kv_stride, t0, B, Tq, H, NH, vl, scratch);
              } else {
                const size_t row = sizeof(float) * H;
                op.copy_2d(kc + (long)t0 * H, row * kv_stride, dk, row * Tq, row * Tq, B);
                op.copy_2d(vc + (long)t0 * H, row * kv_stride, dv, row * Tq, row * Tq, B);
                op.attend(ctx, ao, dq, kc, vc, kv_stride, B, Tq, Tk, H, NH, vl, scratch);
              }
              out[way] = {mem.get(ctx, n), mem.get(att, na), mem.get(kc, nc), mem.get(vc, nc)};
            }
            for (size_t i = 0; i < out[0].size(); ++i) {
              INFO("output " << i << " (ctx, weights, key cache, value cache)");
              REQUIRE(out[0][i] == out[1][i]);
            }
            // the cache: the new rows at t0, the others as they were
            for (int b = 0; b < B; ++b)
              for (int t = 0; t < kv_stride; ++t)
                for (int d = 0; d < H; ++d) {
                  const size_t at = ((size_t)b * kv_stride + t) * H + d;
                  const bool fresh = t >= t0 && t < t0 + Tq;
                  const size_t from = ((size_t)b * Tq + (t - (fresh ? t0 : 0))) * H + d;
                  REQUIRE(out[0][2][at] == (fresh ? kn[from] : kc0[at]));
                  REQUIRE(out[0][3][at] == (fresh ? vn[from] : vc0[at]));
                }
            return out[0];
          });
        }
}

TEST_CASE("ops: additive attention, GRU and LSTM cells, argmax, copies on every op set", "[ops]") {
  const int B = 3, Tk = 7, Hh = 10, Dv = 6, ldc = 9;
  const Floats qp = rnd((size_t)B * Hh, 16), kp = rnd((size_t)B * Tk * Hh, 17), v = rnd((size_t)B * Tk * Dv, 18),
               wv = rnd(Hh, 19);
  const std::vector<int> lens = {Tk, 3, 1};
  each_set([&](const ops::Ops& op, Mem& mem, bool) {
    AlignedBuffer buf(1 << 16);
    Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena();
    float* ctx = mem.put(Floats((size_t)B * ldc, 0.f));
    float* att = mem.put(Floats((size_t)B * Tk));
    op.additive_attend(ctx, ldc, att, mem.put(qp), mem.put(kp), mem.put(v), Linear{mem.put(wv), nullptr, 1, Hh}, B,
                       Tk, Hh, Dv, ValidLens::per_batch(mem.put(lens)), scratch);
    return std::vector<Floats>{mem.get(ctx, (size_t)B * ldc), mem.get(att, (size_t)B * Tk)};
  });
  for (ops::Cell cell : {ops::Cell::GRU, ops::Cell::LSTM}) {
    const int G = (cell == ops::Cell::GRU ? 3 : 4) * Hh;
    const Floats gi = rnd((size_t)B * G, 20, 2.f), gh = rnd((size_t)B * G, 21, 2.f), h = rnd((size_t)B * Hh, 22),
                 c = rnd((size_t)B * Hh, 23);
    each_set([&](const ops::Ops& op, Mem& mem, bool) {
      float* dh = mem.put(h);
      float* dc = mem.put(c);
      op.rnn_cell(dh, cell == ops::Cell::LSTM ? dc : nullptr, mem.put(gi), mem.put(gh), cell, B, Hh);
      return std::vector<Floats>{mem.get(dh, (size_t)B * Hh), mem.get(dc, (size_t)B * Hh)};
    });
  }
  // 4 rows, and 300 (a device set's three results then no longer fit one small copy back)
  for (int R : {4, 300})
  for (int V : {1, 7, 300, 1025}) {
    INFO("R " << R << ", V " << V);
    Floats logits = rnd((size_t)R * V, 24, 3.f);
    if (V > 1) logits[(size_t)V + 1] = logits[(size_t)V] = 50.f;  // a tie: the lower id wins
    each_set([&](const ops::Ops& op, Mem& mem, bool) {
      AlignedBuffer buf(1 << 16);
      Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena(mem.put(Floats(1 << 14)), 1 << 16);
      std::vector<int> ids(R);
      std::vector<float> probs(R);
      std::vector<double> logp(R);
      op.argmax_rows(ids.data(), probs.data(), logp.data(), mem.put(logits), R, V, scratch);
      Floats out;
      for (int r = 0; r < R; ++r) out.insert(out.end(), {(float)ids[r], probs[r], (float)logp[r]});
      return std::vector<Floats>{out};
    });
  }
  const Floats src = rnd(64, 25);
  each_set([&](const ops::Ops& op, Mem& mem, bool) {
    const float* s = mem.put(src);
    float* a = mem.put(Floats(64, 1.f));
    float* b = mem.put(Floats(64, 1.f));
    op.copy(a + 3, s + 5, sizeof(float) * 20);
    op.copy_2d(b, sizeof(float) * 8, s, sizeof(float) * 5, sizeof(float) * 3, 6);  // 6 rows of 3
    op.zero(a + 40, sizeof(float) * 10);
    return std::vector<Floats>{mem.get(a, 64), mem.get(b, 64)};
  });
}

// Beam search's ops. top_rows against a sort of every (value, id) pair of a row (the larger
// value first, a NaN after every number, equal values by the lower id) and exp_sum's
// constants, then every set against the scalar one: rows at a stride, from one value to rows
// that a device cuts into chunks, ties within and across the chunks, -inf and NaN, n from 1
// to V. permute_blocks against moving the rows by hand: parents repeated, blocks left as
// they are, blocks of one row.
TEST_CASE("ops: beam search's top_rows and permute_blocks on every op set", "[ops]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int V : {1, 2, 7, 40, 1025, 3001})
    for (int n : {1, 2, 8, 33, V}) {
      if (n > V || (n == V && V > 40)) continue;
      INFO("V " << V << ", n " << n);
      const int R = 5;
      const long ld = V + 3;
      Floats lg = rnd((size_t)R * ld, 40 + V, 3.f);
      float* row = lg.data();
      for (int v = 0; v < V; v += 3) row[ld + v] = 1.5f;  // row 1: ties all along
      if (V > 2) {                                           // row 2: -inf and NaN
        row[2 * ld] = row[2 * ld + V - 1] = nan;
        row[2 * ld + 1] = -inf;
      }
      for (int v = 0; v < V; ++v) row[3 * ld + v] = -2.f;  // row 3: one value
      if (V > 1024) {                                       // row 4: ties across chunk ends
        const int C = ops::argmax_chunks(V), L = (V + C - 1) / C;
        for (int c = 1; c < C; ++c) row[4 * ld + (long)c * L] = row[4 * ld + (long)c * L - 1] = 20.f;
      }
      auto ahead = [](float a, int ia, float b, int ib) {
        if (std::isnan(a) != std::isnan(b)) return std::isnan(b);
        if (!std::isnan(a) && a != b) return a > b;
        return ia < ib;
      };
      // every set's results as floats (a NaN as 1e30, log(sum) for rows without a NaN)
      auto run = [&](const ops::Ops& op, Mem& mem) {
        AlignedBuffer buf(1 << 20);
        Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size())
                                         : Arena(mem.put(Floats(1 << 18)), sizeof(float) << 18);
        std::vector<int> ids((size_t)R * n);
        Floats vals((size_t)R * n), mx((size_t)R);
        std::vector<double> sum((size_t)R);
        op.top_rows(ids.data(), vals.data(), mx.data(), sum.data(), mem.put(lg), ld, R, V, n, scratch);
        Floats out;
        for (int r = 0; r < R; ++r) {
          for (int k = 0; k < n; ++k) {
            const float v = vals[(size_t)r * n + k];
            out.insert(out.end(), {(float)ids[(size_t)r * n + k], std::isnan(v) ? 1e30f : v});
          }
          if (r != 2 || V <= 2) out.insert(out.end(), {mx[(size_t)r], (float)std::log(sum[(size_t)r])});
        }
        return out;
      };
      // the sort, and the constants exp_sum gives (the scalar table)
      ops::use_kernels(ops::KernelTable::Scalar);
      Floats want;
      for (int r = 0; r < R; ++r) {
        const float* x = row + r * ld;
        std::vector<int> order((size_t)V);
        for (int v = 0; v < V; ++v) order[(size_t)v] = v;
        std::sort(order.begin(), order.end(), [&](int a, int b) { return ahead(x[a], a, x[b], b); });
        for (int k = 0; k < n; ++k) {
          const float v = x[order[(size_t)k]];
          want.insert(want.end(), {(float)order[(size_t)k], std::isnan(v) ? 1e30f : v});
        }
        float m = 0;
        double s = 0;
        ops::cpu().exp_sum(x, V, &m, &s);
        if (r != 2 || V <= 2) want.insert(want.end(), {m, (float)std::log(s)});
      }
      {
        Mem mem(ops::cpu());
        const Floats got = run(ops::cpu(), mem);
        REQUIRE(got == want);
      }
      each_set([&](const ops::Ops& op, Mem& mem, bool) { return std::vector<Floats>{run(op, mem)}; });
    }
  for (int K : {1, 3, 4}) {
    INFO("K " << K);
    const int nb = 3, len = 5, stride = 7;
    const Floats rows = rnd((size_t)nb * K * stride, 50 + K);
    std::vector<int> from((size_t)nb * K);
    for (int b = 0; b < nb; ++b)
      for (int j = 0; j < K; ++j)  // block 1 stays; the others take repeated parents
        from[(size_t)(b * K + j)] = b == 1 ? j : (j * 2 + b + 1) % K;
    Floats want = rows;
    for (int b = 0; b < nb; ++b)
      for (int j = 0; j < K; ++j)
        for (int c = 0; c < len; ++c)
          want[(size_t)(b * K + j) * stride + c] = rows[(size_t)(b * K + from[(size_t)(b * K + j)]) * stride + c];
    auto run = [&](const ops::Ops& op, Mem& mem) {
      float* d = mem.put(rows);
      op.permute_blocks(d, stride, len, mem.put(from), nb, K, mem.put(Floats((size_t)K * len)));
      return mem.get(d, rows.size());
    };
    {
      Mem mem(ops::cpu());
      REQUIRE(run(ops::cpu(), mem) == want);
    }
    each_set([&](const ops::Ops& op, Mem& mem, bool) { return std::vector<Floats>{run(op, mem)}; });
  }
}

// The searches' dropping of finished rows: keep_rows against moving the rows by hand, the whole
// buffer compared (rows past n and columns past len untouched). Kept rows from a prefix, from
// random subsets of up to 300 rows (a device walks them 32 at a time, each chunk reading rows
// that the chunks before it have not written), the last row alone, every row; columns across
// a device's 32-column tiles; and a Bahdanau driver's states: layers of rows compacted as one
// run of rows (l * n + i from l * R + keep[i]).
TEST_CASE("ops: the searches' keep_rows on every op set", "[ops]") {
  struct Case {
    int rows, len, stride;
    std::vector<int> keep;
  };
  std::vector<Case> cases;
  std::mt19937 rng(11);
  for (const auto& [R, len, stride] : std::vector<std::tuple<int, int, int>>{
           {1, 5, 7}, {5, 5, 7}, {40, 33, 40}, {100, 70, 70}, {300, 9, 12}}) {
    std::vector<int> all((size_t)R);
    for (int i = 0; i < R; ++i) all[(size_t)i] = i;
    cases.push_back({R, len, stride, all});                    // every row stays
    cases.push_back({R, len, stride, {R - 1}});                // the last row alone
    for (int k = 0; k < 3; ++k) {                              // random subsets
      std::vector<int> keep;
      for (int i = 0; i < R; ++i)
        if (rng() % 4 != 0 || (k == 0 && i < R / 2)) keep.push_back(i);  // k = 0: a prefix first
      if (keep.empty()) keep.push_back(0);
      cases.push_back({R, len, stride, keep});
    }
  }
  {  // layers of a state (L, R, H) -> (L, n, H)
    const int L = 3, R = 40, H = 9;
    std::vector<int> keep, layered;
    for (int i = 0; i < R; ++i)
      if (i % 3 != 1) keep.push_back(i);
    for (int l = 0; l < L; ++l)
      for (int k : keep) layered.push_back(l * R + k);
    cases.push_back({L * R, H, H, layered});
  }
  for (const Case& c : cases) {
    const int n = (int)c.keep.size();
    INFO(c.rows << " rows of " << c.len << " at stride " << c.stride << ", " << n << " kept");
    for (int i = 0; i < n; ++i) {
      REQUIRE(c.keep[(size_t)i] >= i);  // the op's contract
      if (i) REQUIRE(c.keep[(size_t)i] > c.keep[(size_t)i - 1]);
    }
    const Floats rows = rnd((size_t)c.rows * c.stride, 60 + c.rows);
    Floats want = rows;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < c.len; ++j)
        want[(size_t)i * c.stride + j] = rows[(size_t)c.keep[(size_t)i] * c.stride + j];
    auto run = [&](const ops::Ops& op, Mem& mem) {
      float* d = mem.put(rows);
      op.keep_rows(d, c.stride, c.len, mem.put(c.keep), n);
      return mem.get(d, rows.size());
    };
    {
      Mem mem(ops::cpu());
      REQUIRE(run(ops::cpu(), mem) == want);
    }
    each_set([&](const ops::Ops& op, Mem& mem, bool) { return std::vector<Floats>{run(op, mem)}; });
  }
}

TEST_CASE("ops: gru_step from x, from input products, and from both, on every op set", "[ops]") {
  // Both: gi holds the products of the inputs after x's n columns (b_ih included) and the
  // layer's W_ih covers x's columns alone, without bias (a decoder's looked-up embedding).
  const int B = 3, Hh = 10, G = 3 * Hh, n = 6, m = 5, in = n + m;
  const Floats w_ih = rnd((size_t)G * in, 30), b_ih = rnd(G, 31), w_hh = rnd((size_t)G * Hh, 32),
               b_hh = rnd(G, 33), x = rnd((size_t)B * in, 34, 2.f), h0 = rnd((size_t)B * Hh, 35);
  Floats wn((size_t)G * n), xn((size_t)B * n), gi_rest((size_t)B * G), gi_all((size_t)B * G);
  for (int o = 0; o < G; ++o)
    for (int k = 0; k < n; ++k) wn[(size_t)o * n + k] = w_ih[(size_t)o * in + k];
  for (int b = 0; b < B; ++b) {
    for (int k = 0; k < n; ++k) xn[(size_t)b * n + k] = x[(size_t)b * in + k];
    for (int o = 0; o < G; ++o) {
      double all = b_ih[o], rest = b_ih[o];
      for (int k = 0; k < in; ++k) all += (double)w_ih[(size_t)o * in + k] * x[(size_t)b * in + k];
      for (int k = n; k < in; ++k) rest += (double)w_ih[(size_t)o * in + k] * x[(size_t)b * in + k];
      gi_all[(size_t)b * G + o] = (float)all;
      gi_rest[(size_t)b * G + o] = (float)rest;
    }
  }
  for (bool fused : {false, true})
    each_set([&](const ops::Ops& op, Mem& mem, bool) {
      AlignedBuffer buf(1 << 16);
      Arena scratch = op.host_memory() ? Arena(buf.data(), buf.size()) : Arena(mem.put(Floats(1 << 12)), 1 << 14);
      const Linear hh{mem.put(w_hh), mem.put(b_hh), G, Hh};
      const Linear ih_all{mem.put(w_ih), mem.put(b_ih), G, in}, ih_n{mem.put(wn), nullptr, G, n};
      // the CPU's fused kernel reads host layouts; other sets ignore them
      std::vector<float> pk_all, pk_n;
      if (fused && op.host_memory()) {
        pk_all.resize(op.gru_packed_floats(in, Hh));
        pk_n.resize(op.gru_packed_floats(n, Hh));
        op.gru_pack(pk_all.data(), Linear{w_ih.data(), b_ih.data(), G, in}, Linear{w_hh.data(), b_hh.data(), G, Hh});
        op.gru_pack(pk_n.data(), Linear{wn.data(), nullptr, G, n}, Linear{w_hh.data(), b_hh.data(), G, Hh});
      }
      const float* p_all = pk_all.empty() ? nullptr : pk_all.data();
      const float* p_n = pk_n.empty() ? nullptr : pk_n.data();
      float* h1 = mem.put(h0);
      float* h2 = mem.put(h0);
      float* h3 = mem.put(h0);
      op.gru_step(h1, mem.put(x), nullptr, ih_all, hh, p_all, B, scratch);
      op.gru_step(h2, nullptr, mem.put(gi_all), ih_all, hh, p_all, B, scratch);
      op.gru_step(h3, mem.put(xn), mem.put(gi_rest), ih_n, hh, p_n, B, scratch);
      const Floats a = mem.get(h1, (size_t)B * Hh), b = mem.get(h2, (size_t)B * Hh), c = mem.get(h3, (size_t)B * Hh);
      REQUIRE_CLOSE(b, a, 1e-5);  // the three ways are one GRU step
      REQUIRE_CLOSE(c, a, 1e-5);
      return std::vector<Floats>{a, b, c};
    });
}

TEST_CASE("ops: argmax_rows picks what a plain scan picks among NaN, infinities and ties", "[ops]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int V = 37;
  std::vector<Floats> rows;
  for (int r = 0; r < 9; ++r) rows.push_back(rnd(V, 50 + r, 3.f));
  rows[0][0] = nan;               // a NaN first: nothing replaces it
  rows[1][20] = nan;              // a NaN later: ignored
  rows[1][30] = 9.f;
  rows[2][5] = inf;               // +inf wins
  rows[3][3] = -inf;              // -inf loses
  rows[3][33] = 8.f;
  rows[4][7] = rows[4][25] = 7.f;  // a tie: the lower id
  for (float& v : rows[5]) v = -inf;  // all -inf: the first
  rows[6][36] = 20.f;             // the last
  rows[7][0] = 20.f;              // the first
  rows[8][16] = 0.f;              // -0 and 0 tied at the top: the lower id
  for (float& v : rows[8]) v = v > 0.f ? -v : v;
  rows[8][12] = -0.f;
  for (const auto table : {ops::KernelTable::Scalar, ops::KernelTable::Simd}) {
    if (table == ops::KernelTable::Simd && !ops::simd_kernels()) continue;
    const auto before = ops::kernel_table();
    ops::use_kernels(table);
    for (size_t r = 0; r < rows.size(); ++r) {
      const Floats& lg = rows[r];
      int want = 0;
      for (int v = 1; v < V; ++v)
        if (lg[v] > lg[want]) want = v;
      AlignedBuffer buf(1 << 12);
      Arena scratch(buf.data(), buf.size());
      int id = -1;
      float prob = 0.f;
      double logp = 0.0;
      ops::cpu().argmax_rows(&id, &prob, &logp, lg.data(), 1, V, scratch);
      INFO("row " << r << " table " << ops::kernels_name());
      CHECK(id == want);
      if (r == 4 || r == 6 || r == 7) {  // finite rows: the probability of the chosen id
        double s = 0.0;
        for (int v = 0; v < V; ++v) s += std::exp((double)lg[v] - lg[want]);
        CHECK(std::fabs(prob - 1.0 / s) <= 1e-6);
        CHECK(std::fabs(logp + std::log(s)) <= 1e-6);
      }
    }
    ops::use_kernels(before);
  }
}

TEST_CASE("ops: the ops on host arrays on every op set", "[ops]") {
  // Host arrays whatever the set: a device set runs the CPU set's (src/ops/ops.cpp).
  const int B = 2, Tq = 3, Tk = 5, D = 4, ld = 7, NH = 2;
  const Floats a = rnd((size_t)Tq * D, 40), bt = rnd((size_t)Tk * D, 41), bn = rnd((size_t)Tk * D, 42);
  const Floats scores = rnd((size_t)B * NH * Tq * ld, 43, 2.f);
  const std::vector<int> lens = {2, Tk};
  const int in = 5, Hh = 11, G = 3 * Hh;
  const Floats wih = rnd((size_t)G * in, 44), bih = rnd(G, 45), whh = rnd((size_t)G * Hh, 46),
               bhh = rnd(G, 47);
  each_set([&](const ops::Ops& op, Mem&, bool) {
    Floats nt((size_t)Tq * ld, 0.f), nn((size_t)Tq * D, 0.f);
    op.gemm_nt(nt.data(), ld, a.data(), D, bt.data(), D, Tq, Tk, D, 0.5f);
    op.gemm_nn(nn.data(), D, nt.data(), ld, bn.data(), D, Tq, D, Tk);
    Floats masked = scores, plain = scores;
    op.masked_softmax(masked.data(), B * NH, Tq, Tk, ValidLens::per_batch(lens.data()), NH, ld);
    op.softmax_rows(plain.data(), ld, B * NH * Tq, Tk);
    float mx = 0.f;
    double sum = 0.0;
    op.exp_sum(scores.data(), (int)scores.size(), &mx, &sum);
    Floats packed(op.gru_packed_floats(in, Hh));
    op.gru_pack(packed.data(), Linear{wih.data(), bih.data(), G, in}, Linear{whh.data(), bhh.data(), G, Hh});
    return std::vector<Floats>{nt, nn, masked, plain, {mx, (float)sum}, packed};
  });
}

TEST_CASE("ops: linear_n on every op set (layers of other widths, with and without biases)", "[ops]") {
  // CUDA runs up to 4 layers over up to 8 rows as one GEMV launch (float4 steps when K and
  // the input's address allow, else one float at a time), more as a launch per layer.
  for (int M : {1, 8, 9})
    for (int K : {5, 64})
      for (int n : {1, 3, 5})
        for (bool odd_x : {false, true}) {
          INFO("M " << M << " K " << K << " layers " << n << " input at an odd address " << odd_x);
          const int widths[5] = {16, 7, 33, 1, 12};
          each_set([&](const ops::Ops& op, Mem& mem, bool) {
            std::vector<Linear> ls((size_t)n);
            std::vector<float*> ys((size_t)n);
            std::vector<const Linear*> ws((size_t)n);
            for (int i = 0; i < n; ++i) {
              const int N = widths[i];
              const Floats w = rnd((size_t)N * K, 40 + i), b = rnd(N, 50 + i);
              ls[(size_t)i] = Linear{mem.put(w), i == 1 ? nullptr : mem.put(b), N, K};
              ys[(size_t)i] = mem.put(Floats((size_t)M * N, -1.f));
              ws[(size_t)i] = &ls[(size_t)i];
            }
            const float* dx = mem.put(rnd((size_t)M * K + 1, 60)) + (odd_x ? 1 : 0);
            AlignedBuffer buf(1 << 16);
            Arena scratch(buf.data(), buf.size());
            op.linear_n(ys.data(), ws.data(), n, dx, M, scratch);
            std::vector<Floats> out;
            for (int i = 0; i < n; ++i) out.push_back(mem.get(ys[(size_t)i], (size_t)M * widths[i]));
            return out;
          });
        }
}

TEST_CASE("ops: linear_n gives each layer's own product, one product or not", "[ops]") {
  // Three layers over one input, their packed panels and biases end to end (as
  // bind_linear_stack lays them), with a SIMD table that packs: the CPU set makes them one
  // product. Each output feature is the same dot product either way, so the results equal
  // one linear call per layer exactly; also where the layers do not continue one another
  // (the last one's panels elsewhere, outputs not in whole panels, no packing: one call each).
  FOR_EACH_KERNEL_TABLE();
  const auto& K = ops::kernels();
  const int n = 3;
  for (int M : {1, 3, 20})
    for (int In : {5, 64})
      for (int N : {16, 48, 7}) {
        INFO("M " << M << " in " << In << " N " << N);
        const Floats x = rnd((size_t)M * In, 30), w = rnd((size_t)n * N * In, 31), b = rnd((size_t)n * N, 32);
        const long panels = ops::linear_packed_floats(N, In);
        AlignedBuffer packed((size_t)n * panels * sizeof(float)), apart((size_t)panels * sizeof(float));
        std::vector<Linear> ls(n);
        for (int i = 0; i < n; ++i) {
          ls[i] = Linear{w.data() + (long)i * N * In, b.data() + (long)i * N, N, In};
          if (K.linear_pack) {
            float* wp = static_cast<float*>(packed.data()) + i * panels;
            K.linear_pack(wp, ls[i].w, N, In);
            ls[i].wp = wp;
          }
        }
        for (bool moved : {false, true}) {
          INFO("last layer's panels elsewhere " << moved);
          std::vector<Linear> use = ls;
          if (moved && K.linear_pack) {
            K.linear_pack(static_cast<float*>(apart.data()), ls[2].w, N, In);
            use[2].wp = static_cast<const float*>(apart.data());
          }
          Floats ref((size_t)n * M * N), got(ref.size(), -1.f);
          AlignedBuffer buf(1 << 20);
          Arena scratch(buf.data(), buf.size());
          float* ys[n];
          const Linear* ws[n];
          for (int i = 0; i < n; ++i) {
            ops::cpu().linear(ref.data() + (long)i * M * N, x.data(), use[i], M);
            ys[i] = got.data() + (long)i * M * N;
            ws[i] = &use[i];
          }
          ops::cpu().linear_n(ys, ws, n, x.data(), M, scratch);
          REQUIRE(got == ref);
          REQUIRE(scratch.used() == 0);
        }
      }
}

TEST_CASE("bind_linear_stack lays packed panels and biases end to end", "[ops][loader]") {
  FOR_EACH_KERNEL_TABLE();
  // q, k, v of 32 x 16 with biases; o1, o2 of 20 x 16 (outputs not in whole panels)
  attnlite::test::StFile f;
  for (const char* n : {"q", "k", "v"}) {
    f.tensors.emplace_back(std::string("a.") + n + ".weight", attnlite::test::f32_tensor({32, 16}, 0.25f));
    f.tensors.emplace_back(std::string("a.") + n + ".bias", attnlite::test::f32_tensor({32}, n[0] == 'k' ? 2.f : 1.f));
  }
  for (const char* n : {"o1", "o2"})
    f.tensors.emplace_back(std::string("a.") + n + ".weight", attnlite::test::f32_tensor({20, 16}));
  const std::vector<uint8_t> bytes = f.bytes();
  const SafeTensors st = SafeTensors::view(bytes.data(), bytes.size());
  WeightStore ws(st);
  static const char* const qkv_names[] = {"q", "k", "v"};
  Linear qkv[3];
  bind_linear_stack(ws, "a.", qkv_names, 3, qkv, 16, 32, true);
  for (int i = 0; i < 3; ++i) {
    INFO("layer " << i);
    CHECK(qkv[i].in == 16);
    CHECK(qkv[i].out == 32);
    REQUIRE(qkv[i].w != nullptr);
    CHECK(qkv[i].w[0] == 0.25f);
    REQUIRE(qkv[i].b != nullptr);
    CHECK(qkv[i].b[31] == (i == 1 ? 2.f : 1.f));
  }
  if (ops::kernels().linear_pack) {
    REQUIRE(qkv[0].wp != nullptr);
    CHECK(qkv[1].wp == qkv[0].wp + 32 * 16);
    CHECK(qkv[2].wp == qkv[1].wp + 32 * 16);
    CHECK(qkv[1].b == qkv[0].b + 32);
    CHECK(qkv[2].b == qkv[1].b + 32);
    CHECK(ws.derived_bytes() == (3 * 32 * 16 + 3 * 32) * sizeof(float));
  } else {
    for (const Linear& l : qkv) CHECK(l.wp == nullptr);
    CHECK(ws.derived_bytes() == 0);
  }
  // outputs not in whole panels: bound one by one, as bind_linear binds them
  static const char* const o_names[] = {"o1", "o2"};
  Linear o[2];
  const size_t before = ws.derived_bytes();
  bind_linear_stack(ws, "a.", o_names, 2, o, 16, 20, false);
  for (const Linear& l : o) {
    CHECK(l.out == 20);
    CHECK(l.b == nullptr);
    CHECK((l.wp != nullptr) == (ops::kernels().linear_pack != nullptr));
  }
  CHECK(ws.derived_bytes() - before == 2 * (size_t)ops::cpu().linear_packed_floats(20, 16) * sizeof(float));
}
