// attnlite — the Transformer family (internal; d2l 10.7, the book's English-French
// translator and the sub-word whole-corpus translators): encoder-decoder blocks of multi-head
// attention, AddNorm and position-wise FFNs. Blocks: src/models/transformer.cpp.
#pragma once
#include "attnlite/models/transformer.h"
#include "families/family.h"

namespace attnlite::families {

struct TransformerModel final : FamilyModel {
  models::TransformerConfig config;
  models::TransformerWeights weights;
  // Every weight, by its state_dict() name: the one list of them, for the file and a device.
  models::TransformerWeights bind(WeightStore& ws) const { return models::bind_transformer(ws, config); }

  int num_steps() const override { return config.num_steps; }
  int num_layers() const override { return config.num_layers; }
  int num_heads() const override { return config.num_heads; }
  int num_hiddens() const override { return config.num_hiddens; }
  int max_target_steps() const override { return config.max_len; }
  AttentionMaps maps() const override { return {true, true}; }
  std::string describe() const override {
    return "Transformer · " + std::to_string(config.num_layers) + " layers · " + std::to_string(config.num_heads) + " heads";
  }
  std::unique_ptr<drivers::Seq2SeqDriver> seq2seq_driver(
      const ops::Ops& op, const drivers::Limits& lim) const override;  // driver.cpp
};

}  // namespace attnlite::families
