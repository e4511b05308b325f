// The SIMD kernels against the scalar reference (the ground truth), at sizes below, at,
// above and in multiples of the vector width (8) and of the micro-tile (6 x 16), with tails
// in every dimension, strided operands, and the numerically delicate inputs (masked
// softmax entries, huge arguments of exp/tanh/sigmoid, constant layer-norm rows).
//
// Tolerances. The SIMD GEMM sums the K products in another order (8 lanes, K blocks of ≤ 512,
// FMA), so the two results carry different rounding errors. With entries uniform in
// [-1, 1] the partial sums grow like sqrt(K/9) and each of the K additions rounds by up to
// u/2 of that (u = 2^-23), a random walk of about sqrt(K)·u·sqrt(K/9)/2 = K·u/6: 1.3e-6 at
// K = 129, 1e-5 at K = 1000 (sequential scalar sum, the larger of the two errors; the
// max over thousands of outputs is ~4x that). We assert per element
//   |simd − ref| ≤ 1e-5 · max(1, K/256) · (1 + |ref|)
// (gemm_tol below): a few times the expected discrepancy at every K, and still far below
// what an indexing bug (an O(1) error) produces. exp-based outputs (softmax, sigmoid, tanh)
// are in [0, 1] or [-1, 1] and are compared with 1e-6 absolute.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/error.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/ops/ops.h"
#include "fixture.h"
#if defined(ATTNLITE_HAVE_SIMD)
#include "cpu/simd/kernels_simd.h"
#endif

using attnlite::ops::Kernels;
using attnlite::test::random_vec;

namespace {

const int kSizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 15, 16, 17, 31, 32, 33, 64, 100, 128, 129, 136};

// The SIMD tables this CPU runs: the 256-bit one and the AVX-512 one where there is one (x86-64),
// or the one table there is (WebAssembly's SIMD128).
std::vector<const Kernels*> simd_tables() {
  std::vector<const Kernels*> t;
  for (const Kernels* k : {attnlite::ops::simd256_kernels(), attnlite::ops::avx512_kernels()})
    if (k) t.push_back(k);
  if (t.empty() && attnlite::ops::simd_kernels()) t.push_back(attnlite::ops::simd_kernels());
  return t;
}

// The test case runs once per SIMD table (GENERATE), or is skipped without one.
const Kernels* simd_or_skip() {
  std::vector<const Kernels*> t = simd_tables();
  if (t.empty()) t.push_back(nullptr);
  const Kernels* s = GENERATE_COPY(from_range(t));
  if (!s) {
    WARN("SIMD kernels not built or not supported by this CPU: test skipped");
    SUCCEED("skipped");
    return nullptr;
  }
  UNSCOPED_INFO("kernel table " << s->name);
  return s;
}

// max over i of |a − b| / (1 + |b|), b the reference; NaN anywhere gives +inf.
double max_rel_diff(const float* a, const float* b, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return std::numeric_limits<double>::infinity();
    const double d = std::fabs((double)a[i] - (double)b[i]) / (1.0 + std::fabs((double)b[i]));
    m = d > m ? d : m;
  }
  return m;
}

double max_diff_or_inf(const float* a, const float* b, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return std::numeric_limits<double>::infinity();
    const double d = std::fabs((double)a[i] - (double)b[i]);
    m = d > m ? d : m;
  }
  return m;
}

std::string dims(int M, int N, int K) {
  return "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K);
}

constexpr float kSentinel = 12345.f;

double gemm_tol(int K) { return 1e-5 * (K > 256 ? K / 256.0 : 1.0); }

}  // namespace

TEST_CASE("use_kernels(Simd) selects the widest SIMD table", "[simd]") {
  const Kernels* s = attnlite::ops::simd_kernels();
  if (!s) {
    WARN("SIMD kernels not built or not supported by this CPU: test skipped");
    return;
  }
  // the widest: AVX-512 where the CPU has it, else the 256-bit table (or SIMD128)
  const Kernels* wide = attnlite::ops::avx512_kernels();
  const Kernels* narrow = attnlite::ops::simd256_kernels();
  CHECK(s == (wide ? wide : narrow ? narrow : s));
  if (wide) CHECK(std::string(wide->name) == "avx512");
  const auto before = attnlite::ops::kernel_table();
  attnlite::ops::use_kernels(attnlite::ops::KernelTable::Simd);
  CHECK(&attnlite::ops::kernels() == s);
  CHECK(attnlite::ops::kernel_table() == attnlite::ops::KernelTable::Simd);
  CHECK(std::string(attnlite::ops::kernels_name()) == s->name);
  // the 256-bit table is named for the instructions it was compiled to, as CMake expects for
  // this target
  CHECK(std::string((narrow ? narrow : s)->name) == ATTNLITE_EXPECT_KERNELS);
  attnlite::ops::use_kernels(attnlite::ops::KernelTable::Scalar);
  CHECK(&attnlite::ops::kernels() == &attnlite::ops::scalar_kernels());
  attnlite::ops::use_kernels(before);
}

TEST_CASE("simd linear matches scalar for every tail of M, N, K", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(1234);
  double worst = 0.0;
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : kSizes) {
        const auto x = random_vec(rng, (size_t)M * K), w = random_vec(rng, (size_t)N * K);
        const auto b = random_vec(rng, (size_t)N);
        for (int with_bias = 0; with_bias < 2; ++with_bias) {
          const float* bp = with_bias ? b.data() : nullptr;
          std::vector<float> ys((size_t)M * N, kSentinel), yr((size_t)M * N, -kSentinel);
          s->linear(ys.data(), x.data(), w.data(), bp, M, N, K);
          r.linear(yr.data(), x.data(), w.data(), bp, M, N, K);
          const double d = max_rel_diff(ys.data(), yr.data(), ys.size());
          worst = d > worst ? d : worst;
          if (d > 1e-5) FAIL_CHECK(dims(M, N, K) << " bias=" << with_bias << " diff=" << d);
        }
      }
  CHECK(worst <= 1e-5);
}

