// Beam search against tools/attnlite_tools/search.py (the same search on the book's PyTorch
// modules):
// identical n-best hypotheses, scores within 1e-4, the best hypothesis' attention within 1e-5
// (fixtures from tools/make_beam_fixtures.py). Scores get 1e-4 rather than the 1e-5 of single
// weights because they are sums of up to ten log-probabilities, each off by the ~1e-6 by
// which attnlite's float32 logits differ from PyTorch's.
#include <cmath>
#include <nlohmann/json.hpp>

#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "fixture.h"

using namespace attnlite;
using attnlite::test::Fixture;

namespace {

template <class T>
std::vector<T> meta_list(const Fixture& fx, const std::string& key) {
  return nlohmann::json::parse(fx.st.meta(key)).get<std::vector<T>>();
}

void check_nbest_order(const NBest& nb) {
  for (int k = 1; k < nb.size; ++k) REQUIRE(nb[k].score <= nb[k - 1].score);
}

void check_model(const std::string& name) {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("beam_" + name);
  auto model = Model::load(test::model_path(name + "-d2l"));
  Limits lim;
  lim.max_beam = 4;
  Translator tr(model, lim);
  const auto sentences = meta_list<std::string>(fx, "sentences");
  const auto modes = meta_list<std::string>(fx, "modes");
  const auto beams = meta_list<int>(fx, "beam_sizes");
  const auto alphas = meta_list<float>(fx, "alphas");
  const auto tags = meta_list<std::string>(fx, "alpha_tags");
  REQUIRE(sentences.size() == 20);
  const bool transformer = std::string(model->kind_name()) == "transformer";
  for (const auto& mode : modes)
    for (int K : beams)
      for (size_t a = 0; a < alphas.size(); ++a) {
        DecodeOptions o;
        o.d2l_compat = mode == "d2l";
        o.beam_size = K;
        o.length_penalty = alphas[a];
        for (size_t i = 0; i < sentences.size(); ++i) {
          const std::string p = mode + ".k" + std::to_string(K) + ".a" + tags[a] + ".s" + std::to_string(i) + ".";
          INFO(name << " " << p << " " << sentences[i]);
          const Translation& r = tr.translate(sentences[i], o);
          const NBest nb = tr.nbest(0);
          REQUIRE(nb.size == K);
          const auto score = fx.f(p + "score"), logp = fx.f(p + "logp");
          const auto length = fx.ids(p + "length"), eos = fx.ids(p + "eos");
          for (int k = 0; k < K; ++k) {
            INFO("hypothesis " << k);
            REQUIRE(std::vector<int>(nb[k].tokens, nb[k].tokens + nb[k].num_tokens) ==
                    fx.ids(p + "tokens." + std::to_string(k)));
            REQUIRE(nb[k].length == length[k]);
            REQUIRE(nb[k].eos == (eos[k] != 0));
            REQUIRE(std::fabs(nb[k].score - score[k]) <= 1e-4);
            REQUIRE(std::fabs(nb[k].logp - logp[k]) <= 1e-4);
          }
          check_nbest_order(nb);
          // The Translation is the best hypothesis.
          REQUIRE(r.text == nb[0].text);
          REQUIRE(r.num_tokens == nb[0].num_tokens);
          REQUIRE(std::vector<int>(r.tokens, r.tokens + r.num_tokens) ==
                  std::vector<int>(nb[0].tokens, nb[0].tokens + nb[0].num_tokens));
          REQUIRE(r.steps == nb[0].length);
          REQUIRE(r.eos == nb[0].eos);
          std::vector<float> probs(r.probs, r.probs + r.num_tokens);
          REQUIRE_CLOSE(probs, fx.f(p + "probs"), 1e-5);
          const int steps = r.steps, S = r.S;
          if (!transformer) {
            std::vector<float> w((size_t)steps * S);
            for (int t = 0; t < steps; ++t)
              for (int s = 0; s < S; ++s) w[(size_t)t * S + s] = r.cross_at(0, t, 0, s);
            REQUIRE_CLOSE(w, fx.f(p + "attn"), 1e-5);
            continue;
          }
          const int NH = r.heads;
          for (int l = 0; l < r.layers; ++l) {
            std::vector<float> ds((size_t)steps * NH * steps), cr((size_t)steps * NH * S);
            for (int t = 0; t < steps; ++t)
              for (int h = 0; h < NH; ++h) {
                for (int k = 0; k < steps; ++k) ds[((size_t)t * NH + h) * steps + k] = r.dec_self_at(l, t, h, k);
                for (int s = 0; s < S; ++s) cr[((size_t)t * NH + h) * S + s] = r.cross_at(l, t, h, s);
              }
            REQUIRE_CLOSE(ds, fx.f(p + "dec_self." + std::to_string(l)), 1e-5);
            REQUIRE_CLOSE(cr, fx.f(p + "cross." + std::to_string(l)), 1e-5);
          }
        }
      }
}

const std::vector<std::string> kBeamSentences = {
    "go .", "i lost .", "he's calm .", "i'm home .", "we won .", "i'm tired !",
    "who is this zyzzyva ?", "this sentence is a great deal longer than the ten steps ."};

}  // namespace

