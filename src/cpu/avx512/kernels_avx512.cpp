// attnlite — the AVX-512 kernel table (x86-64): the AVX2/FMA table with its decoding-step
// kernels in 512-bit vectors, for CPUs whose 512-bit FMAs run at full width (AMD Zen 5, Intel
// server cores: twice the 256-bit FLOP peak; bench/RESULTS.md). This file alone is compiled
// with -mavx512f -mavx512dq -mavx512vl (CMakeLists.txt); the dispatcher (src/cpu/dispatch.cpp)
// hands the table out only after checking the CPU at run time.
//
// In 512 bits:
//  * gru_step: the same packed layout (blocks of 8 hidden units, kGruBlock) read two k at a
//    time as three vectors, [r z](k) [n r](k, k+1) [z n](k+1), against x[k], x[k] | x[k+1]
//    and x[k+1]: every unit's gate sums are the AVX2 kernel's even and odd FMA chains, in the
//    same order. Four blocks at once (twelve chains), the gates of two blocks per vector.
//  * linear_packed (fp32 weights packed at load in panels of 16 output features, one vector
//    per k): at M = 1 the GEMV, each output the AVX2 kernel's even and odd chains, four to six
//    panels at once for short rows; at M ≥ 2 the blocked GEMM, tiles of up to 10 rows x 2
//    panels, each output one chain per K block as the AVX2 micro-kernel's.
//  * linear_i8 at 4 ≤ M ≤ 7 (beam search's hypotheses over int8 weights): each vector two
//    outputs' 8 lanes against the row's 8 values twice, each lane the AVX2 kernel's chain.
//  * tanh, exp_sum, softmax_rows: the AVX2 kernels' formulas, 16 lanes at a time.
// gru_step, linear_packed, linear_i8 and tanh give the AVX2 kernels' results bit for bit (the same
// operations on each element); exp_sum and softmax_rows sum in another order
// (tests/test_kernels_simd.cpp holds both). Everything else is the AVX2 table's.
#include "attnlite/ops/kernels.h"
#include "cpu/simd/kernels_simd.h"
#include "cpu/simd/simd_math.h"  // the AVX2 kernels' horizontal sums, shared

namespace attnlite::ops {
const Kernels* simd_kernels_impl();     // src/cpu/simd/kernels_simd.cpp
const Kernels* avx512_kernels_impl();  // here: the table, or nullptr when built without AVX-512
}  // namespace attnlite::ops

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
// GCC 12's AVX-512 intrinsics start their results from _mm512_undefined_ps(), which its
// uninitialized-value warnings report at every inlined call.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>

namespace attnlite::ops::avx512 {
namespace {

using v16 = __m512;
constexpr int kW = 16;
constexpr int kU = kGruBlock;  // 8 hidden units per packed block
static_assert(kLinearPanel == kW, "one vector per panel row");

inline v16 v_set(float f) { return _mm512_set1_ps(f); }
inline __mmask16 first_n(int n) { return n >= kW ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u); }

// simd_math.h's exp8, tanh8, tanh_gate8 and sigmoid_gate8, in 16 lanes: the same operations.
inline v16 exp16(v16 x) {
  const v16 hi = v_set(88.7228394f), lo = v_set(-103.972084f);
  const v16 xc = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  const __m512i n = _mm512_cvtps_epi32(_mm512_mul_ps(xc, v_set(1.44269504088896341f)));
  const v16 fn = _mm512_cvtepi32_ps(n);
  v16 r = _mm512_fnmadd_ps(fn, v_set(0.693359375f), xc);
  r = _mm512_fnmadd_ps(fn, v_set(-2.12194440e-4f), r);
  v16 p = v_set(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, v_set(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, v_set(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, v_set(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, v_set(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, v_set(5.0000001201e-1f));
  const v16 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, v_set(1.f)));
  const __m512i e1 = _mm512_srai_epi32(n, 1);
  const __m512i e2 = _mm512_sub_epi32(n, e1);
  const __m512i bias = _mm512_set1_epi32(127);
  const v16 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(e1, bias), 23));
  const v16 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(e2, bias), 23));
  v16 y = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ), y);
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

inline v16 tanh16(v16 x) {
  const v16 sign = v_set(-0.f);
  const v16 ax = _mm512_andnot_ps(sign, x);
  const v16 e = exp16(_mm512_add_ps(ax, ax));
  const v16 big = _mm512_sub_ps(v_set(1.f), _mm512_div_ps(v_set(2.f), _mm512_add_ps(e, v_set(1.f))));
  const v16 z = _mm512_mul_ps(x, x);
  v16 p = v_set(-5.70498872745e-3f);
  p = _mm512_fmadd_ps(p, z, v_set(2.06390887954e-2f));
  p = _mm512_fmadd_ps(p, z, v_set(-5.37397155531e-2f));
  p = _mm512_fmadd_ps(p, z, v_set(1.33314422036e-1f));
  p = _mm512_fmadd_ps(p, z, v_set(-3.33332819422e-1f));
  p = _mm512_mul_ps(p, z);
  const v16 small = _mm512_fmadd_ps(p, ax, ax);
  const v16 t = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(ax, v_set(0.625f), _CMP_LT_OQ), small);
  return _mm512_or_ps(t, _mm512_and_ps(x, sign));
}

