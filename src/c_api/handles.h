// attnlite — the C API's handles and the wrappers every entry point goes through
// (include/attnlite/c_api.h). Every entry point catches what the C++ side throws; errors live
// in the handle or in an al_error the caller owns, never in process state.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnlite/c_api.h"
#include "attnlite/classify.h"
#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "attnlite/vocab.h"
#include "c_api/errors.h"

// Handles: what each opaque pointer of the C API points at (al_error: errors.h).
struct al_model {
  std::shared_ptr<const attnlite::Model> model;
};

struct al_result {
  const attnlite::Translation* t = nullptr;
  attnlite::NBest nb;
  // NUL-terminated copies of the texts (the Translator's are views), reserved once so that
  // repeated translations reuse the same memory.
  std::string text;
  std::vector<std::string> nbest_text;
};

struct al_translator {
  std::shared_ptr<const attnlite::Model> model;
  std::unique_ptr<attnlite::Translator> tr;
  attnlite::Limits limits;
  std::string error;
  int error_index = -1;  // the sentence the last batch refused (al_translator_error_index)
  int num_results = 0;  // results of the last call; 0 after a failure
  std::vector<al_result> results;
};

struct al_generator {
  std::shared_ptr<const attnlite::Model> model;
  std::unique_ptr<attnlite::Generator> gen;
  std::string error;
  bool has = false;  // a generation is in progress or done
  // NUL-terminated copies of the texts, reserved once.
  std::string text, continuation;
};

struct al_classifier {
  std::shared_ptr<const attnlite::Model> model;
  std::unique_ptr<attnlite::Classifier> cls;
  std::string error;
  int error_index = -1;  // the image the last call refused (al_classifier_error_index)
  int count = 0;  // images of the last call; 0 after a failure
};

// A figure drawn for the C API (figures.cpp): its encoded file and what describes it.
struct al_figure {
  std::vector<uint8_t> data;  // the PNG or SVG file
  std::string format, caption, text;
  int width = 0, height = 0, rows = 0, cols = 0;
};

namespace attnlite::c_api {

// A constructor: returns make(), or NULL with *err set.
template <class T, class F>
T* construct(al_error** err, F&& make) noexcept {
  T* out = nullptr;
  guard(err, [&] { out = make(); });
  return out;
}

// The C API's al_device and al_precision as the C++ side's.
inline Device device_of(int device) {
  if (device != AL_DEVICE_CPU && device != AL_DEVICE_CUDA)
    throw Error("limits: unknown device " + std::to_string(device));
  return device == AL_DEVICE_CUDA ? Device::CUDA : Device::CPU;
}
inline Precision precision_of(int precision) {
  if (precision != AL_PRECISION_FP32 && precision != AL_PRECISION_BF16)
    throw Error("limits: unknown precision " + std::to_string(precision));
  return precision == AL_PRECISION_BF16 ? Precision::BF16 : Precision::F32;
}

// The longest token of a vocabulary, in bytes (at least 1): sizes the text copies.
inline size_t longest_token(const Vocab& v) {
  size_t n = 1;
  for (int i = 0; i < v.size(); ++i) n = std::max(n, v.token(i).size());
  return n;
}

}  // namespace attnlite::c_api
