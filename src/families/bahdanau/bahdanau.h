// attnlite — the RNN encoder-decoder with Bahdanau attention (internal; d2l 10.4): a GRU or
// LSTM encoder, a decoder that attends to the encoder's outputs with additive attention at
// every step. Blocks: src/models/seq2seq_bahdanau.cpp.
#pragma once
#include "attnlite/models/seq2seq_bahdanau.h"
#include "families/family.h"

namespace attnlite::families {

struct BahdanauModel final : FamilyModel {
  // The most target steps a session may ask for: the recurrent state has no positional table
  // to bound them, so this is the limit the Transformer's default max_len gives.
  static constexpr int kMaxTargetSteps = 1000;
  models::BahdanauConfig config;
  models::BahdanauWeights weights;
  // Every weight, by its state_dict() name: the one list of them, for the file and a device.
  models::BahdanauWeights bind(WeightStore& ws) const { return models::bind_bahdanau(ws, config); }

  int num_steps() const override { return config.num_steps; }
  int num_layers() const override { return config.num_layers; }
  int num_heads() const override { return 1; }
  int num_hiddens() const override { return config.num_hiddens; }
  int max_target_steps() const override { return kMaxTargetSteps; }
  AttentionMaps maps() const override { return {false, false}; }  // cross-attention, one map
  std::string describe() const override {
    return std::string("Bahdanau ") + (config.cell == ops::Cell::GRU ? "GRU" : "LSTM") + " · additive attention";
  }
  std::unique_ptr<drivers::Seq2SeqDriver> seq2seq_driver(
      const ops::Ops& op, const drivers::Limits& lim) const override;  // driver.cpp
};

}  // namespace attnlite::families