inline v16 tanh_gate16(v16 x) {
  const v16 lim = v_set(7.99881172180175781f);
  const v16 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_sub_ps(_mm512_setzero_ps(), lim)), lim);
  const v16 x2 = _mm512_mul_ps(xc, xc);
  v16 p = v_set(-2.76076847742355e-16f);
  p = _mm512_fmadd_ps(p, x2, v_set(2.00018790482477e-13f));
  p = _mm512_fmadd_ps(p, x2, v_set(-8.60467152213735e-11f));
  p = _mm512_fmadd_ps(p, x2, v_set(5.12229709037114e-08f));
  p = _mm512_fmadd_ps(p, x2, v_set(1.48572235717979e-05f));
  p = _mm512_fmadd_ps(p, x2, v_set(6.37261928875436e-04f));
  p = _mm512_fmadd_ps(p, x2, v_set(4.89352455891786e-03f));
  p = _mm512_mul_ps(p, xc);
  v16 q = v_set(1.19825839466702e-06f);
  q = _mm512_fmadd_ps(q, x2, v_set(1.18534705686654e-04f));
  q = _mm512_fmadd_ps(q, x2, v_set(2.26843463243900e-03f));
  q = _mm512_fmadd_ps(q, x2, v_set(4.89352518554385e-03f));
  return _mm512_div_ps(p, q);
}

inline v16 sigmoid_gate16(v16 x) {
  const v16 half = v_set(0.5f);
  return _mm512_fmadd_ps(tanh_gate16(_mm512_mul_ps(x, half)), half, half);
}

inline float hmax(v16 v) { return _mm512_reduce_max_ps(v); }

// ---- gru_step ----------------------------------------------------------------------------

// A block's 16 floats starting at p, of which the first n units of each half are valid (the
// rest 0): [p[0..n) | p[off..off+n)].
inline v16 load_halves(const float* p, long off, int n) {
  const __mmask8 m = (__mmask8)((1u << n) - 1u);
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_maskz_loadu_ps(m, p)),
                            _mm256_maskz_loadu_ps(m, p + off), 1);
}

// The three sums of G blocks over K packed steps of w (a block's rows: r, z, n of 8 units per
// k), against s: a[g] = [r | z] of the even k's chains, b[g] = [n (even) | r (odd)], c[g] =
// [z | n] of the odd k's. Entering, a[g] holds the sums so far of r and z (the even chains
// start from them) and b[g]'s low half that of n; the odd chains start at 0. Leaving, each
// block's a[g] holds [r | z] = even + odd chain, and n[g] the n sum, as the AVX2 kernel's
// gate_sums adds them.
template <int G>
inline void gate_sums(v16 (&a)[G], __m256 (&n)[G], const float* const (&w)[G], const float* s,
                      int K) {
  v16 b[G], c[G];
  for (int g = 0; g < G; ++g) {
    b[g] = _mm512_castps256_ps512(n[g]);
    b[g] = _mm512_insertf32x8(b[g], _mm256_setzero_ps(), 1);
    c[g] = _mm512_setzero_ps();
  }
  int k = 0;
  for (; k + 2 <= K; k += 2) {
    const v16 s0 = v_set(s[k]), s1 = v_set(s[k + 1]);
    const v16 s01 = _mm512_mask_blend_ps(0xFF00, s0, s1);
    for (int g = 0; g < G; ++g) {
      const float* wk = w[g] + (long)k * 3 * kU;
      a[g] = _mm512_fmadd_ps(s0, _mm512_loadu_ps(wk), a[g]);
      b[g] = _mm512_fmadd_ps(s01, _mm512_loadu_ps(wk + 2 * kU), b[g]);
      c[g] = _mm512_fmadd_ps(s1, _mm512_loadu_ps(wk + 4 * kU), c[g]);
    }
  }
  if (k < K) {
    const v16 s0 = v_set(s[k]);
    for (int g = 0; g < G; ++g) {
      const float* wk = w[g] + (long)k * 3 * kU;
      a[g] = _mm512_fmadd_ps(s0, _mm512_loadu_ps(wk), a[g]);
      b[g] = _mm512_mask3_fmadd_ps(s0, _mm512_castps256_ps512(_mm256_loadu_ps(wk + 2 * kU)), b[g], 0x00FF);
    }
  }
  for (int g = 0; g < G; ++g) {
    // r = r_even + r_odd, z = z_even + z_odd; n = n_even + n_odd
    a[g] = _mm512_add_ps(a[g], _mm512_shuffle_f32x4(b[g], c[g], 0x4E));
    n[g] = _mm256_add_ps(_mm512_castps512_ps256(b[g]), _mm512_extractf32x8_ps(c[g], 1));
  }
}

