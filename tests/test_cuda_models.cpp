// The CUDA backend on whole models: translations (batches, both position modes, beam search,
// the Bahdanau model), the language model and the Vision Transformer, each against the CPU
// path (tokens, probabilities, every attention weight), and no device allocation once a
// session is made. Compiled in every build; without a CUDA build it holds no case, and
// without a device every case says why it is skipped (WARN) and returns. The error without
// a CUDA build or device, and the kernels against the scalar CPU reference: test_cuda.cpp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "cuda_checks.h"
#include "fixture.h"
#if ATTNLITE_HAVE_CUDA
#include "cuda/device.h"
#endif

using namespace attnlite;
using attnlite::test::have_gpu;
using attnlite::test::ScopedEnv;
using attnlite::test::random_transformer;

#if ATTNLITE_HAVE_CUDA

namespace {

constexpr double kAttnTol = 1e-4;  // attention weights and token probabilities, GPU vs CPU

// The book's four sentences, then more: short, long (truncated), unknown words, punctuation.
const std::vector<std::string> kGpuSentences = {
    "go .", "i lost .", "he's calm .", "i'm home .",
    "i won .", "i'm sorry .", "he is tall .", "we are friends .", "you are late .",
    "she is happy .", "they are here .", "go away .", "come in .", "be quiet .",
    "i'm cold .", "it's mine .", "i like it .", "who are you ?", "help me !",
    "get out !", "we lost .", "I am tired!", "zyzzyva !",
    "this sentence is a great deal longer than the ten steps the model was trained on ."};

// The same limits on the GPU.
Limits on_cuda(Limits lim) {
  lim.device = Device::CUDA;
  return lim;
}

// Random-model sentences: placeholder words of the fixture vocabulary.
std::vector<std::string> random_sentences(int count) {
  std::mt19937 rng(7);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    std::string s;
    const int len = 1 + (int)(rng() % 12);  // up to 12 words: some truncated at S = 10
    for (int k = 0; k < len; ++k) s += (k ? " w" : "w") + std::to_string(4 + rng() % 46);
    out.push_back(s);
  }
  return out;
}

// Every attention weight: a Transformer's encoder self-, decoder self- and cross-attention
// per layer, a Bahdanau model's one additive attention ([t][s], layers == 0).
double max_diff_attention(const Translation& g, const Translation& c) {
  double d = 0;
  auto upd = [&](float a, float b) { d = std::max(d, (double)std::fabs(a - b)); };
  if (c.layers == 0) {
    for (int t = 0; t < c.steps; ++t)
      for (int s = 0; s < c.S; ++s) upd(g.cross_at(0, t, 0, s), c.cross_at(0, t, 0, s));
    return d;
  }
  for (int l = 0; l < c.layers; ++l) {
    for (int h = 0; h < c.heads; ++h)
      for (int q = 0; q < c.S; ++q)
        for (int k = 0; k < c.S; ++k) upd(g.enc_self_at(l, h, q, k), c.enc_self_at(l, h, q, k));
    for (int t = 0; t < c.steps; ++t)
      for (int h = 0; h < c.heads; ++h) {
        for (int k = 0; k < c.ld; ++k) upd(g.dec_self_at(l, t, h, k), c.dec_self_at(l, t, h, k));
        for (int s = 0; s < c.S; ++s) upd(g.cross_at(l, t, h, s), c.cross_at(l, t, h, s));
      }
  }
  return d;
}

void require_same(const Translation& g, const Translation& c, bool attention) {
  INFO("cpu: '" << c.text << "'  cuda: '" << g.text << "'");
  REQUIRE(g.num_tokens == c.num_tokens);
  REQUIRE(std::equal(c.tokens, c.tokens + c.num_tokens, g.tokens));
  REQUIRE(g.text == c.text);
  REQUIRE(g.steps == c.steps);
  REQUIRE(g.eos == c.eos);
  REQUIRE(g.src_valid == c.src_valid);
  for (int k = 0; k < c.num_tokens; ++k) REQUIRE(std::fabs(g.probs[k] - c.probs[k]) <= kAttnTol);
  REQUIRE((g.layers == c.layers && g.heads == c.heads && g.S == c.S && g.ld == c.ld));
  if (!attention) {
    REQUIRE(g.enc_self == nullptr);
    REQUIRE(g.cross == nullptr);
    return;
  }
  // A Transformer records all three attentions; a Bahdanau model only its cross-attention.
  const bool transformer = c.layers > 0;
  REQUIRE((c.enc_self != nullptr) == transformer);
  REQUIRE((g.enc_self != nullptr) == transformer);
  REQUIRE((g.dec_self != nullptr) == transformer);
  REQUIRE(g.cross != nullptr);
  const double d = max_diff_attention(g, c);
  INFO("max |attention diff| " << d);
  REQUIRE(d <= kAttnTol);
}

