// attnlite — SIMD row and element-wise kernels: softmax_rows, layer_norm, add, relu, tanh,
// sigmoid. The transcendental functions (exp8, tanh8, sigmoid8) are in simd_math.h.
// Tails shorter than a vector go through an 8-float stack buffer so that every element is
// computed by the same vector formula whatever its position in the row.
#include <cmath>

#include "kernels_simd.h"
#include "simd_math.h"

namespace attnlite::ops::simd {
namespace {

// Loads r < 8 floats into a vector, the other lanes set to fill.
inline v8 load_tail(const float* p, int r, float fill) {
  alignas(32) float t[kW];
  for (int i = 0; i < kW; ++i) t[i] = i < r ? p[i] : fill;
  return simde_mm256_load_ps(t);
}

inline void store_tail(float* p, v8 v, int r) {
  alignas(32) float t[kW];
  simde_mm256_store_ps(t, v);
  for (int i = 0; i < r; ++i) p[i] = t[i];
}

template <v8 (*F)(v8)>
inline void map_inplace(float* x, int n) {
  int i = 0;
  for (; i + kW <= n; i += kW) simde_mm256_storeu_ps(x + i, F(simde_mm256_loadu_ps(x + i)));
  if (i < n) store_tail(x + i, F(load_tail(x + i, n - i, 0.f)), n - i);
}

}  // namespace

void softmax_rows(float* x, int ld, int rows, int n) {
  if (n <= 0) return;
  const float ninf = -INFINITY;
  for (int row = 0; row < rows; ++row) {
    float* xr = x + (long)row * ld;
    const int nv = n - n % kW;
    // Max.
    v8 vmax = v_set(ninf);
    for (int i = 0; i < nv; i += kW) vmax = simde_mm256_max_ps(vmax, simde_mm256_loadu_ps(xr + i));
    if (nv < n) vmax = simde_mm256_max_ps(vmax, load_tail(xr + nv, n - nv, ninf));
    const v8 vm = v_set(hmax(vmax));
    // exp(x - max), sum. Padding lanes are -inf and contribute exactly 0.
    v8 s0 = simde_mm256_setzero_ps(), s1 = simde_mm256_setzero_ps();
    int i = 0;
    for (; i + 2 * kW <= nv; i += 2 * kW) {
      const v8 e0 = exp8(simde_mm256_sub_ps(simde_mm256_loadu_ps(xr + i), vm));
      const v8 e1 = exp8(simde_mm256_sub_ps(simde_mm256_loadu_ps(xr + i + kW), vm));
      simde_mm256_storeu_ps(xr + i, e0);
      simde_mm256_storeu_ps(xr + i + kW, e1);
      s0 = simde_mm256_add_ps(s0, e0);
      s1 = simde_mm256_add_ps(s1, e1);
    }
    for (; i < nv; i += kW) {
      const v8 e = exp8(simde_mm256_sub_ps(simde_mm256_loadu_ps(xr + i), vm));
      simde_mm256_storeu_ps(xr + i, e);
      s0 = simde_mm256_add_ps(s0, e);
    }
    if (nv < n) {
      const v8 e = exp8(simde_mm256_sub_ps(load_tail(xr + nv, n - nv, ninf), vm));
      store_tail(xr + nv, e, n - nv);
      s1 = simde_mm256_add_ps(s1, e);
    }
    // Scale by 1/sum, as the scalar reference does.
    const v8 inv = v_set(1.f / hsum(simde_mm256_add_ps(s0, s1)));
    for (i = 0; i < nv; i += kW)
      simde_mm256_storeu_ps(xr + i, simde_mm256_mul_ps(simde_mm256_loadu_ps(xr + i), inv));
    if (nv < n) store_tail(xr + nv, simde_mm256_mul_ps(load_tail(xr + nv, n - nv, 0.f), inv), n - nv);
  }
}

void layer_norm(float* y, const float* x, const float* g, const float* b, int rows, int n,
                float eps) {
  if (n <= 0) return;
  const int nv = n - n % kW;
  for (int row = 0; row < rows; ++row) {
    const float* xr = x + (long)row * n;
    float* yr = y + (long)row * n;
    // Mean (the tail is padded with 0).
    v8 s = simde_mm256_setzero_ps();
    for (int i = 0; i < nv; i += kW) s = simde_mm256_add_ps(s, simde_mm256_loadu_ps(xr + i));
    if (nv < n) s = simde_mm256_add_ps(s, load_tail(xr + nv, n - nv, 0.f));
    const float mean = hsum(s) / (float)n;
    const v8 vmean = v_set(mean);
    // Biased variance, two-pass as the reference (the tail is padded with the mean).
    v8 q = simde_mm256_setzero_ps();
    for (int i = 0; i < nv; i += kW) {
      const v8 d = simde_mm256_sub_ps(simde_mm256_loadu_ps(xr + i), vmean);
      q = simde_mm256_fmadd_ps(d, d, q);
    }
    if (nv < n) {
      const v8 d = simde_mm256_sub_ps(load_tail(xr + nv, n - nv, mean), vmean);
      q = simde_mm256_fmadd_ps(d, d, q);
    }
    const float var = hsum(q) / (float)n;
    const v8 inv = v_set(1.f / std::sqrt(var + eps));
    // y = (x - mean) · inv · g + b
    for (int i = 0; i < nv; i += kW) {
      const v8 d = simde_mm256_mul_ps(simde_mm256_sub_ps(simde_mm256_loadu_ps(xr + i), vmean), inv);
      simde_mm256_storeu_ps(
          yr + i, simde_mm256_fmadd_ps(d, simde_mm256_loadu_ps(g + i), simde_mm256_loadu_ps(b + i)));
    }
    for (int i = nv; i < n; ++i) yr[i] = (xr[i] - mean) * (1.f / std::sqrt(var + eps)) * g[i] + b[i];
  }
}

void add(float* y, const float* a, const float* b, int n) {
  int i = 0;
  for (; i + kW <= n; i += kW)
    simde_mm256_storeu_ps(y + i, simde_mm256_add_ps(simde_mm256_loadu_ps(a + i), simde_mm256_loadu_ps(b + i)));
  for (; i < n; ++i) y[i] = a[i] + b[i];
}

void relu(float* x, int n) {
  const v8 z = simde_mm256_setzero_ps();
  int i = 0;
  // max(x, 0) returns its second operand for NaN and for ±0: 0, as x > 0 ? x : 0 does.
  for (; i + kW <= n; i += kW) simde_mm256_storeu_ps(x + i, simde_mm256_max_ps(simde_mm256_loadu_ps(x + i), z));
  for (; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
}

void exp_inplace(float* x, int n) { map_inplace<exp8>(x, n); }
void tanh(float* x, int n) { map_inplace<tanh8>(x, n); }
void sigmoid(float* x, int n) { map_inplace<sigmoid8>(x, n); }

}  // namespace attnlite::ops::simd
