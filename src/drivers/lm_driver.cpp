// The decoder-only language model as a driver: the prompt in one causal pass, then one token
// per step over the per-layer key/value caches.
#include "drivers/lm_driver.h"

#include "attnlite/attention/positional_encoding.h"
#include "model/model_impl.h"

namespace attnlite::drivers {

using namespace attnlite::models;  // the model families' blocks

LanguageModelDriver::LanguageModelDriver(const Model& m, const ops::Ops& op)
    : op_(op), c_(m.impl().lm), w_(m.impl().lm_weights) {
  L_ = c_.num_layers;
  NH_ = c_.layer.num_heads;
  D_ = c_.layer.d_model;
  V_ = c_.vocab_size;
  T_ = c_.max_len;
  // The context's positional rows (positions past it are never read).
  P_table_.resize((size_t)T_ * D_);
  attention::positional_encoding_table(P_table_.data(), T_, D_);
  P_ = P_table_.data();
}

void LanguageModelDriver::carve(Arena& mem) {
  if constexpr (kDeviceOpSets)
    if (!mem.counting() && !op_.host_memory() && !weights_.data()) mirror(op_);
  const size_t L = L_, T = T_, D = D_;
  tokens_ = mem.take<int>(T);
  cache_k_ = mem.floats(L * T * D);
  cache_v_ = mem.floats(L * T * D);
  logits_ = mem.floats(T * V_);
  attn_ = mem.floats((size_t)attention_len());
  for (int l = 0; l < L_; ++l) {
    caches_[l] = {cache_k_ + (long)l * T_ * D_, cache_v_ + (long)l * T_ * D_, T_};
    attn_out_[l] = {nullptr, (long)NH_ * T_ * T_, (long)T_ * T_, T_};
  }
}

const float* LanguageModelDriver::forward(const int* tokens, int Tn, int t0, bool all_logits,
                                          bool attention, const ops::Ctx& cx) {
  cx.op.upload(tokens_, tokens, sizeof(int) * (size_t)Tn);
  if (attention)
    for (int l = 0; l < L_; ++l) attn_out_[l].data = attn_ + (long)l * NH_ * T_ * T_ + (long)t0 * T_;
  language_model_forward(logits_, !all_logits, attention ? attn_out_ : nullptr, w_, c_, P_,
                         tokens_, 1, Tn, t0, caches_, cx);
  return logits_;
}

void LanguageModelDriver::clear_attention(const ops::Ops& op) {
  op.zero(attn_, sizeof(float) * (size_t)attention_len());
}

void LanguageModelDriver::mirror(const ops::Ops& op) {
  WeightMirror m;
  m.add(w_.embedding);
  for (auto& e : w_.layers) {
    for (Linear* l : {&e.W_q, &e.W_k, &e.W_v, &e.out_proj, &e.linear1, &e.linear2}) m.add(*l);
    for (LayerNormWeights* n : {&e.norm1, &e.norm2}) {
      m.add(n->gamma, (size_t)n->n);
      m.add(n->beta, (size_t)n->n);
    }
  }
  m.add(w_.head);
  m.add(P_, (size_t)T_ * D_);
  weights_ = m.upload(op);
}

}  // namespace attnlite::drivers
