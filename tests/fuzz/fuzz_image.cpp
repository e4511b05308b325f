// libFuzzer target: arbitrary bytes as an image file for the digits Vision Transformer.
// decode_image must decode or throw attnlite::Error (never allocate past its limits, never
// crash); a decoded image is preprocessed (digit_8x8: 64 values in 0..16) and classified (a
// label in range, probabilities summing to 1, attention rows summing to 1).
//
// Model: $ATTNLITE_FUZZ_MODEL, else vit-digits under ATTNLITE_FUZZ_MODELS_DIR.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/error.h"
#include "attnlite/image_input.h"
#include "attnlite/model.h"

using namespace attnlite;

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_image: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace {
Classifier& classifier() {
  static std::unique_ptr<Classifier> c = [] {
    const char* env = std::getenv("ATTNLITE_FUZZ_MODEL");
    const std::string path = env ? env : std::string(ATTNLITE_FUZZ_MODELS_DIR) + "/vit-digits.safetensors";
    return std::make_unique<Classifier>(Model::load(path));
  }();
  return *c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Classifier& cls = classifier();
  GreyImage g;
  try {
    g = decode_image(data, size);
  } catch (const Error&) {
    return 0;
  }
  FUZZ_CHECK(g.width >= 1 && g.height >= 1 && g.width <= kMaxImageSide && g.height <= kMaxImageSide);
  FUZZ_CHECK(g.pixels.size() == (size_t)g.width * g.height);
  for (float v : g.pixels) FUZZ_CHECK(v >= 0.f && v <= 1.f);
  float px[64];
  digit_8x8(g, px);
  for (float v : px) FUZZ_CHECK(v >= 0.f && v <= 16.0001f);
  if (cls.channels() != 1 || cls.image_size() != 8) return 0;
  cls.classify(px, 1, true);
  const Classification& r = cls.result(0);
  FUZZ_CHECK(r.label >= 0 && r.label < cls.num_classes());
  double s = 0;
  for (int k = 0; k < cls.num_classes(); ++k) s += r.probs[k];
  FUZZ_CHECK(std::fabs(s - 1) < 1e-4);
  for (int q = 0; q < r.tokens; ++q) {
    double row = 0;
    for (int k = 0; k < r.tokens; ++k) row += r.attn_at(r.layers - 1, 0, q, k);
    FUZZ_CHECK(std::fabs(row - 1) < 1e-4);
  }
  return 0;
}