// Blocks j .. j+G−1 of one row (G ≤ 4), then their gates two blocks per vector, written to
// out (the row's h itself when these are all its blocks, else tmp).
template <int G>
inline void gru_blocks(float* out, const float* hb, const float* xb, const float* gb,
                       const float* pk, long block, int j, int in, int H) {
  v16 a[G];
  __m256 ni[G], nh[G];
  const float* wx[G];
  const float* wh[G];
  for (int g = 0; g < G; ++g) {
    const int j0 = (j + g) * kU, n = H - j0 < kU ? H - j0 : kU;
    const float* p = pk + (long)(j + g) * block;
    const v16 bhh = _mm512_loadu_ps(p + 3 * kU);  // [b_hh r | b_hh z]
    if (gb) {
      a[g] = _mm512_add_ps(load_halves(gb + j0, H, n), bhh);
      ni[g] = _mm256_maskz_loadu_ps((__mmask8)((1u << n) - 1u), gb + 2 * H + j0);
    } else {
      a[g] = _mm512_add_ps(_mm512_loadu_ps(p), bhh);
      ni[g] = _mm256_loadu_ps(p + 2 * kU);
    }
    nh[g] = _mm256_loadu_ps(p + 5 * kU);
    wx[g] = p + 6 * kU;
    wh[g] = p + 6 * kU + 3L * kU * in;
  }
  if (xb) gate_sums<G>(a, ni, wx, xb, in);
  gate_sums<G>(a, nh, wh, hb, H);
  for (int g = 0; g < G; g += 2) {
    // Blocks g and g + 1 (or g alone) side by side: units j0 .. j0 + 16 of the row.
    const int h2 = g + 1 < G ? g + 1 : g;
    const int j0 = (j + g) * kU, n = H - j0 < kW ? H - j0 : kW;
    const v16 r = sigmoid_gate16(_mm512_shuffle_f32x4(a[g], a[h2], 0x44));
    const v16 z = sigmoid_gate16(_mm512_shuffle_f32x4(a[g], a[h2], 0xEE));
    const v16 vni = _mm512_insertf32x8(_mm512_castps256_ps512(ni[g]), ni[h2], 1);
    const v16 vnh = _mm512_insertf32x8(_mm512_castps256_ps512(nh[g]), nh[h2], 1);
    const v16 ng = tanh_gate16(_mm512_fmadd_ps(r, vnh, vni));
    const __mmask16 m = first_n(h2 == g ? (n < kU ? n : kU) : n);
    // h' = (h − n)·z + n
    const v16 hn = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, hb + j0), ng), z, ng);
    _mm512_mask_storeu_ps(out + j0, m, hn);
  }
}

// Blocks j .. j+G−1 (1 ≤ G ≤ 4) by gru_blocks<G>.
inline void gru_group(int G, float* out, const float* hb, const float* xb, const float* gb,
                      const float* pk, long block, int j, int in, int H) {
  switch (G) {
    case 4: gru_blocks<4>(out, hb, xb, gb, pk, block, j, in, H); break;
    case 3: gru_blocks<3>(out, hb, xb, gb, pk, block, j, in, H); break;
    case 2: gru_blocks<2>(out, hb, xb, gb, pk, block, j, in, H); break;
    default: gru_blocks<1>(out, hb, xb, gb, pk, block, j, in, H); break;
  }
}

void gru_step(float* h, float* tmp, const float* x, const float* gi, const float* pk, int B,
              int in, int H) {
  const long block = gru_block_floats(in, H);
  const int blocks = (H + kU - 1) / kU;
  for (int b = 0; b < B; ++b) {
    float* hb = h + (long)b * H;
    const float* xb = x ? x + (long)b * in : nullptr;
    const float* gb = gi ? gi + (long)b * 3 * H : nullptr;
    if (blocks <= 4) {
      // one group (the book's 32 units): its sums have read all of h before its gates write
      gru_group(blocks, hb, hb, xb, gb, pk, block, 0, in, H);
      continue;
    }
    for (int j = 0; j < blocks; j += 4)
      gru_group(blocks - j < 4 ? blocks - j : 4, tmp, hb, xb, gb, pk, block, j, in, H);
    for (int i = 0; i < H; ++i) hb[i] = tmp[i];
  }
}

