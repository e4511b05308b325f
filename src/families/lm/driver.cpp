// The decoder-only language model as a driver: the prompt in one causal pass, then one token
// per step over the per-layer key/value caches, in op memory.
//
// Legend: T context (max_len), D d_model, NH heads, L layers, V vocabulary.
#include <vector>

#include "attnlite/attention/positional_encoding.h"
#include "drivers/op_memory.h"
#include "families/lm/lm.h"

namespace attnlite::families {

using namespace attnlite::models;  // the blocks
using drivers::DeviceWeights;

namespace {

class LanguageModelDriver final : public drivers::TextDriver {
 public:
  LanguageModelDriver(const LmModel& m, const ops::Ops& op)
      : op_(op), m_(m), c_(m.config), w_(m.weights) {
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
  void carve(Arena& mem) override;
  const float* forward(const int* tokens, int Tn, int t0, bool all_logits, bool attention,
                       const ops::Ctx& cx) override;
  void clear_attention(const ops::Ops& op) override;
  const float* attention() const override { return attn_; }
  long attention_len() const override { return (long)L_ * NH_ * T_ * T_; }
  int context() const override { return T_; }
  int vocab() const override { return V_; }

 private:
  void mirror(const ops::Ops& op);
  const ops::Ops& op_;
  const LmModel& m_;
  const models::LanguageModelConfig& c_;
  models::LanguageModelWeights w_;  // the model's, or their copy in op memory
  std::vector<float> P_table_;  // (T, D)
  const float* P_;              // P_table_, or its copy in op memory
  DeviceWeights device_;  // on a device: the weights' copy
  int L_ = 0, NH_ = 1, D_ = 0, V_ = 0, T_ = 0;
  int* tokens_ = nullptr;                            // (T)
  float *cache_k_ = nullptr, *cache_v_ = nullptr;    // (L, T, D)
  float* logits_ = nullptr;                          // (T, V)
  float* attn_ = nullptr;                            // (L, NH, T, T)
  static constexpr int kMaxLayers = 64;              // the loader's bound on num_layers
  models::KVCache caches_[kMaxLayers];
  ops::AttnOut attn_out_[kMaxLayers];
};

void LanguageModelDriver::carve(Arena& mem) {
  if constexpr (drivers::kDeviceOpSets)
    if (!mem.counting() && !op_.host_memory() && device_.empty()) mirror(op_);
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
  device_ = DeviceWeights(*m_.store, op, {{P_, (size_t)T_ * D_}, {m_.zeros.data(), m_.zeros.size()}});
  P_ = device_.extra(0);
  w_ = m_.bind(device_.store(), device_.extra(1));
}

}  // namespace

std::unique_ptr<drivers::TextDriver> LmModel::text_driver(const ops::Ops& op) const {
  return std::make_unique<LanguageModelDriver>(*this, op);
}

}  // namespace attnlite::families
