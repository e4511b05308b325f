#include "attnlite/attention/additive.h"

#include "attnlite/ops/kernels.h"

namespace attnlite {

AdditiveAttentionW bind_additive_attention(WeightStore& ws, const std::string& prefix,
                                           int key_size, int query_size, int num_hiddens) {
  AdditiveAttentionW w;
  w.W_k = bind_linear(ws, prefix + "W_k", key_size, num_hiddens, false);
  w.W_q = bind_linear(ws, prefix + "W_q", query_size, num_hiddens, false);
  w.w_v = bind_linear(ws, prefix + "w_v", num_hiddens, 1, false);
  return w;
}

void additive_attention_projected(float* out, float* attn, const AdditiveAttentionW& w,
                                  const float* q, const float* kp, const float* v, int ldv,
                                  int B, int Tq, int Tk, int Dv, const ValidLens& vl,
                                  Arena& scratch) {
  ArenaScope scope(scratch);
  const auto& K = ops::kernels();
  const int Hd = w.W_q.out;
  float* qp = scratch.floats((size_t)B * Tq * Hd);  // (B, Tq, Hd)
  float* feat = scratch.floats(Hd);
  linear(qp, w.W_q, q, B * Tq);
  // scores[b, i, j] = w_v · tanh(qp[b, i] + kp[b, j]); the book's (B, Tq, Tk, Hd) features
  // tensor is never materialised.
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < Tq; ++i)
      for (int j = 0; j < Tk; ++j) {
        K.add(feat, qp + ((long)b * Tq + i) * Hd, kp + ((long)b * Tk + j) * Hd, Hd);
        K.tanh(feat, Hd);
        linear_serial(attn + ((long)b * Tq + i) * Tk + j, w.w_v, feat, 1);
      }
  masked_softmax(attn, B, Tq, Tk, vl);
  for (int b = 0; b < B; ++b)
    K.gemm_nn(out + (long)b * Tq * Dv, Dv, attn + (long)b * Tq * Tk, Tk, v + (long)b * Tk * ldv,
              ldv, Tq, Dv, Tk);
}

void additive_attention(float* out, float* attn, const AdditiveAttentionW& w, const float* q,
                        const float* k, const float* v, int B, int Tq, int Tk, int Dv,
                        const ValidLens& vl, Arena& scratch) {
  ArenaScope scope(scratch);
  float* kp = scratch.floats((size_t)B * Tk * w.W_k.out);
  linear(kp, w.W_k, k, B * Tk);
  additive_attention_projected(out, attn, w, q, kp, v, Dv, B, Tq, Tk, Dv, vl, scratch);
}

}  // namespace attnlite