// ---- the packed GEMV ---------------------------------------------------------------------

constexpr int kPrefetchFloats = ATTNLITE_GEMV_PREFETCH / 4;

// P panels at once: each output's sums over even and odd k, added, then the bias, as the AVX2
// kernel (gemm_simd.cpp: gemv_panels, store_row, whose multiply by alpha = 1 changes nothing).
template <int P, bool Prefetch>
inline void gemv_panels(float* y, const float* x, const float* p, const float* bias, int n0, int N,
                        int K) {
  const long stride = (long)K * kW;
  v16 e[P], o[P];
  for (int q = 0; q < P; ++q) e[q] = o[q] = _mm512_setzero_ps();
  int k = 0;
  for (; k + 2 <= K; k += 2) {
    const v16 a0 = v_set(x[k]), a1 = v_set(x[k + 1]);
    for (int q = 0; q < P; ++q) {
      const float* pk = p + q * stride + (long)k * kW;
      if (Prefetch) {
        _mm_prefetch((const char*)(pk + kPrefetchFloats), _MM_HINT_T0);
        _mm_prefetch((const char*)(pk + kPrefetchFloats + kW), _MM_HINT_T0);
      }
      e[q] = _mm512_fmadd_ps(a0, _mm512_load_ps(pk), e[q]);
      o[q] = _mm512_fmadd_ps(a1, _mm512_load_ps(pk + kW), o[q]);
    }
  }
  if (k < K) {
    const v16 a0 = v_set(x[k]);
    for (int q = 0; q < P; ++q) e[q] = _mm512_fmadd_ps(a0, _mm512_load_ps(p + q * stride + (long)k * kW), e[q]);
  }
  for (int q = 0; q < P; ++q) {
    const int m0 = n0 + q * kW;
    const __mmask16 m = first_n(N - m0);
    v16 r = _mm512_add_ps(e[q], o[q]);
    if (bias) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, bias + m0));
    _mm512_mask_storeu_ps(y + m0, m, r);
  }
}

// Up to this K, panels four to six at once (eight to twelve chains: a short row's two chains
// end before the FMA latency is hidden); longer rows stream from memory, two panels at once.
constexpr int kManyPanelsMaxK = 128;
constexpr long kNoPrefetchBytes = ATTNLITE_GEMV_NO_PREFETCH_BYTES;  // stays in L2 between steps

template <bool Prefetch>
void gemv_group(int P, float* y, const float* x, const float* p, const float* bias, int n0, int N,
                int K) {
  switch (P) {
    case 6: gemv_panels<6, Prefetch>(y, x, p, bias, n0, N, K); break;
    case 5: gemv_panels<5, Prefetch>(y, x, p, bias, n0, N, K); break;
    case 4: gemv_panels<4, Prefetch>(y, x, p, bias, n0, N, K); break;
    case 3: gemv_panels<3, Prefetch>(y, x, p, bias, n0, N, K); break;
    case 2: gemv_panels<2, Prefetch>(y, x, p, bias, n0, N, K); break;
    default: gemv_panels<1, Prefetch>(y, x, p, bias, n0, N, K); break;
  }
}

template <bool Prefetch>
void gemv_packed(float* y, const float* x, const float* wp, const float* bias, int N, int K) {
  const int panels = (N + kW - 1) / kW;
  for (int q = 0; q < panels;) {
    // short rows: groups of 4 while more than 6 are left, then the rest together (13 panels:
    // 4 + 4 + 5; 7: 4 + 3); long rows: pairs
    const int left = panels - q;
    const int P = K > kManyPanelsMaxK ? (left >= 2 ? 2 : 1) : left <= 6 ? left : 4;
    gemv_group<Prefetch>(P, y, x, wp + (long)q * K * kW, bias, q * kW, N, K);
    q += P;
  }
}

// act (kActRelu, kActGelu) on n values of y in place, by the AVX2 table's relu and gelu, as
// the AVX2 products apply it.
inline void apply_act(float* y, int n, int act) {
  if (act == kActRelu) simd::relu(y, n);
  if (act == kActGelu) simd::gelu(y, n);
}

// ---- the packed GEMM (M ≥ 2) --------------------------------------------------------------

// gemm_simd.cpp's blocks (kernels_simd.h): the same K blocks, so the same sums; rows in tiles
// of up to 10: twenty accumulators, each pair of panel vectors loaded once for ten rows (a
// 20-token source is two tiles: its encoder + cross K/V went from 7.0-8.2 to 6.6-6.9 ms
// against tiles of 6, bench/RESULTS.md round eight).
constexpr int KC = ATTNLITE_GEMM_KC, MC = ATTNLITE_GEMM_MC, MR = 10;

