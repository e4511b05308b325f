// The d2l RNN encoder-decoder with Bahdanau attention (book 10.4) as a seq2seq driver: the
// GRU/LSTM encoder once per batch, its keys projected once, then one decoder step at a time
// over each row's recurrent state. Blocks: src/models/seq2seq_bahdanau.cpp.
//
// Legend: B sentences, K hypotheses per sentence, R = B*K decoder rows, S source steps,
// T target steps, Hh hidden size, L layers, V target vocabulary.
#include <algorithm>

#include "drivers/op_memory.h"
#include "drivers/row_ops.h"
#include "families/bahdanau/bahdanau.h"

namespace attnlite::families {

using namespace attnlite::models;  // the blocks
using namespace attnlite::drivers;  // the driver interface and its helpers
using drivers::Limits;             // not attnlite::Limits (translate.h), where both are seen

namespace {

class BahdanauDriver final : public Seq2SeqRows {
 public:
  BahdanauDriver(const BahdanauModel& m, const ops::Ops& op, const Limits& lim)
      : Seq2SeqRows(op, lim), m_(m), c_(m.config), w_(m.weights) {
    L_ = c_.num_layers;
    H_ = c_.num_hiddens;
    V_ = c_.tgt_vocab_size;
  }

  void carve(Arena& host, Arena& mem) override {
    if constexpr (kDeviceOpSets)
      if (!mem.counting() && !op_.host_memory() && device_.empty()) mirror(op_);
    const size_t R = R_, B = B_, S = S_, T = T_, L = L_, H = H_;
    carve_rows(host, mem);
    st_.enc_out = mem.floats(R * S * H);
    st_.enc_kp = mem.floats(R * S * H);
    st_.h = mem.floats(L * R * H);
    st_.c = c_.cell == ops::Cell::LSTM ? mem.floats(L * R * H) : nullptr;
    kept_host_ = host.take<int>(L * R);
    kept_ = mem.take<int>(L * R);
    logits_ = mem.floats(R * V_);
    att_step_ = mem.floats(R * S);
    att_cross_ = mem.floats(B * T * S);
    if (KM_ > 1) {
      hist_cross_ = mem.floats(R * T * S);
      tmp_ = mem.floats(std::max({(size_t)KM_ * T * S, (size_t)KM_ * H, L * B * H}));
    }
  }

  void encode(const int* src, const int* valid, int n, int K, bool attention,
              const ops::Ctx& cx) override {
    const ops::Ops& op = cx.op;
    begin(src, valid, n, K, op);
    if (attention) {
      op.zero(att_cross_, sizeof(float) * n * cross_len());
      if (K > 1) op.zero(hist_cross_, sizeof(float) * rows_ * cross_len());
    }
    bahdanau_encode(st_, w_, src_, n, S_, cx);
    if (K == 1) return;
    expand_rows(op, st_.enc_out, (long)S_ * H_, n, K);
    expand_rows(op, st_.enc_kp, (long)S_ * H_, n, K);
    for (float* s : {st_.h, st_.c}) {  // (L, n, Hh) -> (L, n * K, Hh)
      if (!s) continue;
      op.copy(tmp_, s, sizeof(float) * L_ * n * H_);
      for (int l = 0; l < L_; ++l)
        for (int r = 0; r < rows_; ++r)
          op.copy(s + ((long)l * rows_ + r) * H_, tmp_ + ((long)l * n + r / K) * H_, sizeof(float) * H_);
    }
  }

  const float* step(const int* tokens, int rows, int t, int /*pos*/, bool attention,
                    const ops::Ctx& cx) override {
    const int* in = upload_tokens(tokens, rows, cx.op);
    bahdanau_decode_step(logits_, att_step_, w_, st_, in, rows, row_lens(), cx);
    if (attention) {  // rows are sentences when K = 1
      float* dst = (K_ > 1 ? hist_cross_ : att_cross_) + (long)t * S_;
      const size_t row = sizeof(float) * S_;
      cx.op.copy_2d(dst, row * T_, att_step_, row, row, rows);
    }
    return logits_;
  }

  void reorder(const int* parent, int blocks, int K, int /*t*/, bool attention,
               const ops::Ctx& cx) override {
    const int* from = upload_row_map(parent, blocks * K, cx.op);
    for (int l = 0; l < L_; ++l) {
      cx.op.permute_blocks(st_.h + (long)l * rows_ * H_, H_, H_, from, blocks, K, tmp_);
      if (st_.c) cx.op.permute_blocks(st_.c + (long)l * rows_ * H_, H_, H_, from, blocks, K, tmp_);
    }
    if (attention)
      cx.op.permute_blocks(hist_cross_, cross_len(), cross_len(), from, blocks, K, tmp_);
  }

  void keep_rows(const int* keep, int n, int /*steps*/, const ops::Ctx& cx) override {
    // The states (L, rows, Hh) become (L, n, Hh): as rows of Hh floats, row l * n + i is the old
    // row l * rows + keep[i], which is ascending and >= l * n + i, as Ops::keep_rows takes it.
    // Its first n are keep itself, for the encoder's rows.
    for (int l = 0; l < L_; ++l)
      for (int i = 0; i < n; ++i) kept_host_[(long)l * n + i] = l * rows_ + keep[i];
    cx.op.upload(kept_, kept_host_, sizeof(int) * (size_t)L_ * n);
    const long row = (long)S_ * H_;
    cx.op.keep_rows(st_.enc_out, row, row, kept_, n);
    cx.op.keep_rows(st_.enc_kp, row, row, kept_, n);
    for (float* s : {st_.h, st_.c})
      if (s) cx.op.keep_rows(s, H_, H_, kept_, L_ * n);
    keep_row_lens(keep, n, cx.op);
  }

  void keep_attention(int b, int row, const ops::Ctx& cx) override {
    cx.op.copy(att_cross_ + b * cross_len(), hist_cross_ + row * cross_len(), sizeof(float) * cross_len());
  }

  AttentionSlot attention(int b) const override {
    return {nullptr, nullptr, att_cross_ + b * cross_len(), 0, 0, cross_len()};
  }

 private:
  long cross_len() const { return (long)T_ * S_; }

  void mirror(const ops::Ops& op) {
    device_ = DeviceWeights(*m_.store, op);
    w_ = m_.bind(device_.store());
  }

  const BahdanauModel& m_;
  const BahdanauConfig& c_;
  BahdanauWeights w_;  // the model's, or their copy in op memory
  DeviceWeights device_;  // on a device: the weights' copy
  int L_ = 0, H_ = 0, V_ = 0;

  BahdanauState st_;               // enc_out, enc_kp (R, S, Hh); h, c (L, R, Hh)
  float* logits_ = nullptr;        // (R, V)
  float* att_step_ = nullptr;      // (R, S) this step's weights
  float* att_cross_ = nullptr;     // (B, T, S)
  float* hist_cross_ = nullptr;    // (R, T, S) K > 1
  float* tmp_ = nullptr;
  int* kept_host_ = nullptr;       // (L, R) keep_rows' rows of the states
  int* kept_ = nullptr;            // (L, R) the same in op memory
};

}  // namespace

std::unique_ptr<Seq2SeqDriver> BahdanauModel::seq2seq_driver(const ops::Ops& op,
                                                     const Limits& lim) const {
  return std::make_unique<BahdanauDriver>(*this, op, lim);
}

}  // namespace attnlite::families