TEST_CASE("simd linear: K and M blocking (K > 512, M > 1020), GEMM-sized shapes", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(99);
  const int shapes[][3] = {{250, 40, 300}, {481, 33, 513}, {7, 2048, 512}, {64, 129, 1000},
                           {1, 1000, 777}, {2, 61, 2048}, {3, 259, 255}, {241, 16, 257},
                           {1031, 21, 1100}, {4, 2048, 1025}};
  for (const auto& sh : shapes) {
    const int M = sh[0], N = sh[1], K = sh[2];
    const auto x = random_vec(rng, (size_t)M * K), w = random_vec(rng, (size_t)N * K);
    const auto b = random_vec(rng, (size_t)N);
    std::vector<float> ys((size_t)M * N), yr((size_t)M * N);
    s->linear(ys.data(), x.data(), w.data(), b.data(), M, N, K);
    r.linear(yr.data(), x.data(), w.data(), b.data(), M, N, K);
    INFO(dims(M, N, K));
    CHECK(max_rel_diff(ys.data(), yr.data(), ys.size()) <= gemm_tol(K));
  }
}

// linear on weights packed once (linear_pack): the layout itself, then the packed product
// against the scalar reference on the weights as stored, at every tail of M, N and K and on
// the GEMM-sized shapes (K blocks, M blocks, the GEMV and the blocked paths).
TEST_CASE("simd linear_packed on linear_pack's panels matches scalar linear", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  REQUIRE(s->linear_pack != nullptr);
  REQUIRE(s->linear_packed != nullptr);
  CHECK(attnlite::ops::scalar_kernels().linear_pack == nullptr);
  CHECK(attnlite::ops::scalar_kernels().linear_packed == nullptr);
  const Kernels& r = attnlite::ops::scalar_kernels();
  const int P = attnlite::kLinearPanel;
  std::mt19937 rng(4321);
  auto check = [&](int M, int N, int K, bool exhaustive_layout) {
    const auto x = random_vec(rng, (size_t)M * K), w = random_vec(rng, (size_t)N * K);
    const auto b = random_vec(rng, (size_t)N);
    const int64_t n = attnlite::ops::linear_packed_floats(N, K);
    REQUIRE(n == (int64_t)((N + P - 1) / P) * P * K);
    attnlite::AlignedBuffer buf((size_t)n * sizeof(float));
    float* wp = static_cast<float*>(buf.data());
    for (long i = 0; i < n; ++i) wp[i] = kSentinel;
    s->linear_pack(wp, w.data(), N, K);
    if (exhaustive_layout) {
      bool ok = true;
      for (int p = 0; p * P < N; ++p)
        for (int k = 0; k < K; ++k)
          for (int j = 0; j < P; ++j) {
            const float want = p * P + j < N ? w[(size_t)(p * P + j) * K + k] : 0.f;
            ok = ok && wp[((long)p * K + k) * P + j] == want;
          }
      if (!ok) FAIL_CHECK("layout " << dims(M, N, K));
    }
    for (int with_bias = 0; with_bias < 2; ++with_bias) {
      const float* bp = with_bias ? b.data() : nullptr;
      std::vector<float> ys((size_t)M * N + 1, kSentinel), yr((size_t)M * N, -kSentinel);
      s->linear_packed(ys.data(), x.data(), wp, bp, M, N, K, attnlite::ops::kActNone);
      r.linear(yr.data(), x.data(), w.data(), bp, M, N, K);
      const double d = max_rel_diff(ys.data(), yr.data(), yr.size());
      if (d > gemm_tol(K)) FAIL_CHECK(dims(M, N, K) << " bias=" << with_bias << " diff=" << d);
      if (ys[(size_t)M * N] != kSentinel) FAIL_CHECK(dims(M, N, K) << ": wrote past y");
      // The fused activations give exactly the product followed by the relu / gelu kernel.
      if (!with_bias) continue;
      for (const int act : {attnlite::ops::kActRelu, attnlite::ops::kActGelu}) {
        std::vector<float> ya((size_t)M * N + 1, kSentinel);
        s->linear_packed(ya.data(), x.data(), wp, bp, M, N, K, act);
        std::vector<float> want(ys.begin(), ys.end() - 1);
        (act == attnlite::ops::kActRelu ? s->relu : s->gelu)(want.data(), M * N);
        if (!std::equal(want.begin(), want.end(), ya.begin()))
          FAIL_CHECK(dims(M, N, K) << " act=" << act << ": not the kernel's activation of y");
        if (ya[(size_t)M * N] != kSentinel) FAIL_CHECK(dims(M, N, K) << ": act wrote past y");
      }
    }
  };
  // every tail of N and K (the panels), and M across the GEMV and every split of the
  // blocked kernel's tiles (1 to 6 rows each)
  for (int M : {1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 17, 33})
    for (int N : kSizes)
      for (int K : kSizes) check(M, N, K, M == 1);
  const int shapes[][3] = {{20, 512, 2048}, {16, 2048, 512}, {1, 2048, 512}, {2, 61, 2048},
                           {3, 259, 255},   {1031, 21, 1100}, {4, 2048, 1025}, {481, 33, 513},
                           {1, 32000, 64},  {13, 100, 1537}};
  for (const auto& sh : shapes) check(sh[0], sh[1], sh[2], false);
}

// The blocked kernel takes a packed panel in chunks of K when it has 2 to 8 tiles of rows
// (M = 7 to 48): every output must still be the one FMA chain over k that a single tile
// computes, so rows r and r + 1 of any M equal linear_packed on those two rows alone (M = 2:
// one tile, the whole K block at once), bit for bit, with every tail of the chunks and of the
// K blocks.
TEST_CASE("simd linear_packed: chunked tiles give each output the one-tile sum", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  std::mt19937 rng(97);
  int compared = 0;
  for (int M : {7, 12, 13, 16, 20, 48, 49})
    for (int N : {16, 33, 100})
      for (int K : {63, 64, 65, 129, 512, 513, 1100}) {
        const auto x = random_vec(rng, (size_t)M * K), w = random_vec(rng, (size_t)N * K);
        const auto b = random_vec(rng, (size_t)N);
        attnlite::AlignedBuffer buf((size_t)attnlite::ops::linear_packed_floats(N, K) * sizeof(float));
        float* wp = static_cast<float*>(buf.data());
        s->linear_pack(wp, w.data(), N, K);
        for (int act : {attnlite::ops::kActNone, attnlite::ops::kActGelu}) {
          std::vector<float> y((size_t)M * N + 1, kSentinel);
          s->linear_packed(y.data(), x.data(), wp, b.data(), M, N, K, act);
          CHECK(y[(size_t)M * N] == kSentinel);
          for (int r = 0; r + 1 < M; r += 2) {
            std::vector<float> y2((size_t)2 * N);
            s->linear_packed(y2.data(), x.data() + (size_t)r * K, wp, b.data(), 2, N, K, act);
            ++compared;
            if (std::memcmp(y2.data(), y.data() + (size_t)r * N, y2.size() * sizeof(float)) != 0)
              FAIL_CHECK("M=" << M << " N=" << N << " K=" << K << " rows " << r << ", " << r + 1
                              << " act " << act << ": not the one-tile sums");
          }
        }
      }
  CHECK(compared == 2 * 3 * 7 * (3 + 6 + 6 + 8 + 10 + 24 + 24));
}

