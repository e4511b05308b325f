// attnlite — the SIMD kernel table. The dispatcher (src/cpu/dispatch.cpp) only hands it out
// after checking the CPU at run time (AVX2 + FMA on x86).
#include "attnlite/ops/kernels.h"
#include "kernels_simd.h"

// The table's name says which instructions SIMDe compiled its vectors to here: what
// `attnlite info`, al_kernels() and the tests report.
#if defined(__wasm_simd128__)
#define ATTNLITE_SIMD_TABLE "simde-simd128"
#elif defined(__AVX2__) && defined(__FMA__)
#define ATTNLITE_SIMD_TABLE "avx2-fma"
#elif defined(__ARM_NEON)
#define ATTNLITE_SIMD_TABLE "neon"
#else
#define ATTNLITE_SIMD_TABLE "simde-portable"  // no vector unit this compiler targets: plain C
#endif

namespace attnlite::ops {

const Kernels* simd_kernels_impl() {
  static const Kernels k{ATTNLITE_SIMD_TABLE,
                         simd::linear,
                         simd::linear_i8,
                         simd::gemm_nt,
                         simd::gemm_nn,
                         simd::softmax_rows,
                         simd::layer_norm,
                         simd::add,
                         simd::relu,
                         simd::tanh,
                         simd::sigmoid,
                         simd::gelu,
                         simd::exp_sum,
                         simd::gru_step,
#if ATTNLITE_PACKED_WEIGHTS
                         simd::linear_pack,
                         simd::linear_packed};
#else
                         nullptr,  // the small core: fp32 weights read as stored
                         nullptr};
#endif
  return &k;
}

}  // namespace attnlite::ops
