// The decoder-only language model (kind "lm"): the shipped French model, KV-cached decoding
// against the full causal pass, sampling, perplexity and bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "fixture.h"

using namespace attnlite;
using attnlite::test::model_path;

namespace {
using attnlite::test::lm_fra;
int argmax(const float* z, int V) {
  int b = 0;
  for (int v = 1; v < V; ++v)
    if (z[v] > z[b]) b = v;
  return b;
}
}  // namespace

TEST_CASE("lm-fra loads as a language model", "[lm]") {
  auto m = lm_fra();
  REQUIRE(m->task() == Task::Generate);
  REQUIRE(std::string(m->kind_name()) == "lm");
  REQUIRE(m->num_layers() == 3);
  REQUIRE(m->num_heads() == 4);
  REQUIRE(m->num_hiddens() == 128);
  REQUIRE(m->num_steps() == 32);
  REQUIRE(m->tgt_vocab().size() == 9308);
  REQUIRE(m->is_int8());
  REQUIRE(m->tgt_vocab().token(2) == "<bos>");
}

TEST_CASE("SplitMix64 gives the reference sequence", "[lm][sample]") {
  SplitMix64 r(0);
  REQUIRE(r.next() == 0xE220A8397B1DCDAFull);
  REQUIRE(r.next() == 0x6E789E6AA1B965F4ull);
  REQUIRE(r.next() == 0x06C45D188009454Full);
  SplitMix64 u(42);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.uniform();
    REQUIRE(x >= 0.0);
    REQUIRE(x < 1.0);
  }
}

TEST_CASE("KV-cached generation equals the full causal pass", "[lm]") {
  auto m = lm_fra();
  Generator gen(m);
  GenerateOptions o;
  const Generation& g = gen.generate("il est", o);
  REQUIRE(g.num_prompt == 2);
  REQUIRE(g.num_generated >= 2);
  const int n = g.num_tokens, L = g.layers, NH = g.heads, T = g.ld, P = g.positions;
  REQUIRE(P == n - 1);  // the last token was never fed back
  const std::vector<int> ids(g.tokens, g.tokens + n);
  const std::vector<float> probs(g.probs, g.probs + g.num_generated);
  const std::vector<float> cached(g.attn, g.attn + (size_t)L * NH * T * T);
  const std::string text(g.text);
  const int V = m->tgt_vocab().size();

  const float* z = gen.forward(ids.data(), n - 1, true);
  for (int i = 0; i < g.num_generated; ++i) {
    const int pos = g.num_prompt + i;  // position whose logits chose generated token i
    INFO("generated token " << i);
    REQUIRE(argmax(z + (long)pos * V, V) == ids[pos + 1]);
  }
  const Generation& full = gen.result();
  REQUIRE(full.positions == n - 1);
  double worst = 0;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < NH; ++h)
      for (int q = 0; q < T; ++q)
        for (int k = 0; k < T; ++k) {
          const size_t at = (((size_t)l * NH + h) * T + q) * T + k;
          worst = std::max(worst, (double)std::fabs(cached[at] - full.attn[at]));
          if (k > q || q >= P) REQUIRE(cached[at] == 0.f);
        }
  REQUIRE(worst <= 1e-5);
  // rows of the causal map sum to one
  for (int q = 0; q < P; ++q) {
    double s = 0;
    for (int k = 0; k <= q; ++k) s += full.attn_at(L - 1, NH - 1, q, k);
    REQUIRE(s == Approx(1.0).margin(1e-5));
  }
  (void)text;
  (void)probs;
}