// A sentence's n-best lists on the GPU and the CPU: the same texts in the same order, scores
// within 1e-4.
void require_same_nbest(const NBest& g, const NBest& c) {
  REQUIRE(g.size == c.size);
  for (int k = 0; k < c.size; ++k) {
    REQUIRE(g[k].text == c[k].text);
    REQUIRE(std::fabs(g[k].score - c[k].score) <= 1e-4);
  }
}

// Each sentence by beam search of 4 (length penalty 0.75) on both: the same translation and
// n-best list.
void compare_beam(Translator& cpu, Translator& gpu, const std::vector<std::string>& sentences) {
  DecodeOptions o;
  o.beam_size = 4;
  o.length_penalty = 0.75f;
  for (const auto& s : sentences) {
    INFO("sentence '" << s << "'");
    const Translation& c = cpu.translate(s, o);
    const Translation& g = gpu.translate(s, o);
    require_same(g, c, true);
    require_same_nbest(gpu.nbest(0), cpu.nbest(0));
  }
}

// Every sentence through a CPU and a CUDA Translator with the same limits, in batches of
// `batch`, both position modes; tokens equal, weights within kAttnTol. bf16: the GPU holds
// the model's matrices in bfloat16, the CPU runs `cpu_model`, the model with them rounded.
void compare_translators(const std::shared_ptr<const Model>& model,
                         const std::vector<std::string>& sentences, int batch, bool attention,
                         bool bf16 = false, std::shared_ptr<const Model> cpu_model = nullptr) {
  for (const bool compat : {false, true}) {
    INFO((compat ? "d2l_compat (position 0 every step)" : "position t at step t")
         << ", batch " << batch << (attention ? "" : ", no attention") << (bf16 ? ", bf16" : ""));
    Limits lim;
    lim.max_batch = batch;
    Translator cpu(cpu_model ? cpu_model : model, lim);
    Limits glim = on_cuda(lim);
    if (bf16) glim.precision = Precision::BF16;
    Translator gpu(model, glim);
    DecodeOptions o;
    o.d2l_compat = compat;
    o.attention = attention;
    for (size_t i = 0; i < sentences.size(); i += (size_t)batch) {
      const int n = (int)std::min(sentences.size() - i, (size_t)batch);
      std::vector<std::string_view> v(sentences.begin() + (long)i, sentences.begin() + (long)i + n);
      cpu.translate_batch(v.data(), n, o);
      gpu.translate_batch(v.data(), n, o);
      for (int b = 0; b < n; ++b) {
        INFO("sentence '" << v[(size_t)b] << "'");
        require_same(gpu.result(b), cpu.result(b), attention);
      }
    }
  }
}


}  // namespace


TEST_CASE("CUDA translations match the CPU on the shipped Transformer", "[cuda]") {
  if (!have_gpu("the shipped-model comparison")) return;
  auto model = Model::load(attnlite::test::model_path("transformer-d2l"));
  SECTION("batch 1") { compare_translators(model, kGpuSentences, 1, true); }
  SECTION("batch 8") { compare_translators(model, kGpuSentences, 8, true); }
  SECTION("batch 8, attention not recorded") { compare_translators(model, kGpuSentences, 8, false); }
  SECTION("the book's four sentences give the CPU's French") {
    Limits lim;
    lim.device = Device::CUDA;
    Translator gpu(model, lim);
    Translator cpu(model);
    for (int i = 0; i < 4; ++i)
      REQUIRE(gpu.translate(kGpuSentences[(size_t)i]).text == cpu.translate(kGpuSentences[(size_t)i]).text);
  }
}

