#include "attnlite/models/vision_transformer.h"

#include <algorithm>
#include <string>

namespace attnlite::models {

VisionTransformerWeights bind_vision_transformer(WeightStore& ws, const VisionTransformerConfig& c,
                                                 const float* zeros) {
  VisionTransformerWeights w;
  const int D = c.layer.d_model, C = c.in_channels, p = c.patch_size, T = c.tokens();
  const std::string conv = "patch_embedding.projection.0.weight";
  w.patch.out = D;
  w.patch.in = C * p * p;
  if (ws.dtype(conv) == DType::I8) {  // int8 per output channel, like any linear layer
    w.patch.q = ws.get_i8(conv, {D, C, p, p});
    w.patch.scale = ws.get(conv + "_scale", {D});
    w.patch.expand = ws.expansion();
  } else {
    w.patch.w = ws.get(conv, {D, C, p, p});
  }
  w.patch.b = ws.get("patch_embedding.projection.0.bias", {D});
  w.cls_token = ws.get("cls_token", {1, 1, D});
  w.pos_embedding = ws.get("pos_embedding", {1, T, D});
  for (int l = 0; l < c.depth; ++l)
    w.layers.push_back(bind_encoder_layer(ws, "transformer_encoder.layers." + std::to_string(l) + ".",
                                          c.layer, zeros));
  w.head_norm.gamma = ws.get("mlp_head.0.weight", {D});
  w.head_norm.beta = ws.get("mlp_head.0.bias", {D});
  w.head_norm.n = D;
  w.head_norm.eps = c.layer.layer_norm_eps;
  w.head = bind_linear(ws, "mlp_head.1", D, c.num_classes, true);
  return w;
}

void vision_transformer_forward(float* logits, const AttnOut* attn,
                                const VisionTransformerWeights& w,
                                const VisionTransformerConfig& c, const float* images, int B,
                                const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  const ops::Ops& op = cx.op;
  const int D = c.layer.d_model, N = c.num_patches(), T = N + 1, S = c.image_size;
  const size_t row = sizeof(float) * D;
  float* patches = cx.scratch.floats((size_t)B * N * w.patch.in);
  float* emb = cx.scratch.floats((size_t)B * N * D);
  float* x = cx.scratch.floats((size_t)B * T * D);
  float* cls = cx.scratch.floats((size_t)B * D);
  // patch embedding: Conv2d(kernel = stride = p) as one linear layer over the patches
  op.patches(patches, images, B, c.in_channels, S, S, c.patch_size, c.input_scale);
  op.linear(emb, patches, w.patch, B * N);
  // x = cat(cls_token, patches) + pos_embedding
  op.copy_2d(x + D, row * T, emb, row * N, row * N, B);
  // the class token into image 0's row 0, then into the next 1, 2, 4... images' from the
  // images before them: log2(B) copies, not B
  op.copy(x, w.cls_token, row);
  for (int done = 1; done < B; done *= 2)
    op.copy_2d(x + (long)done * T * D, row * T, x, row * T, row, std::min(done, B - done));
  op.add_positions(x, w.pos_embedding, B, T, D, nullptr);
  for (int l = 0; l < c.depth; ++l)
    encoder_layer(x, attn ? attn[l] : AttnOut{}, w.layers[l], B, T, 0, nullptr, /*causal=*/false, cx);
  // mlp_head(x[:, 0])
  op.copy_2d(cls, row, x, row * T, row, B);
  op.add_layer_norm(emb, cls, nullptr, w.head_norm.gamma, w.head_norm.beta, B, D, w.head_norm.eps,
                    cx.scratch);
  op.linear(logits, emb, w.head, B);
}

}  // namespace attnlite::models
