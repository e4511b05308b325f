// attnlite — the int8 linear layer in native WebAssembly SIMD128 (the fp32 kernels are in
// gemm_simd128.cpp and pointwise_simd128.cpp). y = x · (scale ⊙ q)ᵀ + b.
//
// Integer dot products on a two-part fixed-point copy of x. SIMD128 has no float FMA and
// widening int8 weights to floats costs five instructions per four weights, but it has
// i32x4.dot_i16x8_s (8 multiply-adds of 16-bit integers in one instruction). Each row of x is
// split as x = s·hi + s₂·lo with hi, lo int16, s = 2^(e−14) where max|x| < 2^e, s₂ = s·2^−15:
// s is a power of two, so s·hi and the residual x − s·hi are exact floats, and only lo is
// rounded. The dot products Σ hi·q and Σ lo·q are exact int32 sums, combined in double.
// Error of an output: at most |lo's rounding| · Σ|q| · scale ≤ 2^−30 · 2^e · Σ|q_k| · scale,
// below 2^−29 · max|x| · Σ|q_k| · scale: about the rounding of an fp32 dot product over the
// row, and measured closer to a double-precision reference than the fp32 kernel
// (bench/RESULTS-wasm.md). Rows whose largest |x| is not finite, or below 2^−90, use the
// fp32 tiles below (NaN and infinity propagate as in every other kernel); all-zero rows give b.
//
// int32 range: |hi|, |lo| ≤ 2^14 and |q| ≤ 2^7, so one product is at most 2^21 and a lane
// of dot_i16x8 gains two per 8 columns: K is cut into blocks of kBlock = 2048 columns (at
// most 2^30 per lane; the four lanes are added in 64 bits); longer rows add their blocks'
// partial sums in fp32.
//
// Tiles: 4 weight rows x 1 row of x (a decoding step, M = 1), 2 x 2 for 2 ≤ M (beam search,
// source sentences): the fastest in a sweep of 1-6 x 1-4 under V8 (bench/RESULTS-wasm.md);
// larger tiles run out of x64's 16 vector registers and spill. Rows of one block (K < 2048,
// every shipped layer) run all their tiles in one call (row4, tile2x2), which sum their lanes
// four outputs at a time; at K = 256 a call per tile spent about a fifth of its time outside
// its loop.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "linear_i8_simd128.h"