TEST_CASE("CUDA translations match the CPU on the random fixture Transformer", "[cuda]") {
  if (!have_gpu("the random-model comparison")) return;
  auto model = random_transformer();
  const auto sentences = random_sentences(24);
  SECTION("batch 1") { compare_translators(model, sentences, 1, true); }
  SECTION("batch 8") { compare_translators(model, sentences, 8, true); }
  SECTION("batch 64, longer target limit") {
    std::vector<std::string> many = random_sentences(64);
    Limits lim;
    lim.max_batch = 64;
    lim.max_tgt_steps = 25;
    Translator cpu(model, lim);
    Translator gpu(model, on_cuda(lim));
    std::vector<std::string_view> v(many.begin(), many.end());
    cpu.translate_batch(v.data(), 64, {});
    gpu.translate_batch(v.data(), 64, {});
    for (int b = 0; b < 64; ++b) require_same(gpu.result(b), cpu.result(b), true);
  }
}

TEST_CASE("CUDA graphs: replayed decoder steps give the CPU's results", "[cuda]") {
  if (!have_gpu("the CUDA graph check")) return;
  auto model = random_transformer();
  const auto sentences = random_sentences(18);
  // ATTNLITE_CUDA_GRAPHS (read at each step): unset, steps of up to 8 rows at their key's
  // second pass, up to 32 at their third, larger ones never; "small", steps of up to 8 rows;
  // "all", every step at its second pass; "0", none. Each mode in turn. Every step runs the
  // rows its batch started with (ATTNLITE_CUDA_DROP=0): the batch of 36 rows would otherwise
  // shrink to steps of 32 rows or fewer, which graphs record (the next test replays those).
  ScopedEnv graphs("ATTNLITE_CUDA_GRAPHS"), drop("ATTNLITE_CUDA_DROP");
  drop.set("0");
  for (const std::string mode : {"", "small", "all", "0"})
  for (const auto& [batch, beam] : std::vector<std::pair<int, int>>{{2, 1}, {2, 4}, {3, 4}, {9, 4}}) {
    graphs.set(mode);
    const int rows = batch * beam;  // 2, 8, 12 and 36 rows a step
    // the pass (of three) that captures each step, 0 for none
    const int capture = mode == "0"                       ? 0
                        : rows <= 8 || mode == "all"      ? 2
                        : mode == "small" || rows > 32    ? 0
                                                          : 3;
    for (const bool attention : {false, true}) {
      INFO("mode '" << mode << "', batch " << batch << ", beam " << beam << (attention ? "" : ", no attention"));
      Limits lim;
      lim.max_batch = batch;
      lim.max_beam = 4;
      Translator cpu(model, lim);
      Translator gpu(model, on_cuda(lim));
      DecodeOptions o;
      o.attention = attention;
      o.beam_size = beam;
      std::vector<std::string_view> v(sentences.begin(), sentences.begin() + batch);
      cpu.translate_batch(v.data(), batch, o);
      int steps = 0;
      for (int b = 0; b < batch; ++b) steps = std::max(steps, cpu.result(b).steps);
      const long made = cuda::graphs_made(), launched = cuda::graph_launches();
      // the same batch three times: launch by launch until the capturing pass, then replayed
      for (int rep = 0; rep < 3; ++rep) {
        INFO("rep " << rep);
        gpu.translate_batch(v.data(), batch, o);
        for (int b = 0; b < batch; ++b) require_same(gpu.result(b), cpu.result(b), attention);
      }
      const long m = cuda::graphs_made() - made, l = cuda::graph_launches() - launched;
      INFO("steps " << steps << ", graphs made " << m << ", launched " << l);
      // every step of the capturing pass and those after it ran as a graph: a graph per step,
      // as many as the longest row's steps in greedy search (beam search may go on after its
      // best hypotheses end), each launched once a pass from then on; none where the mode
      // leaves the step out
      if (capture) {
        REQUIRE(m >= steps);
        if (beam == 1) REQUIRE(m == steps);
        REQUIRE(l == (4 - capture) * m);
      } else {
        REQUIRE(m == 0);
        REQUIRE(l == 0);
      }
      // other sentences (other source lengths) after them: their own steps, the CPU's results
      std::vector<std::string_view> w(sentences.begin() + batch, sentences.begin() + 2 * batch);
      for (int rep = 0; rep < 2; ++rep) {
        cpu.translate_batch(w.data(), batch, o);
        gpu.translate_batch(w.data(), batch, o);
        for (int b = 0; b < batch; ++b) require_same(gpu.result(b), cpu.result(b), attention);
      }
    }
  }
}

