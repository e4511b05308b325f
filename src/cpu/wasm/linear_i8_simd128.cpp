// attnlite — the int8 linear layer in native WebAssembly SIMD128 (the fp32 kernels are in
// gemm_simd128.cpp and pointwise_simd128.cpp). y = x · (scale ⊙ q)ᵀ + b.
// Blocks of 4 weight rows x 2 rows of x; 8 int8 weights per step are widened
// (i8 -> i16 -> i32 -> f32) once and used for both rows of x. Tails in M, N and K in place.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstdint>

#include "linear_i8_simd128.h"

namespace attnlite::ops::wasm {
namespace {

inline float lane_sum(v128_t v) {
  return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
         (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}

// NC weight rows (q, stride K) times MC rows of x (stride K).
template <int NC, int MC>
inline void tile(float* y, int ldy, const float* x, const int8_t* q, const float* scale,
                 const float* b, int K) {
  v128_t acc[MC][NC];
  for (int r = 0; r < MC; ++r)
    for (int j = 0; j < NC; ++j) acc[r][j] = wasm_f32x4_splat(0.f);
  int k = 0;
  for (; k + 8 <= K; k += 8) {
    v128_t wl[NC], wh[NC];
    for (int j = 0; j < NC; ++j) {
      const v128_t w16 = wasm_i16x8_load8x8(q + (long)j * K + k);
      wl[j] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(w16));
      wh[j] = wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(w16));
    }
    for (int r = 0; r < MC; ++r) {
      const v128_t xl = wasm_v128_load(x + (long)r * K + k);
      const v128_t xh = wasm_v128_load(x + (long)r * K + k + 4);
      for (int j = 0; j < NC; ++j)
        acc[r][j] = wasm_f32x4_add(acc[r][j], wasm_f32x4_add(wasm_f32x4_mul(xl, wl[j]),
                                                             wasm_f32x4_mul(xh, wh[j])));
    }
  }
  for (int r = 0; r < MC; ++r)
    for (int j = 0; j < NC; ++j) {
      float s = lane_sum(acc[r][j]);
      for (int kk = k; kk < K; ++kk) s += x[(long)r * K + kk] * (float)q[(long)j * K + kk];
      y[(long)r * ldy + j] = b ? s * scale[j] + b[j] : s * scale[j];
    }
}

template <int NC>
void rows(float* y, int N, const float* x, const int8_t* q, const float* scale, const float* b,
          int M, int K) {
  int m = 0;
  for (; m + 2 <= M; m += 2) tile<NC, 2>(y + (long)m * N, N, x + (long)m * K, q, scale, b, K);
  if (m < M) tile<NC, 1>(y + (long)m * N, N, x + (long)m * K, q, scale, b, K);
}

}  // namespace

void linear_i8(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
               int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  int n = 0;
  for (; n + 4 <= N; n += 4)
    rows<4>(y + n, N, x, q + (long)n * K, scale + n, b ? b + n : nullptr, M, K);
  for (; n < N; ++n) rows<1>(y + n, N, x, q + (long)n * K, scale + n, b ? b + n : nullptr, M, K);
}

}  // namespace attnlite::ops::wasm
#endif
