// attnlite — native WebAssembly SIMD128 kernels (built only under -msimd128).
#pragma once
#include <cstdint>

namespace attnlite::ops::wasm {

// Contract of Kernels::linear_i8 (include/attnlite/ops/kernels.h).
void linear_i8(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
               int M, int N, int K);

}  // namespace attnlite::ops::wasm
