// The CUDA backend (Limits::device = Device::CUDA). Compiled in every build:
//   - CPU builds: Device::CUDA is a clear error naming the configure option;
//   - CUDA builds without a device: the error names the missing device, and every GPU case
//     says why it is skipped (WARN) and returns;
//   - with a device: each kernel against the scalar CPU reference, and whole translations
//     (tokens, probabilities, every attention weight) against the CPU path.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "attnlite/attention/multi_head.h"
#include "attnlite/attention/positional_encoding.h"
#include "attnlite/model.h"
#include "attnlite/ops/layers.h"
#include "attnlite/classify.h"
#include "attnlite/generate.h"
#include "attnlite/translate.h"
#include "fixture.h"
#include "st_writer.h"
#if ATTNLITE_HAVE_CUDA
#include "cuda/device.h"

using namespace attnlite::attention;
#endif

using namespace attnlite;
using Catch::Matchers::Contains;
using attnlite::test::StFile;

namespace {

constexpr double kAttnTol = 1e-4;  // attention weights and token probabilities, GPU vs CPU

// A loadable model from a module fixture: its parameters, plus the metadata a model file
// carries (kind, config, vocabularies of placeholder words w4.., f4..).
std::shared_ptr<const Model> model_from_fixture(const std::string& fixture, const char* kind,
                                                nlohmann::json config) {
  StFile f = StFile::from(SafeTensors::load(attnlite::test::fixture_path(fixture)));
  std::vector<std::string> drop;
  for (const auto& [name, t] : f.tensors)
    if (name.rfind("in.", 0) == 0 || name.rfind("out.", 0) == 0) drop.push_back(name);
  for (const auto& n : drop) f.erase(n);
  auto vocab = [](int size, const char* prefix) {
    nlohmann::json v = {"<unk>", "<pad>", "<bos>", "<eos>"};
    for (int i = 4; i < size; ++i) v.push_back(prefix + std::to_string(i));
    return v.dump();
  };
  f.metadata = {{"attnlite.kind", kind},
                {"attnlite.config", config.dump()},
                {"attnlite.src_vocab", vocab(config["src_vocab_size"].get<int>(), "w")},
                {"attnlite.tgt_vocab", vocab(config["tgt_vocab_size"].get<int>(), "f")}};
  const auto bytes = f.bytes();
  return Model::from_bytes(bytes.data(), bytes.size());
}

// tests/fixtures/transformer.safetensors: 2 layers, 4 heads, H 32, random weights.
std::shared_ptr<const Model> random_transformer() {
  return model_from_fixture("transformer", "transformer",
                            {{"src_vocab_size", 50}, {"tgt_vocab_size", 60}, {"num_hiddens", 32},
                             {"num_layers", 2}, {"num_heads", 4}, {"ffn_num_hiddens", 64},
                             {"num_steps", 10}});
}
std::shared_ptr<const Model> random_bahdanau() {
  return model_from_fixture("bahdanau", "bahdanau",
                            {{"src_vocab_size", 10}, {"tgt_vocab_size", 10}, {"embed_size", 8},
                             {"num_hiddens", 16}, {"num_layers", 2}, {"num_steps", 7}});
}

}  // namespace

