// attnlite — the SIMD kernels (src/cpu/simd/*.cpp), gathered into one table by
// kernels_simd.cpp. Same contracts as the scalar reference (include/attnlite/ops/kernels.h).
// Plain declarations only: safe to include anywhere, but only the SIMD translation units
// define them.
#pragma once
#include <cstdint>

// Weights packed at load (linear_pack, linear_packed): built unless the small core turns them
// off (CMake's ATTNLITE_MINIMAL: its weights stay where the file has them, its code small).
#ifndef ATTNLITE_PACKED_WEIGHTS
#define ATTNLITE_PACKED_WEIGHTS 1
#endif

// The products' block sizes, overridable at compile time (-D): the 256-bit kernels'
// (gemm_simd.cpp says why these values) and the AVX-512 ones' (src/cpu/avx512/), which block K
// alike so that each output is the same sum; and the AVX-512 GEMV's prefetch distance (the
// 256-bit kernels issue no prefetches: gemm_simd.cpp).
#ifndef ATTNLITE_GEMM_KC
#define ATTNLITE_GEMM_KC 512  // the largest K block
#endif
#ifndef ATTNLITE_GEMM_MC
#define ATTNLITE_GEMM_MC 1020  // the largest M block (a multiple of 6)
#endif
#ifndef ATTNLITE_GEMV_PREFETCH
#define ATTNLITE_GEMV_PREFETCH 2048  // bytes the GEMV fetches ahead of its stream
#endif
#ifndef ATTNLITE_GEMV_NO_PREFETCH_BYTES
#define ATTNLITE_GEMV_NO_PREFETCH_BYTES 65536  // matrices up to this size: no prefetches
#endif
// linear_i8's small-M tiles run for 4 ≤ M ≤ this (and K a multiple of 8), in both tables.
#ifndef ATTNLITE_SMALL_M_I8
#define ATTNLITE_SMALL_M_I8 7
#endif

namespace attnlite::ops::simd {

// gemm_simd.cpp
void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K);
void linear_i8(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
               int M, int N, int K);
void gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K, float alpha);
void gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K);
void linear_pack(float* wp, const float* w, int N, int K);
void linear_packed(float* y, const float* x, const float* wp, const float* b, int M, int N, int K,
                   int act);

// pointwise_simd.cpp
void softmax_rows(float* x, int ld, int rows, int n);
void layer_norm(float* y, const float* x, const float* gamma, const float* beta, int rows, int n,
                float eps);
void add(float* y, const float* a, const float* b, int n);
void relu(float* x, int n);
void tanh(float* x, int n);
void sigmoid(float* x, int n);
// The GRU step's gates (simd_math.h: tanh_gate8, sigmoid_gate8), in place (for their tests).
void tanh_gate(float* x, int n);
void sigmoid_gate(float* x, int n);
void gelu(float* x, int n);
void exp_sum(const float* x, int n, float* max, double* sum);
// gru_simd.cpp
void gru_step(float* h, float* tmp, const float* x, const float* gi, const float* packed, int B,
              int in, int H);

// x = exp(x): not in the table, exposed so that the tests can measure its accuracy. Call it
// only when simd_kernels() is non-null (the CPU check).
void exp_inplace(float* x, int n);

}  // namespace attnlite::ops::simd