// The lines of the next panels this tile fetches into L2 while it works (gemm_simd.cpp's
// Fetch): from q[0] and q[1] (or null), every `stride` floats, n lines of each.
struct Fetch {
  const float* q[2] = {nullptr, nullptr};
  long stride = 0;
  int n = 0;
};

// One row of a tile: C (=|+=) acc (+ bias) over the columns of mask m, as gemm_simd.cpp's
// store_row (alpha = 1: its multiply leaves acc as it is).
inline void store_row(float* cr, v16 acc, __mmask16 m, const float* bias, bool first) {
  if (m == 0xFFFF) {
    if (!first)
      acc = _mm512_add_ps(acc, _mm512_loadu_ps(cr));
    else if (bias)
      acc = _mm512_add_ps(acc, _mm512_loadu_ps(bias));
    _mm512_storeu_ps(cr, acc);
  } else {
    const v16 base = first ? (bias ? _mm512_maskz_loadu_ps(m, bias) : _mm512_setzero_ps())
                           : _mm512_maskz_loadu_ps(m, cr);
    _mm512_mask_storeu_ps(cr, m, _mm512_add_ps(base, acc));
  }
}

// C (R x 16Q) (=|+=) A (R x kc) · the Q panels at p (kc rows of 16, Q·K·16 floats apart): each
// output one FMA chain over k from 0, as the AVX2 micro-kernel's; R·Q ≤ 20 accumulators.
template <int R, int Q, bool kFetch>
inline void micro(int kc, const float* a, long lda, const float* p, long pstride, float* c,
                  long ldc, int nr, const float* bias, bool first, const Fetch& f) {
  v16 acc[R][Q];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < Q; ++q) acc[r][q] = _mm512_setzero_ps();
  for (int k = 0; k < kc; ++k) {
    if constexpr (kFetch)
      if (k < f.n) {
        _mm_prefetch((const char*)(f.q[0] + k * f.stride), _MM_HINT_T1);
        if (f.q[1]) _mm_prefetch((const char*)(f.q[1] + k * f.stride), _MM_HINT_T1);
      }
    v16 b[Q];
    for (int q = 0; q < Q; ++q) b[q] = _mm512_load_ps(p + q * pstride + (long)k * kW);
    for (int r = 0; r < R; ++r) {
      const v16 av = v_set(a[r * lda + k]);
      for (int q = 0; q < Q; ++q) acc[r][q] = _mm512_fmadd_ps(av, b[q], acc[r][q]);
    }
  }
  for (int q = 0; q < Q; ++q) {
    const int cols = nr - q * kW;
    const __mmask16 m = first_n(cols);
    for (int r = 0; r < R; ++r)
      store_row(c + r * ldc + q * kW, acc[r][q], m, bias ? bias + q * kW : nullptr, first);
  }
}

template <int Q, bool kFetch>
inline void micro_rows(int rows, int kc, const float* a, long lda, const float* p, long pstride,
                       float* c, long ldc, int nr, const float* bias, bool first, const Fetch& f) {
  switch (rows) {
    case 10: micro<10, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 9: micro<9, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 8: micro<8, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 7: micro<7, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 6: micro<6, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 5: micro<5, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 4: micro<4, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 3: micro<3, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    case 2: micro<2, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
    default: micro<1, Q, kFetch>(kc, a, lda, p, pstride, c, ldc, nr, bias, first, f); break;
  }
}

