// The d2l Transformer (book 10.7) as a seq2seq driver: the encoder once per batch, the
// cross-attention keys and values projected once, then one decoder step at a time over a
// per-layer key/value cache. Blocks: src/models/transformer.cpp.
//
// Legend: B sentences, K hypotheses per sentence, R = B*K decoder rows, S source steps,
// T target steps, H num_hiddens, NH heads, L layers, V target vocabulary.
#include <algorithm>

#include "drivers/op_memory.h"
#include "drivers/row_ops.h"
#include "attnlite/attention/positional_encoding.h"
#include "families/transformer/transformer.h"

namespace attnlite::families {

using namespace attnlite::models;  // the blocks
using namespace attnlite::drivers;  // the driver interface and its helpers
using drivers::Limits;             // not attnlite::Limits (translate.h), where both are seen

namespace {

class TransformerDriver final : public Seq2SeqRows {
 public:
  TransformerDriver(const TransformerModel& m, const ops::Ops& op, const Limits& lim)
      : Seq2SeqRows(op, lim), m_(m), c_(m.config), w_(m.weights) {
    L_ = c_.num_layers;
    NH_ = c_.num_heads;
    H_ = c_.num_hiddens;
    V_ = c_.tgt_vocab_size;
    // The positional rows these limits reach: sources of S_ tokens, targets of T_ steps.
    P_table_.resize((size_t)std::max(S_, T_) * H_);
    attention::positional_encoding_table(P_table_.data(), std::max(S_, T_), H_);
    P_ = P_table_.data();
  }

  void carve(Arena& host, Arena& mem) override {
    if constexpr (kDeviceOpSets)
      if (!mem.counting() && !op_.host_memory() && device_.empty()) mirror(op_);
    const size_t R = R_, B = B_, S = S_, T = T_, L = L_, H = H_;
    carve_rows(host, mem);
    enc_out_ = mem.floats(B * S * H);
    cross_k_ = mem.floats(L * R * S * H);   // layer l's rows at l * R * S * H
    cross_v_ = mem.floats(L * R * S * H);
    cache_k_ = mem.floats(L * R * T * H);
    cache_v_ = mem.floats(L * R * T * H);
    logits_ = mem.floats(R * V_);
    att_enc_ = mem.floats(B * enc_len());
    att_self_ = mem.floats(B * self_len());
    att_cross_ = mem.floats(B * cross_len());
    for (int l = 0; l < L_; ++l) {  // each layer's views into the buffers, fixed per session
      caches_[l] = {cache_k_ + (long)l * R_ * T_ * H_, cache_v_ + (long)l * R_ * T_ * H_, T_};
      cross_[l] = {cross_k_ + (long)l * R_ * S_ * H_, cross_v_ + (long)l * R_ * S_ * H_, S_};
      enc_attn_[l] = {att_enc_ + (long)l * NH_ * S_ * S_, enc_len(), (long)S_ * S_, S_};
    }
    if (KM_ > 1) {
      hist_self_ = mem.floats(R * self_len());
      hist_cross_ = mem.floats(R * cross_len());
      tmp_ = mem.floats((size_t)KM_ * std::max({T * H, (size_t)self_len(), (size_t)cross_len()}));
    }
  }

  void encode(const int* src, const int* valid, int n, int K, bool attention,
              const ops::Ctx& cx) override {
    const ops::Ops& op = cx.op;
    // Text only: the encoder runs the source steps up to the longest valid length. Every later
    // step is a padding position, masked out of every attention (a key weight of exactly 0), so
    // no output depends on its rows; only the encoder's attention maps, recorded when asked
    // for, have rows for them (the book's num_steps x num_steps maps).
    int S = S_;
    if (!attention && valid) {
      int longest = 0, shortest = S_;
      for (int b = 0; b < n; ++b) {
        longest = std::max(longest, valid[b]);
        shortest = std::min(shortest, valid[b]);
      }
      if (shortest >= 1) S = std::min(S_, longest);  // a length 0 attends to the pads: all of them
    }
    begin(src, valid, n, K, S, op);
    const int rows = rows_;
    if (attention) {
      op.zero(att_enc_, sizeof(float) * n * enc_len());
      op.zero(att_self_, sizeof(float) * n * self_len());
      op.zero(att_cross_, sizeof(float) * n * cross_len());
      if (K > 1) {
        op.zero(hist_self_, sizeof(float) * rows * self_len());
        op.zero(hist_cross_, sizeof(float) * rows * cross_len());
      }
    }
    transformer_encode(enc_out_, attention ? enc_attn_ : nullptr, w_, c_, P_, src_, n, S,
                       ValidLens::per_batch(valid_), cx);
    for (int l = 0; l < L_; ++l) {
      float* k = cross_k_ + (long)l * R_ * S_ * H_;
      float* v = cross_v_ + (long)l * R_ * S_ * H_;
      project_cross_kv(k, v, w_.dec[l], enc_out_, n, S, cx);
      expand_rows(op, k, (long)S * H_, n, K);
      expand_rows(op, v, (long)S * H_, n, K);
      cross_[l].S = S;  // (R, S, H) this search
    }
  }

