#include "attnlite/models/seq2seq_bahdanau.h"
using namespace attnlite::attention;

namespace attnlite::models {

Seq2SeqEncoderWeights bind_seq2seq_encoder(WeightStore& ws, const std::string& prefix, ops::Cell cell,
                                     int vocab_size, int embed_size, int num_hiddens,
                                     int num_layers) {
  Seq2SeqEncoderWeights w;
  w.embedding = bind_embedding(ws, prefix + "embedding.weight", vocab_size, embed_size);
  w.rnn = bind_rnn(ws, prefix + "rnn.", cell, embed_size, num_hiddens, num_layers);
  return w;
}

void seq2seq_encode(float* out, float* h, float* c, const Seq2SeqEncoderWeights& w, const int* src,
                    int B, int S, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int E = w.rnn.input_size, Hh = w.rnn.hidden, L = w.rnn.layers;
  const size_t row = sizeof(float) * E;
  // X = embedding(X).permute(1, 0, 2): rows (b, t) gathered, then laid out time-major (t, b)
  float* xb = cx.scratch.floats((size_t)B * S * E);
  float* x = cx.scratch.floats((size_t)S * B * E);
  cx.op.embed(xb, E, w.embedding, src, B * S, 1.f);
  for (int b = 0; b < B; ++b) cx.op.copy_2d(x + (long)b * E, row * B, xb + (long)b * S * E, row, row, S);
  cx.op.zero(h, sizeof(float) * L * B * Hh);
  if (c) cx.op.zero(c, sizeof(float) * L * B * Hh);
  rnn_forward(out, h, c, w.rnn, x, S, B, cx);
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
                     const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int Hh = w.encoder.rnn.hidden;
  const size_t row = sizeof(float) * Hh;
  float* tm = cx.scratch.floats((size_t)S * B * Hh);
  seq2seq_encode(tm, st.h, st.c, w.encoder, src, B, S, cx);
  // init_state: outputs.permute(1, 0, 2) -> (B, S, Hh)
  for (int b = 0; b < B; ++b)
    cx.op.copy_2d(st.enc_out + (long)b * S * Hh, row, tm + (long)b * Hh, row * B, row, S);
  cx.op.linear(st.enc_kp, st.enc_out, w.attention.W_k, B * S);
  st.S = S;
}

void bahdanau_decode_step(float* logits, float* attn, const BahdanauWeights& w,
                          BahdanauState& st, const int* tokens, int B, const ValidLens& src_vl,
                          const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int Hh = w.dec_rnn.hidden, E = w.dec_rnn.input_size - Hh, L = w.dec_rnn.layers;
  float* x = cx.scratch.floats((size_t)B * (Hh + E));
  const float* query = st.h + (long)(L - 1) * B * Hh;  // hidden_state[-1]
  // x = cat(context, embedding(token)): the context lands in the first Hh columns
  additive_attention_projected(x, Hh + E, attn, w.attention, query, st.enc_kp, st.enc_out, B, 1,
                               st.S, Hh, src_vl, cx);
  cx.op.embed(x + Hh, Hh + E, w.dec_embedding, tokens, B, 1.f);
  rnn_step(st.h, st.c, w.dec_rnn, x, B, cx);
  cx.op.linear(logits, st.h + (long)(L - 1) * B * Hh, w.dense, B);
}

}  // namespace attnlite::models
