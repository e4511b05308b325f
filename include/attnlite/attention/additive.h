// d2l 10.3.2: additive attention, score(q, k) = w_vᵀ tanh(W_q q + W_k k).
//
// Legend: B batch, Tq queries, Tk keys, Hd attention hidden size, Dv value size.
#pragma once
#include <string>

#include "attnlite/arena.h"
#include "attnlite/attention/masked_softmax.h"
#include "attnlite/ops/ops.h"
#include "attnlite/weights.h"

namespace attnlite::attention {

struct AdditiveAttentionWeights {
  Linear W_k;  // (Hd, key_size)
  Linear W_q;  // (Hd, query_size)
  Linear w_v;  // (1, Hd)
};
AdditiveAttentionWeights bind_additive_attention(WeightStore& ws, const std::string& prefix,
                                           int key_size, int query_size, int num_hiddens);

// out (B, Tq, Dv); attn (B, Tq, Tk) receives the weights (required).
void additive_attention(float* out, float* attn, const AdditiveAttentionWeights& w, const float* q,
                        const float* k, const float* v, int B, int Tq, int Tk, int Dv,
                        const ValidLens& vl, const ops::Ctx& cx);

// The same with the keys already projected: kp (B, Tk, Hd) = W_k k, computed once per source
// sentence by the Bahdanau decoder; v (B, Tk, Dv). Output rows have stride ldo (>= Dv), so
// the context can land inside a wider row (the decoder's cat(context, embedding)).
void additive_attention_projected(float* out, int ldo, float* attn, const AdditiveAttentionWeights& w,
                                  const float* q, const float* kp, const float* v, int B, int Tq,
                                  int Tk, int Dv, const ValidLens& vl, const ops::Ctx& cx);

}  // namespace attnlite::attention
