// attnlite — elementary functions on four floats in native WebAssembly SIMD128, for the web
// build's kernels (src/cpu/wasm/*_simd128.cpp). The same polynomials and range handling as the
// native SIMD kernels (src/cpu/simd/simd_math.h), written with <wasm_simd128.h>: SIMD128 has
// no fused multiply-add (relaxed SIMD's is not portable across engines), so every fma there
// is a multiply and an add here, which costs at most one more rounding per step (still about
// 1-2 ulp; tests/wasm/kernel_parity.cpp measures it against the scalar kernels).
//
// Include only from files compiled under -msimd128 (the whole header is guarded).
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

namespace attnlite::ops::wasm {

static inline v128_t splat(float f) { return wasm_f32x4_splat(f); }
static inline v128_t madd(v128_t a, v128_t b, v128_t c) {  // a·b + c
  return wasm_f32x4_add(wasm_f32x4_mul(a, b), c);
}

// Sum of the four lanes.
static inline float hsum(v128_t v) {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

// {hsum(a0), hsum(a1), hsum(a2), hsum(a3)}: four dot products finished in one vector, so a
// block of four outputs is stored with one store.
static inline v128_t hsum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t s01 = wasm_f32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5),
                                    wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7));
  const v128_t s23 = wasm_f32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5),
                                    wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7));
  return wasm_f32x4_add(wasm_i32x4_shuffle(s01, s23, 0, 1, 4, 5),
                        wasm_i32x4_shuffle(s01, s23, 2, 3, 6, 7));
}

// exp(x), Cephes-style: n = round(x·log2 e), r = x − n·ln 2 (two-constant Cody–Waite
// reduction), degree-7 polynomial for e^r, then 2^n applied as 2^⌊n/2⌋ · 2^(n−⌊n/2⌋) so that
// every n in [−150, 128] is exact (subnormal results, overflow to +inf). Below ln(2^−150)
// the result is exactly 0 (the masked softmax entries rely on it); NaN stays NaN.
// Not inlined: softmax, tanh, sigmoid and gelu share one copy (about 1 KB of .wasm less; a
// call per four values is lost in the polynomial's cost).
__attribute__((noinline)) static v128_t exp4(v128_t x) {
  const v128_t lo = splat(-103.972084f);  // ln(2^-150)
  const v128_t xc = wasm_f32x4_min(wasm_f32x4_max(x, lo), splat(88.7228394f));
  const v128_t fn = wasm_f32x4_nearest(wasm_f32x4_mul(xc, splat(1.44269504088896341f)));
  const v128_t n = wasm_i32x4_trunc_sat_f32x4(fn);  // NaN -> 0; its lane is replaced below
  v128_t r = wasm_f32x4_sub(xc, wasm_f32x4_mul(fn, splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(fn, splat(-2.12194440e-4f)));
  v128_t p = splat(1.9875691500e-4f);
  p = madd(p, r, splat(1.3981999507e-3f));
  p = madd(p, r, splat(8.3334519073e-3f));
  p = madd(p, r, splat(4.1665795894e-2f));
  p = madd(p, r, splat(1.6666665459e-1f));
  p = madd(p, r, splat(5.0000001201e-1f));
  p = madd(p, wasm_f32x4_mul(r, r), wasm_f32x4_add(r, splat(1.f)));
  const v128_t e1 = wasm_i32x4_shr(n, 1);
  const v128_t e2 = wasm_i32x4_sub(n, e1);
  const v128_t bias = wasm_i32x4_splat(127);
  const v128_t s1 = wasm_i32x4_shl(wasm_i32x4_add(e1, bias), 23);
  const v128_t s2 = wasm_i32x4_shl(wasm_i32x4_add(e2, bias), 23);
  v128_t y = wasm_f32x4_mul(wasm_f32x4_mul(p, s1), s2);
  y = wasm_v128_and(y, wasm_f32x4_ge(x, lo));
  return wasm_v128_bitselect(x, y, wasm_f32x4_ne(x, x));
}

// tanh(x): Cephes tanhf. |x| < 0.625: x + x·z·P(z), z = x² (relative accuracy near 0);
// otherwise 1 − 2/(e^{2|x|} + 1) with the sign restored (exactly ±1 for large |x|, never NaN).
static inline v128_t tanh4(v128_t x) {
  const v128_t sign = splat(-0.f);
  const v128_t ax = wasm_v128_andnot(x, sign);
  const v128_t e = exp4(wasm_f32x4_add(ax, ax));
  const v128_t big =
      wasm_f32x4_sub(splat(1.f), wasm_f32x4_div(splat(2.f), wasm_f32x4_add(e, splat(1.f))));
  const v128_t z = wasm_f32x4_mul(x, x);
  v128_t p = splat(-5.70498872745e-3f);
  p = madd(p, z, splat(2.06390887954e-2f));
  p = madd(p, z, splat(-5.37397155531e-2f));
  p = madd(p, z, splat(1.33314422036e-1f));
  p = madd(p, z, splat(-3.33332819422e-1f));
  const v128_t small = madd(wasm_f32x4_mul(p, z), ax, ax);
  const v128_t t = wasm_v128_bitselect(small, big, wasm_f32x4_lt(ax, splat(0.625f)));
  return wasm_v128_or(t, wasm_v128_and(x, sign));
}

// sigmoid(x) = 1 / (1 + e^{−x}) as the scalar reference computes it.
static inline v128_t sigmoid4(v128_t x) {
  const v128_t e = exp4(wasm_f32x4_neg(x));
  return wasm_f32x4_div(splat(1.f), wasm_f32x4_add(splat(1.f), e));
}

// The exact (erf) GELU, x · (1 + erf(x/√2)) / 2, not the tanh approximation. erf from
// Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5e-7): erf(z) = 1 − t·P(t)·e^{−z²},
// t = 1/(1 + p·z), z ≥ 0, odd in z. Large |x| gives x or exactly 0; NaN stays NaN.
static inline v128_t gelu4(v128_t x) {
  const v128_t sign = splat(-0.f);
  const v128_t z = wasm_f32x4_mul(wasm_v128_andnot(x, sign), splat(0.70710678118654752f));
  const v128_t t = wasm_f32x4_div(splat(1.f), madd(z, splat(0.3275911f), splat(1.f)));
  v128_t p = splat(1.061405429f);
  p = madd(p, t, splat(-1.453152027f));
  p = madd(p, t, splat(1.421413741f));
  p = madd(p, t, splat(-0.284496736f));
  p = madd(p, t, splat(0.254829592f));
  p = wasm_f32x4_mul(p, t);
  const v128_t e = exp4(wasm_f32x4_neg(wasm_f32x4_mul(z, z)));
  const v128_t erf_abs = wasm_f32x4_sub(splat(1.f), wasm_f32x4_mul(p, e));
  const v128_t erf = wasm_v128_or(erf_abs, wasm_v128_and(x, sign));
  return wasm_f32x4_mul(wasm_f32x4_mul(splat(0.5f), x), wasm_f32x4_add(splat(1.f), erf));
}

}  // namespace attnlite::ops::wasm
#endif