// At M = 1 a long row's matrix is read as four streams side by side (its quarters, panel i
// of each at once) and the panels left over one by one: every output must be the sum the
// GEMV gives that panel alone (N = 16: one panel), bit for bit.
TEST_CASE("simd linear_packed: the GEMV's streams give each output the one-panel sum", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const int P = attnlite::kLinearPanel;
  std::mt19937 rng(98);
  int compared = 0;
  for (int N : {8 * 16, 9 * 16 - 5, 11 * 16, 2000})
    for (int K : {129, 130, 512, 2048}) {
      const auto x = random_vec(rng, (size_t)K), w = random_vec(rng, (size_t)N * K);
      const auto b = random_vec(rng, (size_t)N);
      attnlite::AlignedBuffer buf((size_t)attnlite::ops::linear_packed_floats(N, K) * sizeof(float));
      float* wp = static_cast<float*>(buf.data());
      s->linear_pack(wp, w.data(), N, K);
      for (int act : {attnlite::ops::kActNone, attnlite::ops::kActRelu}) {
        std::vector<float> y((size_t)N + 1, kSentinel);
        s->linear_packed(y.data(), x.data(), wp, b.data(), 1, N, K, act);
        CHECK(y[(size_t)N] == kSentinel);
        for (int n0 = 0; n0 < N; n0 += P) {
          const int nr = std::min(P, N - n0);
          std::vector<float> y1((size_t)nr);
          s->linear_packed(y1.data(), x.data(), wp + (size_t)n0 * K, b.data() + n0, 1, nr, K, act);
          ++compared;
          if (std::memcmp(y1.data(), y.data() + n0, y1.size() * sizeof(float)) != 0)
            FAIL_CHECK("N=" << N << " K=" << K << " panel " << n0 / P << " act " << act
                            << ": not the one-panel sums");
        }
      }
    }
  CHECK(compared == 4 * 2 * (8 + 9 + 11 + 125));
}

// What the CPU op set packs at load: a layer whose panels cost at most twice its weights, or
// 1 MiB; a layer of few outputs and many inputs (a hostile file's 1 x 100M) stays as stored.
TEST_CASE("the CPU op set packs layers whose panels stay within twice their size", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const auto table = attnlite::ops::kernel_table();
  attnlite::ops::use_kernels(attnlite::ops::KernelTable::Simd);
  const attnlite::ops::Ops& cpu = attnlite::ops::cpu();
  CHECK(cpu.linear_packed_floats(2048, 512) == 2048u * 512u);
  CHECK(cpu.linear_packed_floats(198, 32) == 208u * 32u);   // padded to 13 panels
  CHECK(cpu.linear_packed_floats(1, 32) == 16u * 32u);      // small: packed whatever the padding
  CHECK(cpu.linear_packed_floats(9, 40000) == 16u * 40000u);  // 1.8x its size
  CHECK(cpu.linear_packed_floats(1, 100000000) == 0u);      // 16x and 6.4 GB: as stored
  CHECK(cpu.linear_packed_floats(7, 40000) == 0u);          // 2.3x and over 1 MiB
  CHECK(cpu.linear_packed_floats(0, 512) == 0u);
  attnlite::ops::use_kernels(attnlite::ops::KernelTable::Scalar);
  CHECK(cpu.linear_packed_floats(2048, 512) == 0u);  // the scalar table reads w as stored
  attnlite::ops::use_kernels(table);
}

TEST_CASE("simd gemm_nt and gemm_nn with strides match scalar", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(7);
  const float alpha = 0.353553f;  // 1/sqrt(8), as for attention scores
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : kSizes) {
        // Strided: every operand lives in a wider matrix; the gaps must stay untouched.
        const int lda = K + 3, ldb_nt = K + 5, ldb_nn = N + 2, ldc = N + 7;
        const auto a = random_vec(rng, (size_t)M * lda);
        const auto bnt = random_vec(rng, (size_t)N * ldb_nt);
        const auto bnn = random_vec(rng, (size_t)K * ldb_nn);
        {
          std::vector<float> cs((size_t)M * ldc, kSentinel), cr((size_t)M * ldc, kSentinel);
          s->gemm_nt(cs.data(), ldc, a.data(), lda, bnt.data(), ldb_nt, M, N, K, alpha);
          r.gemm_nt(cr.data(), ldc, a.data(), lda, bnt.data(), ldb_nt, M, N, K, alpha);
          const double d = max_rel_diff(cs.data(), cr.data(), cs.size());  // gaps: both kSentinel
          if (d > 1e-5) FAIL_CHECK("gemm_nt " << dims(M, N, K) << " diff=" << d);
        }
        {
          std::vector<float> cs((size_t)M * ldc, kSentinel), cr((size_t)M * ldc, kSentinel);
          s->gemm_nn(cs.data(), ldc, a.data(), lda, bnn.data(), ldb_nn, M, N, K);
          r.gemm_nn(cr.data(), ldc, a.data(), lda, bnn.data(), ldb_nn, M, N, K);
          const double d = max_rel_diff(cs.data(), cr.data(), cs.size());
          if (d > 1e-5) FAIL_CHECK("gemm_nn " << dims(M, N, K) << " diff=" << d);
        }
      }
  // Larger than one K block / M block, per-head attention sizes included.
  const int shapes[][3] = {{100, 100, 64}, {10, 10, 8}, {250, 70, 300}, {300, 33, 1030},
                           {1030, 20, 50}};
  for (const auto& sh : shapes) {
    const int M = sh[0], N = sh[1], K = sh[2];
    const int lda = 3 * K, ldb = 2 * K + 1, ldbn = 4 * N, ldc = N + 1;
    const auto a = random_vec(rng, (size_t)M * lda);
    const auto b = random_vec(rng, (size_t)(N > K ? N : K) * (ldb > ldbn ? ldb : ldbn));
    std::vector<float> cs((size_t)M * ldc, kSentinel), cr((size_t)M * ldc, kSentinel);
    INFO(dims(M, N, K));
    s->gemm_nt(cs.data(), ldc, a.data(), lda, b.data(), ldb, M, N, K, alpha);
    r.gemm_nt(cr.data(), ldc, a.data(), lda, b.data(), ldb, M, N, K, alpha);
    CHECK(max_rel_diff(cs.data(), cr.data(), cs.size()) <= gemm_tol(K));
    s->gemm_nn(cs.data(), ldc, a.data(), lda, b.data(), ldbn, M, N, K);
    r.gemm_nn(cr.data(), ldc, a.data(), lda, b.data(), ldbn, M, N, K);
    CHECK(max_rel_diff(cs.data(), cr.data(), cs.size()) <= gemm_tol(K));
  }
}

