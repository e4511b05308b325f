// attnlite — the decoder-only language model family (internal; the lab's GPT-style model):
// torch.nn encoder layers under a causal mask over one vocabulary. Blocks:
// src/models/language_model.cpp.
#pragma once
#include <vector>

#include "attnlite/models/language_model.h"
#include "families/family.h"

namespace attnlite::families {

struct LmModel final : FamilyModel {
  models::LanguageModelConfig config;
  models::LanguageModelWeights weights;
  std::vector<float> zeros;  // (D) the bias of bias-free LayerNorms
  // Every weight, by its state_dict() name: the one list of them, for the file and a device
  // (no_bias: D zeros where the op set reads them).
  models::LanguageModelWeights bind(WeightStore& ws, const float* no_bias) const {
    return models::bind_language_model(ws, config, no_bias);
  }

  int num_steps() const override { return config.max_len; }
  int num_layers() const override { return config.num_layers; }
  int num_heads() const override { return config.layer.num_heads; }
  int num_hiddens() const override { return config.layer.d_model; }
  int max_target_steps() const override { return config.max_len; }
  AttentionMaps maps() const override { return {true, true}; }
  std::string describe() const override {
    return "language model · " + std::to_string(config.num_layers) + " layers · " + std::to_string(config.layer.num_heads) + " heads";
  }
  std::unique_ptr<drivers::TextDriver> text_driver(const ops::Ops& op) const override;  // driver.cpp
};

}  // namespace attnlite::families