TEST_CASE("Transformer beam search matches the PyTorch reference (both position modes)", "[beam]") {
  check_model("transformer");
}

TEST_CASE("Bahdanau beam search matches the PyTorch reference", "[beam]") {
  check_model("bahdanau");
}

TEST_CASE("beam_size 1 is greedy decoding, bit for bit", "[beam]") {
  const char* name = GENERATE("transformer-d2l", "bahdanau-d2l");
  const bool compat = GENERATE(false, true);
  INFO(name << (compat ? " d2l_compat" : ""));
  auto model = Model::load(test::model_path(name));
  Limits lim;
  lim.max_beam = 4;
  Translator beam(model, lim), greedy(model);
  DecodeOptions o;
  o.d2l_compat = compat;
  for (const auto& s : kBeamSentences) {
    INFO(s);
    const Translation& g = greedy.translate(s, o);
    DecodeOptions o1 = o;
    o1.beam_size = 1;
    o1.length_penalty = 0.75f;  // no effect on greedy tokens
    const Translation& b = beam.translate(s, o1);
    REQUIRE(b.text == g.text);
    REQUIRE(b.steps == g.steps);
    REQUIRE(b.eos == g.eos);
    REQUIRE(std::vector<int>(b.tokens, b.tokens + b.num_tokens) ==
            std::vector<int>(g.tokens, g.tokens + g.num_tokens));
    for (int k = 0; k < g.num_tokens; ++k) REQUIRE(b.probs[k] == g.probs[k]);
    const int ncross = (g.layers ? g.layers * g.heads : 1) * g.ld * g.S;
    for (int k = 0; k < ncross; ++k) REQUIRE(b.cross[k] == g.cross[k]);
    // The n-best list of greedy decoding: one hypothesis, the translation itself.
    const NBest nb = beam.nbest(0);
    REQUIRE(nb.size == 1);
    REQUIRE(nb[0].text == b.text);
    REQUIRE(nb[0].length == b.steps);
    double lp = 0;
    for (int k = 0; k < b.num_tokens; ++k) lp += std::log((double)b.probs[k]);
    REQUIRE(nb[0].logp <= lp + 1e-6);  // <eos> adds a negative term
    REQUIRE(nb[0].score == Approx(nb[0].logp / std::pow((double)nb[0].length, 0.75)));
  }
}

