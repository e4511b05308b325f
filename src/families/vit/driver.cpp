// The Vision Transformer as a driver: one forward pass over a batch of images, its logits and
// attention weights in op memory.
//
// Legend: B images, C channels, S side, T tokens, NH heads, L layers, K classes.
#include "drivers/op_memory.h"
#include "families/vit/vit.h"

namespace attnlite::families {

using namespace attnlite::models;  // the blocks
using drivers::DeviceWeights;

namespace {

class VisionTransformerDriver final : public drivers::ImageDriver {
 public:
  VisionTransformerDriver(const VisionTransformerModel& m, const ops::Ops& op, int max_batch)
      : op_(op), m_(m), c_(m.config), w_(m.weights) {
    B_ = max_batch;
    L_ = c_.depth;
    NH_ = c_.layer.num_heads;
    T_ = c_.tokens();
    K_ = c_.num_classes;
  }
  void carve(Arena& mem) override;
  const float* forward(const float* images, int n, bool attention, const ops::Ctx& cx) override;
  const float* attention() const override { return attn_; }
  long attention_len() const override { return (long)L_ * B_ * NH_ * T_ * T_; }
  long image_floats() const override { return (long)c_.in_channels * c_.image_size * c_.image_size; }
  int image_size() const override { return c_.image_size; }
  int channels() const override { return c_.in_channels; }

 private:
  void mirror(const ops::Ops& op);
  const ops::Ops& op_;
  const VisionTransformerModel& m_;
  const models::VisionTransformerConfig& c_;
  models::VisionTransformerWeights w_;  // the model's, or their copy in op memory
  DeviceWeights device_;  // on a device: the weights' copy
  std::unique_ptr<ops::Recording> graphs_;  // a device's recorded forward passes
  int B_ = 1, L_ = 0, NH_ = 1, T_ = 0, K_ = 0;
  float* images_ = nullptr;  // (B, C, S, S)
  float* logits_ = nullptr;  // (B, K)
  float* attn_ = nullptr;    // (L, B, NH, T, T)
  static constexpr int kMaxLayers = 64;
  ops::AttnOut attn_out_[kMaxLayers];
};

void VisionTransformerDriver::carve(Arena& mem) {
  if constexpr (drivers::kDeviceOpSets)
    if (!mem.counting() && !op_.host_memory() && device_.empty()) mirror(op_);
  images_ = mem.floats((size_t)B_ * image_floats());
  logits_ = mem.floats((size_t)B_ * K_);
  attn_ = mem.floats((size_t)attention_len());
  for (int l = 0; l < L_; ++l)
    attn_out_[l] = {attn_ + (long)l * B_ * NH_ * T_ * T_, (long)NH_ * T_ * T_, (long)T_ * T_, T_};
}

const float* VisionTransformerDriver::forward(const float* images, int n, bool attention,
                                              const ops::Ctx& cx) {
  cx.op.upload(images_, images, sizeof(float) * (size_t)n * image_floats());
  // The pass's launches depend on these host values alone (the buffers are the session's), so
  // a device op set may replay them (ops::Ops::replay: CUDA graphs), at every full batch.
  auto run = [&] {
    vision_transformer_forward(logits_, attention ? attn_out_ : nullptr, w_, c_, images_, n, cx);
  };
  using Run = decltype(run);
  const ops::StepKey key{{n, attention ? 1 : 0, (long)cx.scratch.used()}};
  cx.op.replay(graphs_, key, n, ops::Reuse::Pass, [](void* f) { (*static_cast<Run*>(f))(); }, &run);
  return logits_;
}

void VisionTransformerDriver::mirror(const ops::Ops& op) {
  device_ = DeviceWeights(*m_.store, op, {{m_.zeros.data(), m_.zeros.size()}});
  w_ = m_.bind(device_.store(), device_.extra(0));
}

}  // namespace

std::unique_ptr<drivers::ImageDriver> VisionTransformerModel::image_driver(const ops::Ops& op,
                                                                           int max_batch) const {
  return std::make_unique<VisionTransformerDriver>(*this, op, max_batch);
}

}  // namespace attnlite::families