namespace attnlite::ops::wasm {
namespace {

constexpr int kBlock = 2048;  // columns per integer block
constexpr int kRows = 4;      // rows of x quantized together

// ---- fp32 tiles: rows that cannot be split (NaN, infinity, tiny) ----

inline float lane_sum(v128_t v) {
  return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
         (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}

// NC weight rows (q, stride K) times one row of x.
template <int NC>
inline void float_tile(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
                       int K) {
  v128_t acc[NC];
  for (int j = 0; j < NC; ++j) acc[j] = wasm_f32x4_splat(0.f);
  int k = 0;
  for (; k + 8 <= K; k += 8) {
    const v128_t xl = wasm_v128_load(x + k), xh = wasm_v128_load(x + k + 4);
    for (int j = 0; j < NC; ++j) {
      const v128_t w16 = wasm_i16x8_load8x8(q + (long)j * K + k);
      const v128_t wl = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(w16));
      const v128_t wh = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(w16));
      acc[j] = wasm_f32x4_add(acc[j], wasm_f32x4_add(wasm_f32x4_mul(xl, wl), wasm_f32x4_mul(xh, wh)));
    }
  }
  for (int j = 0; j < NC; ++j) {
    float s = lane_sum(acc[j]);
    for (int kk = k; kk < K; ++kk) s += x[kk] * (float)q[(long)j * K + kk];
    y[j] = b ? s * scale[j] + b[j] : s * scale[j];
  }
}

void float_row(float* y, const float* x, const int8_t* q, const float* scale, const float* b, int N,
               int K) {
  int n = 0;
  for (; n + 4 <= N; n += 4) float_tile<4>(y + n, x, q + (long)n * K, scale + n, b ? b + n : nullptr, K);
  for (; n < N; ++n) float_tile<1>(y + n, x, q + (long)n * K, scale + n, b ? b + n : nullptr, K);
}

// ---- the split of a row ----

// A row's scales: s = 2^(e−14), s₂ = 2^(e−29) with max|x| < 2^e. Ok when the row can be
// split; zero when every x is 0.
struct Split {
  bool ok, zero;
  float s, s2, inv, inv2;
};

Split split_of(const float* x, int K) {
  v128_t mx = wasm_f32x4_splat(0.f);
  int k = 0;
  for (; k + 4 <= K; k += 4) mx = wasm_f32x4_max(mx, wasm_f32x4_abs(wasm_v128_load(x + k)));
  float m = std::fmax(std::fmax(wasm_f32x4_extract_lane(mx, 0), wasm_f32x4_extract_lane(mx, 1)),
                      std::fmax(wasm_f32x4_extract_lane(mx, 2), wasm_f32x4_extract_lane(mx, 3)));
  // f32x4.max propagates NaN; fmax does not, so NaN is looked for lane by lane
  bool nan = std::isnan(wasm_f32x4_extract_lane(mx, 0)) || std::isnan(wasm_f32x4_extract_lane(mx, 1)) ||
             std::isnan(wasm_f32x4_extract_lane(mx, 2)) || std::isnan(wasm_f32x4_extract_lane(mx, 3));
  for (; k < K; ++k) {
    nan |= std::isnan(x[k]);
    m = std::fmax(m, std::fabs(x[k]));
  }
  Split sp{false, false, 0.f, 0.f, 0.f, 0.f};
  if (nan || !std::isfinite(m)) return sp;
  if (m == 0.f) {
    sp.ok = sp.zero = true;
    return sp;
  }
  int e = 0;
  std::frexp(m, &e);  // m < 2^e
  if (e < -90) return sp;
  sp.ok = true;
  sp.s = std::ldexp(1.f, e - 14);
  sp.s2 = std::ldexp(1.f, e - 29);
  sp.inv = std::ldexp(1.f, 14 - e);
  sp.inv2 = std::ldexp(1.f, 29 - e);
  return sp;
}

// hi and lo of x[0, K) (K a block's width): |x·inv| < 2^14 rounds to |hi| ≤ 2^14; the residual
// x − s·hi is exact, |r| ≤ s/2, so |lo| ≤ 2^14.
void quantize(int16_t* hi, int16_t* lo, const float* x, int K, const Split& sp) {
  const v128_t s = wasm_f32x4_splat(sp.s), inv = wasm_f32x4_splat(sp.inv), inv2 = wasm_f32x4_splat(sp.inv2);
  int k = 0;
  for (; k + 8 <= K; k += 8) {
    const v128_t x0 = wasm_v128_load(x + k), x1 = wasm_v128_load(x + k + 4);
    const v128_t h0 = wasm_f32x4_nearest(wasm_f32x4_mul(x0, inv)), h1 = wasm_f32x4_nearest(wasm_f32x4_mul(x1, inv));
    const v128_t r0 = wasm_f32x4_sub(x0, wasm_f32x4_mul(h0, s)), r1 = wasm_f32x4_sub(x1, wasm_f32x4_mul(h1, s));
    const v128_t l0 = wasm_f32x4_nearest(wasm_f32x4_mul(r0, inv2)), l1 = wasm_f32x4_nearest(wasm_f32x4_mul(r1, inv2));
    wasm_v128_store(hi + k, wasm_i16x8_narrow_i32x4(wasm_i32x4_trunc_sat_f32x4(h0), wasm_i32x4_trunc_sat_f32x4(h1)));
    wasm_v128_store(lo + k, wasm_i16x8_narrow_i32x4(wasm_i32x4_trunc_sat_f32x4(l0), wasm_i32x4_trunc_sat_f32x4(l1)));
  }
  for (; k < K; ++k) {
    const float h = std::nearbyint(x[k] * sp.inv);
    hi[k] = (int16_t)h;
    lo[k] = (int16_t)std::nearbyint((x[k] - h * sp.s) * sp.inv2);
  }
}

// ---- integer tiles ----

// The lanes' total in 64 bits: each lane is below 2^30, a block's total up to 2^32.
inline int64_t isum(v128_t v) {
  return ((int64_t)wasm_i32x4_extract_lane(v, 0) + wasm_i32x4_extract_lane(v, 1)) +
         ((int64_t)wasm_i32x4_extract_lane(v, 2) + wasm_i32x4_extract_lane(v, 3));
}

// Σ hi·q and Σ lo·q over the columns [K8, K) that the 8-wide loops leave (K mod 8 of them),
// for one quantized row and one weight row: exact in 32 bits (under 8 products of at most
// 2^14 · 2^7).
inline void tail_dots(const int16_t* hi, const int16_t* lo, const int8_t* q, int K8, int K,
                      int32_t& sh, int32_t& sl) {
  sh = sl = 0;
  for (int k = K8; k < K; ++k) {
    sh += (int32_t)hi[k] * q[k];
    sl += (int32_t)lo[k] * q[k];
  }
}

// The rows of x that one integer pass reads: hi and lo of up to kRows rows over one block.
struct Quantized {
  alignas(16) int16_t hi[kRows][kBlock];
  alignas(16) int16_t lo[kRows][kBlock];
  double s[kRows], s2[kRows];
};

// Σ hi·q and Σ lo·q of NC weight rows (q, stride ldq) and MC quantized rows from r0, over
// K columns (K8 of them in SIMD), combined: out[r][j] = s·Σhi·q + s₂·Σlo·q.
template <int NC, int MC>
__attribute__((noinline)) void int_tile(double out[MC][NC], const Quantized& xq, int r0, const int8_t* q, long ldq, int K) {
  v128_t ah[MC][NC], al[MC][NC];
  for (int r = 0; r < MC; ++r)
    for (int j = 0; j < NC; ++j) ah[r][j] = al[r][j] = wasm_i32x4_splat(0);
  const int K8 = K / 8 * 8;
#pragma clang loop unroll(disable)
  for (int k = 0; k < K8; k += 8) {
    v128_t w[NC];
    for (int j = 0; j < NC; ++j) w[j] = wasm_i16x8_load8x8(q + j * ldq + k);
    for (int r = 0; r < MC; ++r) {
      const v128_t h = wasm_v128_load(xq.hi[r0 + r] + k), l = wasm_v128_load(xq.lo[r0 + r] + k);
      for (int j = 0; j < NC; ++j) {
        ah[r][j] = wasm_i32x4_add(ah[r][j], wasm_i32x4_dot_i16x8(h, w[j]));
        al[r][j] = wasm_i32x4_add(al[r][j], wasm_i32x4_dot_i16x8(l, w[j]));
      }
    }
  }
  for (int r = 0; r < MC; ++r)
    for (int j = 0; j < NC; ++j) {
      int32_t th, tl;
      tail_dots(xq.hi[r0 + r], xq.lo[r0 + r], q + j * ldq, K8, K, th, tl);
      const int64_t sh = isum(ah[r][j]) + th, sl = isum(al[r][j]) + tl;
      out[r][j] = (double)sh * xq.s[r0 + r] + (double)sl * xq.s2[r0 + r];
    }
}

// The totals of a0..a3's lanes as doubles, rows 0 and 1 in r01, rows 2 and 3 in r23: one round
// of shuffles and adds in int32 (each lane of t then holds two lanes of an a), the last add
// in double. A dot_i16x8 lane gains at most 2 · 2^21 per 8 columns (|hi|, |lo| ≤ 2^14,
// |q| ≤ 2^7), so after K < 2048 columns a lane of t is below 2^31; the sums are exact either
// way, the totals (below 2^32) as well in double.
inline void lane_totals(v128_t a0, v128_t a1, v128_t a2, v128_t a3, v128_t& r01, v128_t& r23) {
  const v128_t t0 = wasm_i32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7));
  const v128_t t1 = wasm_i32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5), wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7));
  r01 = wasm_f64x2_add(wasm_f64x2_convert_low_i32x4(t0),
                       wasm_f64x2_convert_low_i32x4(wasm_i32x4_shuffle(t0, t0, 2, 3, 2, 3)));
  r23 = wasm_f64x2_add(wasm_f64x2_convert_low_i32x4(t1),
                       wasm_f64x2_convert_low_i32x4(wasm_i32x4_shuffle(t1, t1, 2, 3, 2, 3)));
}

