#include "attnlite/attention/dot_product.h"

#include <cmath>

#include "attnlite/ops/ops.h"

namespace attnlite::attention {

void dot_product_attention(float* out, float* attn, const float* q, const float* k,
                           const float* v, int B, int Tq, int Tk, int D, int Dv,
                           const ValidLens& vl) {
  const ops::Ops& op = ops::cpu();  // host arrays
  const float scale = 1.f / std::sqrt((float)D);
  for (int b = 0; b < B; ++b)
    op.gemm_nt(attn + (long)b * Tq * Tk, Tk, q + (long)b * Tq * D, D, k + (long)b * Tk * D, D, Tq,
               Tk, D, scale);
  masked_softmax(attn, B, Tq, Tk, vl);
  for (int b = 0; b < B; ++b)
    op.gemm_nn(out + (long)b * Tq * Dv, Dv, attn + (long)b * Tq * Tk, Tk, v + (long)b * Tk * Dv,
               Dv, Tq, Dv, Tk);
}

}  // namespace attnlite::attention
