#include "attnlite/attention/multi_head.h"

#include <cmath>

#include "attnlite/ops/kernels.h"

namespace attnlite {

MultiHeadAttentionW bind_multi_head_attention(WeightStore& ws, const std::string& prefix,
                                              int key_size, int query_size, int value_size,
                                              int num_hiddens, int num_heads, bool bias) {
  MultiHeadAttentionW w;
  w.W_q = bind_linear(ws, prefix + "W_q", query_size, num_hiddens, bias);
  w.W_k = bind_linear(ws, prefix + "W_k", key_size, num_hiddens, bias);
  w.W_v = bind_linear(ws, prefix + "W_v", value_size, num_hiddens, bias);
  w.W_o = bind_linear(ws, prefix + "W_o", num_hiddens, num_hiddens, bias);
  w.num_heads = num_heads;
  return w;
}

void attend_heads(float* ctx, const AttnOut& attn, const float* q, const float* k,
                  const float* v, int kv_stride, int B, int Tq, int Tk, int H, int NH,
                  const ValidLens& vl, Arena& scratch) {
  ArenaScope scope(scratch);
  const auto& K = ops::kernels();
  const int D = H / NH;
  const float scale = 1.f / std::sqrt((float)D);
  float* tmp = attn.data ? nullptr : scratch.floats((size_t)Tq * Tk);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      float* s = attn.data ? attn.data + b * attn.b_stride + h * attn.h_stride : tmp;
      const int ld = attn.data ? attn.ld : Tk;
      const float* qb = q + (long)b * Tq * H + h * D;
      const float* kb = k + (long)b * kv_stride * H + h * D;
      const float* vb = v + (long)b * kv_stride * H + h * D;
      K.gemm_nt(s, ld, qb, H, kb, H, Tq, Tk, D, scale);
      // One (b, h) block: its valid lengths are batch b's, i.e. repeat_interleave by heads.
      ValidLens one = vl;
      if (vl.kind == ValidLens::PerBatch) one.data = vl.data + b;
      if (vl.kind == ValidLens::PerQuery) one.data = vl.data + (long)b * Tq;
      masked_softmax(s, 1, Tq, Tk, one, 1, ld);
      K.gemm_nn(ctx + (long)b * Tq * H + h * D, H, s, ld, vb, H, Tq, D, Tk);
    }
}

void multi_head_attention(float* out, const AttnOut& attn, const MultiHeadAttentionW& w,
                          const float* queries, const float* keys, const float* values,
                          int B, int Tq, int Tk, const ValidLens& vl, Arena& scratch) {
  ArenaScope scope(scratch);
  const int H = w.W_q.out;
  float* q = scratch.floats((size_t)B * Tq * H);
  float* k = scratch.floats((size_t)B * Tk * H);
  float* v = scratch.floats((size_t)B * Tk * H);
  float* ctx = scratch.floats((size_t)B * Tq * H);
  linear(q, w.W_q, queries, B * Tq);
  linear(k, w.W_k, keys, B * Tk);
  linear(v, w.W_v, values, B * Tk);
  attend_heads(ctx, attn, q, k, v, Tk, B, Tq, Tk, H, w.num_heads, vl, scratch);
  linear(out, w.W_o, ctx, B * Tq);
}

}  // namespace attnlite