// Finished rows leave a batch on the GPU too (ATTNLITE_CUDA_DROP, read when a Translator is
// made; docs/cuda.md): unset, batches of more than 32 rows; "all", as on the CPU; "0", never.
// Each way gives the CPU's translations and n-best lists (its batches drop rows down to one),
// and the op set's keep_rows runs where the mode says: greedy over 48 of the corpus model's
// test sentences, beam 4 over 12 of them (48 rows), the Bahdanau model (its GRU states and
// projected keys) greedy over the book's and other sentences (24 rows) and at beam 4 (96).
// The Transformer's greedy batches run three times: the steps of 32 rows or fewer that they
// shrink to become CUDA graphs at their third pass (ATTNLITE_CUDA_GRAPHS unset).
TEST_CASE("CUDA batches drop their finished rows as ATTNLITE_CUDA_DROP says", "[cuda]") {
  if (!have_gpu("the dropping of finished rows")) return;
  ScopedEnv graphs("ATTNLITE_CUDA_GRAPHS"), drop("ATTNLITE_CUDA_DROP");
  graphs.set("");
  std::vector<std::string> corpus;
  {
    std::ifstream in(std::string(ATTNLITE_MODELS_DIR) + "/transformer-fra.test.tsv");
    std::string line;
    for (int i = 0; corpus.size() < 48 && std::getline(in, line); ++i)
      if (i % 20 == 0) corpus.push_back(line.substr(0, line.find('\t')));
  }
  REQUIRE(corpus.size() == 48);
  struct Run {
    const char* model;
    const std::vector<std::string>& text;
    int n, beam;
    std::vector<std::string> modes;  // where each changes what leaves (an emulated device is slow)
  };
  const std::vector<Run> runs = {{"transformer-fra", corpus, 48, 1, {"", "all"}},
                                 {"transformer-fra", corpus, 12, 4, {""}},
                                 {"bahdanau-d2l", kGpuSentences, 24, 1, {"", "all", "0"}},
                                 {"bahdanau-d2l", kGpuSentences, 24, 4, {"", "0"}}};
  for (const Run& run : runs) {
    auto model = Model::load(test::model_path(run.model));
    Limits lim;
    lim.max_batch = run.n;
    lim.max_beam = 4;
    Translator cpu(model, lim);
    DecodeOptions o;
    o.attention = false;
    o.beam_size = run.beam;
    std::vector<std::string_view> v(run.text.begin(), run.text.begin() + run.n);
    cpu.translate_batch(v.data(), run.n, o);
    for (const std::string& mode : run.modes) {
      INFO(run.model << ", " << run.n << " sentences, beam " << run.beam << ", mode '" << mode << "'");
      drop.set(mode);
      Translator gpu(model, on_cuda(lim));
      const bool transformer = std::string_view(run.model) == "transformer-fra";
      const int passes = transformer && run.beam == 1 ? 3 : 1;
      const long before = cuda::kept_rows_calls(), made = cuda::graphs_made();
      for (int pass = 0; pass < passes; ++pass) {
        INFO("pass " << pass);
        gpu.translate_batch(v.data(), run.n, o);
        for (int b = 0; b < run.n; ++b) {
          INFO("sentence '" << v[(size_t)b] << "'");
          require_same(gpu.result(b), cpu.result(b), false);
          require_same_nbest(gpu.nbest(b), cpu.nbest(b));
        }
      }
      const long calls = cuda::kept_rows_calls() - before, graphs_made = cuda::graphs_made() - made;
      const bool drops = mode == "all" || (mode.empty() && run.n * run.beam > 32);
      INFO("keep_rows calls " << calls << ", graphs made " << graphs_made);
      if (drops)
        REQUIRE(calls > 0);
      else
        REQUIRE(calls == 0);
      if (passes == 3) REQUIRE(graphs_made > 0);  // the shrunk batches' steps
    }
  }
}

