// The lab's Vision Transformer (exercise 10.7.6: classify images with a Transformer and no
// CNN), at inference, written once against ops::Ops:
//
//   PatchEmbedding: Conv2d(C, D, kernel_size=p, stride=p), then 'b c h w -> b (h w) c'
//     (here: the patches op, then one linear layer with the conv weight read as (D, C·p·p));
//   x = cat(cls_token, patches) + pos_embedding                         (B, N + 1, D)
//   x = nn.TransformerEncoder(nn.TransformerEncoderLayer(..., batch_first=True)) (x)
//   logits = mlp_head(x[:, 0]),  mlp_head = Sequential(LayerNorm(D), Linear(D, classes))
//
// File (kind "vit"), PyTorch's state_dict() names: patch_embedding.projection.0.weight
// (D, C, p, p) and .bias, cls_token (1, 1, D), pos_embedding (1, N + 1, D),
// transformer_encoder.layers.K.* (models/transformer_encoder_layer.h), mlp_head.0.weight/bias
// (LayerNorm), mlp_head.1.weight/bias (Linear). attnlite.config: image_size, patch_size,
// in_channels, num_classes, embed_dim, depth, num_heads, dim_feedforward, activation,
// norm_first, layer_norm_eps, input_scale (the model reads pixel values times it; `invert`,
// when present, must be false);
// attnlite.labels: the class names.
//
// Legend: B images, C channels, S image side, p patch side, N = (S/p)² patches, T = N + 1
// tokens, D embed_dim, NH heads, L depth, K classes.
#pragma once
#include <vector>

#include "attnlite/models/transformer_encoder_layer.h"

namespace attnlite::models {

using ops::AttnOut;

struct VisionTransformerConfig {
  int image_size = 0, patch_size = 0, in_channels = 1, num_classes = 0, depth = 0;
  EncoderLayerConfig layer;
  float input_scale = 1.f;
  int num_patches() const { return (image_size / patch_size) * (image_size / patch_size); }
  int tokens() const { return num_patches() + 1; }
};

struct VisionTransformerWeights {
  Linear patch;                  // (D, C·p·p): the Conv2d weight and bias
  const float* cls_token = nullptr;      // (D)
  const float* pos_embedding = nullptr;  // (T, D)
  std::vector<EncoderLayerWeights> layers;
  LayerNormWeights head_norm;          // mlp_head.0
  Linear head;                   // mlp_head.1 (K, D)
};
// zeros (D floats) stand in for absent LayerNorm biases (bias false).
VisionTransformerWeights bind_vision_transformer(WeightStore& ws, const VisionTransformerConfig& c,
                                                 const float* zeros);

// logits (B, K) from images (B, C, S, S) in op memory (pixel values; times input_scale).
// attn[l] receives layer l's (B, NH, T, T) weights through its strides (attn may be nullptr).
void vision_transformer_forward(float* logits, const AttnOut* attn,
                                const VisionTransformerWeights& w,
                                const VisionTransformerConfig& c, const float* images, int B,
                                const ops::Ctx& cx);

}  // namespace attnlite::models
