// d2l 10.5: multi-head attention. Heads are column blocks of the projected (B, T, H) rows,
// so transpose_qkv / transpose_output are strides here, not copies. Attention weights come
// out in the book's (B * NH, Tq, Tk) order (batch-major, then head).
//
// Legend: B batch, Tq queries, Tk keys, H num_hiddens, NH heads, D = H / NH.
#pragma once
#include <string>

#include "attnlite/arena.h"
#include "attnlite/attention/masked_softmax.h"
#include "attnlite/ops/ops.h"
#include "attnlite/weights.h"

namespace attnlite::attention {

struct MultiHeadAttentionWeights {
  Linear W_q, W_k, W_v, W_o;  // (H, query_size), (H, key_size), (H, value_size), (H, H)
  int num_heads = 1;
};
MultiHeadAttentionWeights bind_multi_head_attention(WeightStore& ws, const std::string& prefix,
                                              int key_size, int query_size, int value_size,
                                              int num_hiddens, int num_heads, bool bias);

using ops::AttnOut;  // where attention weights go (ops/ops.h)

// The scaled dot-product core over already projected rows:
// ctx (B, Tq, H) from q (B, Tq, H), k and v (B, *, H) with batch stride kv_stride rows.
// attn receives the weights (ops::Ops::attend).
void attend_heads(float* ctx, const AttnOut& attn, const float* q, const float* k,
                  const float* v, int kv_stride, int B, int Tq, int Tk, int H, int NH,
                  const ValidLens& vl, const ops::Ctx& cx);

// Full module: out (B, Tq, H); attn (B * NH, Tq, Tk) or {nullptr}.
void multi_head_attention(float* out, const AttnOut& attn, const MultiHeadAttentionWeights& w,
                          const float* queries, const float* keys, const float* values,
                          int B, int Tq, int Tk, const ValidLens& vl, const ops::Ctx& cx);

}  // namespace attnlite::attention