TEST_CASE("translate on CUDA makes no device allocation", "[cuda]") {
  if (!have_gpu("the allocation check")) return;
  auto model = random_transformer();
  Limits lim;
  lim.max_batch = 8;
  lim.device = Device::CUDA;
  const long before_ctor = cuda::malloc_count();
  Translator gpu(model, lim);
  // the weights and the workspace: two allocations, both at construction
  REQUIRE(cuda::malloc_count() - before_ctor == 2);
  const long before = cuda::malloc_count();
  const auto sentences = random_sentences(16);
  for (const auto& s : sentences) gpu.translate(s);
  std::vector<std::string_view> v(sentences.begin(), sentences.begin() + 8);
  DecodeOptions o;
  o.d2l_compat = true;
  gpu.translate_batch(v.data(), 8, o);
  REQUIRE(cuda::malloc_count() == before);
  lim.max_beam = 4;
  Translator beam(model, lim);
  const long before_beam = cuda::malloc_count();
  o.beam_size = 4;
  for (const auto& s : sentences) beam.translate(s, o);
  REQUIRE(cuda::malloc_count() == before_beam);
}

// Beam search and the Bahdanau model on the GPU: the same hypotheses as on the CPU.
TEST_CASE("CUDA beam search and Bahdanau match the CPU", "[cuda]") {
  if (!have_gpu("the beam and Bahdanau comparison")) return;
  const std::vector<std::string> book = {"go .", "i lost .", "he's calm .", "i'm home ."};
  for (const char* name : {"transformer-d2l", "bahdanau-d2l"}) {
    INFO(name);
    auto model = Model::load(test::model_path(name));
    compare_translators(model, book, 1, true);
    Limits lim;
    lim.max_beam = 4;
    Translator cpu(model, lim);
    Translator gpu(model, on_cuda(lim));
    compare_beam(cpu, gpu, book);
  }
}

// The language model on the GPU: the fixtures' logits and attention, the shipped model's
// greedy and sampled texts, and no device allocation after the Generator is made.
TEST_CASE("CUDA language model matches PyTorch and the CPU", "[cuda][lm]") {
  if (!have_gpu("the language model")) return;
  GenerateLimits glim;
  glim.device = Device::CUDA;
  for (const char* name : {"lm_post_relu", "lm_pre_gelu_eps6", "lm_post_gelu_nobias", "lm_d512"}) {
    INFO("case " << name);
    auto m = Model::load(attnlite::test::fixture_path(name));
    const SafeTensors st = SafeTensors::load(attnlite::test::fixture_path(std::string(name) + ".expect"));
    std::vector<int> ids;
    for (int64_t v : st.i64("in.ids")) ids.push_back((int)v);
    const std::vector<float> logits = st.f32("out.logits"), attn = st.f32("out.attn");
    Generator gpu(m, glim);
    const int T = (int)ids.size(), V = m->tgt_vocab().size();
    const float* z = gpu.forward(ids.data(), T, true);
    REQUIRE_CLOSE(std::vector<float>(z, z + (size_t)T * V), logits, 1e-4);
    const Generation& g = gpu.result();
    std::vector<float> a;
    for (int l = 0; l < g.layers; ++l)
      for (int h = 0; h < g.heads; ++h)
        for (int q = 0; q < T; ++q)
          for (int k = 0; k < T; ++k) a.push_back(g.attn_at(l, h, q, k));
    REQUIRE_CLOSE(a, attn, 1e-4);
  }
  auto lm = Model::load(attnlite::test::model_path("lm-fra"));
  Generator cpu(lm);
  const long before_ctor = cuda::malloc_count();
  Generator gpu(lm, glim);
  REQUIRE(cuda::malloc_count() - before_ctor == 2);  // weights and workspace
  const long before = cuda::malloc_count();
  for (uint64_t seed : {0, 1, 2}) {
    GenerateOptions o;
    o.sample = seed != 0;
    o.seed = seed;
    o.top_k = 40;
    const std::string want(cpu.generate("nous allons", o).text);
    REQUIRE(std::string(gpu.generate("nous allons", o).text) == want);
  }
  REQUIRE(cuda::malloc_count() == before);
}