TEST_CASE("Device::CUDA without a CUDA build or device is a clear error", "[cuda]") {
  auto tr = random_transformer();
  auto bd = random_bahdanau();
  Limits lim;
  lim.device = Device::CUDA;
  INFO("cuda_device_name: " << cuda_device_name());
#if !ATTNLITE_HAVE_CUDA
  const char* msg = "attnlite was built without CUDA (configure with -DATTNLITE_CUDA=ON)";
  REQUIRE_FALSE(cuda_available());
  REQUIRE_THAT(cuda_device_name(), Contains("without CUDA"));
  REQUIRE_THROWS_WITH(Translator(tr, lim), msg);
  REQUIRE_THROWS_WITH(Translator::required_bytes(*tr, lim), msg);
  REQUIRE_THROWS_WITH(Translator(bd, lim), msg);
  GenerateLimits glim;
  glim.device = Device::CUDA;
  REQUIRE_THROWS_WITH(Generator(Model::load(attnlite::test::fixture_path("lm_post_relu")), glim), msg);
  ClassifyLimits clim;
  clim.device = Device::CUDA;
  REQUIRE_THROWS_WITH(Classifier(Model::load(attnlite::test::fixture_path("vit_post_gelu")), clim), msg);
#else
  if (!cuda_available()) {
    WARN("no CUDA device: checking the error only (" << cuda_device_name() << ")");
    const char* msg = "CUDA was requested but no CUDA device is available (";
    REQUIRE_THROWS_WITH(Translator(tr, lim), Contains(msg));
    REQUIRE_THROWS_WITH(Translator(bd, lim), Contains(msg));
    Limits beam = lim;
    beam.max_beam = 4;
    REQUIRE_THROWS_WITH(Translator(tr, beam), Contains(msg));
    REQUIRE_THAT(cuda_device_name(), Contains("none ("));
    GenerateLimits glim;
    glim.device = Device::CUDA;
    REQUIRE_THROWS_WITH(Generator(Model::load(attnlite::test::fixture_path("lm_post_relu")), glim),
                        Contains(msg));
    ClassifyLimits clim;
    clim.device = Device::CUDA;
    REQUIRE_THROWS_WITH(Classifier(Model::load(attnlite::test::fixture_path("vit_post_gelu")), clim),
                        Contains(msg));
  } else {
    REQUIRE_NOTHROW(Translator(tr, lim));
    REQUIRE_NOTHROW(Translator(bd, lim));  // every family and search runs on every device
  }
#endif
  // The CPU device is untouched by all this.
  lim.device = Device::CPU;
  REQUIRE_NOTHROW(Translator(tr, lim));
}

#if ATTNLITE_HAVE_CUDA

