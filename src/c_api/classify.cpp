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

void al_classifier_limits_default(al_classifier_limits* l) {
  if (!l) return;
  const ClassifyLimits d;
  l->max_batch = d.max_batch;
  l->device = AL_DEVICE_CPU;
  l->precision = AL_PRECISION_FP32;
}

}  // extern "C"

namespace {
// al_classifier_new_with and al_classifier_new; who: the name in the messages.
al_classifier* make_classifier(const al_model* model, const al_classifier_limits* limits, al_error** err,
                               const char* who) {
  return construct<al_classifier>(err, [&] {
    if (!model) throw Error(std::string(who) + ": model is NULL");
    al_classifier_limits l;
    al_classifier_limits_default(&l);
    if (limits) l = *limits;
    ClassifyLimits lim;
    lim.max_batch = l.max_batch;
    lim.device = device_of(l.device);
    lim.precision = precision_of(l.precision);
    auto c = std::make_unique<al_classifier>();
    c->model = model->model;
    c->cls = std::make_unique<Classifier>(model->model, lim);
    return c.release();
  });
}
}  // namespace

extern "C" {

al_classifier* al_classifier_new_with(const al_model* model, const al_classifier_limits* limits,
                                      al_error** err) {
  return make_classifier(model, limits, err, "al_classifier_new_with");
}

al_classifier* al_classifier_new(const al_model* model, int device, al_error** err) {
  al_classifier_limits l;
  al_classifier_limits_default(&l);
  l.device = device;
  return make_classifier(model, &l, err, "al_classifier_new");
}

void al_classifier_free(al_classifier* c) { delete c; }
const char* al_classifier_error(const al_classifier* c) { return c ? c->error.c_str() : ""; }
int al_classifier_error_index(const al_classifier* c) { return c ? c->error_index : -1; }
int al_classifier_image_size(const al_classifier* c) { return c ? c->cls->image_size() : 0; }
int al_classifier_channels(const al_classifier* c) { return c ? c->cls->channels() : 0; }
int al_classifier_num_classes(const al_classifier* c) { return c ? c->cls->num_classes() : 0; }
int al_classifier_tokens(const al_classifier* c) { return c ? c->cls->tokens() : 0; }
const char* al_classifier_label(const al_classifier* c, int k) {
  if (!c || k < 0 || k >= c->cls->num_classes()) return "";
  return c->model->labels()[(size_t)k].c_str();
}

}  // extern "C"

namespace {
// al_classify and al_classify_batch; null: the message for images == NULL.
al_status classify_images(al_classifier* c, const float* images, int n, int attention, const char* null) {
  if (!c) return AL_ERR_ARGUMENT;
  c->count = 0;
  c->error_index = -1;
  if (!images) {
    c->error = null;
    return AL_ERR_ARGUMENT;
  }
  return guard(c->error, [&] {
    try {
      c->cls->classify(images, n, attention != 0);
    } catch (const ItemError& e) {
      c->error_index = e.index();
      throw;
    }
    c->count = n;
  });
}
}  // namespace

extern "C" {

al_status al_classify_batch(al_classifier* c, const float* images, int n, int attention) {
  return classify_images(c, images, n, attention, "al_classify_batch: images is NULL");
}

al_status al_classify(al_classifier* c, const float* image, int attention) {
  return classify_images(c, image, 1, attention, "al_classify: image is NULL");
}

int al_classification_count(const al_classifier* c) { return c ? c->count : 0; }

}  // extern "C"

namespace {
const Classification* cls_result(const al_classifier* c, int i) {
  return c && i >= 0 && i < c->count ? &c->cls->result(i) : nullptr;
}
}  // namespace

extern "C" {

int al_classification_label_at(const al_classifier* c, int i) {
  auto r = cls_result(c, i);
  return r ? r->label : -1;
}
float al_classification_prob_at(const al_classifier* c, int i) {
  auto r = cls_result(c, i);
  return r ? r->prob : 0.f;
}
const float* al_classification_probs_at(const al_classifier* c, int i) {
  auto r = cls_result(c, i);
  return r ? r->probs : nullptr;
}
const float* al_classification_attention_at(const al_classifier* c, int i, int layer) {
  auto r = cls_result(c, i);
  if (!r || !r->attn || layer < 0 || layer >= r->layers) return nullptr;
  return r->attn + layer * r->layer_stride;
}
}  // extern "C"

namespace {
// al_classification_rollout_at and al_classification_rollout; who: the name in the messages.
al_status rollout_of(al_classifier* c, int i, float* out, const char* who) {
  if (!c || !out) return AL_ERR_ARGUMENT;
  if (i < 0 || i >= c->count) {
    c->error = std::string(who) + (c->count ? ": image " + std::to_string(i) + " is outside [0, " +
                                                  std::to_string(c->count) + ")"
                                            : ": nothing was classified");
    return AL_ERR_ARGUMENT;
  }
  return guard(c->error, [&] { c->cls->rollout(i, out); });
}
}  // namespace

extern "C" {

al_status al_classification_rollout_at(al_classifier* c, int i, float* out) {
  return rollout_of(c, i, out, "al_classification_rollout_at");
}

int al_classification_label(const al_classifier* c) { return al_classification_label_at(c, 0); }
float al_classification_prob(const al_classifier* c) { return al_classification_prob_at(c, 0); }
const float* al_classification_probs(const al_classifier* c) { return al_classification_probs_at(c, 0); }
int al_classification_layers(const al_classifier* c) { auto r = cls_result(c, 0); return r ? r->layers : 0; }
int al_classification_heads(const al_classifier* c) { auto r = cls_result(c, 0); return r ? r->heads : 0; }
const float* al_classification_attention(const al_classifier* c, int layer) {
  return al_classification_attention_at(c, 0, layer);
}
al_status al_classification_rollout(al_classifier* c, float* out) {
  return rollout_of(c, 0, out, "al_classification_rollout");
}

}  // extern "C"
