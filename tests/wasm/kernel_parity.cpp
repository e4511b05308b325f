// attnlite — parity of the WebAssembly build's SIMD kernel table with the scalar reference,
// kernel by kernel, at every tail size: M in 1..9, N and K in {1, 2, 3, 4, 5, 7, 8, 9, 15, 16,
// 17, 31, 32, 33, 63, 64, 65, 128, 129}, row strides wider than the rows (and the padding left
// untouched), add with its output aliasing an input, special values (±0, large |x|, ±inf,
// NaN, masked -inf softmax entries).
// Built by `wasm/build.sh kernel-test` (target attnlite_kernel_parity of wasm/CMakeLists.txt),
// run by tests/web/kernels.test.mjs: `node build/wasm-node/kernel_parity.mjs` prints the
// largest error of each kernel and exits with status 1 when one is over its bound.
//
// Error measure: |simd − scalar| / magnitude, the magnitude being what the rounding errors
// scale with (Σ|x_k·w_k| + |b| for the products, the largest input of the row for softmax,
// |x| for gelu …). Bounds, 1e-5 unless said: gemm_nt, linear_i8, softmax, layer_norm, tanh
// and sigmoid differ only by summation order and 1-2 ulp polynomials; gelu's erf (Abramowitz &
// Stegun 7.1.26) is off by up to 1.5e-7 absolute, so its error is bounded relative to |x|;
// linear (its lanes sum K in the scalar order), add and relu are exact (bound 0); gemm_nn
// sums in the scalar order too but keeps the 1e-5 bound (measured: exact).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "attnlite/ops/kernels.h"

using attnlite::ops::Kernels;

namespace {

uint32_t g_seed = 12345;
float rnd(float lo, float hi) {  // deterministic: the same numbers on every run
  g_seed = g_seed * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(g_seed >> 8) / 16777216.f;
}
std::vector<float> rnd_vec(size_t n, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(n);
  for (auto& x : v) x = rnd(lo, hi);
  return v;
}

struct Stat {
  const char* name;
  double bound;
  double max_abs = 0, max_rel = 0;
  long cases = 0, failures = 0;
  // One output: simd value s, reference r, the magnitude its error scales with.
  void check(float s, float r, double mag, const char* what, int i) {
    if (std::isnan(r) || std::isnan(s)) {
      if (std::isnan(r) != std::isnan(s)) fail(s, r, what, i);
      return;
    }
    if (std::isinf(r) || std::isinf(s)) {
      if (s != r) fail(s, r, what, i);
      return;
    }
    const double d = std::fabs((double)s - r);
    const double rel = mag > 0 ? d / mag : d;
    if (d > max_abs) max_abs = d;
    if (rel > max_rel) max_rel = rel;
    if (rel > bound) fail(s, r, what, i);
  }
  void fail(float s, float r, const char* what, int i) {
    if (failures++ < 5) std::printf("  %s: %s [%d]: simd %.9g, scalar %.9g\n", name, what, i, s, r);
  }
};

const int kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 129};
constexpr float kPad = 12345.f;  // fills the stride padding, which no kernel may write

void check_pad(Stat& st, const std::vector<float>& c, int M, int N, int ldc) {
  for (int m = 0; m < M; ++m)
    for (int n = N; n < ldc; ++n)
      if (c[(size_t)m * ldc + n] != kPad) st.fail(c[(size_t)m * ldc + n], kPad, "padding written", n);
}

void test_products(const Kernels& s, const Kernels& r, Stat& lin, Stat& li8, Stat& nt, Stat& nn) {
  for (int M = 1; M <= 9; ++M)
    for (int N : kSizes)
      for (int K : kSizes) {
        const auto x = rnd_vec((size_t)M * K), w = rnd_vec((size_t)N * K), b = rnd_vec(N);
        // linear (with and without bias) and linear_i8
        std::vector<float> ys(M * N), yr(M * N);
        for (int with_b = 0; with_b < 2; ++with_b) {
          const float* bp = with_b ? b.data() : nullptr;
          s.linear(ys.data(), x.data(), w.data(), bp, M, N, K);
          r.linear(yr.data(), x.data(), w.data(), bp, M, N, K);
          for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
              double mag = bp ? std::fabs(bp[n]) : 0;
              for (int k = 0; k < K; ++k) mag += std::fabs(x[m * K + k] * w[n * K + k]);
              lin.check(ys[m * N + n], yr[m * N + n], mag, "linear", m * N + n);
            }
          ++lin.cases;
        }
        std::vector<int8_t> q((size_t)N * K);
        for (auto& v : q) v = (int8_t)(int)rnd(-127.f, 128.f);
        const auto scale = rnd_vec(N, 0.001f, 0.02f);
        s.linear_i8(ys.data(), x.data(), q.data(), scale.data(), b.data(), M, N, K);
        r.linear_i8(yr.data(), x.data(), q.data(), scale.data(), b.data(), M, N, K);
        for (int m = 0; m < M; ++m)
          for (int n = 0; n < N; ++n) {
            double mag = 0;
            for (int k = 0; k < K; ++k) mag += std::fabs(x[m * K + k] * (float)q[n * K + k]);
            li8.check(ys[m * N + n], yr[m * N + n], mag * scale[n] + std::fabs(b[n]), "linear_i8", m * N + n);
          }
        ++li8.cases;
        // gemm_nt and gemm_nn with strides wider than the rows
        for (int strided = 0; strided < 2; ++strided) {
          const int lda = K + 3 * strided, ldb = K + 5 * strided, ldc = N + 2 * strided;
          const auto a = rnd_vec((size_t)M * lda), bt = rnd_vec((size_t)N * ldb);
          std::vector<float> cs((size_t)M * ldc, kPad), cr((size_t)M * ldc, kPad);
          const float alpha = strided ? 0.125f : 1.f;
          s.gemm_nt(cs.data(), ldc, a.data(), lda, bt.data(), ldb, M, N, K, alpha);
          r.gemm_nt(cr.data(), ldc, a.data(), lda, bt.data(), ldb, M, N, K, alpha);
          for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
              double mag = 0;
              for (int k = 0; k < K; ++k) mag += std::fabs(a[m * lda + k] * bt[n * ldb + k]);
              nt.check(cs[m * ldc + n], cr[m * ldc + n], mag * alpha, "gemm_nt", m * ldc + n);
            }
          check_pad(nt, cs, M, N, ldc);
          ++nt.cases;
          const int ldbn = N + 5 * strided;  // b (K, N) for gemm_nn
          const auto bn = rnd_vec((size_t)K * ldbn);
          std::fill(cs.begin(), cs.end(), kPad);
          std::fill(cr.begin(), cr.end(), kPad);
          s.gemm_nn(cs.data(), ldc, a.data(), lda, bn.data(), ldbn, M, N, K);
          r.gemm_nn(cr.data(), ldc, a.data(), lda, bn.data(), ldbn, M, N, K);
          for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
              double mag = 0;
              for (int k = 0; k < K; ++k) mag += std::fabs(a[m * lda + k] * bn[k * ldbn + n]);
              nn.check(cs[m * ldc + n], cr[m * ldc + n], mag, "gemm_nn", m * ldc + n);
            }
          check_pad(nn, cs, M, N, ldc);
          ++nn.cases;
        }
      }
}

void test_rows(const Kernels& s, const Kernels& r, Stat& sm, Stat& ln) {
  for (int rows = 1; rows <= 9; ++rows)
    for (int n : kSizes) {
      // softmax over strided rows, a few entries masked to -inf (as the attention masks do)
      const int ld = n + 3;
      std::vector<float> xs = rnd_vec((size_t)rows * ld, -8.f, 8.f);
      for (int i = 0; i < rows; ++i)
        for (int j = 1; j < n; j += 3) xs[(size_t)i * ld + j] = -INFINITY;
      for (int i = 0; i < rows; ++i)
        for (int j = n; j < ld; ++j) xs[(size_t)i * ld + j] = kPad;
      std::vector<float> xr = xs;
      s.softmax_rows(xs.data(), ld, rows, n);
      r.softmax_rows(xr.data(), ld, rows, n);
      for (int i = 0; i < rows * ld; ++i) {
        if (i % ld >= n) {
          if (xs[i] != kPad) sm.fail(xs[i], kPad, "padding written", i);
          continue;
        }
        sm.check(xs[i], xr[i], std::fabs(xr[i]) + 1e-30, "softmax_rows", i);
        if (xr[i] == 0.f && xs[i] != 0.f) sm.fail(xs[i], 0.f, "masked entry not 0", i);
      }
      ++sm.cases;
      // layer_norm, values off-centre as the residual stream's are
      const auto x = rnd_vec((size_t)rows * n, -3.f, 5.f), g = rnd_vec(n, 0.5f, 1.5f),
                 b = rnd_vec(n, -0.5f, 0.5f);
      std::vector<float> ys((size_t)rows * n), yr((size_t)rows * n);
      s.layer_norm(ys.data(), x.data(), g.data(), b.data(), rows, n, 1e-5f);
      r.layer_norm(yr.data(), x.data(), g.data(), b.data(), rows, n, 1e-5f);
      for (int i = 0; i < rows * n; ++i) {
        const int j = i % n;
        // the normalized value is at most √n in magnitude: its rounding scales with that bound
        const double mag = std::sqrt((double)n) * std::fabs(g[j]) + std::fabs(b[j]);
        ln.check(ys[i], yr[i], mag, "layer_norm", i);
      }
      ++ln.cases;
    }
}

