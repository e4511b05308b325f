// Zero allocations on the inference path: this binary replaces the global operator new and
// counts every call while translations run on a loaded model and a created Translator.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/threads.h"
#include "attnlite/translate.h"

namespace {
std::atomic<long> g_news{0};
std::atomic<bool> g_counting{false};

void* counted(std::size_t n, std::size_t align) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (n + align - 1) / align * align)
                : std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return counted(n, 0); }
void* operator new[](std::size_t n) { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, (std::size_t)a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, (std::size_t)a); }
// Every form is replaced, nothrow and aligned ones included, so that no allocation in this
// binary pairs the runtime's operator new with the free() below: under AddressSanitizer that
// would be an alloc-dealloc mismatch. All memory comes from malloc/aligned_alloc, which ASan
// intercepts, so the asan stage still checks every access and every leak here.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted(n, 0); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted(n, 0); } catch (...) { return nullptr; }
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try { return counted(n, (std::size_t)a); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try { return counted(n, (std::size_t)a); } catch (...) { return nullptr; }
}
// Inlined into a caller (GCC at -O1, the asan stage's level), these look to GCC like free()
// on memory from operator new; here operator new is malloc, so the pair matches.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using namespace attnlite;

namespace {
std::string model_path(const char* name) {
  return std::string(ATTNLITE_MODELS_DIR) + "/" + name + ".safetensors";
}
const std::vector<std::string> kSentences = {
    "go .", "i lost .", "he's calm .", "i'm home .", "Hi.", "I'm tired!",
    "who is this zyzzyva ?", "we won , we're rich .",
    "this sentence is a great deal longer than the ten steps the model was trained on ."};
}  // namespace

TEST_CASE("the allocation counter sees allocations", "[alloc]") {
  g_news = 0;
  g_counting = true;
  auto* v = new std::vector<int>(100);
  g_counting = false;
  delete v;
  REQUIRE(g_news >= 2);
}

TEST_CASE("translate allocates nothing after the Translator is created", "[alloc]") {
  const char* name = GENERATE("transformer-d2l", "bahdanau-d2l");
  const bool compat = GENERATE(false, true);
  const int threads = GENERATE(1, 2);
  INFO(name << (compat ? " d2l_compat" : "") << " threads " << threads);
  set_num_threads(threads);
  auto model = Model::load(model_path(name));
  Limits lim;
  lim.max_batch = 4;
  Translator tr(model, lim);
  DecodeOptions opts;
  opts.d2l_compat = compat;
  tr.translate("warm up .", opts);

  g_news = 0;
  g_counting = true;
  size_t chars = 0;
  for (int rep = 0; rep < 50; ++rep)
    for (const auto& s : kSentences) chars += tr.translate(s, opts).text.size();
  std::string_view batch[4] = {"go .", "i'm home .", "he's calm .", "i lost ."};
  for (int rep = 0; rep < 20; ++rep) tr.translate_batch(batch, 4, opts);
  g_counting = false;
  REQUIRE(chars > 0);
  REQUIRE(g_news == 0);
  // The scratch the session used stayed inside what required_bytes reserved.
  REQUIRE(tr.scratch_peak() <= tr.workspace_bytes());
  set_num_threads(1);
}