// One row of gemm_nn (the attention context of one query) takes no packing; its sums are the
// blocked kernel's, bit for bit: the same row of a two-row product.
TEST_CASE("simd gemm_nn of one row equals that row of a blocked product", "[simd][gemm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  std::mt19937 rng(9);
  for (int N : kSizes)
    for (int K : {1, 4, 10, 33, 300, 1030}) {
      const int ldb = N + 3;
      const auto a = random_vec(rng, (size_t)2 * K), b = random_vec(rng, (size_t)K * ldb);
      std::vector<float> one((size_t)N, kSentinel), two((size_t)2 * N, kSentinel);
      s->gemm_nn(one.data(), N, a.data(), K, b.data(), ldb, 1, N, K);
      s->gemm_nn(two.data(), N, a.data(), K, b.data(), ldb, 2, N, K);
      INFO("N=" << N << " K=" << K);
      CHECK(std::memcmp(one.data(), two.data(), sizeof(float) * N) == 0);
    }
}

// nn.GRU's cell unfused in double for B rows of x (B, in) and h0 (B, H): want (B, H), and
// gi (B, 3H) = b_ih + the input products over x's columns [from, in) (from = 0: all of them).
struct GruReference {
  std::vector<float> want, gi;
};
static GruReference gru_reference(const std::vector<float>& w_ih, const std::vector<float>& b_ih,
                                  const std::vector<float>& w_hh, const std::vector<float>& b_hh,
                                  const std::vector<float>& x, const std::vector<float>& h0, int B,
                                  int in, int H, int from) {
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const int G = 3 * H;
  GruReference ref{std::vector<float>((size_t)B * H), std::vector<float>((size_t)B * G)};
  for (int b = 0; b < B; ++b) {
    std::vector<double> i(G), g(G);
    for (int o = 0; o < G; ++o) {
      double si = b_ih[o], sp = b_ih[o], sh = b_hh[o];
      for (int k = 0; k < in; ++k) {
        const double p = (double)w_ih[(size_t)o * in + k] * x[(size_t)b * in + k];
        si += p;
        if (k >= from) sp += p;
      }
      for (int k = 0; k < H; ++k) sh += (double)w_hh[(size_t)o * H + k] * h0[(size_t)b * H + k];
      i[o] = si;
      g[o] = sh;
      ref.gi[(size_t)b * G + o] = (float)sp;
    }
    for (int j = 0; j < H; ++j) {
      const double rg = sig(i[j] + g[j]), zg = sig(i[H + j] + g[H + j]);
      const double n = std::tanh(i[2 * H + j] + rg * g[2 * H + j]);
      ref.want[(size_t)b * H + j] = (float)((1 - zg) * n + zg * h0[(size_t)b * H + j]);
    }
  }
  return ref;
}

// The fused GRU step (both products and the gates in one pass over packed weights) against
// nn.GRU's cell computed unfused in double, from x and from precomputed input products, at
// hidden sizes around the block of 8 units and input sizes around the vector width.
TEST_CASE("gru_step, scalar and SIMD, matches the unfused GRU cell", "[simd][gru]") {
  std::vector<const Kernels*> tables = simd_tables();
  tables.insert(tables.begin(), &attnlite::ops::scalar_kernels());
  std::mt19937 rng(77);
  double worst = 0.0;
  int runs = 0;
  // H: one block, pairs of blocks and the AVX-512 kernel's groups of four, with every kind of
  // tail
  for (int H : {1, 3, 8, 9, 15, 16, 17, 24, 25, 32, 33, 40, 48, 57, 64})
    for (int in : {1, 5, 32, 64})
      for (int B : {1, 3}) {
        const int G = 3 * H;
        const auto w_ih = random_vec(rng, (size_t)G * in), b_ih = random_vec(rng, (size_t)G);
        const auto w_hh = random_vec(rng, (size_t)G * H), b_hh = random_vec(rng, (size_t)G);
        const auto x = random_vec(rng, (size_t)B * in, -2.f, 2.f), h0 = random_vec(rng, (size_t)B * H);
        const GruReference ref = gru_reference(w_ih, b_ih, w_hh, b_hh, x, h0, B, in, H, 0);
        const std::vector<float>& gi = ref.gi;
        const std::vector<float>& want = ref.want;
        std::vector<float> pk((size_t)attnlite::ops::gru_packed_floats(in, H), kSentinel);
        attnlite::ops::gru_pack(pk.data(), w_ih.data(), b_ih.data(), w_hh.data(), b_hh.data(), in, H);
        for (const Kernels* k : tables) {
          for (bool from_gi : {false, true}) {
            std::vector<float> h = h0, tmp((size_t)H, kSentinel), g = gi;
            k->gru_step(h.data(), tmp.data(), from_gi ? nullptr : x.data(), from_gi ? g.data() : nullptr,
                        pk.data(), B, in, H);
            const double d = max_diff_or_inf(h.data(), want.data(), h.size());
            worst = d > worst ? d : worst;
            ++runs;
            // the kernel used its tmp; the AVX-512 one writes h directly when one group of four
            // blocks (32 units) holds all of it
            if (std::string(k->name) != "avx512" || H > 32) REQUIRE(tmp[(size_t)H - 1] != kSentinel);
            if (d > 2e-6)
              FAIL_CHECK(k->name << " H=" << H << " in=" << in << " B=" << B << " gi=" << from_gi << " diff=" << d);
          }
        }
      }
  CHECK(runs == 15 * 4 * 2 * 2 * (int)tables.size());
  CHECK(worst <= 2e-6);
  CHECK(worst > 0.0);  // float arithmetic against double: the comparison is a real one
}