// 4 x 1 tiles of a single-block row (K < kBlock) that also write their outputs, for `groups`
// groups of 4 weight rows (one call for a whole layer, not one per tile): y[j] = (float)(s·Σhi·q
// + s₂·Σlo·q) · scale[j] + b[j], the same operations on the same values as int_tile then put
// (exact integer totals, double products and sum, one rounding to float, then a float
// multiply and add), with the horizontal sums and the conversions four rows at a time
// instead of lane by lane: the same bits, fewer instructions per tile.
__attribute__((noinline)) void row4(float* y, const Quantized& xq, const int8_t* q, long ldq, int K,
                                    const float* scale, const float* b, int groups) {
  for (int g = 0; g < groups; ++g, y += 4, q += 4 * ldq, scale += 4, b = b ? b + 4 : nullptr) {
    v128_t ah0 = wasm_i32x4_splat(0), ah1 = ah0, ah2 = ah0, ah3 = ah0;
    v128_t al0 = ah0, al1 = ah0, al2 = ah0, al3 = ah0;
    const int K8 = K / 8 * 8;
  #pragma clang loop unroll(disable)
    for (int k = 0; k < K8; k += 8) {
      const v128_t w0 = wasm_i16x8_load8x8(q + k), w1 = wasm_i16x8_load8x8(q + ldq + k);
      const v128_t w2 = wasm_i16x8_load8x8(q + 2 * ldq + k), w3 = wasm_i16x8_load8x8(q + 3 * ldq + k);
      const v128_t h = wasm_v128_load(xq.hi[0] + k), l = wasm_v128_load(xq.lo[0] + k);
      ah0 = wasm_i32x4_add(ah0, wasm_i32x4_dot_i16x8(h, w0));
      al0 = wasm_i32x4_add(al0, wasm_i32x4_dot_i16x8(l, w0));
      ah1 = wasm_i32x4_add(ah1, wasm_i32x4_dot_i16x8(h, w1));
      al1 = wasm_i32x4_add(al1, wasm_i32x4_dot_i16x8(l, w1));
      ah2 = wasm_i32x4_add(ah2, wasm_i32x4_dot_i16x8(h, w2));
      al2 = wasm_i32x4_add(al2, wasm_i32x4_dot_i16x8(l, w2));
      ah3 = wasm_i32x4_add(ah3, wasm_i32x4_dot_i16x8(h, w3));
      al3 = wasm_i32x4_add(al3, wasm_i32x4_dot_i16x8(l, w3));
    }
    v128_t h01, h23, l01, l23;
    lane_totals(ah0, ah1, ah2, ah3, h01, h23);
    lane_totals(al0, al1, al2, al3, l01, l23);
    if (K8 < K) {  // the last K mod 8 columns, in double (exact)
      alignas(16) double th[4] = {0, 0, 0, 0}, tl[4] = {0, 0, 0, 0};
      for (int j = 0; j < 4; ++j) {
        int32_t sh, sl;
        tail_dots(xq.hi[0], xq.lo[0], q + j * ldq, K8, K, sh, sl);
        th[j] = sh;
        tl[j] = sl;
      }
      h01 = wasm_f64x2_add(h01, wasm_v128_load(th));
      h23 = wasm_f64x2_add(h23, wasm_v128_load(th + 2));
      l01 = wasm_f64x2_add(l01, wasm_v128_load(tl));
      l23 = wasm_f64x2_add(l23, wasm_v128_load(tl + 2));
    }
    const v128_t s = wasm_f64x2_splat(xq.s[0]), s2 = wasm_f64x2_splat(xq.s2[0]);
    const v128_t v01 = wasm_f64x2_add(wasm_f64x2_mul(h01, s), wasm_f64x2_mul(l01, s2));
    const v128_t v23 = wasm_f64x2_add(wasm_f64x2_mul(h23, s), wasm_f64x2_mul(l23, s2));
    const v128_t f = wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(v01), wasm_f32x4_demote_f64x2_zero(v23), 0, 1, 4, 5);
    v128_t out = wasm_f32x4_mul(f, wasm_v128_load(scale));
    if (b) out = wasm_f32x4_add(out, wasm_v128_load(b));
    wasm_v128_store(y, out);
  }
}

