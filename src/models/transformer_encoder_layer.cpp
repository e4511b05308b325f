#include "attnlite/models/transformer_encoder_layer.h"

namespace attnlite::models {

namespace {
LayerNormWeights bind_layer_norm(WeightStore& ws, const std::string& prefix, int n, float eps,
                           bool bias, const float* zeros) {
  LayerNormWeights w;
  w.gamma = ws.get(prefix + ".weight", {n});
  w.beta = bias ? ws.get(prefix + ".bias", {n}) : zeros;
  w.n = n;
  w.eps = eps;
  return w;
}
}  // namespace

EncoderLayerWeights bind_encoder_layer(WeightStore& ws, const std::string& p,
                                 const EncoderLayerConfig& c, const float* zeros) {
  const int D = c.d_model, F = c.dim_feedforward;
  EncoderLayerWeights w;
  const Linear in_proj = bind_linear_named(ws, p + "self_attn.in_proj_weight",
                                           c.bias ? p + "self_attn.in_proj_bias" : "", D, 3 * D);
  w.W_q = linear_rows(in_proj, 0, D);
  w.W_k = linear_rows(in_proj, D, D);
  w.W_v = linear_rows(in_proj, 2 * D, D);
  w.out_proj = bind_linear(ws, p + "self_attn.out_proj", D, D, c.bias);
  w.linear1 = bind_linear(ws, p + "linear1", D, F, c.bias);
  w.linear2 = bind_linear(ws, p + "linear2", F, D, c.bias);
  w.norm1 = bind_layer_norm(ws, p + "norm1", D, c.layer_norm_eps, c.bias, zeros);
  w.norm2 = bind_layer_norm(ws, p + "norm2", D, c.layer_norm_eps, c.bias, zeros);
  w.num_heads = c.num_heads;
  w.norm_first = c.norm_first;
  w.activation = c.activation;
  return w;
}

void encoder_layer(float* X, const AttnOut& attn, const EncoderLayerWeights& w, int B, int Tn, int t0,
                   KVCache* cache, bool causal, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const ops::Ops& op = cx.op;
  const int D = w.out_proj.out, F = w.linear1.out, R = B * Tn;
  float* h = cx.scratch.floats((size_t)R * D);    // a sub-block's input (pre-LN: normed)
  float* q = cx.scratch.floats((size_t)R * D);
  float* ctx = cx.scratch.floats((size_t)R * D);
  float* f = cx.scratch.floats((size_t)R * F);
  const ValidLens mask = causal ? ValidLens::causal(t0) : ValidLens::none();

  // self-attention block
  const float* in = X;
  if (w.norm_first) {
    op.add_layer_norm(h, X, nullptr, w.norm1.gamma, w.norm1.beta, R, D, w.norm1.eps, cx.scratch);
    in = h;
  }
  // Q, K and V: one product over in_proj's rows (Ops::linear_n)
  float* k = cx.scratch.floats((size_t)R * D);
  float* v = cx.scratch.floats((size_t)R * D);
  float* const ys[] = {q, k, v};
  const Linear* const ls[] = {&w.W_q, &w.W_k, &w.W_v};
  op.linear_n(ys, ls, 3, in, R, cx.scratch);
  if (cache) {
    op.append_attend(ctx, attn, q, k, v, cache->k, cache->v, cache->capacity, t0, B, Tn, D,
                     w.num_heads, mask, cx.scratch);
  } else {
    op.attend(ctx, attn, q, k, v, Tn, B, Tn, Tn, D, w.num_heads, mask, cx.scratch);
  }
  op.linear(q, ctx, w.out_proj, R);  // sa(x)
  if (w.norm_first)
    op.add(X, X, q, (long)R * D);
  else
    op.add_layer_norm(X, X, q, w.norm1.gamma, w.norm1.beta, R, D, w.norm1.eps, cx.scratch);

  // feed-forward block
  in = X;
  if (w.norm_first) {
    op.add_layer_norm(h, X, nullptr, w.norm2.gamma, w.norm2.beta, R, D, w.norm2.eps, cx.scratch);
    in = h;
  }
  op.linear(f, in, w.linear1, R, w.activation);
  op.linear(q, f, w.linear2, R);  // ff(x)
  if (w.norm_first)
    op.add(X, X, q, (long)R * D);
  else
    op.add_layer_norm(X, X, q, w.norm2.gamma, w.norm2.beta, R, D, w.norm2.eps, cx.scratch);
}

}  // namespace attnlite::models
