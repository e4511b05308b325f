// d2l 10.3.3: scaled dot-product attention, softmax(Q Kᵀ / sqrt(d)) V.
//
// Legend: B batch, Tq queries, Tk keys, D query/key size, Dv value size.
#pragma once
#include "attnlite/attention/masked_softmax.h"

namespace attnlite::attention {

// out (B, Tq, Dv); attn (B, Tq, Tk) receives the attention weights (required).
void dot_product_attention(float* out, float* attn, const float* q, const float* k,
                           const float* v, int B, int Tq, int Tk, int D, int Dv,
                           const ValidLens& vl);

}  // namespace attnlite::attention