  const float* step(const int* tokens, int rows, int t, int pos, bool attention,
                    const ops::Ctx& cx) override {
    const int* in = upload_tokens(tokens, rows, cx.op);
    if (attention) {
      float* self = K_ > 1 ? hist_self_ : att_self_;  // rows are sentences when K = 1
      float* crs = K_ > 1 ? hist_cross_ : att_cross_;
      for (int l = 0; l < L_; ++l) {
        dec_attn_[l].self = {self + ((long)l * T_ + t) * NH_ * T_, self_len(), T_, T_};
        dec_attn_[l].cross = {crs + ((long)l * T_ + t) * NH_ * S_, cross_len(), S_, S_};
      }
    }
    // The step's launches depend on these host values alone (the buffers are the session's),
    // so a device op set may replay them (ops::Ops::replay: CUDA graphs).
    auto run = [&] {
      transformer_decode(logits_, attention ? dec_attn_ : nullptr, w_, c_, P_, in, rows, 1, t,
                         &pos, /*causal=*/false, caches_, cross_, row_lens(), cx);
    };
    using Run = decltype(run);
    const ops::StepKey key{{rows, t, pos, cross_[0].S, attention ? 1 : 0, K_,
                            (long)cx.scratch.used()}};
    cx.op.replay(graphs_, key, rows, ops::Reuse::Step, [](void* f) { (*static_cast<Run*>(f))(); }, &run);
    return logits_;
  }

  void reorder(const int* parent, int blocks, int K, int t, bool attention,
               const ops::Ctx& cx) override {
    const int* from = upload_row_map(parent, blocks * K, cx.op);
    for (int l = 0; l < L_; ++l) {
      const long at = (long)l * R_ * T_ * H_;
      cx.op.permute_blocks(cache_k_ + at, (long)T_ * H_, (long)(t + 1) * H_, from, blocks, K, tmp_);
      cx.op.permute_blocks(cache_v_ + at, (long)T_ * H_, (long)(t + 1) * H_, from, blocks, K, tmp_);
    }
    if (!attention) return;
    cx.op.permute_blocks(hist_self_, self_len(), self_len(), from, blocks, K, tmp_);
    cx.op.permute_blocks(hist_cross_, cross_len(), cross_len(), from, blocks, K, tmp_);
  }

  void keep_rows(const int* keep, int n, int steps, const ops::Ctx& cx) override {
    const int* kept = upload_row_map(keep, n, cx.op);
    const long cross_row = (long)cross_[0].S * H_;  // (R, S, H) this search
    for (int l = 0; l < L_; ++l) {
      const long at = (long)l * R_ * T_ * H_, cross_at = (long)l * R_ * S_ * H_;
      cx.op.keep_rows(cache_k_ + at, (long)T_ * H_, (long)steps * H_, kept, n);
      cx.op.keep_rows(cache_v_ + at, (long)T_ * H_, (long)steps * H_, kept, n);
      cx.op.keep_rows(cross_k_ + cross_at, cross_row, cross_row, kept, n);
      cx.op.keep_rows(cross_v_ + cross_at, cross_row, cross_row, kept, n);
    }
    keep_row_lens(keep, n, cx.op);
  }

  void keep_attention(int b, int row, const ops::Ctx& cx) override {
    cx.op.copy(att_self_ + b * self_len(), hist_self_ + row * self_len(), sizeof(float) * self_len());
    cx.op.copy(att_cross_ + b * cross_len(), hist_cross_ + row * cross_len(), sizeof(float) * cross_len());
  }

  AttentionSlot attention(int b) const override {
    return {att_enc_ + b * enc_len(), att_self_ + b * self_len(), att_cross_ + b * cross_len(),
            enc_len(), self_len(), cross_len()};
  }

 private:
  long enc_len() const { return (long)L_ * NH_ * S_ * S_; }
  long self_len() const { return (long)L_ * T_ * NH_ * T_; }
  long cross_len() const { return (long)L_ * T_ * NH_ * S_; }

  // Weights and the positional rows the limits reach, copied to op memory.
  void mirror(const ops::Ops& op) {
    device_ = DeviceWeights(*m_.store, op, {{P_, (size_t)std::max(S_, T_) * H_}});
    w_ = m_.bind(device_.store());
    P_ = device_.extra(0);
  }

  const TransformerModel& m_;
  const TransformerConfig& c_;
  TransformerWeights w_;  // the model's, or their copy in op memory
  std::vector<float> P_table_;  // (max(S, T), H)
  const float* P_;              // P_table_, or its copy in op memory
  DeviceWeights device_;  // on a device: the weights' copy
  std::unique_ptr<ops::Recording> graphs_;  // a device's recorded decoder steps
  int L_ = 0, NH_ = 1, H_ = 0, V_ = 0;

  float* enc_out_ = nullptr;       // (B, S, H)
  float *cross_k_ = nullptr, *cross_v_ = nullptr;  // (L, R, S, H)
  float *cache_k_ = nullptr, *cache_v_ = nullptr;  // (L, R, T, H)
  float* logits_ = nullptr;        // (R, V)
  float* att_enc_ = nullptr;       // (B, L, NH, S, S)
  float* att_self_ = nullptr;      // (B, L, T, NH, T)
  float* att_cross_ = nullptr;     // (B, L, T, NH, S)
  float* hist_self_ = nullptr;     // (R, L, T, NH, T) K > 1
  float* hist_cross_ = nullptr;    // (R, L, T, NH, S) K > 1
  float* tmp_ = nullptr;           // permute_blocks' rows
  // Per-layer views, set when the buffers are carved; only the attention rows move per step.
  static constexpr int kMaxLayers = 64;  // the loader's bound on num_layers
  KVCache caches_[kMaxLayers];
  CrossKV cross_[kMaxLayers];
  AttnOut enc_attn_[kMaxLayers];
  DecoderAttnOut dec_attn_[kMaxLayers];
};

}  // namespace

std::unique_ptr<Seq2SeqDriver> TransformerModel::seq2seq_driver(const ops::Ops& op,
                                                     const Limits& lim) const {
  return std::make_unique<TransformerDriver>(*this, op, lim);
}

}  // namespace attnlite::families
