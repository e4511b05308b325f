// d2l 10.7: the Transformer encoder-decoder, inference only, written once against ops::Ops
// (every buffer, weight and valid length in the op set's memory).
//
// Legend: B batch, S source steps, T target steps (cache capacity), Tn new target steps in
// one call, H num_hiddens, NH heads, F ffn hidden size, L layers, V vocab size.
#pragma once
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/attention/multi_head.h"
#include "attnlite/models/layers.h"
#include "attnlite/weights.h"

namespace attnlite::models {

using attention::MultiHeadAttentionWeights;
using attention::ValidLens;
using models::AddNormWeights;
using models::FFNWeights;
using ops::AttnOut;

struct TransformerConfig {
  int src_vocab_size = 0, tgt_vocab_size = 0;
  int num_hiddens = 0, num_layers = 0, num_heads = 0, ffn_num_hiddens = 0;
  int num_steps = 0;   // the training sequence length (source padding length)
  bool use_bias = false;
  int max_len = 1000;  // positional encoding table rows
  // One table (decoder.embedding.weight) is the source embedding, the target embedding and
  // the output layer's weight (decoder.dense.bias stays its own); one vocabulary.
  bool shared_embeddings = false;
};

struct EncoderBlockWeights {
  MultiHeadAttentionWeights attention;
  AddNormWeights addnorm1;
  FFNWeights ffn;
  AddNormWeights addnorm2;
};
struct DecoderBlockWeights {
  MultiHeadAttentionWeights attention1;  // masked self-attention
  AddNormWeights addnorm1;
  MultiHeadAttentionWeights attention2;  // encoder-decoder attention
  AddNormWeights addnorm2;
  FFNWeights ffn;
  AddNormWeights addnorm3;
};

// prefix e.g. "encoder.blks.block0."; sizes as the book's EncoderBlock/DecoderBlock arguments.
EncoderBlockWeights bind_encoder_block(WeightStore& ws, const std::string& prefix, int num_hiddens,
                                 int ffn_num_hiddens, int num_heads, bool bias,
                                 const std::vector<int64_t>& norm_shape);
DecoderBlockWeights bind_decoder_block(WeightStore& ws, const std::string& prefix, int num_hiddens,
                                 int ffn_num_hiddens, int num_heads, bool bias,
                                 const std::vector<int64_t>& norm_shape);

// Y (B, S, H) from X (B, S, H); attn receives (B * NH, S, S) weights or is empty.
void encoder_block(float* Y, const AttnOut& attn, const EncoderBlockWeights& w, const float* X, int B,
                   int S, const ValidLens& vl, const ops::Ctx& cx);

// The book's DecoderBlock state[2][i], kept as projected keys and values: the rows of step
// t are W_k x_t and W_v x_t, which is what the book recomputes from the cached inputs.
struct KVCache {
  float* k = nullptr;  // (B, T, H)
  float* v = nullptr;  // (B, T, H)
  int capacity = 0;    // T
};
// Encoder-decoder keys and values, projected once per source batch.
struct CrossKV {
  const float* k = nullptr;  // (B, S, H)
  const float* v = nullptr;  // (B, S, H)
  int S = 0;
};
void project_cross_kv(float* k, float* v, const DecoderBlockWeights& w, const float* enc_out, int B,
                      int S, const ops::Ctx& cx);

struct DecoderAttnOut {
  AttnOut self;   // (B, NH, Tn, >= t0 + Tn) through strides
  AttnOut cross;  // (B, NH, Tn, >= S)
};

// Y (B, Tn, H) for new inputs X (B, Tn, H) at positions t0 .. t0 + Tn - 1. Their keys and
// values are appended to the cache; self-attention runs over cache rows [0, t0 + Tn), causal
// (query t0 + i sees keys up to t0 + i) or, as the book's eval-mode block, unmasked.
void decoder_block(float* Y, const DecoderAttnOut& attn, const DecoderBlockWeights& w, const float* X,
                   int B, int Tn, int t0, bool causal, KVCache& cache, const CrossKV& cross,
                   const ValidLens& src_vl, const ops::Ctx& cx);

struct TransformerWeights {
  Embedding enc_embedding;               // (V_src, H)
  std::vector<EncoderBlockWeights> enc;
  Embedding dec_embedding;               // (V_tgt, H)
  std::vector<DecoderBlockWeights> dec;
  Linear dense;                          // (V_tgt, H)
};
TransformerWeights bind_transformer(WeightStore& ws, const TransformerConfig& c);

// enc_out (B, S, H) from token ids src (B, S); attn[l] receives layer l's (B * NH, S, S)
// weights (attn may be nullptr, or entries empty). P is the (max_len, H) encoding table.
void transformer_encode(float* enc_out, const AttnOut* attn, const TransformerWeights& w,
                        const TransformerConfig& c, const float* P, const int* src, int B, int S,
                        const ValidLens& vl, const ops::Ctx& cx);

// Decoder over Tn new tokens (B, Tn) at positions pos (Tn); logits (B, Tn, V).
// caches[l] / cross[l] per layer; attn[l] per layer or nullptr.
void transformer_decode(float* logits, const DecoderAttnOut* attn, const TransformerWeights& w,
                        const TransformerConfig& c, const float* P, const int* tokens, int B,
                        int Tn, int t0, const int* pos, bool causal, KVCache* caches,
                        const CrossKV* cross, const ValidLens& src_vl, const ops::Ctx& cx);

}  // namespace attnlite::models
