// attnlite — the C API: images and the Vision Transformer.
#include <string>

#include "c_api/handles.h"
#include "attnlite/image_input.h"

using namespace attnlite;
using namespace attnlite::c_api;

extern "C" {

// ---- images and the Vision Transformer --------------------------------------------------
al_status al_digit_from_file_bytes(const uint8_t* bytes, size_t size, float* out, al_error** err) {
  if (err) *err = nullptr;
  if (!out) return AL_ERR_ARGUMENT;
  return guard(err, [&] { digit_8x8(decode_image(bytes, size), out); });
}

al_status al_digit_from_rgba(const uint8_t* rgba, int width, int height, float* out, al_error** err) {
  if (err) *err = nullptr;
  if (!out) return AL_ERR_ARGUMENT;
  return guard(err, [&] {
    if (!rgba || width <= 0 || height <= 0 || width > kMaxImageSide || height > kMaxImageSide)
      throw Error("al_digit_from_rgba: no pixels, or more than " + std::to_string(kMaxImageSide) + " per side");
    GreyImage g;
    g.width = width;
    g.height = height;
    g.pixels.resize((size_t)width * height);
    for (size_t i = 0; i < g.pixels.size(); ++i) {
      const uint8_t* p = rgba + i * 4;
      const float a = p[3] / 255.f;
      g.pixels[i] = (0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]) / 255.f * a + (1.f - a);
    }
    digit_8x8(g, out);
  });
}

al_classifier* al_classifier_new(const al_model* model, int device, al_error** err) {
  return construct<al_classifier>(err, [&] {
    if (!model) throw Error("al_classifier_new: model is NULL");
    if (device != AL_DEVICE_CPU && device != AL_DEVICE_CUDA)
      throw Error("al_classifier_new: unknown device " + std::to_string(device));
    ClassifyLimits lim;
    lim.device = device == AL_DEVICE_CUDA ? Device::CUDA : Device::CPU;
    auto c = std::make_unique<al_classifier>();
    c->model = model->model;
    c->cls = std::make_unique<Classifier>(model->model, lim);
    return c.release();
  });
}

void al_classifier_free(al_classifier* c) { delete c; }
const char* al_classifier_error(const al_classifier* c) { return c ? c->error.c_str() : ""; }
int al_classifier_image_size(const al_classifier* c) { return c ? c->cls->image_size() : 0; }
int al_classifier_channels(const al_classifier* c) { return c ? c->cls->channels() : 0; }
int al_classifier_num_classes(const al_classifier* c) { return c ? c->cls->num_classes() : 0; }
int al_classifier_tokens(const al_classifier* c) { return c ? c->cls->tokens() : 0; }
const char* al_classifier_label(const al_classifier* c, int k) {
  if (!c || k < 0 || k >= c->cls->num_classes()) return "";
  return c->model->labels()[(size_t)k].c_str();
}

al_status al_classify(al_classifier* c, const float* image, int attention) {
  if (!c) return AL_ERR_ARGUMENT;
  c->has = false;
  if (!image) {
    c->error = "al_classify: image is NULL";
    return AL_ERR_ARGUMENT;
  }
  return guard(c->error, [&] {
    c->cls->classify(image, 1, attention != 0);
    c->has = true;
  });
}

}  // extern "C"

namespace {
const Classification* cls_result(const al_classifier* c) { return c && c->has ? &c->cls->result(0) : nullptr; }
}  // namespace

extern "C" {

int al_classification_label(const al_classifier* c) { auto r = cls_result(c); return r ? r->label : -1; }
float al_classification_prob(const al_classifier* c) { auto r = cls_result(c); return r ? r->prob : 0.f; }
const float* al_classification_probs(const al_classifier* c) { auto r = cls_result(c); return r ? r->probs : nullptr; }
int al_classification_layers(const al_classifier* c) { auto r = cls_result(c); return r ? r->layers : 0; }
int al_classification_heads(const al_classifier* c) { auto r = cls_result(c); return r ? r->heads : 0; }
const float* al_classification_attention(const al_classifier* c, int layer) {
  auto r = cls_result(c);
  if (!r || !r->attn || layer < 0 || layer >= r->layers) return nullptr;
  return r->attn + layer * r->layer_stride;
}
al_status al_classification_rollout(al_classifier* c, float* out) {
  if (!c || !out) return AL_ERR_ARGUMENT;
  if (!c->has) {
    c->error = "al_classification_rollout: nothing was classified";
    return AL_ERR_ARGUMENT;
  }
  return guard(c->error, [&] { c->cls->rollout(0, out); });
}

}  // extern "C"