// 2 x 2 tiles of single-block rows (K < kBlock: weight rows n, n + 1 times quantized rows
// r0, r0 + 1, then r0 + 2, r0 + 3 ... for `pairs` pairs) that write their outputs, as row4
// does: the same bits as int_tile<2, 2> then put.
__attribute__((noinline)) void tile2x2(float* y, int ldy, const Quantized& xq, int r0, const int8_t* q,
                                       long ldq, int K, const float* scale, const float* b, int pairs) {
  for (int pr = 0; pr < pairs; ++pr, r0 += 2, y += 2L * ldy) {
    v128_t ah00 = wasm_i32x4_splat(0), ah01 = ah00, ah10 = ah00, ah11 = ah00;
    v128_t al00 = ah00, al01 = ah00, al10 = ah00, al11 = ah00;
    const int K8 = K / 8 * 8;
    const int16_t *h0 = xq.hi[r0], *h1 = xq.hi[r0 + 1], *l0 = xq.lo[r0], *l1 = xq.lo[r0 + 1];
  #pragma clang loop unroll(disable)
    for (int k = 0; k < K8; k += 8) {
      const v128_t w0 = wasm_i16x8_load8x8(q + k), w1 = wasm_i16x8_load8x8(q + ldq + k);
      const v128_t hv0 = wasm_v128_load(h0 + k), lv0 = wasm_v128_load(l0 + k);
      ah00 = wasm_i32x4_add(ah00, wasm_i32x4_dot_i16x8(hv0, w0));
      ah01 = wasm_i32x4_add(ah01, wasm_i32x4_dot_i16x8(hv0, w1));
      al00 = wasm_i32x4_add(al00, wasm_i32x4_dot_i16x8(lv0, w0));
      al01 = wasm_i32x4_add(al01, wasm_i32x4_dot_i16x8(lv0, w1));
      const v128_t hv1 = wasm_v128_load(h1 + k), lv1 = wasm_v128_load(l1 + k);
      ah10 = wasm_i32x4_add(ah10, wasm_i32x4_dot_i16x8(hv1, w0));
      ah11 = wasm_i32x4_add(ah11, wasm_i32x4_dot_i16x8(hv1, w1));
      al10 = wasm_i32x4_add(al10, wasm_i32x4_dot_i16x8(lv1, w0));
      al11 = wasm_i32x4_add(al11, wasm_i32x4_dot_i16x8(lv1, w1));
    }
    v128_t h0v, h1v, l0v, l1v;  // [row r0: n, n + 1] and [row r0 + 1: n, n + 1]
    lane_totals(ah00, ah01, ah10, ah11, h0v, h1v);
    lane_totals(al00, al01, al10, al11, l0v, l1v);
    if (K8 < K) {  // the last K mod 8 columns, in double (exact)
      alignas(16) double th[4], tl[4];
      for (int r = 0; r < 2; ++r)
        for (int j = 0; j < 2; ++j) {
          int32_t sh, sl;
          tail_dots(xq.hi[r0 + r], xq.lo[r0 + r], q + j * ldq, K8, K, sh, sl);
          th[2 * r + j] = sh;
          tl[2 * r + j] = sl;
        }
      h0v = wasm_f64x2_add(h0v, wasm_v128_load(th));
      h1v = wasm_f64x2_add(h1v, wasm_v128_load(th + 2));
      l0v = wasm_f64x2_add(l0v, wasm_v128_load(tl));
      l1v = wasm_f64x2_add(l1v, wasm_v128_load(tl + 2));
    }
    const v128_t v0 = wasm_f64x2_add(wasm_f64x2_mul(h0v, wasm_f64x2_splat(xq.s[r0])),
                                     wasm_f64x2_mul(l0v, wasm_f64x2_splat(xq.s2[r0])));
    const v128_t v1 = wasm_f64x2_add(wasm_f64x2_mul(h1v, wasm_f64x2_splat(xq.s[r0 + 1])),
                                     wasm_f64x2_mul(l1v, wasm_f64x2_splat(xq.s2[r0 + 1])));
    const v128_t f = wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(v0), wasm_f32x4_demote_f64x2_zero(v1), 0, 1, 4, 5);
    v128_t out = wasm_f32x4_mul(f, wasm_v128_load64_splat(scale));
    if (b) out = wasm_f32x4_add(out, wasm_v128_load64_splat(b));
    const uint64_t o0 = (uint64_t)wasm_i64x2_extract_lane(out, 0), o1 = (uint64_t)wasm_i64x2_extract_lane(out, 1);
    std::memcpy(y, &o0, 8);
    std::memcpy(y + ldy, &o1, 8);
  }
}

// Writes (single block: the final y) or adds (one of several blocks: partial sums) a tile.
template <int NC, int MC>
inline void put(float* y, int ldy, const double v[MC][NC], const float* scale, const float* b, bool blocks,
                bool first) {
  for (int r = 0; r < MC; ++r)
    for (int j = 0; j < NC; ++j) {
      float* o = y + (long)r * ldy + j;
      if (!blocks)
        *o = b ? (float)v[r][j] * scale[j] + b[j] : (float)v[r][j] * scale[j];
      else
        *o = first ? (float)v[r][j] : *o + (float)v[r][j];
    }
}

// One block of columns [k0, k0 + kl) for the quantized rows of xq (mr of them) into y's rows.
void int_block(float* y, int N, const Quantized& xq, int mr, const int8_t* q, const float* scale,
               const float* b, int K, int k0, int kl, bool blocks) {
  const bool first = k0 == 0;
  const int8_t* qk = q + k0;
  if (mr == 1) {
    double v[1][4];
    int n = 0;
    if (!blocks && kl < kBlock) {
      row4(y, xq, qk, K, kl, scale, b, N / 4);
      n = N / 4 * 4;
    }
    for (; n + 4 <= N; n += 4) {
      int_tile<4, 1>(v, xq, 0, qk + (long)n * K, K, kl);
      put<4, 1>(y + n, N, v, scale + n, b ? b + n : nullptr, blocks, first);
    }
    for (; n < N; ++n) {
      double v1[1][1];
      int_tile<1, 1>(v1, xq, 0, qk + (long)n * K, K, kl);
      put<1, 1>(y + n, N, v1, scale + n, b ? b + n : nullptr, blocks, first);
    }
    return;
  }
  int n = 0;
  for (; n + 2 <= N; n += 2) {
    int r = 0;
    if (!blocks && kl < kBlock) {
      tile2x2(y + n, N, xq, 0, qk + (long)n * K, K, kl, scale + n, b ? b + n : nullptr, mr / 2);
      r = mr / 2 * 2;
    }
    for (; r + 2 <= mr; r += 2) {
      double v[2][2];
      int_tile<2, 2>(v, xq, r, qk + (long)n * K, K, kl);
      put<2, 2>(y + (long)r * N + n, N, v, scale + n, b ? b + n : nullptr, blocks, first);
    }
    if (r < mr) {
      double v[1][2];
      int_tile<2, 1>(v, xq, r, qk + (long)n * K, K, kl);
      put<2, 1>(y + (long)r * N + n, N, v, scale + n, b ? b + n : nullptr, blocks, first);
    }
  }
  for (; n < N; ++n)
    for (int r = 0; r < mr; ++r) {
      double v[1][1];
      int_tile<1, 1>(v, xq, r, qk + (long)n * K, K, kl);
      put<1, 1>(y + (long)r * N + n, N, v, scale + n, b ? b + n : nullptr, blocks, first);
    }
}

}  // namespace