TEST_CASE("incremental steps give the same generation as generate()", "[lm]") {
  auto m = lm_fra();
  Generator gen(m);
  GenerateOptions o;
  o.sample = true;
  o.seed = 7;
  o.top_k = 20;
  const std::string whole(gen.generate("nous allons", o).text);
  const Generation* g = &gen.start("nous allons", o);
  int steps = 0;
  while (!g->done) {
    g = &gen.step();
    ++steps;
  }
  REQUIRE(std::string(g->text) == whole);
  REQUIRE(steps + 1 == g->num_generated);
  // the same seed again: the same text; another seed: (almost surely) another text
  REQUIRE(std::string(gen.generate("nous allons", o).text) == whole);
}

TEST_CASE("generation stops at max_tokens, <eos> or a full context", "[lm]") {
  auto m = lm_fra();
  Generator gen(m);
  GenerateOptions o;
  o.max_tokens = 3;
  const Generation& g = gen.generate("je", o);
  REQUIRE(g.num_generated <= 3);
  REQUIRE(g.done);
  // sampling at a high temperature without <eos> luck still ends inside the context
  o.max_tokens = 0;
  o.sample = true;
  o.temperature = 5.f;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    o.seed = seed;
    const Generation& s = gen.generate("je", o);
    REQUIRE(s.done);
    REQUIRE(s.num_tokens <= gen.context() + 1);
    REQUIRE(s.positions <= gen.context());
    if (!s.eos) REQUIRE(s.num_tokens == gen.context() + 1);
    for (int i = 0; i < s.num_generated; ++i) {
      REQUIRE(s.probs[i] > 0.f);
      REQUIRE(s.probs[i] <= 1.f);
    }
  }
}

TEST_CASE("language-model bad input is a clear error", "[lm][robustness]") {
  auto m = lm_fra();
  Generator gen(m);
  GenerateOptions o;
  REQUIRE_THROWS_WITH(gen.generate("", o), Catch::Contains("empty prompt"));
  REQUIRE_THROWS_WITH(gen.generate("   ", o), Catch::Contains("empty prompt"));
  std::string longp;
  for (int i = 0; i < 40; ++i) longp += "je ";
  REQUIRE_THROWS_WITH(gen.generate(longp, o), Catch::Contains("longer than the limit"));
  REQUIRE_THROWS_WITH(gen.generate(std::string(5000, 'a'), o), Catch::Contains("too long"));
  REQUIRE_THROWS_AS(gen.generate("\xff\xfe", o), Error);
  auto bad = [&](auto set, const char* msg) {
    GenerateOptions b;
    b.sample = true;
    set(b);
    REQUIRE_THROWS_WITH(gen.generate("je", b), Catch::Contains(msg));
  };
  bad([](GenerateOptions& b) { b.temperature = 0.f; }, "temperature");
  bad([](GenerateOptions& b) { b.temperature = -1.f; }, "temperature");
  bad([](GenerateOptions& b) { b.temperature = NAN; }, "temperature");
  bad([](GenerateOptions& b) { b.temperature = INFINITY; }, "temperature");
  bad([](GenerateOptions& b) { b.top_k = -1; }, "top_k");
  bad([](GenerateOptions& b) { b.top_p = 0.f; }, "top_p");
  bad([](GenerateOptions& b) { b.top_p = 1.5f; }, "top_p");
  bad([](GenerateOptions& b) { b.top_p = NAN; }, "top_p");
  bad([](GenerateOptions& b) { b.max_tokens = -2; }, "max_tokens");
  // unknown words become <unk> and are counted
  const Generation& g = gen.generate("je xyzzyplugh", o);
  REQUIRE(g.num_unknown == 1);
  REQUIRE(g.tokens[2] == m->tgt_vocab().unk_id);
  REQUIRE(std::string(g.text).rfind("je xyzzyplugh", 0) == 0);
  // the session still works after errors
  REQUIRE(gen.generate("je", o).num_generated > 0);
  // a translator refuses a language model, a generator refuses a translator
  REQUIRE_THROWS_WITH(Translator(m), Catch::Contains("language model"));
  auto tr = Model::load(model_path("transformer-d2l"));
  REQUIRE_THROWS_WITH(Generator(tr), Catch::Contains("transformer model"));
  // forward() checks its ids
  int ids[2] = {2, 99999};
  REQUIRE_THROWS_AS(gen.forward(ids, 2), Error);
  REQUIRE_THROWS_AS(gen.forward(ids, 0), Error);
}

