// attnlite — the CPU kernel tables, private to the op sets (src/cpu, src/cuda, src/ops) and
// the tests: everything above them calls ops (ops.h). One table of function pointers per
// instruction set: the scalar reference (always built, used by the tests as ground truth) and
// the SIMD kernels (SIMDe: AVX2/FMA on x86, NEON on Arm, SIMD128 under Emscripten). Kernels
// write their output first, take const inputs and int sizes, never allocate and never throw.
//
// Legend: M, N, K matrix sizes; ld* leading dimensions (row strides, in floats).
#pragma once
#include <cstdint>

#include "attnlite/ops/operands.h"

namespace attnlite::ops {

struct Kernels {
  const char* name;
  // y (M,N) = x (M,K) · wᵀ + b, w (N,K) as nn.Linear.weight, b (N) or nullptr.
  void (*linear)(float* y, const float* x, const float* w, const float* b, int M, int N, int K);
  // The same with int8 weights, one fp32 scale per output feature (symmetric, per output
  // channel): y (M,N) = x (M,K) · (scale ⊙ q)ᵀ + b, q (N,K) int8, scale (N).
  void (*linear_i8)(float* y, const float* x, const int8_t* q, const float* scale,
                    const float* b, int M, int N, int K);
  // c (M,N) = alpha · a (M,K) · bᵀ, b (N,K); strided rows.
  void (*gemm_nt)(float* c, int ldc, const float* a, int lda, const float* b, int ldb,
                  int M, int N, int K, float alpha);
  // c (M,N) = a (M,K) · b (K,N); strided rows.
  void (*gemm_nn)(float* c, int ldc, const float* a, int lda, const float* b, int ldb,
                  int M, int N, int K);
  // Row-wise softmax in place over n columns, rows with stride ld.
  void (*softmax_rows)(float* x, int ld, int rows, int n);
  // y (rows,n) = LayerNorm(x) · gamma + beta (biased variance).
  void (*layer_norm)(float* y, const float* x, const float* gamma, const float* beta,
                     int rows, int n, float eps);
  void (*add)(float* y, const float* a, const float* b, int n);  // y = a + b (y may alias)
  void (*relu)(float* x, int n);
  void (*tanh)(float* x, int n);
  void (*sigmoid)(float* x, int n);
  // x · (1 + erf(x / √2)) / 2 in place: PyTorch's exact GELU (the SIMD kernel's erf is within
  // 2e-7 of the exact one).
  void (*gelu)(float* x, int n);
  // The constants of a log-softmax over n ≥ 1 values: *max = max(x) and *sum = Σ exp(x − max),
  // so log p(x_i) = x_i − max − log(sum). The scalar reference sums exp in float64; the SIMD
  // kernel takes exp in float (about 1 ulp) and sums blocks of 64 values in float, the blocks in
  // float64 (a relative error of about 1e-7 on the sum, whatever n).
  void (*exp_sum)(const float* x, int n, float* max, double* sum);
  // One GRU step of B rows (nn.GRU's cell, gates r, z, n), the input and hidden products fused
  // with the gates in one pass over weights packed by gru_pack (below): h (B, H) ← GRU(x, h).
  // gi (B, 3H): input products already taken, b_ih included (an encoder takes them for the
  // whole sequence at once; a decoder looks up its embedding's), or nullptr (then b_ih comes
  // from the packed weights); x (B, in): the inputs whose products with the packed W_ih are
  // added, or nullptr (none). tmp: H floats.
  void (*gru_step)(float* h, float* tmp, const float* x, const float* gi, const float* packed,
                   int B, int in, int H);
  // fp32 linear layers on weights packed once at load (a table without them: nullptr, and
  // linear reads w as stored). linear_pack writes w (N,K) as panels of kLinearPanel output
  // features, wp[p][k][j] = w[p·kLinearPanel + j][k] (the last panel zero-padded),
  // linear_packed_floats(N, K) floats, 64-byte aligned; linear_packed is linear on them: the
  // same y = x · wᵀ + b, the matrix streamed in the order the kernel reads it, then act
  // (kActNone, kActRelu, kActGelu: the relu and gelu kernels' values) on each tile of y while
  // it is in L1, instead of a pass over y afterwards.
  void (*linear_pack)(float* wp, const float* w, int N, int K);
  void (*linear_packed)(float* y, const float* x, const float* wp, const float* b, int M, int N,
                        int K, int act);
};

constexpr int kActNone = 0, kActRelu = 1, kActGelu = 2;
inline int64_t linear_packed_floats(int N, int K) {
  return ((int64_t)N + kLinearPanel - 1) / kLinearPanel * kLinearPanel * K;
}

// The packed weights of gru_step, for hidden units in blocks of kGruBlock (the last one
// zero-padded): per block, the biases b_ih and b_hh of r, z, n (6 x kGruBlock), then for each
// input feature k the r, z, n weights of W_ih (3 x kGruBlock), then the same for W_hh over
// the H hidden features: gru_block_floats(in, H) floats per block, gru_packed_floats(in, H)
// in all; w_ih (3H, in), w_hh (3H, H); a null bias packs as zeros.
constexpr int kGruBlock = 8;
inline long gru_block_floats(int in, int H) { return (long)kGruBlock * (6 + 3L * in + 3L * H); }
inline long gru_packed_floats(int in, int H) {
  return (long)(H + kGruBlock - 1) / kGruBlock * gru_block_floats(in, H);
}
void gru_pack(float* packed, const float* w_ih, const float* b_ih, const float* w_hh,
              const float* b_hh, int in, int H);

const Kernels& scalar_kernels();
// The SIMD table, or nullptr when not built or the CPU lacks the instructions: the widest this
// CPU runs, avx512_kernels() where there is one, else simd256_kernels().
const Kernels* simd_kernels();
// The 256-bit table (AVX2/FMA on x86, NEON on Arm through SIMDe; nullptr in WebAssembly, whose
// SIMD128 table is simd_kernels()), and the AVX-512 one (x86-64 CPUs with AVX-512 F, DQ and VL,
// unless ATTNLITE_AVX512=0): each nullptr when not built or not runnable here. The tests and
// benchmarks compare them.
const Kernels* simd256_kernels();
const Kernels* avx512_kernels();

// The table the CPU op set uses: SIMD when available, else scalar; use_kernels (ops.h)
// switches it.
const Kernels& kernels();

}  // namespace attnlite::ops