// exp_sum (log-softmax's max and sum) over every n of kSizes and vocabulary sizes, some
// entries -inf (masked) and one row of large magnitudes; the max must be exact.
void test_exp_sum(const Kernels& s, const Kernels& r, Stat& es) {
  std::vector<int> sizes(std::begin(kSizes), std::end(kSizes));
  for (int n : {127, 255, 256, 257, 9308, 9479}) sizes.push_back(n);
  for (int n : sizes)
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<float> x = rnd_vec((size_t)n + 1, -8.f, 8.f);
      if (kind == 1)
        for (int j = 1; j < n; j += 3) x[(size_t)j] = -INFINITY;
      if (kind == 2)
        for (float& v : x) v *= 1e3f;
      x[(size_t)n] = 1e30f;  // past the end: never read
      float ms = 0.f, mr = 0.f;
      double ss = 0.0, sr = 0.0;
      s.exp_sum(x.data(), n, &ms, &ss);
      r.exp_sum(x.data(), n, &mr, &sr);
      if (ms != mr) es.fail(ms, mr, "max", n);
      es.check((float)(ss / sr), 1.f, 1.0, "sum / reference sum", n);
      ++es.cases;
    }
}

// Element-wise kernels, f(x) in place over every n of kSizes and 1..40, plus special values.
void test_pointwise(const Kernels& s, const Kernels& r, Stat& add, Stat& relu, Stat& th,
                    Stat& sg, Stat& ge) {
  const float special[] = {0.f, -0.f, 1e-8f, -1e-8f, 0.5f, -0.5f, 0.624f, 0.626f, 3.f, -3.f,
                           9.f, -9.f, 20.f, -20.f, 50.f, -50.f, 100.f, -100.f, 1e4f, -1e4f};
  std::vector<int> ns(kSizes, kSizes + sizeof kSizes / sizeof *kSizes);
  for (int n = 1; n <= 40; ++n) ns.push_back(n);
  for (int n : ns) {
    auto x = rnd_vec(n, -6.f, 6.f);
    for (int i = 0; i < n; i += 7) x[i] = special[(i / 7) % 20];
    auto y = rnd_vec(n);
    // add: into a third array, then aliasing a and b
    std::vector<float> ys(n), yr(n);
    s.add(ys.data(), x.data(), y.data(), n);
    r.add(yr.data(), x.data(), y.data(), n);
    for (int i = 0; i < n; ++i) add.check(ys[i], yr[i], 1, "add", i);
    std::vector<float> a1 = x, a2 = y;
    s.add(a1.data(), a1.data(), y.data(), n);
    s.add(a2.data(), x.data(), a2.data(), n);
    for (int i = 0; i < n; ++i) {
      add.check(a1[i], yr[i], 1, "add (y == a)", i);
      add.check(a2[i], yr[i], 1, "add (y == b)", i);
    }
    ++add.cases;
    struct {
      void (*fs)(float*, int);
      void (*fr)(float*, int);
      Stat& st;
      bool by_x;  // error bounded relative to |x| (gelu) rather than to the result
    } fns[] = {{s.relu, r.relu, relu, false}, {s.tanh, r.tanh, th, false},
               {s.sigmoid, r.sigmoid, sg, false}, {s.gelu, r.gelu, ge, true}};
    for (auto& f : fns) {
      std::vector<float> vs = x, vr = x;
      f.fs(vs.data(), n);
      f.fr(vr.data(), n);
      for (int i = 0; i < n; ++i) {
        const double mag = f.by_x ? std::fmax(std::fabs(x[i]), 1e-6) : std::fmax(std::fabs(vr[i]), 1e-30);
        f.st.check(vs[i], vr[i], mag, f.st.name, i);
      }
      ++f.st.cases;
    }
  }
  // NaN and infinities where the reference defines them (gelu(±inf) is NaN or inf·0 there)
  const float odd[] = {NAN, INFINITY, -INFINITY, NAN, 1.f};
  for (auto f : {s.tanh, s.sigmoid, s.relu}) {
    std::vector<float> vs(odd, odd + 5), vr(odd, odd + 5);
    f(vs.data(), 5);
    (f == s.tanh ? r.tanh : f == s.sigmoid ? r.sigmoid : r.relu)(vr.data(), 5);
    Stat& st = f == s.tanh ? th : f == s.sigmoid ? sg : relu;
    for (int i = 0; i < 5; ++i) st.check(vs[i], vr[i], std::fmax(std::fabs(vr[i]), 1e-30), "special", i);
  }
}

}  // namespace

