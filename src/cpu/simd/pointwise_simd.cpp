// attnlite — SIMD row and element-wise kernels: softmax_rows, layer_norm, add, relu, tanh,
// sigmoid. The transcendental functions (exp8, tanh8, sigmoid8) are in simd_math.h.
//
// Tails. A row of n ≥ 8 floats whose length is not a multiple of 8 ends with one vector
// that overlaps the previous one: it is loaded from the ORIGINAL values before anything is
// written (the kernels work in place), computed with the same vector formula, and stored
// last, so the overlapping lanes are rewritten with bit-identical values; reductions mask
// the overlapping lanes out. Rows shorter than 8 go through an 8-float stack buffer once.
// Every element is therefore computed by the same vector code wherever it sits, and no
// load or store ever touches memory outside the row (SIMDe's portable masked loads would).
#include <cmath>
#include <cstdint>

#include "kernels_simd.h"
#include "simd_math.h"

namespace attnlite::ops::simd {
namespace {

// Lanes i ≥ 8 − r all ones: tail_mask(r) selects the last r lanes of a vector.
alignas(32) const int32_t kTailMask[16] = {0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, -1, -1, -1, -1};
inline v8 tail_mask(int r) {
  return simde_mm256_castsi256_ps(simde_mm256_loadu_si256(reinterpret_cast<const simde__m256i*>(kTailMask + r)));
}

// Loads r < 8 floats into a vector, the other lanes set to fill.
inline v8 load_short(const float* p, int r, float fill) {
  alignas(32) float t[kW];
  for (int i = 0; i < kW; ++i) t[i] = i < r ? p[i] : fill;
  return simde_mm256_load_ps(t);
}

inline void store_short(float* p, v8 v, int r) {
  alignas(32) float t[kW];
  simde_mm256_store_ps(t, v);
  for (int i = 0; i < r; ++i) p[i] = t[i];
}

template <v8 (*F)(v8)>
inline void map_inplace(float* x, int n) {
  if (n < kW) {
    if (n > 0) store_short(x, F(load_short(x, n, 0.f)), n);
    return;
  }
  const v8 last = simde_mm256_loadu_ps(x + n - kW);  // before the main loop writes
  for (int i = 0; i + kW <= n; i += kW) simde_mm256_storeu_ps(x + i, F(simde_mm256_loadu_ps(x + i)));
  if (n % kW) simde_mm256_storeu_ps(x + n - kW, F(last));
}

// Softmax of a row shorter than one vector, in registers.
inline void softmax_short(float* xr, int n) {
  const v8 v = load_short(xr, n, -INFINITY);
  const v8 e = exp8(simde_mm256_sub_ps(v, v_set(hmax(v))));  // padding: exp(-inf) = 0
  store_short(xr, simde_mm256_mul_ps(e, v_set(1.f / hsum(e))), n);
}

}  // namespace

void softmax_rows(float* x, int ld, int rows, int n) {
  if (n <= 0) return;
  const int r = n % kW, nv = n - r;
  const v8 mask = tail_mask(r);
  for (int row = 0; row < rows; ++row) {
    float* xr = x + (long)row * ld;
    if (n < kW) {
      softmax_short(xr, n);
      continue;
    }
    const v8 last = simde_mm256_loadu_ps(xr + n - kW);  // original values of the tail
    // Max (the overlap does not change a max).
    v8 vmax = last;
    for (int i = 0; i < nv; i += kW) vmax = simde_mm256_max_ps(vmax, simde_mm256_loadu_ps(xr + i));
    const v8 vm = v_set(hmax(vmax));
    // exp(x - max) in place, and the sum; two accumulators.
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
    if (i < nv) {
      const v8 e = exp8(simde_mm256_sub_ps(simde_mm256_loadu_ps(xr + i), vm));
      simde_mm256_storeu_ps(xr + i, e);
      s0 = simde_mm256_add_ps(s0, e);
    }
    v8 elast = simde_mm256_setzero_ps();
    if (r) {
      elast = exp8(simde_mm256_sub_ps(last, vm));
      s1 = simde_mm256_add_ps(s1, simde_mm256_and_ps(elast, mask));  // only the r new lanes
    }
    // Scale by 1/sum, as the scalar reference does; the tail vector last.
    const v8 inv = v_set(1.f / hsum(simde_mm256_add_ps(s0, s1)));
    for (i = 0; i < nv; i += kW)
      simde_mm256_storeu_ps(xr + i, simde_mm256_mul_ps(simde_mm256_loadu_ps(xr + i), inv));
    if (r) simde_mm256_storeu_ps(xr + n - kW, simde_mm256_mul_ps(elast, inv));
  }
}

void exp_sum(const float* x, int n, float* max, double* sum) {
  if (n < kW) {
    // Short rows: one vector, the missing lanes -inf (exp gives 0; the max ignores them).
    const v8 v = load_short(x, n, -INFINITY);
    const float m = hmax(v);
    *max = m;
    *sum = (double)hsum(exp8(simde_mm256_sub_ps(v, v_set(m))));
    return;
  }
  const int r = n % kW, nv = n - r;
  const v8 last = simde_mm256_loadu_ps(x + n - kW);
  v8 vmax = last;
  for (int i = 0; i < nv; i += kW) vmax = simde_mm256_max_ps(vmax, simde_mm256_loadu_ps(x + i));
  const float m = hmax(vmax);
  const v8 vm = v_set(m);
  // Blocks of 8 vectors summed in float (two accumulators), each block's sum added in double.
  double total = 0.0;
  int i = 0;
  for (; i + 8 * kW <= nv; i += 8 * kW) {
    v8 s0 = simde_mm256_setzero_ps(), s1 = s0;
    for (int j = 0; j < 8 * kW; j += 2 * kW) {
      s0 = simde_mm256_add_ps(s0, exp8(simde_mm256_sub_ps(simde_mm256_loadu_ps(x + i + j), vm)));
      s1 = simde_mm256_add_ps(s1, exp8(simde_mm256_sub_ps(simde_mm256_loadu_ps(x + i + j + kW), vm)));
    }
    total += (double)hsum(simde_mm256_add_ps(s0, s1));
  }
  v8 s = simde_mm256_setzero_ps();
  for (; i < nv; i += kW) s = simde_mm256_add_ps(s, exp8(simde_mm256_sub_ps(simde_mm256_loadu_ps(x + i), vm)));
  if (r) s = simde_mm256_add_ps(s, simde_mm256_and_ps(exp8(simde_mm256_sub_ps(last, vm)), tail_mask(r)));
  *max = m;
  *sum = total + (double)hsum(s);
}

void layer_norm(float* y, const float* x, const float* g, const float* b, int rows, int n,
                float eps) {
  if (n <= 0) return;
  const int r = n % kW, nv = n - r;
  const v8 mask = tail_mask(r);
  for (int row = 0; row < rows; ++row) {
    const float* xr = x + (long)row * n;
    float* yr = y + (long)row * n;
    // The last (possibly overlapping) vector of x, loaded before y is written (y may be x).
    const v8 last = n < kW ? load_short(xr, n, 0.f) : simde_mm256_loadu_ps(xr + n - kW);
    // Its lanes not already covered by the full vectors: the last r (n ≥ 8) or first n.
    const v8 last_new =
        n < kW ? simde_mm256_andnot_ps(tail_mask(kW - n), simde_mm256_castsi256_ps(simde_mm256_set1_epi32(-1)))
               : mask;
    // Mean.
    v8 s = simde_mm256_setzero_ps();
    for (int i = 0; i < nv; i += kW) s = simde_mm256_add_ps(s, simde_mm256_loadu_ps(xr + i));
    if (r) s = simde_mm256_add_ps(s, simde_mm256_and_ps(last, last_new));
    const float mean = hsum(s) / (float)n;
    const v8 vmean = v_set(mean);
    // Biased variance, two-pass as the reference.
    v8 q = simde_mm256_setzero_ps();
    for (int i = 0; i < nv; i += kW) {
      const v8 d = simde_mm256_sub_ps(simde_mm256_loadu_ps(xr + i), vmean);
      q = simde_mm256_fmadd_ps(d, d, q);
    }
    if (r) {
      const v8 d = simde_mm256_and_ps(simde_mm256_sub_ps(last, vmean), last_new);
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
    if (r) {
      const v8 d = simde_mm256_mul_ps(simde_mm256_sub_ps(last, vmean), inv);
      if (n < kW) {
        store_short(yr, simde_mm256_fmadd_ps(d, load_short(g, n, 0.f), load_short(b, n, 0.f)), n);
      } else {
        const int o = n - kW;
        simde_mm256_storeu_ps(
            yr + o, simde_mm256_fmadd_ps(d, simde_mm256_loadu_ps(g + o), simde_mm256_loadu_ps(b + o)));
      }
    }
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
void tanh_gate(float* x, int n) { map_inplace<tanh_gate8>(x, n); }
void sigmoid_gate(float* x, int n) { map_inplace<sigmoid_gate8>(x, n); }
void gelu(float* x, int n) { map_inplace<gelu8>(x, n); }

}  // namespace attnlite::ops::simd
