#include "attnlite/attention/additive.h"

namespace attnlite::attention {

AdditiveAttentionWeights bind_additive_attention(WeightStore& ws, const std::string& prefix,
                                           int key_size, int query_size, int num_hiddens) {
  AdditiveAttentionWeights w;
  w.W_k = bind_linear(ws, prefix + "W_k", key_size, num_hiddens, false);
  w.W_q = bind_linear(ws, prefix + "W_q", query_size, num_hiddens, false);
  w.w_v = bind_linear(ws, prefix + "w_v", num_hiddens, 1, false);
  return w;
}

void additive_attention_projected(float* out, int ldo, float* attn, const AdditiveAttentionWeights& w,
                                  const float* q, const float* kp, const float* v, int B, int Tq,
                                  int Tk, int Dv, const ValidLens& vl, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int Hd = w.W_q.out;
  float* qp = cx.scratch.floats((size_t)B * Tq * Hd);  // (B, Tq, Hd)
  cx.op.linear(qp, q, w.W_q, B * Tq);
  if (Tq == 1) {
    cx.op.additive_attend(out, ldo, attn, qp, kp, v, w.w_v, B, Tk, Hd, Dv, vl, cx.scratch);
    return;
  }
  for (int b = 0; b < B; ++b)  // one query at a time: each sees its batch row's keys
    for (int i = 0; i < Tq; ++i) {
      const long r = (long)b * Tq + i;
      ValidLens one = vl.for_batch(b, Tq);
      if (vl.kind == ValidLens::PerQuery) one = ValidLens::per_batch(one.data + i);
      cx.op.additive_attend(out + r * ldo, ldo, attn + r * Tk, qp + r * Hd, kp + (long)b * Tk * Hd,
                            v + (long)b * Tk * Dv, w.w_v, 1, Tk, Hd, Dv, one, cx.scratch);
    }
}

void additive_attention(float* out, float* attn, const AdditiveAttentionWeights& w, const float* q,
                        const float* k, const float* v, int B, int Tq, int Tk, int Dv,
                        const ValidLens& vl, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  float* kp = cx.scratch.floats((size_t)B * Tk * w.W_k.out);
  cx.op.linear(kp, k, w.W_k, B * Tk);
  additive_attention_projected(out, Dv, attn, w, q, kp, v, B, Tq, Tk, Dv, vl, cx);
}

}  // namespace attnlite::attention
