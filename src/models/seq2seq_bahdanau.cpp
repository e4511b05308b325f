#include "attnlite/models/seq2seq_bahdanau.h"

using namespace attnlite::attention;

// The first layers' input products of every embedding row, looked up at run time; the small
// core (ATTNLITE_PACKED_WEIGHTS=0) derives no layout beyond the GRU's and multiplies them.
#if !defined(ATTNLITE_PACKED_WEIGHTS) || ATTNLITE_PACKED_WEIGHTS
constexpr bool kProjectedInputs = true;
#else
constexpr bool kProjectedInputs = false;
#endif

namespace attnlite::models {

Seq2SeqEncoderWeights bind_seq2seq_encoder(WeightStore& ws, const std::string& prefix, ops::Cell cell,
                                     int vocab_size, int embed_size, int num_hiddens,
                                     int num_layers) {
  Seq2SeqEncoderWeights w;
  w.embedding = bind_embedding(ws, prefix + "embedding.weight", vocab_size, embed_size);
  w.rnn = bind_rnn(ws, prefix + "rnn.", cell, embed_size, num_hiddens, num_layers);
  const int G = w.rnn.gates() * num_hiddens;
  if (kProjectedInputs && ws.readable() && (long)vocab_size * G <= kMaxProjectedFloats)
    w.projected = project_embedding(ws, w.rnn, w.embedding, 0);
  return w;
}

void seq2seq_encode(float* out, float* h, float* c, const Seq2SeqEncoderWeights& w, const int* src,
                    int B, int S, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int E = w.rnn.input_size, Hh = w.rnn.hidden, L = w.rnn.layers;
  const size_t row = sizeof(float) * E;
  // Both ways take the same scratch, whichever way a dry run on other weights went.
  float* xb = cx.scratch.floats((size_t)B * S * E);
  float* x = cx.scratch.floats((size_t)S * B * E);
  int* ids = cx.scratch.take<int>((size_t)S * B);
  cx.op.zero(h, sizeof(float) * L * B * Hh);
  if (c) cx.op.zero(c, sizeof(float) * L * B * Hh);
  if (w.projected.w && cx.op.host_memory() && !cx.op.counting()) {
    // The first layer's input products looked up, time-major: row (t, b) is src[b, t]'s.
    for (int t = 0; t < S; ++t)
      for (int b = 0; b < B; ++b) ids[(long)t * B + b] = src[(long)b * S + t];
    rnn_forward(out, h, c, w.rnn, nullptr, S, B, cx, &w.projected, ids);
    return;
  }
  // X = embedding(X).permute(1, 0, 2): rows (b, t) gathered, then laid out time-major (t, b)
  cx.op.embed(xb, E, w.embedding, src, B * S, 1.f);
  for (int b = 0; b < B; ++b) cx.op.copy_2d(x + (long)b * E, row * B, xb + (long)b * S * E, row, row, S);
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
  const int G = w.dec_rnn.gates() * Hh;
  if (kProjectedInputs && ws.readable() && w.dec_rnn.layer_weights[0].ih.w &&
      (long)c.tgt_vocab_size * G <= kMaxProjectedFloats) {
    w.dec_projected = project_embedding(ws, w.dec_rnn, w.dec_embedding, Hh);
    w.dec_first = split_first_layer(ws, w.dec_rnn, Hh);
  }
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
  const int G = w.dec_rnn.gates() * Hh;
  // Both ways take the same scratch, whichever way a dry run on other weights went.
  float* x = cx.scratch.floats((size_t)B * (Hh + E));
  float* gi = cx.scratch.floats((size_t)B * G);
  const float* query = st.h + (long)(L - 1) * B * Hh;  // hidden_state[-1]
  if (w.dec_projected.w && cx.op.host_memory() && !cx.op.counting()) {
    // x = the context alone; the embedding's products looked up
    additive_attention_projected(x, Hh, attn, w.attention, query, st.enc_kp, st.enc_out, B, 1,
                                 st.S, Hh, src_vl, cx);
    cx.op.embed(gi, G, w.dec_projected, tokens, B, 1.f);
    rnn_step(st.h, st.c, w.dec_rnn, x, B, cx, &w.dec_first, gi);
  } else {
    // x = cat(context, embedding(token)): the context lands in the first Hh columns
    additive_attention_projected(x, Hh + E, attn, w.attention, query, st.enc_kp, st.enc_out, B,
                                 1, st.S, Hh, src_vl, cx);
    cx.op.embed(x + Hh, Hh + E, w.dec_embedding, tokens, B, 1.f);
    rnn_step(st.h, st.c, w.dec_rnn, x, B, cx);
  }
  cx.op.linear(logits, st.h + (long)(L - 1) * B * Hh, w.dense, B);
}

}  // namespace attnlite::models