// The Vision Transformer on the GPU: the fixtures' logits and attention, and the test
// digits' labels equal to the CPU's, without device allocations after construction.
TEST_CASE("CUDA vision transformer matches PyTorch and the CPU", "[cuda][vit]") {
  if (!have_gpu("the vision transformer")) return;
  for (const char* name : {"vit_post_gelu", "vit_pre_gelu", "vit_lab224"}) {
    INFO("case " << name);
    auto m = Model::load(attnlite::test::fixture_path(name));
    const SafeTensors ex = SafeTensors::load(attnlite::test::fixture_path(std::string(name) + ".expect"));
    const auto ishape = ex.get("in.images").shape;
    const int B = (int)ishape[0];
    ClassifyLimits lim;
    lim.max_batch = B;
    lim.device = Device::CUDA;
    Classifier gpu(m, lim);
    const std::vector<float> images = ex.f32("in.images"), logits = ex.f32("out.logits");
    gpu.classify(images.data(), B, true);
    std::vector<float> got;
    for (int b = 0; b < B; ++b)
      got.insert(got.end(), gpu.result(b).logits, gpu.result(b).logits + gpu.num_classes());
    REQUIRE_CLOSE(got, logits, 1e-4);
  }
  auto vit = Model::load(attnlite::test::model_path("vit-digits"));
  ClassifyLimits lim;
  lim.max_batch = 16;
  Classifier cpu(vit, lim);
  lim.device = Device::CUDA;
  const long before_ctor = cuda::malloc_count();
  Classifier gpu(vit, lim);
  REQUIRE(cuda::malloc_count() - before_ctor == 2);
  const long before = cuda::malloc_count();
  std::vector<float> images(16 * 64);
  for (size_t i = 0; i < images.size(); ++i) images[i] = (float)((i * 5 + i / 64) % 17);
  cpu.classify(images.data(), 16, false);
  // A forward pass is a CUDA graph from its key's second pass on (ops::Reuse::Pass): the
  // first pass runs launch by launch, the second is captured, the third replays it; a batch
  // of 5 after them is another key. Every pass gives the CPU's labels and logits.
  const bool graphs = !std::getenv("ATTNLITE_CUDA_GRAPHS") || std::string(std::getenv("ATTNLITE_CUDA_GRAPHS")) != "0";
  for (const bool att : {true, false}) {
    const long made = cuda::graphs_made(), launched = cuda::graph_launches();
    for (int pass = 0; pass < 3; ++pass) {
      INFO("attention " << att << " pass " << pass);
      gpu.classify(images.data(), 16, att);
      for (int b = 0; b < 16; ++b) {
        REQUIRE(gpu.result(b).label == cpu.result(b).label);
        REQUIRE_CLOSE(std::vector<float>(gpu.result(b).logits, gpu.result(b).logits + gpu.num_classes()),
                      std::vector<float>(cpu.result(b).logits, cpu.result(b).logits + cpu.num_classes()), 1e-4);
      }
    }
    REQUIRE(cuda::graphs_made() - made == (graphs ? 1 : 0));
    REQUIRE(cuda::graph_launches() - launched == (graphs ? 2 : 0));
  }
  cpu.classify(images.data(), 5, false);
  gpu.classify(images.data(), 5, false);
  for (int b = 0; b < 5; ++b) REQUIRE(gpu.result(b).label == cpu.result(b).label);
  REQUIRE(cuda::malloc_count() == before);
}