TEST_CASE("beam search: n-best order, step limit, batches, errors", "[beam]") {
  auto model = Model::load(test::model_path("transformer-d2l"));
  Limits lim;
  lim.max_beam = 4;
  lim.max_batch = 4;
  Translator tr(model, lim), single(model, lim);
  DecodeOptions o;
  o.beam_size = 4;
  SECTION("scores are non-increasing; the best hypothesis is the translation") {
    for (float alpha : {0.f, 0.75f, 2.f})
      for (const auto& s : kBeamSentences) {
        o.length_penalty = alpha;
        const Translation& r = tr.translate(s, o);
        const NBest nb = tr.nbest(0);
        REQUIRE(nb.size == 4);
        check_nbest_order(nb);
        REQUIRE(r.text == nb[0].text);
        for (const Hypothesis& h : nb) {
          REQUIRE(h.length == h.num_tokens + (h.eos ? 1 : 0));
          REQUIRE(h.logp < 0);
          REQUIRE(h.score == Approx(alpha == 0.f ? h.logp : h.logp / std::pow(h.length, alpha)));
          double lp = 0;
          for (int k = 0; k < h.num_tokens; ++k) lp += std::log((double)h.probs[k]);
          REQUIRE(h.logp <= lp + 1e-6);
        }
      }
  }
  SECTION("max_steps bounds every hypothesis") {
    o.max_steps = 2;
    const Translation& r = tr.translate("this sentence is a great deal longer .", o);
    REQUIRE(r.steps <= 2);
    for (const Hypothesis& h : tr.nbest(0)) {
      REQUIRE(h.length <= 2);
      if (!h.eos) REQUIRE(h.num_tokens == 2);
    }
  }
  SECTION("a batch gives the same hypotheses as one sentence at a time") {
    std::string_view s[4] = {"go .", "i lost .", "he's calm .", "who is this zyzzyva ?"};
    o.length_penalty = 0.75f;
    tr.translate_batch(s, 4, o);
    for (int i = 0; i < 4; ++i) {
      INFO(s[i]);
      const Translation& a = single.translate(s[i], o);
      REQUIRE(tr.result(i).text == a.text);
      const NBest x = tr.nbest(i), y = single.nbest(0);
      REQUIRE(x.size == y.size);
      for (int k = 0; k < x.size; ++k) {
        REQUIRE(x[k].text == y[k].text);
        REQUIRE(x[k].score == Approx(y[k].score).margin(1e-5));
      }
      for (int l = 0; l < a.layers; ++l)
        for (int t = 0; t < a.steps; ++t)
          for (int h = 0; h < a.heads; ++h)
            for (int k = 0; k < a.S; ++k)
              REQUIRE(tr.result(i).cross_at(l, t, h, k) == Approx(a.cross_at(l, t, h, k)).margin(1e-6));
    }
  }
  SECTION("limits are errors, not reallocations") {
    o.beam_size = 5;
    REQUIRE_THROWS_WITH(tr.translate("go .", o), Catch::Matchers::Contains("beam_size 5 is outside [1, max_beam = 4]"));
    o.beam_size = 0;
    REQUIRE_THROWS_WITH(tr.translate("go .", o), Catch::Matchers::Contains("beam_size 0"));
    Translator greedy(model);
    o.beam_size = 2;
    REQUIRE_THROWS_WITH(greedy.translate("go .", o), Catch::Matchers::Contains("max_beam = 1"));
    o.length_penalty = NAN;
    REQUIRE_THROWS_WITH(tr.translate("go .", o), Catch::Matchers::Contains("length_penalty"));
    Limits bad;
    bad.max_beam = 0;
    REQUIRE_THROWS_WITH(Translator(model, bad), Catch::Matchers::Contains("max_beam must be in [1, 64]"));
    bad.max_beam = 65;
    REQUIRE_THROWS_WITH(Translator(model, bad), Catch::Matchers::Contains("max_beam must be in [1, 64]"));
    REQUIRE_THROWS_WITH(tr.nbest(4), Catch::Matchers::Contains("out of range"));
  }
  SECTION("max_beam reserves the memory up front") {
    Limits one;
    REQUIRE(Translator::required_bytes(*model, lim) > Translator::required_bytes(*model, one));
  }
}
