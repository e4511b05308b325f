#include "attnlite/models/transformer.h"

#include <cmath>
#include <cstring>

#include "attnlite/attention/positional_encoding.h"
#include "attnlite/ops/kernels.h"

namespace attnlite {

EncoderBlockW bind_encoder_block(WeightStore& ws, const std::string& p, int H, int F, int NH,
                                 bool bias, const std::vector<int64_t>& norm_shape) {
  EncoderBlockW w;
  w.attention = bind_multi_head_attention(ws, p + "attention.", H, H, H, H, NH, bias);
  w.addnorm1 = bind_add_norm(ws, p + "addnorm1.", norm_shape);
  w.ffn = bind_ffn(ws, p + "ffn.", H, F, H);
  w.addnorm2 = bind_add_norm(ws, p + "addnorm2.", norm_shape);
  return w;
}

DecoderBlockW bind_decoder_block(WeightStore& ws, const std::string& p, int H, int F, int NH,
                                 bool bias, const std::vector<int64_t>& norm_shape) {
  DecoderBlockW w;
  w.attention1 = bind_multi_head_attention(ws, p + "attention1.", H, H, H, H, NH, bias);
  w.addnorm1 = bind_add_norm(ws, p + "addnorm1.", norm_shape);
  w.attention2 = bind_multi_head_attention(ws, p + "attention2.", H, H, H, H, NH, bias);
  w.addnorm2 = bind_add_norm(ws, p + "addnorm2.", norm_shape);
  w.ffn = bind_ffn(ws, p + "ffn.", H, F, H);
  w.addnorm3 = bind_add_norm(ws, p + "addnorm3.", norm_shape);
  return w;
}

void encoder_block(float* Y, const AttnOut& attn, const EncoderBlockW& w, const float* X, int B,
                   int S, const ValidLens& vl, Arena& scratch) {
  ArenaScope scope(scratch);
  const int H = w.attention.W_o.out, R = B * S;
  float* a = scratch.floats((size_t)R * H);
  float* f = scratch.floats((size_t)R * H);
  multi_head_attention(a, attn, w.attention, X, X, X, B, S, S, vl, scratch);  // self-attention
  add_norm(a, w.addnorm1, X, a, R, scratch);                                  // Y = AddNorm(X, attn)
  ffn(f, w.ffn, a, R, scratch);
  add_norm(Y, w.addnorm2, a, f, R, scratch);                                  // AddNorm(Y, ffn(Y))
}

void project_cross_kv(float* k, float* v, const DecoderBlockW& w, const float* enc_out, int B,
                      int S) {
  linear(k, w.attention2.W_k, enc_out, B * S);
  linear(v, w.attention2.W_v, enc_out, B * S);
}

void decoder_block(float* Y, const DecoderAttnOut& attn, const DecoderBlockW& w, const float* X,
                   int B, int Tn, int t0, bool causal, KVCache& cache, const CrossKV& cross,
                   const ValidLens& src_vl, Arena& scratch) {
  ArenaScope scope(scratch);
  const auto& a1 = w.attention1;
  const auto& a2 = w.attention2;
  const int H = a1.W_o.out, NH = a1.num_heads, R = B * Tn, Tk = t0 + Tn;
  float* q = scratch.floats((size_t)R * H);
  float* ctx = scratch.floats((size_t)R * H);
  float* y = scratch.floats((size_t)R * H);
  float* z = scratch.floats((size_t)R * H);
  float* kv = scratch.floats((size_t)R * H);

  // 1. masked self-attention: append this call's keys/values to the cache, attend over it
  linear(q, a1.W_q, X, R);
  linear(kv, a1.W_k, X, R);
  for (int b = 0; b < B; ++b)
    std::memcpy(cache.k + ((long)b * cache.capacity + t0) * H, kv + (long)b * Tn * H,
                sizeof(float) * Tn * H);
  linear(kv, a1.W_v, X, R);
  for (int b = 0; b < B; ++b)
    std::memcpy(cache.v + ((long)b * cache.capacity + t0) * H, kv + (long)b * Tn * H,
                sizeof(float) * Tn * H);
  attend_heads(ctx, attn.self, q, cache.k, cache.v, cache.capacity, B, Tn, Tk, H, NH,
               causal ? ValidLens::causal(t0) : ValidLens::none(), scratch);
  linear(y, a1.W_o, ctx, R);
  add_norm(y, w.addnorm1, X, y, R, scratch);  // Y = AddNorm(X, X2)

  // 2. encoder-decoder attention over the projected encoder outputs
  linear(q, a2.W_q, y, R);
  attend_heads(ctx, attn.cross, q, cross.k, cross.v, cross.S, B, Tn, cross.S, H, NH, src_vl,
               scratch);
  linear(z, a2.W_o, ctx, R);
  add_norm(z, w.addnorm2, y, z, R, scratch);  // Z = AddNorm(Y, Y2)

  // 3. position-wise FFN
  ffn(q, w.ffn, z, R, scratch);
  add_norm(Y, w.addnorm3, z, q, R, scratch);
}

TransformerWeights bind_transformer(WeightStore& ws, const TransformerConfig& c) {
  TransformerWeights w;
  const int H = c.num_hiddens;
  const std::vector<int64_t> norm{H};
  w.enc_embedding = bind_embedding(ws, "encoder.embedding.weight", c.src_vocab_size, H);
  for (int l = 0; l < c.num_layers; ++l)
    w.enc.push_back(bind_encoder_block(ws, "encoder.blks.block" + std::to_string(l) + ".", H,
                                       c.ffn_num_hiddens, c.num_heads, c.use_bias, norm));
  w.dec_embedding = bind_embedding(ws, "decoder.embedding.weight", c.tgt_vocab_size, H);
  for (int l = 0; l < c.num_layers; ++l)
    w.dec.push_back(bind_decoder_block(ws, "decoder.blks.block" + std::to_string(l) + ".", H,
                                       c.ffn_num_hiddens, c.num_heads, c.use_bias, norm));
  w.dense = bind_linear(ws, "decoder.dense", H, c.tgt_vocab_size, true);
  return w;
}

void transformer_encode(float* enc_out, const AttnOut* attn, const TransformerWeights& w,
                        const TransformerConfig& c, const float* P, const int* src, int B, int S,
                        const ValidLens& vl, Arena& scratch) {
  ArenaScope scope(scratch);
  const int H = c.num_hiddens;
  float* x = scratch.floats((size_t)B * S * H);
  // X = pos_encoding(embedding(X) * sqrt(H))
  embedding(x, w.enc_embedding, src, B * S, std::sqrt((float)H));
  add_positional_encoding(x, P, B, S, H);
  for (int l = 0; l < c.num_layers; ++l) {
    float* out = l == c.num_layers - 1 ? enc_out : x;
    encoder_block(out, attn ? attn[l] : AttnOut{}, w.enc[l], x, B, S, vl, scratch);
  }
  if (c.num_layers == 0) std::memcpy(enc_out, x, sizeof(float) * B * S * H);
}

void transformer_decode(float* logits, const DecoderAttnOut* attn, const TransformerWeights& w,
                        const TransformerConfig& c, const float* P, const int* tokens, int B,
                        int Tn, int t0, const int* pos, bool causal, KVCache* caches,
                        const CrossKV* cross, const ValidLens& src_vl, Arena& scratch) {
  ArenaScope scope(scratch);
  const int H = c.num_hiddens;
  float* x = scratch.floats((size_t)B * Tn * H);
  embedding(x, w.dec_embedding, tokens, B * Tn, std::sqrt((float)H));
  add_positional_encoding(x, P, B, Tn, H, pos);
  for (int l = 0; l < c.num_layers; ++l)
    decoder_block(x, attn ? attn[l] : DecoderAttnOut{}, w.dec[l], x, B, Tn, t0, causal,
                  caches[l], cross[l], src_vl, scratch);
  linear(logits, w.dense, x, B * Tn);
}

}  // namespace attnlite