// Weights held in bfloat16 (Precision::BF16): every family on the GPU gives the CPU's results
// on the same model with those matrices rounded (StFile::round_to_bf16): tokens, labels and
// texts equal, probabilities, scores and weights within the fp32 comparisons' tolerances, and
// still no device allocation after a session is made.
TEST_CASE("CUDA with bfloat16 weights matches the CPU on the rounded weights", "[cuda][bf16]") {
  if (!have_gpu("the bfloat16 weights")) return;
  SECTION("the random Transformer: batches of 1, 8 and 64 (products past the GEMV widened)") {
    auto model = random_transformer(), rounded = random_transformer(true);
    const auto sentences = random_sentences(24);
    compare_translators(model, sentences, 1, true, true, rounded);
    compare_translators(model, sentences, 8, true, true, rounded);
    compare_translators(model, random_sentences(64), 64, false, true, rounded);
  }
  SECTION("the book's two translators, greedy and beam 4; no allocation after construction") {
    const std::vector<std::string> book = {"go .", "i lost .", "he's calm .", "i'm home ."};
    for (const char* name : {"transformer-d2l", "bahdanau-d2l"}) {
      INFO(name);
      auto model = Model::load(test::model_path(name));
      auto rounded = test::rounded_to_bf16(test::model_path(name));
      compare_translators(model, book, 1, true, true, rounded);
      Limits lim;
      lim.max_beam = 4;
      Translator cpu(rounded, lim);
      lim.device = Device::CUDA;
      lim.precision = Precision::BF16;
      const long before_ctor = cuda::malloc_count();
      Translator gpu(model, lim);
      REQUIRE(cuda::malloc_count() - before_ctor == 2);  // weights and workspace
      const long before = cuda::malloc_count();
      compare_beam(cpu, gpu, book);
      REQUIRE(cuda::malloc_count() == before);
    }
  }
  SECTION("language models (fp32 fixtures: pre- and post-norm, H 16 and 512): logits and attention") {
    GenerateLimits glim;
    glim.device = Device::CUDA;
    glim.precision = Precision::BF16;
    for (const char* name : {"lm_pre_gelu_eps6", "lm_post_relu", "lm_d512"}) {
      INFO("case " << name);
      auto m = Model::load(test::fixture_path(name));
      Generator cpu(test::rounded_to_bf16(test::fixture_path(name)));
      Generator gpu(m, glim);
      const SafeTensors st = SafeTensors::load(test::fixture_path(std::string(name) + ".expect"));
      std::vector<int> ids;
      for (int64_t v : st.i64("in.ids")) ids.push_back((int)v);
      const int T = (int)ids.size(), V = m->tgt_vocab().size();
      const float* c = cpu.forward(ids.data(), T, true);
      const std::vector<float> want(c, c + (size_t)T * V);
      const float* g = gpu.forward(ids.data(), T, true);
      REQUIRE_CLOSE(std::vector<float>(g, g + (size_t)T * V), want, 1e-4);
      const Generation &a = gpu.result(), &b = cpu.result();
      for (int l = 0; l < b.layers; ++l)
        for (int h = 0; h < b.heads; ++h)
          for (int q = 0; q < T; ++q)
            for (int k = 0; k < T; ++k) REQUIRE(std::fabs(a.attn_at(l, h, q, k) - b.attn_at(l, h, q, k)) <= kAttnTol);
    }
  }
  SECTION("the shipped language model is int8: its texts as at fp32") {
    auto lm = Model::load(test::model_path("lm-fra"));
    REQUIRE(lm->is_int8());
    Generator cpu(lm);
    GenerateLimits glim;
    glim.device = Device::CUDA;
    glim.precision = Precision::BF16;
    Generator gpu(lm, glim);
    for (uint64_t seed : {0, 1}) {
      GenerateOptions o;
      o.sample = seed != 0;
      o.seed = seed;
      o.top_k = 40;
      INFO("seed " << seed);
      const std::string want(cpu.generate("nous allons", o).text);
      REQUIRE(std::string(gpu.generate("nous allons", o).text) == want);
    }
  }
  SECTION("the vision transformer: labels and logits") {
    auto vit = Model::load(test::model_path("vit-digits"));
    ClassifyLimits lim;
    lim.max_batch = 16;
    Classifier cpu(test::rounded_to_bf16(test::model_path("vit-digits")), lim);
    lim.device = Device::CUDA;
    lim.precision = Precision::BF16;
    Classifier gpu(vit, lim);
    std::vector<float> images(16 * 64);
    for (size_t i = 0; i < images.size(); ++i) images[i] = (float)((i * 5 + i / 64) % 17);
    cpu.classify(images.data(), 16, true);
    gpu.classify(images.data(), 16, true);
    for (int b = 0; b < 16; ++b) {
      REQUIRE(gpu.result(b).label == cpu.result(b).label);
      REQUIRE_CLOSE(std::vector<float>(gpu.result(b).logits, gpu.result(b).logits + gpu.num_classes()),
                    std::vector<float>(cpu.result(b).logits, cpu.result(b).logits + cpu.num_classes()), 1e-4);
    }
  }
  SECTION("an int8 model keeps its int8 matrices: the fp32 precision's results") {
    auto model = Model::load(test::fixture_path("transformer-d2l-int8"));
    Limits lim;
    Translator f32(model, on_cuda(lim));
    lim = on_cuda(lim);
    lim.precision = Precision::BF16;
    Translator bf16(model, lim);
    for (const char* s : {"go .", "i lost .", "he's calm .", "i'm home ."}) {
      const Translation& a = f32.translate(s);
      const Translation& b = bf16.translate(s);
      REQUIRE(a.text == b.text);
      for (int i = 0; i < a.num_tokens; ++i) REQUIRE(a.probs[i] == b.probs[i]);
    }
  }
}

#endif  // ATTNLITE_HAVE_CUDA
