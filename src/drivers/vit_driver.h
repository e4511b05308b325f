// attnlite — the Vision Transformer driver (internal): a batch's images, logits and attention
// weights in op memory. Blocks: src/models/vision_transformer.cpp.
//
// Legend: B images, C channels, S side, T tokens, NH heads, L layers, K classes.
#pragma once
#include "attnlite/arena.h"
#include "attnlite/model.h"
#include "attnlite/models/vision_transformer.h"
#include "drivers/op_memory.h"

namespace attnlite::drivers {

class VisionTransformerDriver {
 public:
  VisionTransformerDriver(const Model& m, const ops::Ops& op, int max_batch);

  void carve(Arena& mem);
  // images (host, n × C × S × S) -> logits (n, K) in op memory; attention: layer l's
  // weights of image b at attention() + (l * B + b) * NH * T * T.
  const float* forward(const float* images, int n, bool attention, const ops::Ctx& cx);
  const float* attention() const { return attn_; }
  long attention_len() const { return (long)L_ * B_ * NH_ * T_ * T_; }
  long image_floats() const { return (long)c_.in_channels * c_.image_size * c_.image_size; }

 private:
  void mirror(const ops::Ops& op);

  const ops::Ops& op_;
  const models::VisionTransformerConfig& c_;
  models::VisionTransformerWeights w_;  // the model's, or their copy in op memory
  OpBlock weights_;
  int B_ = 1, L_ = 0, NH_ = 1, T_ = 0, K_ = 0;
  float* images_ = nullptr;  // (B, C, S, S)
  float* logits_ = nullptr;  // (B, K)
  float* attn_ = nullptr;    // (L, B, NH, T, T)
  static constexpr int kMaxLayers = 64;
  ops::AttnOut attn_out_[kMaxLayers];
};

}  // namespace attnlite::drivers