TEST_CASE("perplexity skips empty and over-long sentences", "[lm]") {
  auto m = lm_fra();
  Generator gen(m);
  Perplexity p;
  REQUIRE(gen.score("je suis content .", p));
  REQUIRE_FALSE(gen.score("", p));
  std::string longs;
  for (int i = 0; i < 31; ++i) longs += "le ";
  REQUIRE(gen.score(longs, p));     // 31 words fit: <bos> + 31 = 32 positions
  REQUIRE_FALSE(gen.score(longs + "chat", p));
  REQUIRE(p.sentences == 2);
  REQUIRE(p.skipped == 2);
  REQUIRE(p.tokens == 5 + 32);
  REQUIRE(p.value() > 1.0);
  REQUIRE(std::isfinite(p.value()));
  REQUIRE(std::isnan(Perplexity{}.value()));
}

// ---- PyTorch fixtures (tools/make_lm_fixtures.py) ------------------------------------------

namespace {
struct LmCase {
  std::vector<int> ids;
  std::vector<float> logits, attn;
  std::vector<int64_t> attn_shape;
};
LmCase lm_case(const std::string& name) {
  const SafeTensors st = SafeTensors::load(test::fixture_path(name + ".expect"));
  LmCase c;
  for (int64_t v : st.i64("in.ids")) c.ids.push_back((int)v);
  c.logits = st.f32("out.logits");
  c.attn = st.f32("out.attn");
  c.attn_shape = st.get("out.attn").shape;
  return c;
}
const char* const kLmCases[] = {"lm_post_relu", "lm_pre_gelu_eps6", "lm_post_gelu_nobias",
                                "lm_pre_relu_nobias", "lm_d512"};
}  // namespace

TEST_CASE("torch.nn.TransformerEncoderLayer stacks: logits and every attention weight", "[lm][fixtures]") {
  for (const char* name : kLmCases) {
    INFO("case " << name);
    const LmCase c = lm_case(name);
    auto m = Model::load(test::fixture_path(name));
    REQUIRE(m->task() == Task::Generate);
    const int T = (int)c.ids.size(), V = m->tgt_vocab().size();
    const int L = (int)c.attn_shape[0], NH = (int)c.attn_shape[1];
    REQUIRE(L == m->num_layers());
    REQUIRE(NH == m->num_heads());
    for (auto table : {ops::KernelTable::Scalar, ops::KernelTable::Simd}) {
      if (table == ops::KernelTable::Simd && !ops::simd_kernels()) continue;
      INFO((table == ops::KernelTable::Simd ? "simd" : "scalar"));
      ops::use_kernels(table);
      Generator gen(m);
      const float* z = gen.forward(c.ids.data(), T, true);
      REQUIRE_CLOSE(std::vector<float>(z, z + (size_t)T * V), c.logits, 1e-5);
      const Generation& g = gen.result();
      std::vector<float> attn;
      for (int l = 0; l < L; ++l)
        for (int h = 0; h < NH; ++h)
          for (int q = 0; q < T; ++q)
            for (int k = 0; k < T; ++k) attn.push_back(g.attn_at(l, h, q, k));
      REQUIRE_CLOSE(attn, c.attn, 1e-5);
    }
    ops::use_kernels(ops::simd_kernels() ? ops::KernelTable::Simd : ops::KernelTable::Scalar);
  }
}