// Y (M x N) = X · Wᵀ + b on the packed panels, two panels (32 columns) per tile: K in
// gemm_simd.cpp's blocks, the first writing C = acc + bias and the others adding theirs; rows
// in tiles as equal as can be; the next two panels fetched into L2 while these are used; act
// on each tile of the last K block while it is in L1.
void gemm_packed(float* y, const float* x, const float* wp, const float* bias, int M, int N, int K,
                 int act) {
  const int nkb = (K + KC - 1) / KC;
  const int kb = ((K + nkb - 1) / nkb + 7) / 8 * 8;
  const long pstride = (long)K * kW;  // one panel
  for (int k0 = 0; k0 < K; k0 += kb) {
    const int kc = K - k0 < kb ? K - k0 : kb;
    const bool first = k0 == 0, last = k0 + kc >= K;
    for (int m0 = 0; m0 < M; m0 += MC) {
      const int mc = M - m0 < MC ? M - m0 : MC;
      const int tiles = (mc + MR - 1) / MR;
      for (int n0 = 0; n0 < N; n0 += 2 * kW) {
        const int nr = N - n0 < 2 * kW ? N - n0 : 2 * kW;
        const float* p = wp + (long)(n0 / kW) * pstride + (long)k0 * kW;
        const float* bn = first && bias ? bias + n0 : nullptr;
        // the next two panels' lines, shared out among the tiles
        const int n1 = n0 + 2 * kW;
        Fetch f;
        if (n1 < N) {
          f.q[0] = p + 2 * pstride;
          f.q[1] = n1 + kW < N ? p + 3 * pstride : nullptr;
        }
        for (int t = 0, m = m0; t < tiles; ++t) {
          const int rows = (mc * (t + 1)) / tiles - (mc * t) / tiles;
          const float* am = x + (long)m * K + k0;
          float* cm = y + (long)m * N + n0;
          if (f.q[0]) {
            const Fetch ft{{f.q[0] + (long)t * kW, f.q[1] ? f.q[1] + (long)t * kW : nullptr},
                           (long)tiles * kW, (kc - t + tiles - 1) / tiles};
            if (nr > kW)
              micro_rows<2, true>(rows, kc, am, K, p, pstride, cm, N, nr, bn, first, ft);
            else
              micro_rows<1, true>(rows, kc, am, K, p, pstride, cm, N, nr, bn, first, ft);
          } else if (nr > kW) {
            micro_rows<2, false>(rows, kc, am, K, p, pstride, cm, N, nr, bn, first, f);
          } else {
            micro_rows<1, false>(rows, kc, am, K, p, pstride, cm, N, nr, bn, first, f);
          }
          if (last)
            for (int r = 0; r < rows; ++r) apply_act(cm + (long)r * N, nr, act);
          m += rows;
        }
      }
    }
  }
}

void linear_packed(float* y, const float* x, const float* wp, const float* b, int M, int N, int K,
                   int act) {
  if (M <= 0 || N <= 0 || K <= 0) {
    simd::linear_packed(y, x, wp, b, M, N, K, act);  // the empty cases, as the AVX2 table
    return;
  }
  if (M > 1) {
    gemm_packed(y, x, wp, b, M, N, K, act);
    return;
  }
  if ((long)N * K * 4 <= kNoPrefetchBytes)
    gemv_packed<false>(y, x, wp, b, N, K);
  else
    gemv_packed<true>(y, x, wp, b, N, K);
  apply_act(y, N, act);
}

// ---- int8 weights at small M ---------------------------------------------------------------

// linear_i8 for 4 ≤ M ≤ ATTNLITE_SMALL_M_I8 (kernels_simd.h) and K a multiple of 8: the rows of
// beam search's hypotheses. The AVX2 kernel (gemm_simd.cpp: linear_i8_small_m) holds each
// output's sum in 8 lanes, lane i the FMA chain over k ≡ i (mod 8), in tiles of 4 rows x 2
// outputs. Here one vector holds two outputs' 8 lanes, [n | n+1], against the row's 8 values
// twice, [x | x]: half the FMAs, each lane the same chain. The ends are the AVX2 kernel's
// horizontal sums, scale and bias; the last odd output and the last M % 4 rows go as there.
// Same results bit for bit. Each pair costs a shuffle (two rows' 8 bytes into one vector)
// before its widening: beam 4 over the test split ran 1.49x faster than on the AVX2 kernel
// (bench/RESULTS.md, round eight); one output's 16 consecutive weights per vector skips that
// shuffle (~1.3x faster kernel again) but sums each output in another order.

// q0[k..k+8) | q1[k..k+8) as floats, and the same at k + 8.
inline void widen_pairs(const int8_t* q0, const int8_t* q1, int k, v16& lo, v16& hi) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q0 + k));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q1 + k));
  lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_unpacklo_epi64(a, b)));
  hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_unpackhi_epi64(a, b)));
}
inline v16 widen_pair(const int8_t* q0, const int8_t* q1, int k) {
  const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q0 + k));
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q1 + k));
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_unpacklo_epi64(a, b)));
}
// p[0..8) in both halves.
inline v16 twice(const float* p) { return _mm512_broadcast_f32x8(_mm256_loadu_ps(p)); }

inline __m256 low(v16 v) { return _mm512_castps512_ps256(v); }
inline __m256 high(v16 v) { return _mm512_extractf32x8_ps(v, 1); }

