// libFuzzer target: arbitrary bytes as a model file. SafeTensors::parse and Model::from_bytes
// must either accept the bytes or throw attnlite::Error; anything else (a crash, a sanitizer
// report, another exception type, a leak) is a finding. A file that loads as a model is also
// run through a Translator (a language model: a Generator) once, so hostile-but-valid weights
// reach the kernels.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/safetensors.h"
#include "attnlite/translate.h"

using namespace attnlite;

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_loader: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace {

void walk_tensors(const SafeTensors& st) {
  for (const auto& t : st.tensors()) {
    FUZZ_CHECK(st.find(t.name) == &t || st.find(t.name) != nullptr);
    FUZZ_CHECK(t.nbytes == (size_t)t.numel * dtype_size(t.dtype));
    const bool half = t.dtype == DType::F16 || t.dtype == DType::BF16;  // no F32 conversion
    const bool integer = t.dtype == DType::I64 || t.dtype == DType::I32;
    try {
      std::vector<float> v = st.f32(t.name);
      FUZZ_CHECK(!half && (int64_t)v.size() == t.numel);
    } catch (const Error&) {
      FUZZ_CHECK(half);
    }
    try {
      std::vector<int64_t> v = st.i64(t.name);
      FUZZ_CHECK(integer && (int64_t)v.size() == t.numel);
    } catch (const Error&) {
      FUZZ_CHECK(!integer);
    }
  }
  // Accepted tensors never share a byte (an independent, quadratic check of the loader's).
  const auto& ts = st.tensors();
  for (size_t i = 0; i < ts.size(); ++i)
    for (size_t j = i + 1; j < ts.size() && j < 256; ++j)
      FUZZ_CHECK(!ts[i].nbytes || !ts[j].nbytes || ts[i].offset + ts[i].nbytes <= ts[j].offset ||
                 ts[j].offset + ts[j].nbytes <= ts[i].offset);
  for (const auto& [k, v] : st.metadata()) FUZZ_CHECK(st.meta(k) == v);
}

void run_lm(const std::shared_ptr<const Model>& m) {
  Generator gen(m);
  for (bool sample : {false, true}) {
    GenerateOptions o;
    o.sample = sample;
    o.top_k = sample ? 3 : 0;
    o.top_p = sample ? 0.9f : 1.f;
    const Generation& g = gen.generate("go", o);
    FUZZ_CHECK(g.done && g.num_tokens >= 2 && g.num_tokens <= gen.context() + 1);
    FUZZ_CHECK(g.positions >= 1 && g.positions <= gen.context());
    for (int k = 0; k < g.num_tokens; ++k)
      FUZZ_CHECK(g.tokens[k] >= 0 && g.tokens[k] < m->tgt_vocab().size());
    for (int k = 0; k < g.num_generated; ++k)
      FUZZ_CHECK(!(g.probs[k] < 0.0f) && !(g.probs[k] > 1.0f));
  }
  Perplexity p;
  gen.score("go home .", p);
  FUZZ_CHECK(p.sentences + p.skipped == 1);
}

void run_vit(const std::shared_ptr<const Model>& m) {
  Classifier cls(m);
  const int n = cls.channels() * cls.image_size() * cls.image_size();
  std::vector<float> image((size_t)n);
  for (int i = 0; i < n; ++i) image[(size_t)i] = (float)(i % 17);
  try {
    cls.classify(image.data(), 1, true);
  } catch (const Error& e) {
    // Finite but huge weights can overflow inside the model: the classifier must refuse that
    // with its clear error (the translator instead hands out NaN probabilities, checked below).
    FUZZ_CHECK(std::strstr(e.what(), "activations overflowed") != nullptr);
    return;
  }
  const Classification& r = cls.result(0);
  FUZZ_CHECK(r.label >= 0 && r.label < cls.num_classes());
  std::vector<float> roll((size_t)cls.tokens() * cls.tokens());
  cls.rollout(0, roll.data());
}

void run_model(const std::shared_ptr<const Model>& m) {
  FUZZ_CHECK(m->num_steps() >= 1 && m->num_layers() >= 1 && m->num_heads() >= 1);
  if (m->task() == Task::Generate) return run_lm(m);
  if (m->task() == Task::Classify) return run_vit(m);
  Translator tr(m);
  for (bool compat : {false, true}) {
    DecodeOptions o;
    o.d2l_compat = compat;
    const Translation& r = tr.translate("go . i'm home", o);
    FUZZ_CHECK(r.num_tokens >= 0 && r.num_tokens <= r.ld && r.steps <= r.ld);
    FUZZ_CHECK(r.src_valid >= 1 && r.src_valid <= r.S);
    for (int k = 0; k < r.num_tokens; ++k) {
      FUZZ_CHECK(r.tokens[k] >= 0 && r.tokens[k] < m->tgt_vocab().size());
      FUZZ_CHECK(!(r.probs[k] < 0.0f) && !(r.probs[k] > 1.0f));  // NaN passes: weights may overflow
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    SafeTensors st = SafeTensors::parse(data, size);
    walk_tensors(st);
  } catch (const Error&) {
  }
  std::shared_ptr<const Model> m;
  try {
    m = Model::from_bytes(data, size);
  } catch (const Error&) {
    return 0;
  }
  try {
    run_model(m);
  } catch (const Error& e) {
    // A model that loads must translate: any error here is a finding.
    std::fprintf(stderr, "fuzz_loader: a loaded model failed to translate: %s\n", e.what());
    std::abort();
  }
  return 0;
}