void linear_i8(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
               int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) y[(long)m * N + n] = b ? b[n] : 0.f;
    return;
  }
  Quantized xq;  // 32 KB of stack
  const bool blocks = K > kBlock;
  for (int m0 = 0; m0 < M; m0 += kRows) {
    // the rows of this group that are split (row index in the group -> packed index)
    int rows[kRows], mr = 0;
    Split sp[kRows];
    const int mg = M - m0 < kRows ? M - m0 : kRows;
    for (int r = 0; r < mg; ++r) {
      const float* xr = x + (long)(m0 + r) * K;
      float* yr = y + (long)(m0 + r) * N;
      sp[r] = split_of(xr, K);
      if (!sp[r].ok) {
        float_row(yr, xr, q, scale, b, N, K);
      } else if (sp[r].zero) {
        for (int n = 0; n < N; ++n) yr[n] = b ? b[n] : 0.f;
      } else {
        rows[mr++] = r;
      }
    }
    if (mr == 0) continue;
    // consecutive runs of split rows share passes over the weights
    for (int i = 0; i < mr;) {
      int j = i + 1;
      while (j < mr && rows[j] == rows[j - 1] + 1) ++j;
      const int first = rows[i], run = j - i;
      for (int r = 0; r < run; ++r) {
        xq.s[r] = sp[first + r].s;
        xq.s2[r] = sp[first + r].s2;
      }
      float* yr = y + (long)(m0 + first) * N;
      for (int k0 = 0; k0 < K; k0 += kBlock) {
        const int kl = K - k0 < kBlock ? K - k0 : kBlock;
        for (int r = 0; r < run; ++r)
          quantize(xq.hi[r], xq.lo[r], x + (long)(m0 + first + r) * K + k0, kl, sp[first + r]);
        int_block(yr, N, xq, run, q, scale, b, K, k0, kl, blocks);
      }
      if (blocks)
        for (int r = 0; r < run; ++r)
          for (int n = 0; n < N; ++n) {
            float& o = yr[(long)r * N + n];
            o = b ? o * scale[n] + b[n] : o * scale[n];
          }
      i = j;
    }
  }
}

}  // namespace attnlite::ops::wasm
#endif