// Rows 0..3 of x times outputs 0..2P of q (P pairs): y = sum · scale (+ bias), as i8_tile_4x2,
// whose horizontal sums (simd_math.h's hsum4) end each output.
template <int P>
inline void i8_tile(const float* a, long lda, const int8_t* q, long ldq, int K, float* c, long ldc,
                    const float* scale, const float* bias) {
  v16 acc[4][P];
  for (int r = 0; r < 4; ++r)
    for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_ps();
  int k = 0;
  for (; k + 2 * kU <= K; k += 2 * kU) {
    v16 lo[P], hi[P];
    for (int p = 0; p < P; ++p) widen_pairs(q + 2 * p * ldq, q + (2 * p + 1) * ldq, k, lo[p], hi[p]);
    for (int r = 0; r < 4; ++r) {
      const v16 x = twice(a + r * lda + k);
      for (int p = 0; p < P; ++p) acc[r][p] = _mm512_fmadd_ps(x, lo[p], acc[r][p]);
    }
    for (int r = 0; r < 4; ++r) {
      const v16 x = twice(a + r * lda + k + kU);
      for (int p = 0; p < P; ++p) acc[r][p] = _mm512_fmadd_ps(x, hi[p], acc[r][p]);
    }
  }
  if (k < K) {  // K ≡ 8 (mod 16)
    v16 w[P];
    for (int p = 0; p < P; ++p) w[p] = widen_pair(q + 2 * p * ldq, q + (2 * p + 1) * ldq, k);
    for (int r = 0; r < 4; ++r) {
      const v16 x = twice(a + r * lda + k);
      for (int p = 0; p < P; ++p) acc[r][p] = _mm512_fmadd_ps(x, w[p], acc[r][p]);
    }
  }
  for (int p = 0; p < P; ++p) {
    const float* sp = scale + 2 * p;
    const __m128 sc = _mm_setr_ps(sp[0], sp[1], sp[0], sp[1]);
    const __m128 bs = bias ? _mm_setr_ps(bias[2 * p], bias[2 * p + 1], bias[2 * p], bias[2 * p + 1])
                           : _mm_setzero_ps();
    const __m128 lo = _mm_add_ps(
        _mm_mul_ps(simd::hsum4(low(acc[0][p]), high(acc[0][p]), low(acc[1][p]), high(acc[1][p])), sc), bs);
    const __m128 hi = _mm_add_ps(
        _mm_mul_ps(simd::hsum4(low(acc[2][p]), high(acc[2][p]), low(acc[3][p]), high(acc[3][p])), sc), bs);
    float* cp = c + 2 * p;
    _mm_storel_pi(reinterpret_cast<__m64*>(cp), lo);
    _mm_storeh_pi(reinterpret_cast<__m64*>(cp + ldc), lo);
    _mm_storel_pi(reinterpret_cast<__m64*>(cp + 2 * ldc), hi);
    _mm_storeh_pi(reinterpret_cast<__m64*>(cp + 3 * ldc), hi);
  }
}

// One output (the last of an odd N) for rows 0..3, as the AVX2 kernel's dot_tile<1, 1>: 8 lanes,
// then simd_math.h's hsum.
inline void i8_column(const float* a, long lda, const int8_t* q, int K, float* c, long ldc,
                      float scale, const float* bias) {
  for (int r = 0; r < 4; ++r) {
    __m256 acc = _mm256_setzero_ps();
    for (int k = 0; k < K; k += kU) {
      const __m256 w = _mm256_cvtepi32_ps(
          _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + k))));
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + k), w, acc);
    }
    const float y = simd::hsum(acc) * scale;  // then + bias, not fused: as the AVX2 kernel
    c[r * ldc] = bias ? y + *bias : y;
  }
}

// Tiles of 4 rows x 4 outputs (eight accumulators: enough FMAs in flight for two 512-bit FMA
// pipes), then one pair and one output; the weights' rows outermost, as the AVX2 kernel.
void linear_i8(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
               int M, int N, int K) {
  if (M < 4 || M > ATTNLITE_SMALL_M_I8 || N <= 0 || K <= 0 || K % kU != 0) {
    simd::linear_i8(y, x, q, scale, b, M, N, K);
    return;
  }
  const int M4 = M / 4 * 4, N4 = N / 4 * 4, N2 = N / 2 * 2;
  auto at = [](const float* p, int n) { return p ? p + n : nullptr; };
  for (int n = 0; n < N4; n += 4)
    for (int m = 0; m < M4; m += 4)
      i8_tile<2>(x + (long)m * K, K, q + (long)n * K, K, K, y + (long)m * N + n, N, scale + n, at(b, n));
  if (N4 < N2)
    for (int m = 0; m < M4; m += 4)
      i8_tile<1>(x + (long)m * K, K, q + (long)N4 * K, K, K, y + (long)m * N + N4, N, scale + N4,
                 at(b, N4));
  if (N2 < N)
    for (int m = 0; m < M4; m += 4)
      i8_column(x + (long)m * K, K, q + (long)N2 * K, K, y + (long)m * N + N2, N, scale[N2], at(b, N2));
  if (M4 < M) simd::linear_i8(y + (long)M4 * N, x + (long)M4 * K, q, scale, b, M - M4, N, K);
}

