// attnlite — the web build's fp32 kernels in native WebAssembly SIMD128 (built only under
// -msimd128; src/cpu/dispatch.cpp gathers them into the "simd128" table with the int8 linear
// layer of linear_i8_simd128.h). Contracts: include/attnlite/ops/kernels.h.
#pragma once

namespace attnlite::ops::wasm {

// gemm_simd128.cpp
void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K);
void gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K, float alpha);
void gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K);

// pointwise_simd128.cpp
void softmax_rows(float* x, int ld, int rows, int n);
void layer_norm(float* y, const float* x, const float* gamma, const float* beta, int rows, int n,
                float eps);
void add(float* y, const float* a, const float* b, int n);
void relu(float* x, int n);
void tanh(float* x, int n);
void sigmoid(float* x, int n);
void gelu(float* x, int n);
void exp_sum(const float* x, int n, float* max, double* sum);

}  // namespace attnlite::ops::wasm
