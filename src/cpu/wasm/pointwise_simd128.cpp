// attnlite — the web build's row and element-wise fp32 kernels in native WebAssembly SIMD128:
// softmax_rows, layer_norm, add, relu, tanh, sigmoid, gelu (contracts in
// include/attnlite/ops/kernels.h, functions in simd128_math.h). Tails of fewer than four
// floats go through the same vector code on a zero-padded copy, so a value does not depend
// on where it sits in its row.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "cpu/wasm/kernels_simd128.h"
#include "cpu/wasm/simd128_math.h"

namespace attnlite::ops::wasm {
namespace {

// x[0..n) = f(x[0..n)) in place, four at a time; the last block of fewer than four through a
// zero-padded copy. One call site of F, so each function is inlined once (the .wasm budget).
template <v128_t (*F)(v128_t)>
void map_inplace(float* x, int n) {
  for (int i = 0; i < n; i += 4) {
    float t[4] = {0.f, 0.f, 0.f, 0.f};
    const int m = n - i < 4 ? n - i : 4;
    float* p = m == 4 ? x + i : t;
    for (int j = 0; m < 4 && j < m; ++j) t[j] = x[i + j];
    wasm_v128_store(p, F(wasm_v128_load(p)));
    for (int j = 0; m < 4 && j < m; ++j) x[i + j] = t[j];
  }
}

// max as the scalar kernel takes it (x > m ? x : m): a NaN input is passed over.
inline v128_t max_keep(v128_t m, v128_t x) { return wasm_f32x4_pmax(m, x); }
inline v128_t relu4(v128_t x) { return wasm_f32x4_pmax(wasm_f32x4_splat(0.f), x); }

// The max of n values as the scalar kernels take it (a NaN is passed over).
float row_max(const float* x, int n) {
  int i = 0;
  v128_t vm = wasm_f32x4_splat(-__builtin_inff());
  for (; i + 4 <= n; i += 4) vm = max_keep(vm, wasm_v128_load(x + i));
  vm = max_keep(vm, wasm_i32x4_shuffle(vm, vm, 2, 3, 0, 1));
  vm = max_keep(vm, wasm_i32x4_shuffle(vm, vm, 1, 0, 3, 2));
  float mx = wasm_f32x4_extract_lane(vm, 0);
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  return mx;
}

}  // namespace

void softmax_rows(float* x, int ld, int rows, int n) {
  for (int r = 0; r < rows; ++r) {
    float* xr = x + (long)r * ld;
    const float mx = row_max(xr, n);
    int i = 0;
    // e^(x - max), summed in four lanes; the last block of fewer than four through a padded
    // copy (its padding is -inf, whose exponential is exactly 0).
    const v128_t vmx = wasm_f32x4_splat(mx);
    v128_t vs = wasm_f32x4_splat(0.f);
    for (i = 0; i < n; i += 4) {
      float t[4] = {-__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff()};
      const int m = n - i < 4 ? n - i : 4;
      float* p = m == 4 ? xr + i : t;
      for (int j = 0; m < 4 && j < m; ++j) t[j] = xr[i + j];
      const v128_t e = exp4(wasm_f32x4_sub(wasm_v128_load(p), vmx));
      wasm_v128_store(p, e);
      for (int j = 0; m < 4 && j < m; ++j) xr[i + j] = t[j];
      vs = wasm_f32x4_add(vs, e);
    }
    const v128_t inv = wasm_f32x4_splat(1.f / hsum(vs));
    for (i = 0; i + 4 <= n; i += 4) wasm_v128_store(xr + i, wasm_f32x4_mul(wasm_v128_load(xr + i), inv));
    const float s = wasm_f32x4_extract_lane(inv, 0);
    for (; i < n; ++i) xr[i] *= s;
  }
}

void exp_sum(const float* x, int n, float* max, double* sum) {
  const float mx = row_max(x, n);
  int i = 0;
  // Blocks of 64 values summed in float, the blocks in double; the last block of fewer than
  // four through a padded copy (-inf, whose exponential is exactly 0).
  const v128_t vmx = wasm_f32x4_splat(mx);
  double total = 0.0;
  for (i = 0; i + 4 <= n;) {
    v128_t vs = wasm_f32x4_splat(0.f);
    for (const int end = i + 64 < n ? i + 64 : n; i + 4 <= end; i += 4)
      vs = wasm_f32x4_add(vs, exp4(wasm_f32x4_sub(wasm_v128_load(x + i), vmx)));
    total += (double)hsum(vs);
  }
  if (i < n) {
    float t[4] = {-__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff()};
    for (int j = 0; i + j < n; ++j) t[j] = x[i + j];
    total += (double)hsum(exp4(wasm_f32x4_sub(wasm_v128_load(t), vmx)));
  }
  *max = mx;
  *sum = total;
}

void layer_norm(float* y, const float* x, const float* g, const float* b, int rows, int n,
                float eps) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + (long)r * n;
    float* yr = y + (long)r * n;
    v128_t vs = wasm_f32x4_splat(0.f);
    int i = 0;
    for (; i + 4 <= n; i += 4) vs = wasm_f32x4_add(vs, wasm_v128_load(xr + i));
    float sum = hsum(vs);
    for (; i < n; ++i) sum += xr[i];
    const float mean = sum / (float)n;
    const v128_t vmean = wasm_f32x4_splat(mean);
    v128_t vv = wasm_f32x4_splat(0.f);  // biased variance, two passes as the reference
    for (i = 0; i + 4 <= n; i += 4) {
      const v128_t d = wasm_f32x4_sub(wasm_v128_load(xr + i), vmean);
      vv = madd(d, d, vv);
    }
    float var = hsum(vv);
    for (; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= (float)n;
    const float inv = 1.f / __builtin_sqrtf(var + eps);
    const v128_t vinv = wasm_f32x4_splat(inv);
    for (i = 0; i + 4 <= n; i += 4) {
      const v128_t d = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(xr + i), vmean), vinv);
      wasm_v128_store(yr + i, madd(d, wasm_v128_load(g + i), wasm_v128_load(b + i)));
    }
    for (; i < n; ++i) yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
  }
}

void add(float* y, const float* a, const float* b, int n) {
  // y may alias a or b: each block is loaded before it is stored.
  int i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  for (; i < n; ++i) y[i] = a[i] + b[i];
}

void relu(float* x, int n) { map_inplace<relu4>(x, n); }
void tanh(float* x, int n) { map_inplace<tanh4>(x, n); }
void sigmoid(float* x, int n) { map_inplace<sigmoid4>(x, n); }
void gelu(float* x, int n) { map_inplace<gelu4>(x, n); }

}  // namespace attnlite::ops::wasm
#endif
