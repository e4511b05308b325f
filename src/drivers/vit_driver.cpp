// The Vision Transformer as a driver: one forward pass over a batch of images.
#include "drivers/vit_driver.h"

#include "model/model_impl.h"

namespace attnlite::drivers {

using namespace attnlite::models;  // the model families' blocks

VisionTransformerDriver::VisionTransformerDriver(const Model& m, const ops::Ops& op, int max_batch)
    : op_(op), c_(m.impl().vit), w_(m.impl().vit_weights) {
  B_ = max_batch;
  L_ = c_.depth;
  NH_ = c_.layer.num_heads;
  T_ = c_.tokens();
  K_ = c_.num_classes;
}

void VisionTransformerDriver::carve(Arena& mem) {
  if constexpr (kDeviceOpSets)
    if (!mem.counting() && !op_.host_memory() && !weights_.data()) mirror(op_);
  images_ = mem.floats((size_t)B_ * image_floats());
  logits_ = mem.floats((size_t)B_ * K_);
  attn_ = mem.floats((size_t)attention_len());
  for (int l = 0; l < L_; ++l)
    attn_out_[l] = {attn_ + (long)l * B_ * NH_ * T_ * T_, (long)NH_ * T_ * T_, (long)T_ * T_, T_};
}

const float* VisionTransformerDriver::forward(const float* images, int n, bool attention,
                                              const ops::Ctx& cx) {
  cx.op.upload(images_, images, sizeof(float) * (size_t)n * image_floats());
  vision_transformer_forward(logits_, attention ? attn_out_ : nullptr, w_, c_, images_, n, cx);
  return logits_;
}

void VisionTransformerDriver::mirror(const ops::Ops& op) {
  WeightMirror m;
  const int D = c_.layer.d_model;
  m.add(w_.patch);
  m.add(w_.cls_token, (size_t)D);
  m.add(w_.pos_embedding, (size_t)T_ * D);
  for (auto& e : w_.layers) {
    for (Linear* l : {&e.W_q, &e.W_k, &e.W_v, &e.out_proj, &e.linear1, &e.linear2}) m.add(*l);
    for (LayerNormWeights* n : {&e.norm1, &e.norm2}) {
      m.add(n->gamma, (size_t)n->n);
      m.add(n->beta, (size_t)n->n);
    }
  }
  m.add(w_.head_norm.gamma, (size_t)D);
  m.add(w_.head_norm.beta, (size_t)D);
  m.add(w_.head);
  weights_ = m.upload(op);
}

}  // namespace attnlite::drivers
