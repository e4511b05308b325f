// attnlite — the SIMD kernel table. The dispatcher (src/cpu/dispatch.cpp) only hands it out
// after checking the CPU at run time (AVX2 + FMA on x86).
#include "attnlite/ops/kernels.h"
#include "kernels_simd.h"

namespace attnlite::ops {

const Kernels* simd_kernels_impl() {
  static const Kernels k{"simd",
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
                         simd::gru_step};
  return &k;
}

}  // namespace attnlite::ops
