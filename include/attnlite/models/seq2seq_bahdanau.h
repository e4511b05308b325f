// d2l 10.4: the RNN encoder-decoder with Bahdanau (additive) attention, and the plain
// Seq2SeqEncoder it builds on (GRU, or the LSTM variant), written against ops::Ops.
//
// Legend: B batch, S source steps, E embed size, Hh hidden size, L layers, V vocab size.
#pragma once
#include "attnlite/arena.h"
#include "attnlite/attention/additive.h"
#include "attnlite/models/rnn.h"
#include "attnlite/weights.h"

namespace attnlite::models {

using attention::AdditiveAttentionWeights;
using attention::ValidLens;
using models::RNNWeights;

struct BahdanauConfig {
  int src_vocab_size = 0, tgt_vocab_size = 0;
  int embed_size = 0, num_hiddens = 0, num_layers = 0, num_steps = 0;
  ops::Cell cell = ops::Cell::GRU;
};

struct Seq2SeqEncoderWeights {
  Embedding embedding;               // (V_src, E)
  RNNWeights rnn;
  // embedding · W_ih_l0ᵀ + b_ih_l0 (V_src, G·Hh), made at load on the host (the first
  // layer's input products of every source token, looked up instead of multiplied), or
  // empty (weights in device memory, or a table above kMaxProjectedFloats).
  Embedding projected;
};
constexpr long kMaxProjectedFloats = 1L << 20;
Seq2SeqEncoderWeights bind_seq2seq_encoder(WeightStore& ws, const std::string& prefix, ops::Cell cell,
                                     int vocab_size, int embed_size, int num_hiddens,
                                     int num_layers);

// Seq2SeqEncoder.forward: src (B, S) ids (in op memory) -> out (S, B, Hh) time-major as the book returns it;
// h (L, B, Hh) final state (c likewise for LSTM, else nullptr). Starts from zero state.
void seq2seq_encode(float* out, float* h, float* c, const Seq2SeqEncoderWeights& w, const int* src,
                    int B, int S, const ops::Ctx& cx);

struct BahdanauWeights {
  Seq2SeqEncoderWeights encoder;
  AdditiveAttentionWeights attention;      // key/query/hidden sizes all Hh
  Embedding dec_embedding;               // (V_tgt, E)
  RNNWeights dec_rnn;                      // input E + Hh (context first, then embedding)
  Linear dense;                      // (V_tgt, Hh)
  // Made at load on the host (empty for weights in device memory or a table above
  // kMaxProjectedFloats): the decoder's first layer over the context alone, and
  // dec_embedding · W_ih_l0[:, Hh:]ᵀ + b_ih_l0 (V_tgt, G·Hh), the embedding's products
  // looked up instead of multiplied at every step.
  RNNLayerWeights dec_first;
  Embedding dec_projected;
};
BahdanauWeights bind_bahdanau(WeightStore& ws, const BahdanauConfig& c);

// The decoder's state from init_state: encoder outputs batch-major, keys projected once.
struct BahdanauState {
  float* enc_out = nullptr;  // (B, S, Hh)
  float* enc_kp = nullptr;   // (B, S, Hh) = W_k enc_out
  float* h = nullptr;        // (L, B, Hh)
  float* c = nullptr;        // (L, B, Hh) for LSTM, else nullptr
  int S = 0;
};

// Runs the encoder and fills state (whose buffers the caller owns).
void bahdanau_encode(BahdanauState& st, const BahdanauWeights& w, const int* src, int B, int S,
                     const ops::Ctx& cx);

// One decoder step for tokens (B): logits (B, V); attn (B, S) receives the weights.
void bahdanau_decode_step(float* logits, float* attn, const BahdanauWeights& w,
                          BahdanauState& st, const int* tokens, int B, const ValidLens& src_vl,
                          const ops::Ctx& cx);

}  // namespace attnlite::models