// The fused step with both gi and x: gi the products of the inputs beyond x's n columns (b_ih
// included, as a decoder looks up its embedding's), x's products over its own packed W_ih
// (no bias) added; against the whole layer's cell in double.
TEST_CASE("gru_step with input products given for some inputs and x for the others", "[simd][gru]") {
  std::vector<const Kernels*> tables = simd_tables();
  tables.insert(tables.begin(), &attnlite::ops::scalar_kernels());
  std::mt19937 rng(78);
  double worst = 0.0;
  for (int H : {1, 7, 8, 9, 17, 32})
    for (int n : {1, 5, 32})
      for (int m : {1, 32})
        for (int B : {1, 3}) {
          const int G = 3 * H, in = n + m;
          const auto w_ih = random_vec(rng, (size_t)G * in), b_ih = random_vec(rng, (size_t)G);
          const auto w_hh = random_vec(rng, (size_t)G * H), b_hh = random_vec(rng, (size_t)G);
          const auto x = random_vec(rng, (size_t)B * in, -2.f, 2.f), h0 = random_vec(rng, (size_t)B * H);
          const GruReference ref = gru_reference(w_ih, b_ih, w_hh, b_hh, x, h0, B, in, H, n);
          const std::vector<float>& gi = ref.gi;
          const std::vector<float>& want = ref.want;
          std::vector<float> xn((size_t)B * n), wn((size_t)G * n);
          for (int o = 0; o < G; ++o)
            for (int k = 0; k < n; ++k) wn[(size_t)o * n + k] = w_ih[(size_t)o * in + k];
          for (int b = 0; b < B; ++b)
            for (int k = 0; k < n; ++k) xn[(size_t)b * n + k] = x[(size_t)b * in + k];
          std::vector<float> pk((size_t)attnlite::ops::gru_packed_floats(n, H), kSentinel);
          attnlite::ops::gru_pack(pk.data(), wn.data(), nullptr, w_hh.data(), b_hh.data(), n, H);
          for (const Kernels* k : tables) {
            std::vector<float> h = h0, tmp((size_t)H, kSentinel), g = gi;
            k->gru_step(h.data(), tmp.data(), xn.data(), g.data(), pk.data(), B, n, H);
            const double d = max_diff_or_inf(h.data(), want.data(), h.size());
            worst = d > worst ? d : worst;
            if (d > 2e-6)
              FAIL_CHECK(k->name << " H=" << H << " n=" << n << " m=" << m << " B=" << B << " diff=" << d);
          }
        }
  CHECK(worst <= 2e-6);
  CHECK(worst > 0.0);
}

