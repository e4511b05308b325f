// attnlite — vector helpers shared by the SIMD kernels. Written once against the x86
// AVX2/FMA intrinsics API through SIMDe: native AVX2/FMA on x86, NEON on Arm, SIMD128
// under Emscripten (-msimd128).
//
// Include this header ONLY from src/cpu/simd/*.cpp and src/cpu/avx512/ (which calls its
// horizontal sums to end each output as the AVX2 kernels do): those files are compiled with
// -mavx2 -mfma (and more), and every helper here is `static inline` so that no AVX2-compiled
// copy can be merged by the linker with a symbol used by the portable code. For the same
// reason the SIMD translation units avoid instantiating std:: templates.
#pragma once

#include <simde/x86/avx2.h>
#include <simde/x86/fma.h>

namespace attnlite::ops::simd {

using v8 = simde__m256;
constexpr int kW = 8;  // floats per vector

static inline v8 v_set(float f) { return simde_mm256_set1_ps(f); }

// a / b, correctly rounded on every target. 32-bit Arm's NEON has no vector division: SIMDe
// takes a reciprocal estimate and one Newton step there (about 1e-5 relative error, which
// the tanh, sigmoid and gelu kernels would inherit), so the lanes are divided by the VFP,
// whose division is IEEE's (GCC does not vectorise float code for ARMv7 NEON, which is not).
static inline v8 v_div(v8 a, v8 b) {
#if defined(__ARM_NEON) && !defined(__aarch64__)
  alignas(32) float x[kW], y[kW];
  simde_mm256_store_ps(x, a);
  simde_mm256_store_ps(y, b);
  for (int i = 0; i < kW; ++i) x[i] /= y[i];
  return simde_mm256_load_ps(x);
#else
  return simde_mm256_div_ps(a, b);
#endif
}

// Horizontal sum of one vector.
static inline float hsum(v8 v) {
  simde__m128 s = simde_mm_add_ps(simde_mm256_castps256_ps128(v), simde_mm256_extractf128_ps(v, 1));
  s = simde_mm_add_ps(s, simde_mm_movehl_ps(s, s));
  s = simde_mm_add_ss(s, simde_mm_movehdup_ps(s));
  return simde_mm_cvtss_f32(s);
}

// Horizontal max of one vector.
static inline float hmax(v8 v) {
  simde__m128 s = simde_mm_max_ps(simde_mm256_castps256_ps128(v), simde_mm256_extractf128_ps(v, 1));
  s = simde_mm_max_ps(s, simde_mm_movehl_ps(s, s));
  s = simde_mm_max_ss(s, simde_mm_movehdup_ps(s));
  return simde_mm_cvtss_f32(s);
}

// {hsum(a0), hsum(a1), hsum(a2), hsum(a3)} in one 128-bit vector.
static inline simde__m128 hsum4(v8 a0, v8 a1, v8 a2, v8 a3) {
  const v8 t0 = simde_mm256_hadd_ps(a0, a1);  // a0 01 23, a1 01 23 | a0 45 67, a1 45 67
  const v8 t1 = simde_mm256_hadd_ps(a2, a3);
  const v8 t2 = simde_mm256_hadd_ps(t0, t1);  // a0..a3 (0123) | a0..a3 (4567)
  return simde_mm_add_ps(simde_mm256_castps256_ps128(t2), simde_mm256_extractf128_ps(t2, 1));
}

// exp(x), Cephes-style: n = round(x·log2 e), r = x − n·ln 2 (two-constant Cody–Waite
// reduction, |r| ≤ ln2/2), degree-7 polynomial for e^r, then a scale by 2^n done as two
// multiplies by 2^⌊n/2⌋ and 2^(n−⌊n/2⌋) so that every n in [−150, 128] is exact, including
// the subnormal results and the overflow to +inf. Inputs above ln(FLT_MAX) give +inf,
// inputs below ln(2^−150) give exactly 0 (as std::exp in float), NaN propagates.
// Measured (tests/test_kernels_simd.cpp, 2M random points on [−87.3, 88.72] plus a sweep of
// [−10, 10] in steps of 1e-4): max relative error 1.18e-7 (about 1 ulp; std::exp in float
// gets 5.96e-8, i.e. correctly rounded) against exp in double. Same figure on x86 AVX2,
// aarch64 NEON (qemu) and WASM SIMD128 (node).
static inline v8 exp8(v8 x) {
  const v8 hi = v_set(88.7228394f);    // exp(hi) overflows in float
  const v8 lo = v_set(-103.972084f);   // ln(2^-150): below, the float result is 0
  const v8 xc = simde_mm256_min_ps(simde_mm256_max_ps(x, lo), hi);
  const simde__m256i n = simde_mm256_cvtps_epi32(simde_mm256_mul_ps(xc, v_set(1.44269504088896341f)));
  const v8 fn = simde_mm256_cvtepi32_ps(n);
  v8 r = simde_mm256_fnmadd_ps(fn, v_set(0.693359375f), xc);
  r = simde_mm256_fnmadd_ps(fn, v_set(-2.12194440e-4f), r);
  v8 p = v_set(1.9875691500e-4f);
  p = simde_mm256_fmadd_ps(p, r, v_set(1.3981999507e-3f));
  p = simde_mm256_fmadd_ps(p, r, v_set(8.3334519073e-3f));
  p = simde_mm256_fmadd_ps(p, r, v_set(4.1665795894e-2f));
  p = simde_mm256_fmadd_ps(p, r, v_set(1.6666665459e-1f));
  p = simde_mm256_fmadd_ps(p, r, v_set(5.0000001201e-1f));
  const v8 r2 = simde_mm256_mul_ps(r, r);
  p = simde_mm256_fmadd_ps(p, r2, simde_mm256_add_ps(r, v_set(1.f)));
  // 2^n = 2^e1 · 2^e2, both factors normal floats.
  const simde__m256i e1 = simde_mm256_srai_epi32(n, 1);
  const simde__m256i e2 = simde_mm256_sub_epi32(n, e1);
  const simde__m256i bias = simde_mm256_set1_epi32(127);
  const v8 s1 = simde_mm256_castsi256_ps(simde_mm256_slli_epi32(simde_mm256_add_epi32(e1, bias), 23));
  const v8 s2 = simde_mm256_castsi256_ps(simde_mm256_slli_epi32(simde_mm256_add_epi32(e2, bias), 23));
  v8 y = simde_mm256_mul_ps(simde_mm256_mul_ps(p, s1), s2);
  // Below ln(2^-150): exactly 0 (the masked softmax entries rely on it); NaN stays NaN.
  y = simde_mm256_and_ps(y, simde_mm256_cmp_ps(x, lo, SIMDE_CMP_GE_OQ));
  return simde_mm256_blendv_ps(y, x, simde_mm256_cmp_ps(x, x, SIMDE_CMP_UNORD_Q));
}

// tanh(x): Cephes tanhf. |x| < 0.625: odd polynomial x + x·z·P(z), z = x², which keeps the
// relative accuracy near 0; otherwise 1 − 2/(e^{2|x|} + 1) with the sign restored (e^{2|x|}
// overflows to +inf for |x| > 44 and the result is exactly ±1, never NaN).
// Measured (tests/test_kernels_simd.cpp, [−20, 20] in steps of 1e-5 plus (0, 0.1]): max
// absolute error 7.9e-8 and max relative error 1.4e-7 against tanh in double.
static inline v8 tanh8(v8 x) {
  const v8 sign = v_set(-0.f);
  const v8 ax = simde_mm256_andnot_ps(sign, x);
  // Large branch.
  const v8 e = exp8(simde_mm256_add_ps(ax, ax));
  const v8 big = simde_mm256_sub_ps(
      v_set(1.f), v_div(v_set(2.f), simde_mm256_add_ps(e, v_set(1.f))));
  // Small branch.
  const v8 z = simde_mm256_mul_ps(x, x);
  v8 p = v_set(-5.70498872745e-3f);
  p = simde_mm256_fmadd_ps(p, z, v_set(2.06390887954e-2f));
  p = simde_mm256_fmadd_ps(p, z, v_set(-5.37397155531e-2f));
  p = simde_mm256_fmadd_ps(p, z, v_set(1.33314422036e-1f));
  p = simde_mm256_fmadd_ps(p, z, v_set(-3.33332819422e-1f));
  p = simde_mm256_mul_ps(p, z);
  const v8 small = simde_mm256_fmadd_ps(p, ax, ax);
  const v8 t = simde_mm256_blendv_ps(big, small, simde_mm256_cmp_ps(ax, v_set(0.625f), SIMDE_CMP_LT_OQ));
  return simde_mm256_or_ps(t, simde_mm256_and_ps(x, sign));
}

// sigmoid(x) = 1 / (1 + e^{−x}), as the scalar reference and PyTorch compute it; e^{−x}
// = +inf for x < −88.7 gives exactly 0, e^{−x} = 0 for x > 104 gives exactly 1.
static inline v8 sigmoid8(v8 x) {
  const v8 e = exp8(simde_mm256_sub_ps(simde_mm256_setzero_ps(), x));
  return v_div(v_set(1.f), simde_mm256_add_ps(v_set(1.f), e));
}

// The recurrent cells' gates: tanh(x) as a rational function, x·P(x²) / Q(x²) of degrees 13
// and 6 (the minimax fit Eigen uses for float), on x clamped to ±7.9988 where it reaches the
// float nearest 1; one division and no exp. Its error against tanh in double is below 3e-7
// absolute (tests/test_kernels_simd.cpp); the GRU's gates use it and tanh8 stays the
// pointwise tanh (which keeps 2e-7).
static inline v8 tanh_gate8(v8 x) {
  const v8 lim = v_set(7.99881172180175781f);
  const v8 xc = simde_mm256_min_ps(simde_mm256_max_ps(x, simde_mm256_sub_ps(simde_mm256_setzero_ps(), lim)), lim);
  const v8 x2 = simde_mm256_mul_ps(xc, xc);
  v8 p = v_set(-2.76076847742355e-16f);
  p = simde_mm256_fmadd_ps(p, x2, v_set(2.00018790482477e-13f));
  p = simde_mm256_fmadd_ps(p, x2, v_set(-8.60467152213735e-11f));
  p = simde_mm256_fmadd_ps(p, x2, v_set(5.12229709037114e-08f));
  p = simde_mm256_fmadd_ps(p, x2, v_set(1.48572235717979e-05f));
  p = simde_mm256_fmadd_ps(p, x2, v_set(6.37261928875436e-04f));
  p = simde_mm256_fmadd_ps(p, x2, v_set(4.89352455891786e-03f));
  p = simde_mm256_mul_ps(p, xc);
  v8 q = v_set(1.19825839466702e-06f);
  q = simde_mm256_fmadd_ps(q, x2, v_set(1.18534705686654e-04f));
  q = simde_mm256_fmadd_ps(q, x2, v_set(2.26843463243900e-03f));
  q = simde_mm256_fmadd_ps(q, x2, v_set(4.89352518554385e-03f));
  return v_div(p, q);
}

// sigmoid(x) = (1 + tanh(x / 2)) / 2, for the gates (absolute error below 2e-7).
static inline v8 sigmoid_gate8(v8 x) {
  const v8 half = v_set(0.5f);
  return simde_mm256_fmadd_ps(tanh_gate8(simde_mm256_mul_ps(x, half)), half, half);
}

// gelu(x) = x · (1 + erf(x / √2)) / 2 with erf from Abramowitz & Stegun 7.1.26:
// erf(z) = 1 − t·(a1 + t·(a2 + t·(a3 + t·(a4 + t·a5))))·e^{−z²}, t = 1 / (1 + p·z), z ≥ 0, odd
// in z (absolute error of the formula ≤ 1.5e-7). Large |x| gives x or exactly 0; NaN stays NaN.
// Measured (tests/test_kernels_simd.cpp, [−10, 10] in steps of 1e-4): max absolute error
// against the scalar std::erf kernel below 1e-6.
static inline v8 gelu8(v8 x) {
  const v8 sign = v_set(-0.f);
  const v8 z = simde_mm256_mul_ps(simde_mm256_andnot_ps(sign, x), v_set(0.70710678118654752f));
  const v8 t = v_div(v_set(1.f), simde_mm256_fmadd_ps(z, v_set(0.3275911f), v_set(1.f)));
  v8 p = v_set(1.061405429f);
  p = simde_mm256_fmadd_ps(p, t, v_set(-1.453152027f));
  p = simde_mm256_fmadd_ps(p, t, v_set(1.421413741f));
  p = simde_mm256_fmadd_ps(p, t, v_set(-0.284496736f));
  p = simde_mm256_fmadd_ps(p, t, v_set(0.254829592f));
  p = simde_mm256_mul_ps(p, t);
  const v8 e = exp8(simde_mm256_sub_ps(simde_mm256_setzero_ps(), simde_mm256_mul_ps(z, z)));
  const v8 erf_abs = simde_mm256_fnmadd_ps(p, e, v_set(1.f));           // erf(|x| / √2)
  const v8 erf = simde_mm256_or_ps(erf_abs, simde_mm256_and_ps(x, sign));  // odd
  return simde_mm256_mul_ps(simde_mm256_mul_ps(v_set(0.5f), x), simde_mm256_add_ps(v_set(1.f), erf));
}

}  // namespace attnlite::ops::simd
