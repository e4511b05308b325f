#include "attnlite/attention/multi_head.h"

namespace attnlite::attention {

MultiHeadAttentionWeights bind_multi_head_attention(WeightStore& ws, const std::string& prefix,
                                              int key_size, int query_size, int value_size,
                                              int num_hiddens, int num_heads, bool bias) {
  MultiHeadAttentionWeights w;
  if (query_size == key_size && key_size == value_size) {
    // one input size: self-attention can project Q, K and V in one product (Ops::linear_n)
    static const char* const names[] = {"W_q", "W_k", "W_v"};
    Linear qkv[3];
    bind_linear_stack(ws, prefix, names, 3, qkv, query_size, num_hiddens, bias);
    w.W_q = qkv[0];
    w.W_k = qkv[1];
    w.W_v = qkv[2];
  } else {
    w.W_q = bind_linear(ws, prefix + "W_q", query_size, num_hiddens, bias);
    w.W_k = bind_linear(ws, prefix + "W_k", key_size, num_hiddens, bias);
    w.W_v = bind_linear(ws, prefix + "W_v", value_size, num_hiddens, bias);
  }
  w.W_o = bind_linear(ws, prefix + "W_o", num_hiddens, num_hiddens, bias);
  w.num_heads = num_heads;
  return w;
}

void attend_heads(float* ctx, const AttnOut& attn, const float* q, const float* k,
                  const float* v, int kv_stride, int B, int Tq, int Tk, int H, int NH,
                  const ValidLens& vl, const ops::Ctx& cx) {
  cx.op.attend(ctx, attn, q, k, v, kv_stride, B, Tq, Tk, H, NH, vl, cx.scratch);
}

void multi_head_attention(float* out, const AttnOut& attn, const MultiHeadAttentionWeights& w,
                          const float* queries, const float* keys, const float* values,
                          int B, int Tq, int Tk, const ValidLens& vl, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int H = w.W_q.out;
  float* q = cx.scratch.floats((size_t)B * Tq * H);
  float* k = cx.scratch.floats((size_t)B * Tk * H);
  float* v = cx.scratch.floats((size_t)B * Tk * H);
  float* ctx = cx.scratch.floats((size_t)B * Tq * H);
  // transpose_qkv is a stride: heads are column blocks
  if (queries == keys && keys == values && Tq == Tk) {  // self-attention: one product
    float* const ys[] = {q, k, v};
    const Linear* const ls[] = {&w.W_q, &w.W_k, &w.W_v};
    cx.op.linear_n(ys, ls, 3, queries, B * Tq, cx.scratch);
  } else {
    cx.op.linear(q, queries, w.W_q, B * Tq);
    cx.op.linear(k, keys, w.W_k, B * Tk);
    cx.op.linear(v, values, w.W_v, B * Tk);
  }
  cx.op.attend(ctx, attn, q, k, v, Tk, B, Tq, Tk, H, w.num_heads, vl, cx.scratch);
  cx.op.linear(out, ctx, w.W_o, B * Tq);
}

}  // namespace attnlite::attention
