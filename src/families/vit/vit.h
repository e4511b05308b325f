// attnlite — the Vision Transformer family (internal; the lab's ViT): torch.nn encoder layers
// over patch embeddings and a class token, classifying images. Blocks:
// src/models/vision_transformer.cpp.
#pragma once
#include <vector>

#include "attnlite/models/vision_transformer.h"
#include "families/family.h"

namespace attnlite::families {

struct VisionTransformerModel final : FamilyModel {
  models::VisionTransformerConfig config;
  models::VisionTransformerWeights weights;
  std::vector<float> zeros;  // (D) the bias of bias-free LayerNorms
  // Every weight, by its state_dict() name: the one list of them, for the file and a device
  // (no_bias: D zeros where the op set reads them).
  models::VisionTransformerWeights bind(WeightStore& ws, const float* no_bias) const {
    return models::bind_vision_transformer(ws, config, no_bias);
  }

  int num_steps() const override { return config.tokens(); }
  int num_layers() const override { return config.depth; }
  int num_heads() const override { return config.layer.num_heads; }
  int num_hiddens() const override { return config.layer.d_model; }
  int max_target_steps() const override { return 0; }
  AttentionMaps maps() const override { return {true, true}; }
  std::string describe() const override {
    return "Vision Transformer · " + std::to_string(config.depth) + " layers · " + std::to_string(config.layer.num_heads) + " heads";
  }
  std::unique_ptr<drivers::ImageDriver> image_driver(const ops::Ops& op,
                                                     int max_batch) const override;  // driver.cpp
};

}  // namespace attnlite::families