// linear_i8 beyond the product sweep: the WebAssembly kernel splits each row of x into two
// int16 parts (src/cpu/wasm/linear_i8_simd128.cpp), with an error bounded by
// 2^-29 · max|x| · Σ|q| · scale rather than by Σ|x·q|. Checked against a double-precision sum,
// within that bound plus 1e-6 of the output's magnitude (the fp32 scale and bias), on rows
// the random sweep does not make: heavy-tailed rows (entries from 1e-6 to 1e3 of both signs),
// K over one integer block (2048, 2049, 4100: partial sums added in fp32), and groups that mix
// rows the kernel cannot split (NaN, ±inf, all zero, below 2^-90, denormal, 1e30) with rows it
// can; those must equal the scalar kernel's (NaN and infinities included, 1e-5 otherwise).
// And the integer sums at their largest (a full block of |hi| = 2^14 times q = -128).
void test_linear_i8_rows(const Kernels& s, const Kernels& r, Stat& bound, Stat& special) {
  const int shapes[][3] = {{1, 9, 64}, {2, 5, 129}, {3, 7, 2048}, {5, 3, 2049}, {2, 4, 4100}, {9, 2, 300}};
  for (const auto& sh : shapes) {
    const int M = sh[0], N = sh[1], K = sh[2];
    std::vector<float> x((size_t)M * K);
    for (auto& v : x) v = (rnd(0.f, 1.f) < 0.5f ? -1.f : 1.f) * std::pow(10.f, rnd(-6.f, 3.f));
    std::vector<int8_t> q((size_t)N * K);
    for (auto& v : q) v = (int8_t)(int)rnd(-127.f, 128.f);
    const auto scale = rnd_vec(N, 0.001f, 0.02f), b = rnd_vec(N);
    std::vector<float> ys((size_t)M * N);
    s.linear_i8(ys.data(), x.data(), q.data(), scale.data(), b.data(), M, N, K);
    for (int m = 0; m < M; ++m) {
      double mx = 0;
      for (int k = 0; k < K; ++k) mx = std::max(mx, (double)std::fabs(x[(size_t)m * K + k]));
      for (int n = 0; n < N; ++n) {
        double exact = 0, mag = 0, sq = 0;
        for (int k = 0; k < K; ++k) {
          const double p = (double)x[(size_t)m * K + k] * q[(size_t)n * K + k];
          exact += p;
          mag += std::fabs(p);
          sq += std::abs((int)q[(size_t)n * K + k]);
        }
        exact = exact * scale[n] + b[n];
        const double allowed = std::ldexp(mx * sq * scale[n], -29) + 1e-6 * (mag * scale[n] + std::fabs(b[n]));
        bound.check(ys[(size_t)m * N + n], (float)exact, allowed, "linear_i8 rows", m * N + n);
      }
    }
    ++bound.cases;
  }
  // The integer sums at their largest: every x near the top of its power of two (|hi| at
  // 2^14) times q = -128, over full blocks (a block's four int32 lanes total 2^32), and one
  // row of x over single blocks up to 2047 columns (the 4 x 1 tile that sums its lanes four
  // rows at a time: pairs of lanes up to 2^31 - 2^22 in int32).
  for (const int M : {1, 3})
    for (int K : {1016, 1024, 2040, 2047, 2048, 2056, 4100}) {
      const int N = 5;
      std::vector<float> x((size_t)M * K);
      for (size_t i = 0; i < x.size(); ++i) x[i] = i % (size_t)K == 0 ? 0.99999f : (i / K == 1 ? -0.99f : 0.999f);
      std::vector<int8_t> q((size_t)N * K, (int8_t)-128);
      for (int k = 0; k < K; ++k) q[(size_t)4 * K + k] = 127;
      const auto scale = rnd_vec(N, 0.001f, 0.02f), b = rnd_vec(N);
      std::vector<float> ys((size_t)M * N);
      s.linear_i8(ys.data(), x.data(), q.data(), scale.data(), b.data(), M, N, K);
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          double exact = 0, mag = 0;
          for (int k = 0; k < K; ++k) {
            exact += (double)x[(size_t)m * K + k] * q[(size_t)n * K + k];
            mag += std::fabs((double)x[(size_t)m * K + k] * q[(size_t)n * K + k]);
          }
          exact = exact * scale[n] + b[n];
          const double allowed = std::ldexp(1.0 * 128 * K * scale[n], -29) + 1e-6 * (mag * scale[n] + std::fabs(b[n]));
          bound.check(ys[(size_t)m * N + n], (float)exact, allowed, "linear_i8 largest sums", m * N + n);
        }
      ++bound.cases;
    }
  const float inf = INFINITY, nan = NAN;
  for (int K : {7, 8, 33, 2050}) {
    const int M = 9, N = 5;
    auto x = rnd_vec((size_t)M * K);
    for (int k = 0; k < K; ++k) {
      x[(size_t)1 * K + k] = 0.f;                      // all zero
      x[(size_t)3 * K + k] *= 1e-30f;                  // below 2^-90
      x[(size_t)4 * K + k] = k % 2 ? 1e-40f : -3e-42f;  // denormal
      x[(size_t)6 * K + k] *= 1e30f;                   // large
    }
    x[(size_t)2 * K + K / 2] = nan;
    x[(size_t)5 * K + K - 1] = inf;
    x[(size_t)7 * K] = -inf;
    std::vector<int8_t> q((size_t)N * K);
    for (auto& v : q) v = (int8_t)(int)rnd(-127.f, 128.f);
    const auto scale = rnd_vec(N, 0.001f, 0.02f), b = rnd_vec(N);
    std::vector<float> ys((size_t)M * N), yr((size_t)M * N);
    s.linear_i8(ys.data(), x.data(), q.data(), scale.data(), b.data(), M, N, K);
    r.linear_i8(yr.data(), x.data(), q.data(), scale.data(), b.data(), M, N, K);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double mag = 0;
        for (int k = 0; k < K; ++k) mag += std::fabs((double)x[(size_t)m * K + k] * q[(size_t)n * K + k]);
        special.check(ys[(size_t)m * N + n], yr[(size_t)m * N + n], mag * scale[n] + std::fabs(b[n]),
                      "linear_i8 special rows", m * N + n);
      }
    ++special.cases;
  }
}

