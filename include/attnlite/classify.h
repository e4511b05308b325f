// attnlite — image classification sessions with a Vision Transformer (kind "vit":
// models/vision_transformer.h). A Classifier owns (or is handed) one aligned block sized by
// required_bytes(model, limits); after construction nothing allocates. Results are views into
// that block, valid until the next call.
//
// Threads: a Classifier and the results it hands out belong to one thread at a time;
// several Classifiers (and other sessions) may run at once over one shared Model, as for
// translate.h's Translator.
//
// Input: images (n, C, S, S) of pixel values as the model's training data had them (the
// digits model: 0..16, see image_input.h's digit_8x8); the model multiplies them by its
// config's input_scale.
//
// Attention rollout (Abnar & Zuidema, 2020), rollout(): per layer l the heads' mean A_l
// (T, T), then Â_l = (A_l + I) with each row divided by its sum, and R = Â_L · ... · Â_1 (float64
// products). Row 0 of R is the CLS token's attention over the tokens (0 = CLS, 1.. = the
// patches in row-major order).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "attnlite/model.h"
#include "attnlite/device.h"

namespace attnlite {

struct ClassifyLimits {
  int max_batch = 1;
  Device device = Device::CPU;
  Precision precision = Precision::F32;  // BF16 (CUDA): linear layers' matrices in bfloat16
};

// One image's result (views).
struct Classification {
  int label = 0;                  // the most likely class (the lowest index on ties)
  float prob = 0;                 // its softmax probability
  const float* probs = nullptr;   // (K) softmax probabilities
  const float* logits = nullptr;  // (K)
  // Self-attention of every layer and head over the T = N + 1 tokens (0 = CLS, then the
  // patches row-major): attn_at(l, h, q, k); null when not recorded.
  int layers = 0, heads = 0, tokens = 0;
  const float* attn = nullptr;
  long layer_stride = 0;          // floats between layers (the batch's other images between)
  float attn_at(int l, int h, int q, int k) const {
    return attn[l * layer_stride + ((long)h * tokens + q) * tokens + k];
  }
};

class Classifier {
 public:
  explicit Classifier(std::shared_ptr<const Model> model, const ClassifyLimits& limits = {},
                      void* block = nullptr, size_t block_bytes = 0);
  ~Classifier();
  Classifier(const Classifier&) = delete;
  Classifier& operator=(const Classifier&) = delete;

  static size_t required_bytes(const Model& model, const ClassifyLimits& limits);

  // n <= max_batch images (n, C, S, S), host memory. Throws attnlite::Error on n out of
  // range or a pixel that is not finite.
  void classify(const float* images, int n, bool attention = true);
  const Classification& result(int i) const;
  // The rollout of image i of the last call (attention recorded) into out (T, T).
  void rollout(int i, float* out) const;

  const Model& model() const { return *model_; }
  int image_size() const;
  int channels() const;
  int num_classes() const;
  int tokens() const;  // N + 1
  size_t workspace_bytes() const;

 private:
  struct Impl;
  std::shared_ptr<const Model> model_;
  ClassifyLimits limits_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlite
