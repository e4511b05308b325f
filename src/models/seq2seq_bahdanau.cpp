#include "attnlite/models/seq2seq_bahdanau.h"

#include <cstring>

#include "attnlite/ops/layers.h"

namespace attnlite {

Seq2SeqEncoderW bind_seq2seq_encoder(WeightStore& ws, const std::string& prefix, RNNW::Cell cell,
                                     int vocab_size, int embed_size, int num_hiddens,
                                     int num_layers) {
  Seq2SeqEncoderW w;
  w.embedding = bind_embedding(ws, prefix + "embedding.weight", vocab_size, embed_size);
  w.rnn = bind_rnn(ws, prefix + "rnn.", cell, embed_size, num_hiddens, num_layers);
  return w;
}

void seq2seq_encode(float* out, float* h, float* c, const Seq2SeqEncoderW& w, const int* src,
                    int B, int S, Arena& scratch) {
  ArenaScope scope(scratch);
  const int E = w.rnn.input_size, Hh = w.rnn.hidden, L = w.rnn.layers;
  // X = embedding(X).permute(1, 0, 2): time-major rows (t, b)
  float* x = scratch.floats((size_t)S * B * E);
  for (int t = 0; t < S; ++t)
    for (int b = 0; b < B; ++b) embedding(x + ((long)t * B + b) * E, w.embedding, &src[b * S + t], 1);
  std::memset(h, 0, sizeof(float) * L * B * Hh);
  if (c) std::memset(c, 0, sizeof(float) * L * B * Hh);
  rnn_forward(out, h, c, w.rnn, x, S, B, scratch);
}

BahdanauWeights bind_bahdanau(WeightStore& ws, const BahdanauConfig& c) {
  BahdanauWeights w;
  const int Hh = c.num_hiddens, E = c.embed_size;
  w.encoder = bind_seq2seq_encoder(ws, "encoder.", c.cell, c.src_vocab_size, E, Hh, c.num_layers);
  w.attention = bind_additive_attention(ws, "decoder.attention.", Hh, Hh, Hh);
  w.dec_embedding = bind_embedding(ws, "decoder.embedding.weight", c.tgt_vocab_size, E);
  w.dec_rnn = bind_rnn(ws, "decoder.rnn.", c.cell, E + Hh, Hh, c.num_layers);
  w.dense = bind_linear(ws, "decoder.dense", Hh, c.tgt_vocab_size, true);
  return w;
}

void bahdanau_encode(BahdanauState& st, const BahdanauWeights& w, const int* src, int B, int S,
                     Arena& scratch) {
  ArenaScope scope(scratch);
  const int Hh = w.encoder.rnn.hidden;
  float* tm = scratch.floats((size_t)S * B * Hh);
  seq2seq_encode(tm, st.h, st.c, w.encoder, src, B, S, scratch);
  // init_state: outputs.permute(1, 0, 2) -> (B, S, Hh)
  for (int t = 0; t < S; ++t)
    for (int b = 0; b < B; ++b)
      std::memcpy(st.enc_out + ((long)b * S + t) * Hh, tm + ((long)t * B + b) * Hh,
                  sizeof(float) * Hh);
  linear(st.enc_kp, w.attention.W_k, st.enc_out, B * S);
  st.S = S;
}

void bahdanau_decode_step(float* logits, float* attn, const BahdanauWeights& w,
                          BahdanauState& st, const int* tokens, int B, const ValidLens& src_vl,
                          Arena& scratch) {
  ArenaScope scope(scratch);
  const int Hh = w.dec_rnn.hidden, E = w.dec_rnn.input_size - Hh, L = w.dec_rnn.layers;
  float* ctx = scratch.floats((size_t)B * Hh);
  float* x = scratch.floats((size_t)B * (Hh + E));
  const float* query = st.h + (long)(L - 1) * B * Hh;  // hidden_state[-1]
  additive_attention_projected(ctx, attn, w.attention, query, st.enc_kp, st.enc_out, Hh, B, 1,
                               st.S, Hh, src_vl, scratch);
  // x = cat(context, embedding(token))
  for (int b = 0; b < B; ++b) {
    std::memcpy(x + (long)b * (Hh + E), ctx + (long)b * Hh, sizeof(float) * Hh);
    embedding(x + (long)b * (Hh + E) + Hh, w.dec_embedding, &tokens[b], 1);
  }
  rnn_step(st.h, st.c, w.dec_rnn, x, B, scratch);
  linear(logits, w.dense, st.h + (long)(L - 1) * B * Hh, B);
}

}  // namespace attnlite