namespace {

// True when GPU cases can run; otherwise says why they are skipped.
bool have_gpu(const char* what) {
  if (cuda_available()) return true;
  WARN("no CUDA device: skipping " << what << " (" << cuda_device_name() << ")");
  return false;
}

// The book's four sentences, then more: short, long (truncated), unknown words, punctuation.
const std::vector<std::string> kSentences = {
    "go .", "i lost .", "he's calm .", "i'm home .",
    "i won .", "i'm sorry .", "he is tall .", "we are friends .", "you are late .",
    "she is happy .", "they are here .", "go away .", "come in .", "be quiet .",
    "i'm cold .", "it's mine .", "i like it .", "who are you ?", "help me !",
    "get out !", "we lost .", "I am tired!", "zyzzyva !",
    "this sentence is a great deal longer than the ten steps the model was trained on ."};

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

double max_diff_attention(const Translation& g, const Translation& c) {
  double d = 0;
  auto upd = [&](float a, float b) { d = std::max(d, (double)std::fabs(a - b)); };
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
  REQUIRE(g.enc_self != nullptr);
  const double d = max_diff_attention(g, c);
  INFO("max |attention diff| " << d);
  REQUIRE(d <= kAttnTol);
}

// Every sentence through a CPU and a CUDA Translator with the same limits, in batches of
// `batch`, both position modes; tokens equal, weights within kAttnTol.
void compare_translators(const std::shared_ptr<const Model>& model,
                         const std::vector<std::string>& sentences, int batch, bool attention) {
  for (const bool compat : {false, true}) {
    INFO((compat ? "d2l_compat (position 0 every step)" : "position t at step t")
         << ", batch " << batch << (attention ? "" : ", no attention"));
    Limits lim;
    lim.max_batch = batch;
    Translator cpu(model, lim);
    lim.device = Device::CUDA;
    Translator gpu(model, lim);
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

TEST_CASE("CUDA kernels match the scalar CPU reference", "[cuda]") {
  if (!have_gpu("the kernel tests")) return;
  const auto& K = ops::scalar_kernels();
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> U(-1.f, 1.f);
  auto rnd = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = U(rng);
    return v;
  };

  SECTION("linear: y = x·Wᵀ + b (+ ReLU), sizes below, at and past the warp and tile sizes") {
    for (auto [M, N, K_] : std::vector<std::array<int, 3>>{
             {1, 1, 1}, {1, 32, 32}, {3, 7, 5}, {17, 33, 65}, {64, 128, 256}, {5, 1000, 32},
             {130, 64, 512}}) {
      for (bool bias : {false, true})
        for (bool relu : {false, true}) {
          INFO("M " << M << " N " << N << " K " << K_ << " bias " << bias << " relu " << relu);
          auto x = rnd((size_t)M * K_), w = rnd((size_t)N * K_), b = rnd((size_t)N);
          std::vector<float> ref((size_t)M * N), got(ref.size());
          K.linear(ref.data(), x.data(), w.data(), bias ? b.data() : nullptr, M, N, K_);
          if (relu) K.relu(ref.data(), M * N);
          cuda::check::linear(got.data(), x.data(), w.data(), bias ? b.data() : nullptr, M, N, K_,
                              relu);
          REQUIRE_CLOSE(got, ref, 1e-5 * std::sqrt((double)K_) * 4);
        }
    }
  }
  SECTION("add + layer norm") {
    for (int n : {1, 7, 32, 33, 256, 257, 1000}) {
      INFO("n " << n);
      const int R = 5;
      auto x = rnd((size_t)R * n), y = rnd((size_t)R * n), g = rnd((size_t)n), b = rnd((size_t)n);
      std::vector<float> sum((size_t)R * n), ref(sum.size()), got(sum.size());
      K.add(sum.data(), y.data(), x.data(), R * n);
      K.layer_norm(ref.data(), sum.data(), g.data(), b.data(), R, n, 1e-5f);
      cuda::check::add_layer_norm(got.data(), x.data(), y.data(), g.data(), b.data(), R, n);
      REQUIRE_CLOSE(got, ref, n == 1 ? 1e-3 : 1e-5);  // n == 1: (0 / sqrt(eps)) rounding
    }
  }
  SECTION("embedding · sqrt(H) + positional encoding") {
    const int V = 11, H = 6, T = 4, R = 8, rows = 20;
    auto table = rnd((size_t)V * H);
    std::vector<float> P((size_t)rows * H);
    positional_encoding_table(P.data(), rows, H);
    std::vector<int> ids = {0, 3, 10, 2, 2, 5, 9, 1};
    for (int pos : {-1, 0, 13}) {
      INFO("pos " << pos);
      std::vector<float> ref((size_t)R * H), got(ref.size());
      const Embedding e{table.data(), nullptr, nullptr, V, H};
      embedding_rows(ref.data(), e, ids.data(), R, std::sqrt((float)H));
      if (pos < 0) {
        add_positional_encoding(ref.data(), P.data(), R / T, T, H);
      } else {
        std::vector<int> p(R, pos);
        add_positional_encoding(ref.data(), P.data(), R, 1, H, p.data());
      }
      cuda::check::embed_positions(got.data(), table.data(), V, P.data(), rows, ids.data(), R, T,
                                   H, pos, std::sqrt((float)H));
      REQUIRE_CLOSE(got, ref, 1e-6);
    }
  }
  SECTION("multi-head attention core with valid lengths (-1e6 mask, per batch, all heads)") {
    for (auto [B, Tq, Tk, H, NH] : std::vector<std::array<int, 5>>{
             {1, 1, 1, 4, 1}, {2, 1, 7, 32, 4}, {3, 10, 10, 32, 4}, {2, 5, 130, 64, 8},
             {1, 3, 300, 512, 8}}) {
      for (bool masked : {false, true}) {
        INFO("B " << B << " Tq " << Tq << " Tk " << Tk << " H " << H << " NH " << NH
                  << " masked " << masked);
        auto q = rnd((size_t)B * Tq * H), k = rnd((size_t)B * Tk * H), v = rnd((size_t)B * Tk * H);
        std::vector<int> valid((size_t)B);
        for (int b = 0; b < B; ++b) valid[(size_t)b] = b == 0 ? Tk : (b == 1 ? 0 : Tk / 2 + 1);
        const ValidLens vl = masked ? ValidLens::per_batch(valid.data()) : ValidLens::none();
        std::vector<float> ctx_ref((size_t)B * Tq * H), att_ref((size_t)B * NH * Tq * Tk);
        std::vector<float> ctx_got(ctx_ref.size()), att_got(att_ref.size());
        attnlite::test::Scratch s;
        ops::set_backend(ops::Backend::Scalar);
        attend_heads(ctx_ref.data(), AttnOut::dense(att_ref.data(), NH, Tq, Tk), q.data(), k.data(),
                     v.data(), Tk, B, Tq, Tk, H, NH, vl, s.cx);
        cuda::check::attend(ctx_got.data(), att_got.data(), q.data(), k.data(), v.data(), B, Tq,
                            Tk, H, NH, masked ? valid.data() : nullptr);
        REQUIRE_CLOSE(att_got, att_ref, 1e-5);
        REQUIRE_CLOSE(ctx_got, ctx_ref, 1e-5);
      }
    }
  }
  SECTION("greedy argmax and its probability, ties to the lowest id") {
    for (int V : {1, 4, 60, 255, 256, 257, 32000}) {
      const int R = 6;
      auto lg = rnd((size_t)R * V);
      if (V > 3) {
        lg[(size_t)V + 1] = lg[(size_t)V + 3] = 5.f;  // row 1: a tie between ids 1 and 3
        lg[2 * (size_t)V + V - 1] = 9.f;              // row 2: the maximum at the end
      }
      std::vector<int> ids((size_t)R);
      std::vector<float> probs((size_t)R);
      cuda::check::argmax_rows(ids.data(), probs.data(), lg.data(), R, V);
      for (int r = 0; r < R; ++r) {
        const float* row = &lg[(size_t)r * V];
        int best = 0;
        for (int i = 1; i < V; ++i)
          if (row[i] > row[best]) best = i;
        double sum = 0;
        for (int i = 0; i < V; ++i) sum += std::exp((double)row[i] - row[best]);
        INFO("V " << V << " row " << r);
        REQUIRE(ids[(size_t)r] == best);
        REQUIRE(std::fabs(probs[(size_t)r] - (float)(1.0 / sum)) <= 1e-6);
      }
    }
  }
  ops::set_backend(ops::simd_kernels() ? ops::Backend::Simd : ops::Backend::Scalar);
}

TEST_CASE("CUDA translations match the CPU on the shipped Transformer", "[cuda]") {
  if (!have_gpu("the shipped-model comparison")) return;
  auto model = Model::load(attnlite::test::model_path("transformer-d2l"));
  SECTION("batch 1") { compare_translators(model, kSentences, 1, true); }
  SECTION("batch 8") { compare_translators(model, kSentences, 8, true); }
  SECTION("batch 8, attention not recorded") { compare_translators(model, kSentences, 8, false); }
  SECTION("the book's four sentences give the CPU's French") {
    Limits lim;
    lim.device = Device::CUDA;
    Translator gpu(model, lim);
    Translator cpu(model);
    for (int i = 0; i < 4; ++i)
      REQUIRE(gpu.translate(kSentences[(size_t)i]).text == cpu.translate(kSentences[(size_t)i]).text);
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
    lim.device = Device::CUDA;
    Translator gpu(model, lim);
    std::vector<std::string_view> v(many.begin(), many.end());
    cpu.translate_batch(v.data(), 64, {});
    gpu.translate_batch(v.data(), 64, {});
    for (int b = 0; b < 64; ++b) require_same(gpu.result(b), cpu.result(b), true);
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
    lim.device = Device::CUDA;
    Translator gpu(model, lim);
    DecodeOptions o;
    o.beam_size = 4;
    o.length_penalty = 0.75f;
    for (const auto& s : book) {
      const Translation& c = cpu.translate(s, o);
      const Translation& g = gpu.translate(s, o);
      require_same(g, c, true);
      const NBest cn = cpu.nbest(0), gn = gpu.nbest(0);
      REQUIRE(cn.size == gn.size);
      for (int k = 0; k < cn.size; ++k) {
        REQUIRE(cn[k].text == gn[k].text);
        REQUIRE(std::fabs(cn[k].score - gn[k].score) <= 1e-4);
      }
    }
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
  gpu.classify(images.data(), 16, true);
  for (int b = 0; b < 16; ++b) REQUIRE(gpu.result(b).label == cpu.result(b).label);
  REQUIRE(cuda::malloc_count() == before);
}

#endif  // ATTNLITE_HAVE_CUDA
