// The decoder-only (GPT-style) language model of the lab's exercise 10.7.3: nn.Embedding
// scaled by sqrt(d_model), the book's sinusoidal positional encoding, a stack of
// nn.TransformerEncoderLayer (batch_first) under the square causal mask, and an nn.Linear head
// predicting the next token. Written once against ops::Ops.
//
// File (kind "lm"): embedding.weight (V, D), layers.N.* (models/transformer_encoder_layer.h),
// head.weight (V, D) and head.bias (V, optional); attnlite.config holds vocab_size, d_model,
// num_heads, num_layers, dim_feedforward, activation ("relu" | "gelu"), norm_first,
// layer_norm_eps, bias, max_len (the context: positions the model reads) and pos_max_len
// (rows of the encoding table); attnlite.vocab the tokens.
//
// Legend: B batch, Tn new positions, t0 first new position, T cache capacity, D d_model,
// NH heads, L layers, V vocabulary.
#pragma once
#include <vector>

#include "attnlite/models/transformer_encoder_layer.h"

namespace attnlite::models {

using ops::AttnOut;

struct LanguageModelConfig {
  int vocab_size = 0, num_layers = 0;
  EncoderLayerConfig layer;
  bool head_bias = true;
  int max_len = 0;        // context length
  int pos_max_len = 5000; // positional encoding table rows
};

struct LanguageModelWeights {
  Embedding embedding;               // (V, D)
  std::vector<EncoderLayerWeights> layers;
  Linear head;                       // (V, D)
};
LanguageModelWeights bind_language_model(WeightStore& ws, const LanguageModelConfig& c,
                                         const float* zeros);

// Logits for new tokens (B, Tn) (op memory) at positions t0 .. t0 + Tn - 1, every layer's keys
// and values appended to caches[l] (B, T, D) and attention causal over [0, t0 + Tn):
//   last_only false: logits (B, Tn, V); true: logits (B, V) of each row's last position.
// attn[l] receives layer l's (B, NH, Tn, t0 + Tn) weights through its strides (attn may be
// nullptr). P is the (pos_max_len, D) encoding table.
void language_model_forward(float* logits, bool last_only, const AttnOut* attn,
                            const LanguageModelWeights& w, const LanguageModelConfig& c,
                            const float* P, const int* tokens, int B, int Tn, int t0,
                            KVCache* caches, const ops::Ctx& cx);

}  // namespace attnlite::models