TEST_CASE("fixture models: cached step-by-step decoding equals the full causal pass", "[lm][fixtures]") {
  for (const char* name : kLmCases) {
    INFO("case " << name);
    auto m = Model::load(test::fixture_path(name));
    Generator gen(m);
    const int V = m->tgt_vocab().size();
    // greedy from a one-word prompt ("w4"), as far as the context allows
    GenerateOptions o;
    const Generation& g = gen.generate("w4", o);
    const std::vector<int> ids(g.tokens, g.tokens + g.num_tokens);
    const int P = g.positions;
    std::vector<float> cached;
    for (int l = 0; l < g.layers; ++l)
      for (int h = 0; h < g.heads; ++h)
        for (int q = 0; q < P; ++q)
          for (int k = 0; k < P; ++k) cached.push_back(g.attn_at(l, h, q, k));
    const float* z = gen.forward(ids.data(), P, true);
    for (int pos = 1; pos < P; ++pos) REQUIRE(argmax(z + (long)pos * V, V) == ids[pos + 1]);
    const Generation& f = gen.result();
    std::vector<float> full;
    for (int l = 0; l < f.layers; ++l)
      for (int h = 0; h < f.heads; ++h)
        for (int q = 0; q < P; ++q)
          for (int k = 0; k < P; ++k) full.push_back(f.attn_at(l, h, q, k));
    REQUIRE_CLOSE(cached, full, 1e-5);
  }
}

TEST_CASE("lm-fra: generations equal the Python reference of the sampling rule", "[lm][sample]") {
  std::ifstream in(std::string(ATTNLITE_FIXTURES_DIR) + "/lm_fra_samples.json");
  REQUIRE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  auto m = lm_fra();
  Generator gen(m);
  int n = 0;
  for (const auto& c : j["cases"]) {
    const auto& o = c["options"];
    GenerateOptions opts;
    opts.sample = o["sample"].get<bool>();
    opts.temperature = o["temperature"].get<float>();
    opts.top_k = o["top_k"].get<int>();
    opts.top_p = o["top_p"].get<float>();
    opts.seed = o["seed"].get<uint64_t>();
    opts.max_tokens = o["max_tokens"].get<int>();
    const std::string prompt = c["prompt"].get<std::string>();
    INFO("prompt '" << prompt << "' options " << o.dump());
    const Generation& g = gen.generate(prompt, opts);
    REQUIRE(std::string(g.text) == c["text"].get<std::string>());
    REQUIRE(std::string(g.continuation) == c["continuation"].get<std::string>());
    REQUIRE(std::vector<int>(g.tokens, g.tokens + g.num_tokens) == c["tokens"].get<std::vector<int>>());
    REQUIRE(g.eos == c["eos"].get<bool>());
    REQUIRE(g.num_unknown == c["num_unknown"].get<int>());
    const auto probs = c["probs"].get<std::vector<double>>();
    REQUIRE((int)probs.size() == g.num_generated);
    for (int i = 0; i < g.num_generated; ++i) REQUIRE(g.probs[i] == Approx(probs[i]).epsilon(1e-4));
    ++n;
  }
  REQUIRE(n >= 10);
}

TEST_CASE("lm-fra: perplexity of a text file equals PyTorch's", "[lm]") {
  const std::string dir = ATTNLITE_FIXTURES_DIR;
  std::ifstream jf(dir + "/lm_fra_ppl.json"), tf(dir + "/lm_fra_ppl.txt");
  REQUIRE(jf.good());
  REQUIRE(tf.good());
  const nlohmann::json j = nlohmann::json::parse(jf);
  Generator gen(lm_fra());
  Perplexity p;
  std::string line;
  while (std::getline(tf, line)) gen.score(line, p);
  REQUIRE(p.sentences == j["sentences"].get<long>());
  REQUIRE(p.skipped == j["skipped"].get<long>());
  REQUIRE(p.tokens == j["tokens"].get<long>());
  REQUIRE(p.nll == Approx(j["nll"].get<double>()).epsilon(1e-5));
  REQUIRE(p.value() == Approx(j["perplexity"].get<double>()).epsilon(1e-4));
}