// The AVX-512 kernels that do the AVX2 kernels' operations on each element in wider vectors
// (kernels_avx512.cpp) give their results bit for bit: the GRU step (from x, from input
// products, both), the packed GEMV and GEMM with every epilogue, int8 weights at small M, the
// pointwise tanh; at the sizes around both kernels' blocks and vectors, on the 256-bit table's
// own packed weights.
TEST_CASE("the AVX-512 GRU step, products and tanh give the AVX2 kernels' bits", "[simd][avx512]") {
  const Kernels* w = attnlite::ops::avx512_kernels();
  const Kernels* n = attnlite::ops::simd256_kernels();
  if (!w || !n) {
    WARN("no AVX-512 table on this CPU or build: test skipped");
    return;
  }
  std::mt19937 rng(512);
  int compared = 0;
  for (int H : {1, 7, 8, 9, 16, 17, 24, 31, 32, 33, 40, 48, 57, 64, 100})
    for (int in : {1, 2, 5, 32, 33, 64})
      for (int B : {1, 2}) {
        const int G = 3 * H;
        const auto w_ih = random_vec(rng, (size_t)G * in), b_ih = random_vec(rng, (size_t)G);
        const auto w_hh = random_vec(rng, (size_t)G * H), b_hh = random_vec(rng, (size_t)G);
        const auto x = random_vec(rng, (size_t)B * in, -3.f, 3.f), h0 = random_vec(rng, (size_t)B * H);
        const auto gi = random_vec(rng, (size_t)B * G, -4.f, 4.f);
        std::vector<float> pk((size_t)attnlite::ops::gru_packed_floats(in, H));
        attnlite::ops::gru_pack(pk.data(), w_ih.data(), b_ih.data(), w_hh.data(), b_hh.data(), in, H);
        for (int mode = 0; mode < 3; ++mode) {  // x alone, gi alone, both
          const float* xp = mode == 1 ? nullptr : x.data();
          const float* gp = mode == 0 ? nullptr : gi.data();
          std::vector<float> hw = h0, hn = h0, tw((size_t)H), tn((size_t)H);
          // three steps, each from the last
          for (int step = 0; step < 3; ++step) {
            w->gru_step(hw.data(), tw.data(), xp, gp, pk.data(), B, in, H);
            n->gru_step(hn.data(), tn.data(), xp, gp, pk.data(), B, in, H);
          }
          ++compared;
          if (std::memcmp(hw.data(), hn.data(), hw.size() * sizeof(float)) != 0)
            FAIL_CHECK("gru_step H=" << H << " in=" << in << " B=" << B << " mode " << mode
                                     << " diff=" << max_diff_or_inf(hw.data(), hn.data(), hw.size()));
        }
      }
  CHECK(compared == 15 * 6 * 2 * 3);

  std::vector<int> Ns(std::begin(kSizes), std::end(kSizes));
  for (int v : {201, 1000}) Ns.push_back(v);
  // M = 1 (the GEMV), the blocked GEMM's tiles of 1 to 10 rows (M = 2, 7, 13, 20: one tile of
  // 2 and of 7, tiles of 6 + 7 and of 10 + 10) and K in one, two and three blocks of at most 512
  for (int M : {1, 2, 7, 13, 20})
    for (int N : Ns)
      for (int K : {1, 2, 3, 7, 8, 31, 32, 33, 64, 127, 128, 129, 130, 512, 513, 1100}) {
        if (M > 1 && N > 201 && K > 130) continue;  // the large shapes once, at M = 1
        const auto x = random_vec(rng, (size_t)M * K), wt = random_vec(rng, (size_t)N * K);
        const auto b = random_vec(rng, (size_t)N);
        attnlite::AlignedBuffer wp((size_t)attnlite::ops::linear_packed_floats(N, K) * sizeof(float));
        n->linear_pack(static_cast<float*>(wp.data()), wt.data(), N, K);
        const float* pw = static_cast<const float*>(wp.data());
        for (int act : {attnlite::ops::kActNone, attnlite::ops::kActRelu, attnlite::ops::kActGelu})
          for (const float* bp : {(const float*)nullptr, b.data()}) {
            const size_t len = (size_t)M * N;
            std::vector<float> yw(len + 1, kSentinel), yn(len + 1, kSentinel);
            w->linear_packed(yw.data(), x.data(), pw, bp, M, N, K, act);
            n->linear_packed(yn.data(), x.data(), pw, bp, M, N, K, act);
            CHECK(yw[len] == kSentinel);  // nothing written past the rows
            ++compared;
            if (std::memcmp(yw.data(), yn.data(), yw.size() * sizeof(float)) != 0)
              FAIL_CHECK("linear_packed M=" << M << " N=" << N << " K=" << K << " act " << act << " bias "
                                            << (bp != nullptr)
                                            << " diff=" << max_diff_or_inf(yw.data(), yn.data(), yw.size()));
          }
      }
  CHECK(compared > 15 * 6 * 2 * 3 + 2000);

  // int8 weights at small M: the 4 x 4 tiles, a pair, a single column (N mod 4 = 0..3), the
  // rows after the last 4 (M = 5..7), K = 8 mod 16; M outside 4..7 is the AVX2 kernel itself
  for (int M : {1, 3, 4, 5, 6, 7, 8})
    for (int N : {1, 2, 3, 4, 5, 6, 7, 8, 33, 256, 1023})
      for (int K : {8, 16, 24, 40, 256, 1032}) {
        const auto x = random_vec(rng, (size_t)M * K), sc = random_vec(rng, (size_t)N, 0.001f, 0.02f);
        const auto b = random_vec(rng, (size_t)N);
        std::vector<int8_t> q((size_t)N * K);
        for (auto& v : q) v = (int8_t)(rng() % 255 - 127);
        for (const float* bp : {(const float*)nullptr, b.data()}) {
          const size_t len = (size_t)M * N;
          std::vector<float> yw(len + 1, kSentinel), yn(len + 1, kSentinel);
          w->linear_i8(yw.data(), x.data(), q.data(), sc.data(), bp, M, N, K);
          n->linear_i8(yn.data(), x.data(), q.data(), sc.data(), bp, M, N, K);
          CHECK(yw[len] == kSentinel);
          ++compared;
          if (std::memcmp(yw.data(), yn.data(), yw.size() * sizeof(float)) != 0)
            FAIL_CHECK("linear_i8 M=" << M << " N=" << N << " K=" << K << " bias " << (bp != nullptr)
                                      << " diff=" << max_diff_or_inf(yw.data(), yn.data(), yw.size()));
        }
      }

  for (int len : {1, 5, 15, 16, 17, 33, 128, 1000}) {
    auto v = random_vec(rng, (size_t)len + 1, -12.f, 12.f);
    if (len > 4) {
      v[0] = 0.f, v[1] = -0.f, v[2] = 1e-30f, v[3] = 50.f, v[4] = -std::numeric_limits<float>::infinity();
    }
    v[(size_t)len] = kSentinel;
    auto vw = v, vn = v;
    w->tanh(vw.data(), len);
    n->tanh(vn.data(), len);
    INFO("tanh n=" << len);
    CHECK(vw[(size_t)len] == kSentinel);
    CHECK(std::memcmp(vw.data(), vn.data(), vw.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("simd softmax_rows: random rows, masked entries give exact 0", "[simd][softmax]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(3);
  const int rows = 5;
  for (int n : kSizes) {
    const int ld = n + 4;
    auto xs = random_vec(rng, (size_t)rows * ld, -8.f, 8.f);
    // Row 1: the second half masked (d2l's masked_softmax uses -1e6); row 2: all but the
    // first masked; row 3: large magnitudes.
    for (int i = n / 2; i < n; ++i) xs[(size_t)ld + i] = -1e6f;
    for (int i = 1; i < n; ++i) xs[(size_t)2 * ld + i] = -1e6f;
    for (int i = 0; i < n; ++i) xs[(size_t)3 * ld + i] *= 1e4f;
    for (int row = 0; row < rows; ++row)
      for (int i = n; i < ld; ++i) xs[(size_t)row * ld + i] = kSentinel;
    auto xr = xs;
    s->softmax_rows(xs.data(), ld, rows, n);
    r.softmax_rows(xr.data(), ld, rows, n);
    INFO("n=" << n);
    CHECK(max_diff_or_inf(xs.data(), xr.data(), xs.size()) <= 1e-6);
    for (int i = n / 2; i < n; ++i)
      if (n > 1) CHECK(xs[(size_t)ld + i] == 0.f);
    for (int i = 1; i < n; ++i) CHECK(xs[(size_t)2 * ld + i] == 0.f);
    CHECK(xs[(size_t)2 * ld] == 1.f);
    for (int row = 0; row < rows; ++row) {
      double sum = 0.0;
      for (int i = 0; i < n; ++i) sum += xs[(size_t)row * ld + i];
      CHECK(std::fabs(sum - 1.0) <= 1e-5);
      for (int i = n; i < ld; ++i) CHECK(xs[(size_t)row * ld + i] == kSentinel);
    }
  }
}

TEST_CASE("simd exp_sum: log-softmax constants of short and vocabulary-sized rows", "[simd][softmax]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(5);
  std::vector<int> sizes(std::begin(kSizes), std::end(kSizes));
  for (int n : {63, 64, 65, 127, 128, 129, 9479, 9308}) sizes.push_back(n);  // block tails, vocabularies
  for (int n : sizes) {
    for (int kind = 0; kind < 3; ++kind) {
      // logits in [-8, 8]; all but one masked (-1e6); large magnitudes
      auto x = random_vec(rng, (size_t)n + 1, -8.f, 8.f);
      if (kind == 1)
        for (int i = 1; i < n; ++i) x[(size_t)i] = -1e6f;
      if (kind == 2)
        for (float& v : x) v *= 1e3f;
      x[(size_t)n] = 1e30f;  // past the end: must not be read
      float ms = 0.f, mr = 0.f;
      double ss = 0.0, sr = 0.0;
      s->exp_sum(x.data(), n, &ms, &ss);
      r.exp_sum(x.data(), n, &mr, &sr);
      INFO("n=" << n << " kind " << kind);
      CHECK(ms == mr);
      CHECK(std::fabs(ss - sr) <= 3e-7 * sr);  // exp within ~1 ulp, the sum blocked in double
      CHECK(sr >= 1.0);                        // the max contributes exp(0) = 1
      if (kind == 1 && n > 1) CHECK(ss == 1.0);
    }
  }
}

TEST_CASE("simd layer_norm matches scalar, constant rows included", "[simd][norm]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(11);
  const int rows = 4;
  for (int n : kSizes) {
    auto x = random_vec(rng, (size_t)rows * n, -3.f, 5.f);
    for (int i = 0; i < n; ++i) x[(size_t)2 * n + i] = 0.1f;  // constant rows: var = 0
    for (int i = 0; i < n; ++i) x[(size_t)3 * n + i] = -7.f;
    const auto g = random_vec(rng, (size_t)n, 0.5f, 1.5f), b = random_vec(rng, (size_t)n);
    std::vector<float> ys(x.size()), yr(x.size());
    s->layer_norm(ys.data(), x.data(), g.data(), b.data(), rows, n, 1e-5f);
    r.layer_norm(yr.data(), x.data(), g.data(), b.data(), rows, n, 1e-5f);
    INFO("n=" << n);
    // Random rows (0, 1).
    CHECK(max_rel_diff(ys.data(), yr.data(), (size_t)2 * n) <= 1e-5);
    // Constant rows normalise to beta, up to the rounding of the mean: a sum of n copies of
    // 0.1 is off by up to n·u·0.1 (7.7e-7 for n = 129, sequential), and x − mean is then
    // amplified by 1/sqrt(var + eps) = 1/sqrt(1e-5) = 316. So both kernels may sit up to
    // ~2.5e-4 from beta (the reference gets 4e-5 at n = 129); -7 sums exactly.
    double worst_const = 0.0;
    for (int i = 0; i < n; ++i) {
      const double d2 = std::fabs(ys[(size_t)2 * n + i] - b[i]);
      worst_const = d2 > worst_const ? d2 : worst_const;
      CHECK(std::fabs(ys[(size_t)2 * n + i] - yr[(size_t)2 * n + i]) <= 2.5e-4);
      CHECK(ys[(size_t)3 * n + i] == Approx(b[i]).margin(1e-6));
    }
    CHECK(worst_const <= 2.5e-4);
    // In place (y == x) gives the same result.
    auto xi = x;
    s->layer_norm(xi.data(), xi.data(), g.data(), b.data(), rows, n, 1e-5f);
    CHECK(xi == ys);
  }
}

TEST_CASE("simd add (in place too), relu", "[simd][pointwise]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(5);
  for (int n : kSizes) {
    const auto a = random_vec(rng, (size_t)n), b = random_vec(rng, (size_t)n);
    std::vector<float> ref(n);
    r.add(ref.data(), a.data(), b.data(), n);
    std::vector<float> y(n);
    s->add(y.data(), a.data(), b.data(), n);
    CHECK(y == ref);
    auto ya = a;  // y aliases a
    s->add(ya.data(), ya.data(), b.data(), n);
    CHECK(ya == ref);
    auto yb = b;  // y aliases b
    s->add(yb.data(), a.data(), yb.data(), n);
    CHECK(yb == ref);

    auto xs = random_vec(rng, (size_t)n);
    if (n > 2) xs[1] = -0.f;
    auto xr = xs;
    s->relu(xs.data(), n);
    r.relu(xr.data(), n);
    CHECK(xs == xr);
  }
}

TEST_CASE("simd gelu matches the scalar erf form", "[simd][pointwise]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  // a sweep of [-10, 10] in steps of 1e-4, then the sizes around the vector width
  std::vector<float> sweep;
  for (int i = -100000; i <= 100000; ++i) sweep.push_back((float)i * 1e-4f);
  auto gs = sweep, gr = sweep;
  s->gelu(gs.data(), (int)gs.size());
  r.gelu(gr.data(), (int)gr.size());
  CHECK(max_diff_or_inf(gs.data(), gr.data(), gs.size()) <= 1e-6);
  std::mt19937 rng(9);
  for (int n : kSizes) {
    auto x = random_vec(rng, (size_t)n, -6.f, 6.f);
    auto xs = x, xr = x;
    s->gelu(xs.data(), n);
    r.gelu(xr.data(), n);
    INFO("n=" << n);
    CHECK(max_diff_or_inf(xs.data(), xr.data(), (size_t)n) <= 1e-6);
  }
  std::vector<float> big = {80.f, -80.f, 1e6f, -1e6f, 1e30f, -1e30f, 0.f, -0.f, 1e-30f, -1e-30f,
                            std::numeric_limits<float>::infinity()};
  auto bs = big, br = big;
  s->gelu(bs.data(), (int)big.size());
  r.gelu(br.data(), (int)big.size());
  for (size_t i = 0; i < big.size(); ++i) {
    INFO("x=" << big[i]);
    CHECK_FALSE(std::isnan(bs[i]));
    CHECK((bs[i] == br[i] || std::fabs(bs[i] - br[i]) <= 1e-6f * std::max(1.f, std::fabs(br[i]))));
  }
  float nan = std::numeric_limits<float>::quiet_NaN();
  s->gelu(&nan, 1);
  CHECK(std::isnan(nan));
}

TEST_CASE("simd tanh and sigmoid match scalar, huge inputs give no NaN", "[simd][pointwise]") {
  const Kernels* s = simd_or_skip();
  if (!s) return;
  const Kernels& r = attnlite::ops::scalar_kernels();
  std::mt19937 rng(8);
  for (int n : kSizes) {
    auto x = random_vec(rng, (size_t)n, -12.f, 12.f);
    auto ts = x, tr = x, ss = x, sr = x;
    s->tanh(ts.data(), n);
    r.tanh(tr.data(), n);
    s->sigmoid(ss.data(), n);
    r.sigmoid(sr.data(), n);
    INFO("n=" << n);
    CHECK(max_diff_or_inf(ts.data(), tr.data(), (size_t)n) <= 1e-6);
    CHECK(max_diff_or_inf(ss.data(), sr.data(), (size_t)n) <= 1e-6);
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> big = {80.f, -80.f, 1e6f, -1e6f, 88.f, -88.f, 89.f, -89.f, 104.f, -104.f,
                            1e30f, -1e30f, inf, -inf, 0.f, -0.f, 1e-30f, -1e-30f};
  auto ts = big, tr = big, ss = big, sr = big;
  s->tanh(ts.data(), (int)big.size());
  r.tanh(tr.data(), (int)big.size());
  s->sigmoid(ss.data(), (int)big.size());
  r.sigmoid(sr.data(), (int)big.size());
  for (size_t i = 0; i < big.size(); ++i) {
    INFO("x=" << big[i]);
    CHECK_FALSE(std::isnan(ts[i]));
    CHECK_FALSE(std::isnan(ss[i]));
    CHECK(std::fabs(ts[i] - tr[i]) <= 1e-6f);
    CHECK(std::fabs(ss[i] - sr[i]) <= 1e-6f);
  }
  CHECK(ts[2] == 1.f);
  CHECK(ts[3] == -1.f);
  CHECK(ss[2] == 1.f);
  CHECK(ss[3] == 0.f);
}

#if defined(ATTNLITE_HAVE_SIMD)
// The accuracy figures quoted in src/cpu/simd/simd_math.h come from this test.
TEST_CASE("simd exp and tanh accuracy against std::exp / std::tanh", "[simd][accuracy]") {
  if (!simd_or_skip()) return;
  namespace simd = attnlite::ops::simd;
  // exp: 2M points uniform on [-87.3, 88.7] (normal results) and a dense sweep of [-10, 10].
  std::mt19937 rng(21);
  std::vector<float> x = random_vec(rng, 2000000, -87.3f, 88.72f);
  for (int i = 0; i <= 200000; ++i) x.push_back(-10.f + 1e-4f * (float)i);
  std::vector<float> y = x;
  simd::exp_inplace(y.data(), (int)y.size());
  double rel = 0.0, rel_std = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::exp((double)x[i]);
    if (ref > 3.4e38) continue;
    const double e = std::fabs(y[i] - ref) / ref;
    const double es = std::fabs(std::exp(x[i]) - ref) / ref;
    rel = e > rel ? e : rel;
    rel_std = es > rel_std ? es : rel_std;
  }
  std::printf("exp8: max relative error %.3g (std::exp in float: %.3g)\n", rel, rel_std);
  CHECK(rel <= 2.5e-7);  // about 2 ulp
  // Underflow and overflow edges.
  std::vector<float> edge = {-1e6f, -200.f, -104.f, -103.f, -87.5f, 88.7f, 88.8f, 1e6f};
  std::vector<float> ye = edge;
  simd::exp_inplace(ye.data(), (int)ye.size());
  CHECK(ye[0] == 0.f);
  CHECK(ye[1] == 0.f);
  CHECK(ye[2] == 0.f);
#if defined(__ARM_NEON) && !defined(__aarch64__)
  // 32-bit Arm's NEON flushes subnormal results to zero (always, in hardware): 0 there, which
  // is within the smallest normal float of the value.
  const float subnormal_step = std::numeric_limits<float>::min();
#else
  const float subnormal_step = 1.5e-45f;  // subnormal: within one step
#endif
  CHECK(std::fabs(ye[3] - std::exp(-103.f)) <= subnormal_step);
  CHECK(std::fabs(ye[4] - std::exp(-87.5f)) <= subnormal_step);
  CHECK(std::fabs(ye[5] / std::exp(88.7f) - 1.f) <= 2.5e-7f);
  CHECK(std::isinf(ye[6]));
  CHECK(std::isinf(ye[7]));

  // tanh: dense sweep of [-20, 20].
  std::vector<float> t;
  for (int i = 0; i <= 4000000; ++i) t.push_back(-20.f + 1e-5f * (float)i);
  for (int i = 1; i <= 1000; ++i) t.push_back(1e-4f * (float)i);  // near 0, relative
  std::vector<float> ty = t;
  simd::tanh(ty.data(), (int)ty.size());
  double abs_err = 0.0, rel_err = 0.0;
  for (size_t i = 0; i < t.size(); ++i) {
    const double ref = std::tanh((double)t[i]);
    const double e = std::fabs(ty[i] - ref);
    abs_err = e > abs_err ? e : abs_err;
    if (ref != 0.0) rel_err = e / std::fabs(ref) > rel_err ? e / std::fabs(ref) : rel_err;
  }
  std::printf("tanh8: max absolute error %.3g, max relative error %.3g\n", abs_err, rel_err);
  CHECK(abs_err <= 2e-7);
  CHECK(rel_err <= 5e-7);

  // The GRU's gates: the rational tanh and the sigmoid made from it, over the same sweep.
  std::vector<float> tg = t, sg = t;
  simd::tanh_gate(tg.data(), (int)tg.size());
  simd::sigmoid_gate(sg.data(), (int)sg.size());
  double gate_abs = 0.0, gate_rel = 0.0, sig_abs = 0.0;
  for (size_t i = 0; i < t.size(); ++i) {
    const double ref = std::tanh((double)t[i]), e = std::fabs(tg[i] - ref);
    gate_abs = e > gate_abs ? e : gate_abs;
    if (ref != 0.0) gate_rel = e / std::fabs(ref) > gate_rel ? e / std::fabs(ref) : gate_rel;
    const double es = std::fabs(sg[i] - 1.0 / (1.0 + std::exp(-(double)t[i])));
    sig_abs = es > sig_abs ? es : sig_abs;
  }
  std::printf("tanh_gate8: max absolute error %.3g, max relative error %.3g; sigmoid_gate8: %.3g\n",
              gate_abs, gate_rel, sig_abs);
  CHECK(gate_abs <= 3e-7);
  CHECK(gate_rel <= 3e-7);
  CHECK(sig_abs <= 2e-7);
  std::vector<float> big = {1e6f, -1e6f, 30.f, -30.f, 0.f};
  std::vector<float> tb = big, sb = big;
  simd::tanh_gate(tb.data(), (int)tb.size());
  simd::sigmoid_gate(sb.data(), (int)sb.size());
  CHECK(std::fabs(tb[0] - 1.f) <= 3e-7f);
  CHECK(std::fabs(tb[1] + 1.f) <= 3e-7f);
  CHECK(tb[4] == 0.f);
  CHECK(std::fabs(sb[0] - 1.f) <= 2e-7f);
  CHECK(std::fabs(sb[1]) <= 2e-7f);
  CHECK(sb[4] == 0.5f);
}
#endif
