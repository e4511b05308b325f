// attnlite — the fp32 matrix products of the web build in native WebAssembly SIMD128:
// linear (outputs in lanes, K in order: the scalar kernel's sums exactly), gemm_nt (dot
// products along K) and gemm_nn (rows of b scaled and summed, in the scalar kernel's order).
// Contracts: include/attnlite/ops/kernels.h. The shapes that matter are small: one row of x
// per greedy step, up to 8 with beam search, K and N from 8 to 512, attention over at most a
// few dozen keys. So there is no packing (it would cost more than it saves at M <= 8); the
// blocks are sized for the 16 vector registers that engines map SIMD128 onto on x86-64 and
// Arm64, and every tail (M, N, K) is handled in place.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "cpu/wasm/kernels_simd128.h"
#include "cpu/wasm/simd128_math.h"

namespace attnlite::ops::wasm {
namespace {

// Dot products of MC rows of x with 4 rows of w: y[r][j] = alpha · x_r · w_j.
// MC = 2: 8 accumulators, each vector of w loaded once for both rows. K is short in
// attention (the head size), so there is no further unrolling.
template <int MC>
inline void nt_block4(float* y, long ldy, const float* x, long ldx, const float* w, long ldw,
                      float alpha, int K) {
  v128_t acc[MC][4];
  for (int r = 0; r < MC; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = wasm_f32x4_splat(0.f);
  int k = 0;
  for (; k + 4 <= K; k += 4) {
    v128_t xv[MC];
    for (int r = 0; r < MC; ++r) xv[r] = wasm_v128_load(x + r * ldx + k);
    for (int j = 0; j < 4; ++j) {
      const v128_t wv = wasm_v128_load(w + j * ldw + k);
      for (int r = 0; r < MC; ++r) acc[r][j] = madd(xv[r], wv, acc[r][j]);
    }
  }
  const v128_t va = wasm_f32x4_splat(alpha);
  for (int r = 0; r < MC; ++r) {
    v128_t s = hsum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
    if (k < K) {  // K tail: at most 3 products per output
      float t[4];
      for (int j = 0; j < 4; ++j) {
        float u = 0.f;
        for (int kk = k; kk < K; ++kk) u += x[r * ldx + kk] * w[j * ldw + kk];
        t[j] = u;
      }
      s = wasm_f32x4_add(s, wasm_v128_load(t));
    }
    wasm_v128_store(y + r * ldy, wasm_f32x4_mul(s, va));
  }
}

// One row of w (an N tail) against one row of x.
inline float nt_dot(const float* x, const float* w, int K) {
  v128_t acc = wasm_f32x4_splat(0.f);
  int k = 0;
  for (; k + 4 <= K; k += 4) acc = madd(wasm_v128_load(x + k), wasm_v128_load(w + k), acc);
  float s = hsum(acc);
  for (; k < K; ++k) s += x[k] * w[k];
  return s;
}

// c (M,N) = alpha · a (M,K) · bᵀ, strided rows.
void nt(float* y, long ldy, const float* x, long ldx, const float* w, long ldw, float alpha,
        int M, int N, int K) {
  int n = 0;
  for (; n + 4 <= N; n += 4) {
    const float* wn = w + n * ldw;
    int m = 0;
    for (; m + 2 <= M; m += 2) nt_block4<2>(y + m * ldy + n, ldy, x + m * ldx, ldx, wn, ldw, alpha, K);
    if (m < M) nt_block4<1>(y + m * ldy + n, ldy, x + m * ldx, ldx, wn, ldw, alpha, K);
  }
  for (; n < N; ++n)
    for (int m = 0; m < M; ++m) y[m * ldy + n] = nt_dot(x + m * ldx, w + n * ldw, K) * alpha;
}

// c[r][n0 .. n0+4·NV) = Σ_k a[r][k] · b[k][n0 ..] for MC rows: NV vectors of columns per row.
template <int MC, int NV>
inline void nn_block(float* c, long ldc, const float* a, long lda, const float* b, long ldb,
                     int K) {
  v128_t acc[MC][NV];
  for (int r = 0; r < MC; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = wasm_f32x4_splat(0.f);
  for (int k = 0; k < K; ++k) {
    v128_t bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = wasm_v128_load(b + k * ldb + 4 * v);
    for (int r = 0; r < MC; ++r) {
      const v128_t av = wasm_f32x4_splat(a[r * lda + k]);
      for (int v = 0; v < NV; ++v) acc[r][v] = madd(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MC; ++r)
    for (int v = 0; v < NV; ++v) wasm_v128_store(c + r * ldc + 4 * v, acc[r][v]);
}

template <int MC>
inline void nn_rows(float* c, long ldc, const float* a, long lda, const float* b, long ldb, int N,
                    int K) {
  int n = 0;
  for (; n + 16 <= N; n += 16) nn_block<MC, 4>(c + n, ldc, a, lda, b + n, ldb, K);
  for (; n + 4 <= N; n += 4) nn_block<MC, 1>(c + n, ldc, a, lda, b + n, ldb, K);
  for (; n < N; ++n)  // N tail: at most 3 columns, summed in the scalar kernel's order
    for (int r = 0; r < MC; ++r) {
      float s = 0.f;
      for (int k = 0; k < K; ++k) s += a[r * lda + k] * b[k * ldb + n];
      c[r * ldc + n] = s;
    }
}

// linear: four outputs per vector, each lane summing its products in the scalar kernel's
// order (0 + x0·w0 + x1·w1 + …, a multiply and an add each), so the results are bit for bit
// those of the scalar reference. Lane sums along K (as gemm_nt) would be as accurate, but
// the book models' attention weights then move by up to 1.3e-5 against the PyTorch fixtures
// (tests/web/beam.test.mjs allows 1e-5), the scalar kernels' by 1.1e-6. The price is a 4x4
// transpose of w per four steps of K, shared by the MC rows of x and paid in shuffles.
// NG groups of four rows of w (8 or 4 outputs) times MC rows of x.
template <int MC, int NG>
inline void lin_block(float* y, int N, const float* x, const float* w, const float* b, int K) {
  v128_t acc[MC][NG];
  for (int r = 0; r < MC; ++r)
    for (int g = 0; g < NG; ++g) acc[r][g] = wasm_f32x4_splat(0.f);
  int k = 0;
  for (; k + 4 <= K; k += 4) {
    v128_t col[NG][4];  // col[g][i] = w[4g .. 4g+3][k + i]
    for (int g = 0; g < NG; ++g) {
      const float* wg = w + (long)4 * g * K + k;
      const v128_t r0 = wasm_v128_load(wg), r1 = wasm_v128_load(wg + K);
      const v128_t r2 = wasm_v128_load(wg + 2L * K), r3 = wasm_v128_load(wg + 3L * K);
      const v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
      const v128_t t2 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7), t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
      col[g][0] = wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5);
      col[g][1] = wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7);
      col[g][2] = wasm_i32x4_shuffle(t2, t3, 0, 1, 4, 5);
      col[g][3] = wasm_i32x4_shuffle(t2, t3, 2, 3, 6, 7);
    }
    for (int r = 0; r < MC; ++r) {
      const v128_t xv = wasm_v128_load(x + (long)r * K + k);
      const v128_t x0 = wasm_i32x4_shuffle(xv, xv, 0, 0, 0, 0), x1 = wasm_i32x4_shuffle(xv, xv, 1, 1, 1, 1);
      const v128_t x2 = wasm_i32x4_shuffle(xv, xv, 2, 2, 2, 2), x3 = wasm_i32x4_shuffle(xv, xv, 3, 3, 3, 3);
      for (int g = 0; g < NG; ++g) {
        v128_t a = madd(x0, col[g][0], acc[r][g]);
        a = madd(x1, col[g][1], a);
        a = madd(x2, col[g][2], a);
        acc[r][g] = madd(x3, col[g][3], a);
      }
    }
  }
  for (; k < K; ++k)  // K tail: at most 3 steps
    for (int g = 0; g < NG; ++g) {
      const float* wg = w + (long)4 * g * K + k;
      const v128_t c = wasm_f32x4_make(wg[0], wg[K], wg[2L * K], wg[3L * K]);
      for (int r = 0; r < MC; ++r) acc[r][g] = madd(wasm_f32x4_splat(x[(long)r * K + k]), c, acc[r][g]);
    }
  for (int r = 0; r < MC; ++r)
    for (int g = 0; g < NG; ++g) {
      v128_t v = acc[r][g];
      if (b) v = wasm_f32x4_add(v, wasm_v128_load(b + 4 * g));
      wasm_v128_store(y + (long)r * N + 4 * g, v);
    }
}

template <int NG>
inline void lin_cols(float* y, int N, const float* x, const float* w, const float* b, int M, int K) {
  int m = 0;
  for (; m + 2 <= M; m += 2) lin_block<2, NG>(y + (long)m * N, N, x + (long)m * K, w, b, K);
  if (m < M) lin_block<1, NG>(y + (long)m * N, N, x + (long)m * K, w, b, K);
}

}  // namespace

void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  int n = 0;
  for (; n + 8 <= N; n += 8) lin_cols<2>(y + n, N, x, w + (long)n * K, b ? b + n : nullptr, M, K);
  for (; n < N; ++n)  // N tail: at most 7 outputs (vocabulary sizes), the scalar kernel's loop
    for (int m = 0; m < M; ++m) {
      const float* xr = x + (long)m * K;
      const float* wr = w + (long)n * K;
      float s = 0.f;
      for (int k = 0; k < K; ++k) s += xr[k] * wr[k];
      y[(long)m * N + n] = b ? s + b[n] : s;
    }
}

void gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K, float alpha) {
  if (M <= 0 || N <= 0) return;
  nt(c, ldc, a, lda, b, ldb, alpha, M, N, K);
}

void gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K) {
  if (M <= 0 || N <= 0) return;
  // One row at a time: attention weights times values, where N (the head size) is short and
  // a second row's blocks would cost more .wasm bytes than they save time.
  for (int m = 0; m < M; ++m)
    nn_rows<1>(c + (long)m * ldc, ldc, a + (long)m * lda, lda, b, ldb, N, K);
}

}  // namespace attnlite::ops::wasm
#endif
