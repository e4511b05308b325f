#include "attnlite/models/transformer.h"

#include <cmath>
using namespace attnlite::attention;
using namespace attnlite::ops;

namespace attnlite::models {

EncoderBlockWeights bind_encoder_block(WeightStore& ws, const std::string& p, int H, int F, int NH,
                                 bool bias, const std::vector<int64_t>& norm_shape) {
  EncoderBlockWeights w;
  w.attention = bind_multi_head_attention(ws, p + "attention.", H, H, H, H, NH, bias);
  w.addnorm1 = bind_add_norm(ws, p + "addnorm1.", norm_shape);
  w.ffn = bind_ffn(ws, p + "ffn.", H, F, H);
  w.addnorm2 = bind_add_norm(ws, p + "addnorm2.", norm_shape);
  return w;
}

DecoderBlockWeights bind_decoder_block(WeightStore& ws, const std::string& p, int H, int F, int NH,
                                 bool bias, const std::vector<int64_t>& norm_shape) {
  DecoderBlockWeights w;
  w.attention1 = bind_multi_head_attention(ws, p + "attention1.", H, H, H, H, NH, bias);
  w.addnorm1 = bind_add_norm(ws, p + "addnorm1.", norm_shape);
  w.attention2 = bind_multi_head_attention(ws, p + "attention2.", H, H, H, H, NH, bias);
  w.addnorm2 = bind_add_norm(ws, p + "addnorm2.", norm_shape);
  w.ffn = bind_ffn(ws, p + "ffn.", H, F, H);
  w.addnorm3 = bind_add_norm(ws, p + "addnorm3.", norm_shape);
  return w;
}

void encoder_block(float* Y, const AttnOut& attn, const EncoderBlockWeights& w, const float* X, int B,
                   int S, const ValidLens& vl, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int H = w.attention.W_o.out, R = B * S;
  float* a = cx.scratch.floats((size_t)R * H);
  float* f = cx.scratch.floats((size_t)R * H);
  multi_head_attention(a, attn, w.attention, X, X, X, B, S, S, vl, cx);  // self-attention
  add_norm(a, w.addnorm1, X, a, R, cx);                                  // Y = AddNorm(X, attn)
  ffn_add_norm(Y, f, w.ffn, w.addnorm2, a, R, cx);                       // AddNorm(Y, ffn(Y))
}

void project_cross_kv(float* k, float* v, const DecoderBlockWeights& w, const float* enc_out, int B,
                      int S, const ops::Ctx& cx) {
  float* const ys[] = {k, v};
  const Linear* const ls[] = {&w.attention2.W_k, &w.attention2.W_v};
  cx.op.linear_n(ys, ls, 2, enc_out, B * S, cx.scratch);
}

void decoder_block(float* Y, const DecoderAttnOut& attn, const DecoderBlockWeights& w, const float* X,
                   int B, int Tn, int t0, bool causal, KVCache& cache, const CrossKV& cross,
                   const ValidLens& src_vl, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const ops::Ops& op = cx.op;
  const auto& a1 = w.attention1;
  const auto& a2 = w.attention2;
  const int H = a1.W_o.out, NH = a1.num_heads, R = B * Tn;
  // q, k and v side by side, each the same size: an op set can project them as one strided
  // product (the CUDA set does)
  float* q = cx.scratch.floats((size_t)R * H);
  float* k = cx.scratch.floats((size_t)R * H);
  float* v = cx.scratch.floats((size_t)R * H);
  float* ctx = cx.scratch.floats((size_t)R * H);
  float* y = cx.scratch.floats((size_t)R * H);
  float* z = cx.scratch.floats((size_t)R * H);

  // 1. masked self-attention: append this call's keys/values to the cache, attend over it
  float* const ys[] = {q, k, v};
  const Linear* const ls[] = {&a1.W_q, &a1.W_k, &a1.W_v};
  op.linear_n(ys, ls, 3, X, R, cx.scratch);
  op.append_attend(ctx, attn.self, q, k, v, cache.k, cache.v, cache.capacity, t0, B, Tn, H, NH,
                   causal ? ValidLens::causal(t0) : ValidLens::none(), cx.scratch);
  op.linear(y, ctx, a1.W_o, R);
  add_norm(y, w.addnorm1, X, y, R, cx);  // Y = AddNorm(X, X2)

  // 2. encoder-decoder attention over the projected encoder outputs
  op.linear(q, y, a2.W_q, R);
  op.attend(ctx, attn.cross, q, cross.k, cross.v, cross.S, B, Tn, cross.S, H, NH, src_vl,
            cx.scratch);
  op.linear(z, ctx, a2.W_o, R);
  add_norm(z, w.addnorm2, y, z, R, cx);  // Z = AddNorm(Y, Y2)

  // 3. position-wise FFN
  ffn_add_norm(Y, q, w.ffn, w.addnorm3, z, R, cx);
}

TransformerWeights bind_transformer(WeightStore& ws, const TransformerConfig& c) {
  TransformerWeights w;
  const int H = c.num_hiddens;
  const std::vector<int64_t> norm{H};
  w.enc_embedding = c.shared_embeddings
                        ? bind_embedding(ws, "decoder.embedding.weight", c.tgt_vocab_size, H)
                        : bind_embedding(ws, "encoder.embedding.weight", c.src_vocab_size, H);
  for (int l = 0; l < c.num_layers; ++l)
    w.enc.push_back(bind_encoder_block(ws, "encoder.blks.block" + std::to_string(l) + ".", H,
                                       c.ffn_num_hiddens, c.num_heads, c.use_bias, norm));
  w.dec_embedding = bind_embedding(ws, "decoder.embedding.weight", c.tgt_vocab_size, H);
  for (int l = 0; l < c.num_layers; ++l)
    w.dec.push_back(bind_decoder_block(ws, "decoder.blks.block" + std::to_string(l) + ".", H,
                                       c.ffn_num_hiddens, c.num_heads, c.use_bias, norm));
  w.dense = c.shared_embeddings
                ? bind_linear_named(ws, "decoder.embedding.weight", "decoder.dense.bias", H,
                                    c.tgt_vocab_size)
                : bind_linear(ws, "decoder.dense", H, c.tgt_vocab_size, true);
  return w;
}

void transformer_encode(float* enc_out, const AttnOut* attn, const TransformerWeights& w,
                        const TransformerConfig& c, const float* P, const int* src, int B, int S,
                        const ValidLens& vl, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int H = c.num_hiddens;
  float* x = cx.scratch.floats((size_t)B * S * H);
  // X = pos_encoding(embedding(X) * sqrt(H))
  cx.op.embed(x, H, w.enc_embedding, src, B * S, std::sqrt((float)H));
  cx.op.add_positions(x, P, B, S, H, nullptr);
  for (int l = 0; l < c.num_layers; ++l) {
    float* out = l == c.num_layers - 1 ? enc_out : x;
    encoder_block(out, attn ? attn[l] : AttnOut{}, w.enc[l], x, B, S, vl, cx);
  }
  if (c.num_layers == 0) cx.op.copy(enc_out, x, sizeof(float) * B * S * H);
}

void transformer_decode(float* logits, const DecoderAttnOut* attn, const TransformerWeights& w,
                        const TransformerConfig& c, const float* P, const int* tokens, int B,
                        int Tn, int t0, const int* pos, bool causal, KVCache* caches,
                        const CrossKV* cross, const ValidLens& src_vl, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int H = c.num_hiddens;
  float* x = cx.scratch.floats((size_t)B * Tn * H);
  cx.op.embed(x, H, w.dec_embedding, tokens, B * Tn, std::sqrt((float)H));
  cx.op.add_positions(x, P, B, Tn, H, pos);
  for (int l = 0; l < c.num_layers; ++l)
    decoder_block(x, attn ? attn[l] : DecoderAttnOut{}, w.dec[l], x, B, Tn, t0, causal,
                  caches[l], cross[l], src_vl, cx);
  cx.op.linear(logits, x, w.dense, B * Tn);
}

}  // namespace attnlite::models
