#include "attnlite/models/language_model.h"

#include <cmath>
#include <string>

namespace attnlite::models {

LanguageModelWeights bind_language_model(WeightStore& ws, const LanguageModelConfig& c,
                                         const float* zeros) {
  LanguageModelWeights w;
  const int D = c.layer.d_model;
  w.embedding = bind_embedding(ws, "embedding.weight", c.vocab_size, D);
  for (int l = 0; l < c.num_layers; ++l)
    w.layers.push_back(bind_encoder_layer(ws, "layers." + std::to_string(l) + ".", c.layer, zeros));
  w.head = bind_linear(ws, "head", D, c.vocab_size, c.head_bias);
  return w;
}

void language_model_forward(float* logits, bool last_only, const AttnOut* attn,
                            const LanguageModelWeights& w, const LanguageModelConfig& c,
                            const float* P, const int* tokens, int B, int Tn, int t0,
                            KVCache* caches, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const int D = c.layer.d_model, V = c.vocab_size;
  float* x = cx.scratch.floats((size_t)B * Tn * D);
  // H = pos_encoding(embedding(X) * sqrt(d_model)), positions t0 ..
  cx.op.embed(x, D, w.embedding, tokens, B * Tn, std::sqrt((float)D));
  cx.op.add_positions(x, P + (long)t0 * D, B, Tn, D, nullptr);
  for (int l = 0; l < c.num_layers; ++l)
    encoder_layer(x, attn ? attn[l] : AttnOut{}, w.layers[l], B, Tn, t0, &caches[l],
                  /*causal=*/true, cx);
  if (!last_only) return cx.op.linear(logits, x, w.head, B * Tn);
  for (int b = 0; b < B; ++b)
    cx.op.linear(logits + (long)b * V, x + ((long)b * Tn + Tn - 1) * D, w.head, 1);
}

}  // namespace attnlite::models