int main() {
  const Kernels* simd = attnlite::ops::simd_kernels();
  const Kernels& ref = attnlite::ops::scalar_kernels();
  if (!simd) {
    std::printf("kernel parity: no SIMD kernel table in this build\n");
    return 1;
  }
  std::printf("kernel parity: table '%s' against '%s'\n", simd->name, ref.name);
  Stat lin{"linear", 0}, li8{"linear_i8", 1e-5}, nt{"gemm_nt", 1e-5}, nn{"gemm_nn", 1e-5},
      sm{"softmax_rows", 1e-5}, ln{"layer_norm", 1e-5}, add{"add", 0}, relu{"relu", 0},
      th{"tanh", 1e-5}, sg{"sigmoid", 1e-5}, ge{"gelu", 1e-5}, es{"exp_sum", 3e-7},
      i8b{"linear_i8 rows", 1}, i8s{"linear_i8 spec", 1e-5};
  test_products(*simd, ref, lin, li8, nt, nn);
  test_rows(*simd, ref, sm, ln);
  test_pointwise(*simd, ref, add, relu, th, sg, ge);
  test_exp_sum(*simd, ref, es);
  test_linear_i8_rows(*simd, ref, i8b, i8s);
  long failed = 0;
  for (Stat* st : {&lin, &li8, &i8b, &i8s, &nt, &nn, &sm, &ln, &add, &relu, &th, &sg, &ge, &es}) {
    std::printf("%-13s %6ld cases  max abs %.3g  max rel %.3g  (bound %.0e)  %s\n", st->name,
                st->cases, st->max_abs, st->max_rel, st->bound, st->failures ? "FAIL" : "ok");
    failed += st->failures;
  }
  std::printf(failed ? "kernel parity: %ld mismatches\n" : "kernel parity: all kernels agree\n", failed);
  return failed ? 1 : 0;
}