TEST_CASE("beam search allocates nothing after the Translator is created", "[alloc]") {
  const char* name = GENERATE("transformer-d2l", "bahdanau-d2l");
  const bool compat = GENERATE(false, true);
  const int threads = GENERATE(1, 2);
  INFO(name << (compat ? " d2l_compat" : "") << " threads " << threads);
  set_num_threads(threads);
  auto model = Model::load(model_path(name));
  Limits lim;
  lim.max_batch = 4;
  lim.max_beam = 4;
  Translator tr(model, lim);
  DecodeOptions opts;
  opts.d2l_compat = compat;
  opts.beam_size = 4;
  opts.length_penalty = 0.75f;
  tr.translate("warm up .", opts);

  g_news = 0;
  g_counting = true;
  size_t chars = 0;
  for (int rep = 0; rep < 20; ++rep)
    for (const auto& s : kSentences) {
      chars += tr.translate(s, opts).text.size();
      for (const auto& h : tr.nbest(0)) chars += h.text.size();
    }
  std::string_view batch[4] = {"go .", "i'm home .", "he's calm .", "i lost ."};
  for (int rep = 0; rep < 10; ++rep) tr.translate_batch(batch, 4, opts);
  opts.beam_size = 2;  // a smaller beam in the same session
  for (int rep = 0; rep < 10; ++rep) tr.translate_batch(batch, 3, opts);
  opts.beam_size = 1;
  for (int rep = 0; rep < 10; ++rep) tr.translate_batch(batch, 4, opts);
  g_counting = false;
  REQUIRE(chars > 0);
  REQUIRE(g_news == 0);
  REQUIRE(tr.scratch_peak() <= tr.workspace_bytes());
  set_num_threads(1);
}

TEST_CASE("a caller-supplied block is used as is", "[alloc]") {
  auto model = Model::load(model_path("transformer-d2l"));
  const size_t need = Translator::required_bytes(*model, Limits{});
  void* block = std::aligned_alloc(64, (need + 63) / 64 * 64);
  {
    Translator tr(model, Limits{}, block, need);
    g_news = 0;
    g_counting = true;
    const auto& r = tr.translate("i'm home .");
    g_counting = false;
    REQUIRE(g_news == 0);
    REQUIRE(r.text.data() >= static_cast<char*>(block));
    REQUIRE(r.text.data() < static_cast<char*>(block) + need);
    REQUIRE_THROWS_AS(Translator(model, Limits{}, block, need - 64), Error);
  }
  std::free(block);
}

TEST_CASE("generation and perplexity allocate nothing after the Generator is created", "[alloc][lm]") {
  const int threads = GENERATE(1, 2);
  set_num_threads(threads);
  auto model = Model::load(model_path("lm-fra"));
  Generator gen(model);
  GenerateOptions greedy, sample;
  sample.sample = true;
  sample.temperature = 0.8f;
  sample.top_k = 40;
  sample.top_p = 0.95f;
  gen.generate("je", greedy);

  g_news = 0;
  g_counting = true;
  size_t chars = 0;
  Perplexity ppl;
  for (int rep = 0; rep < 5; ++rep) {
    chars += gen.generate("je", greedy).text.size();
    sample.seed = (uint64_t)rep;
    chars += gen.generate("il est", sample).text.size();
    const Generation* g = &gen.start("nous allons", sample);
    while (!g->done) g = &gen.step();
    chars += g->continuation.size();
    gen.score("je suis content de te voir .", ppl);
  }
  g_counting = false;
  REQUIRE(chars > 0);
  REQUIRE(ppl.sentences == 5);
  REQUIRE(g_news == 0);
  set_num_threads(1);
}

TEST_CASE("classification allocates nothing after the Classifier is created", "[alloc][vit]") {
  const int threads = GENERATE(1, 2);
  set_num_threads(threads);
  auto model = Model::load(model_path("vit-digits"));
  ClassifyLimits lim;
  lim.max_batch = 8;
  Classifier cls(model, lim);
  std::vector<float> images(8 * 64);
  for (size_t i = 0; i < images.size(); ++i) images[i] = (float)((i * 7) % 17);
  std::vector<float> roll((size_t)cls.tokens() * cls.tokens());
  cls.classify(images.data(), 8, true);

  g_news = 0;
  g_counting = true;
  int labels = 0;
  for (int rep = 0; rep < 20; ++rep) {
    cls.classify(images.data(), 1 + rep % 8, rep % 2 == 0);
    labels += cls.result(0).label;
    if (rep % 2 == 0) cls.rollout(0, roll.data());
  }
  g_counting = false;
  REQUIRE(labels >= 0);
  REQUIRE(g_news == 0);
  set_num_threads(1);
}
