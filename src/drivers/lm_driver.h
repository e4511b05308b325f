// attnlite — the language-model driver (internal): one sequence's run state for a decoder-only
// model on an op set: the per-layer key/value caches over the context, the logits and the
// causal attention weights, all in op memory. Blocks: src/models/language_model.cpp.
//
// Legend: T context (max_len), D d_model, NH heads, L layers, V vocabulary.
#pragma once
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/model.h"
#include "attnlite/models/language_model.h"
#include "drivers/op_memory.h"

namespace attnlite::drivers {

class LanguageModelDriver {
 public:
  LanguageModelDriver(const Model& m, const ops::Ops& op);

  // Every buffer from `mem` (op memory); a counting arena first, then the real block.
  void carve(Arena& mem);
  // Tokens (host, Tn) at positions t0 .. t0 + Tn - 1 (t0 + Tn <= T), their keys and values
  // cached. Returns logits in op memory: (Tn, V) when all_logits, else (V) of the last one.
  // attention: the rows [t0, t0 + Tn) of attention() are written.
  const float* forward(const int* tokens, int Tn, int t0, bool all_logits, bool attention,
                       const ops::Ctx& cx);
  // Zeroes the attention weights (a new sequence).
  void clear_attention(const ops::Ops& op);
  // (L, NH, T, T): [l][h][q][k], k <= q.
  const float* attention() const { return attn_; }
  long attention_len() const { return (long)L_ * NH_ * T_ * T_; }
  int context() const { return T_; }
  int vocab() const { return V_; }

 private:
  void mirror(const ops::Ops& op);

  const ops::Ops& op_;
  const models::LanguageModelConfig& c_;
  models::LanguageModelWeights w_;  // the model's, or their copy in op memory
  std::vector<float> P_table_;  // (T, D)
  const float* P_;              // P_table_, or its copy in op memory
  OpBlock weights_;
  int L_ = 0, NH_ = 1, D_ = 0, V_ = 0, T_ = 0;

  int* tokens_ = nullptr;                            // (T)
  float *cache_k_ = nullptr, *cache_v_ = nullptr;    // (L, T, D)
  float* logits_ = nullptr;                          // (T, V)
  float* attn_ = nullptr;                            // (L, NH, T, T)
  static constexpr int kMaxLayers = 64;              // the loader's bound on num_layers
  models::KVCache caches_[kMaxLayers];
  ops::AttnOut attn_out_[kMaxLayers];
};

}  // namespace attnlite::drivers