// ---- element-wise and row kernels --------------------------------------------------------

void tanh(float* x, int n) {
  int i = 0;
  for (; i + kW <= n; i += kW) _mm512_storeu_ps(x + i, tanh16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = first_n(n - i);
    _mm512_mask_storeu_ps(x + i, m, tanh16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

// Masked tails: the missing lanes read as -inf (exp gives 0, a max ignores them).
inline v16 load_or_ninf(const float* p, __mmask16 m) {
  return _mm512_mask_loadu_ps(v_set(-INFINITY), m, p);
}

void exp_sum(const float* x, int n, float* max, double* sum) {
  const int nv = n - n % kW;
  const __mmask16 tail = first_n(n - nv);
  v16 vmax = n > nv ? load_or_ninf(x + nv, tail) : v_set(-INFINITY);
  for (int i = 0; i < nv; i += kW) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
  const float m = hmax(vmax);
  const v16 vm = v_set(m);
  // Blocks of 4 vectors (64 values) summed in float, each block's sum added in double.
  double total = 0.0;
  int i = 0;
  for (; i + 4 * kW <= nv; i += 4 * kW) {
    v16 s0 = _mm512_setzero_ps(), s1 = s0;
    for (int j = 0; j < 4 * kW; j += 2 * kW) {
      s0 = _mm512_add_ps(s0, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i + j), vm)));
      s1 = _mm512_add_ps(s1, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i + j + kW), vm)));
    }
    total += (double)_mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
  }
  v16 s = _mm512_setzero_ps();
  for (; i < nv; i += kW) s = _mm512_add_ps(s, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm)));
  if (n > nv) s = _mm512_add_ps(s, exp16(_mm512_sub_ps(load_or_ninf(x + nv, tail), vm)));
  *max = m;
  *sum = total + (double)_mm512_reduce_add_ps(s);
}

void softmax_rows(float* x, int ld, int rows, int n) {
  if (n <= 0) return;
  const int nv = n - n % kW;
  const __mmask16 tail = first_n(n - nv);
  for (int row = 0; row < rows; ++row) {
    float* xr = x + (long)row * ld;
    v16 vmax = n > nv ? load_or_ninf(xr + nv, tail) : v_set(-INFINITY);
    for (int i = 0; i < nv; i += kW) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(xr + i));
    const v16 vm = v_set(hmax(vmax));
    v16 s0 = _mm512_setzero_ps(), s1 = s0;
    int i = 0;
    for (; i + 2 * kW <= nv; i += 2 * kW) {
      const v16 e0 = exp16(_mm512_sub_ps(_mm512_loadu_ps(xr + i), vm));
      const v16 e1 = exp16(_mm512_sub_ps(_mm512_loadu_ps(xr + i + kW), vm));
      _mm512_storeu_ps(xr + i, e0);
      _mm512_storeu_ps(xr + i + kW, e1);
      s0 = _mm512_add_ps(s0, e0);
      s1 = _mm512_add_ps(s1, e1);
    }
    if (i < nv) {
      const v16 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(xr + i), vm));
      _mm512_storeu_ps(xr + i, e);
      s0 = _mm512_add_ps(s0, e);
    }
    v16 elast = _mm512_setzero_ps();
    if (n > nv) {
      elast = exp16(_mm512_sub_ps(load_or_ninf(xr + nv, tail), vm));  // exp(-inf) = 0
      s1 = _mm512_add_ps(s1, elast);
    }
    // Scale by 1/sum, as the scalar reference does.
    const v16 inv = v_set(1.f / _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
    for (i = 0; i < nv; i += kW) _mm512_storeu_ps(xr + i, _mm512_mul_ps(_mm512_loadu_ps(xr + i), inv));
    if (n > nv) _mm512_mask_storeu_ps(xr + nv, tail, _mm512_mul_ps(elast, inv));
  }
}

}  // namespace
}  // namespace attnlite::ops::avx512

namespace attnlite::ops {

const Kernels* avx512_kernels_impl() {
  static const Kernels k = [] {
    Kernels t = *simd_kernels_impl();
    t.name = "avx512";
    t.gru_step = avx512::gru_step;
    t.tanh = avx512::tanh;
    t.exp_sum = avx512::exp_sum;
    t.softmax_rows = avx512::softmax_rows;
    t.linear_i8 = avx512::linear_i8;
#if ATTNLITE_PACKED_WEIGHTS
    t.linear_packed = avx512::linear_packed;
#endif
    return t;
  }();
  return &k;
}

}  // namespace attnlite::ops

#else  // built without AVX-512 (-march=native on a CPU without it): no table

namespace attnlite::ops {
const Kernels* avx512_kernels_impl() { return nullptr; }
}  // namespace attnlite::ops

#endif
