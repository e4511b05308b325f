// Translation parity with PyTorch's predict_seq2seq on the shipped models: the book's four
// sentences and 50 from the corpus, identical tokens and attention weights within 1e-5 + E
// of the exact values (below; fixtures from tools/make_translation_fixtures.py).
#include <nlohmann/json.hpp>

#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "fixture.h"
#include "families/transformer/transformer.h"  // the bound weights
#include "model/model_impl.h"

using namespace attnlite;
using attnlite::test::Fixture;

namespace {

std::vector<std::string> meta_list(const Fixture& fx, const std::string& key) {
  return nlohmann::json::parse(fx.st.meta(key)).get<std::vector<std::string>>();
}

// fixture: translate_<...>; model: the file the fixture was made from. Runs on every CPU
// kernel table and, where a GPU is present in a CUDA build, on Device::CUDA.
// The fixtures are PyTorch's float64 run: the model's exact values (int8 models too: scale * q
// is exact in float64). PyTorch's float32 run is E away from them at worst (metadata
// float32_error: 9.4e-6 for the Transformer, 2.1e-7 for Bahdanau, 7.7e-6 and 2.7e-7 for their
// int8 files), so 1e-5 against PyTorch's float32 run meant |attnlite - exact| <= 1e-5 + E: the
// bound here. The float32 reference failed computations no farther from the exact values than
// PyTorch's own: the scalar kernels on 32-bit Arm (1.16e-5) and on aarch64 (1.10e-5, int8),
// the GPU (1.16e-5, int8).
double reference_tolerance(const Fixture& fx) {
  const double e = std::stod(fx.st.meta("float32_error"));
  REQUIRE(e >= 0);
  REQUIRE(e < 1e-5);  // PyTorch's float32 as far off as the bound itself: a suspect fixture
  return 1e-5 + e;
}

void check_model(const std::string& fixture, const std::string& model_file) {
  FOR_EACH_KERNEL_TABLE();
  const Device device = GENERATE(Device::CPU, Device::CUDA);
  if (device == Device::CUDA) {
    if (kernels_ == ops::KernelTable::Simd) return;  // the CPU kernel table plays no part there
    if (!cuda_available()) {
#if ATTNLITE_HAVE_CUDA
      WARN("no CUDA device: " << fixture << " checked on the CPU only");
#endif
      return;
    }
  }
  Fixture fx(fixture);
  const double tol = reference_tolerance(fx);
  const std::string name = fixture + (device == Device::CUDA ? " (cuda)" : "");
  auto model = Model::load(model_file);
  Limits lim;
  lim.device = device;
  Translator tr(model, lim);
  const auto sentences = meta_list(fx, "sentences");
  const auto modes = meta_list(fx, "modes");
  REQUIRE(sentences.size() == 54);
  const bool transformer = std::string(model->kind_name()) == "transformer";
  for (const auto& mode : modes) {
    DecodeOptions opts;
    opts.d2l_compat = mode == "d2l";
    for (size_t i = 0; i < sentences.size(); ++i) {
      const std::string p = mode + ".s" + std::to_string(i) + ".";
      INFO(name << " mode " << mode << " sentence " << i << ": " << sentences[i]);
      const Translation& r = tr.translate(sentences[i], opts);
      std::vector<int> toks(r.tokens, r.tokens + r.num_tokens);
      REQUIRE(toks == fx.ids(p + "tokens"));
      const int steps = fx.ids(p + "steps")[0];
      REQUIRE(r.steps == steps);
      const int S = r.S;
      if (!transformer) {
        std::vector<float> a((size_t)steps * S);
        for (int t = 0; t < steps; ++t)
          for (int s = 0; s < S; ++s) a[(size_t)t * S + s] = r.cross_at(0, t, 0, s);
        REQUIRE_CLOSE(a, fx.f(p + "attn"), tol);
        continue;
      }
      const int NH = r.heads;
      for (int l = 0; l < r.layers; ++l) {
        const std::string ls = std::to_string(l);
        std::vector<float> enc(r.enc_self + (size_t)l * NH * S * S, r.enc_self + (size_t)(l + 1) * NH * S * S);
        REQUIRE_CLOSE(enc, fx.f(p + "enc_attn." + ls), tol);
        std::vector<float> ds((size_t)steps * NH * steps), cr((size_t)steps * NH * S);
        for (int t = 0; t < steps; ++t)
          for (int h = 0; h < NH; ++h) {
            for (int k = 0; k < steps; ++k) ds[((size_t)t * NH + h) * steps + k] = r.dec_self_at(l, t, h, k);
            for (int s = 0; s < S; ++s) cr[((size_t)t * NH + h) * S + s] = r.cross_at(l, t, h, s);
          }
        REQUIRE_CLOSE(ds, fx.f(p + "dec_self." + ls), tol);
        REQUIRE_CLOSE(cr, fx.f(p + "cross." + ls), tol);
      }
    }
  }
}

}  // namespace

TEST_CASE("Transformer translations match PyTorch predict_seq2seq (both position modes)", "[translate]") {
  check_model("translate_transformer", test::model_path("transformer-d2l"));
}

TEST_CASE("Bahdanau translations match PyTorch predict_seq2seq", "[translate]") {
  check_model("translate_bahdanau", test::model_path("bahdanau-d2l"));
}

// Int8 models (tools/quantize.py): the int8 kernels against PyTorch on the dequantized
// weights, same sentences (tools/make_int8_fixtures.py).
TEST_CASE("int8 Transformer translations match PyTorch on the dequantized weights", "[translate][int8]") {
  auto m = Model::load(test::fixture_path("transformer-d2l-int8"));
  REQUIRE(static_cast<const families::TransformerModel&>(*m->impl().model).weights.dense.int8());
  REQUIRE(static_cast<const families::TransformerModel&>(*m->impl().model).weights.enc_embedding.int8());
  check_model("translate_int8_transformer", test::fixture_path("transformer-d2l-int8"));
}

TEST_CASE("int8 Bahdanau translations match PyTorch on the dequantized weights", "[translate][int8]") {
  check_model("translate_int8_bahdanau", test::fixture_path("bahdanau-d2l-int8"));
}

TEST_CASE("batched translation gives the same results as one at a time", "[translate]") {
  auto model = Model::load(test::model_path("transformer-d2l"));
  Limits lim;
  lim.max_batch = 4;
  Translator batch(model, lim), single(model);
  std::string_view s[4] = {"go .", "i lost .", "he's calm .", "i'm home ."};
  batch.translate_batch(s, 4);
  for (int i = 0; i < 4; ++i) {
    const Translation& a = batch.result(i);
    const Translation& b = single.translate(s[i]);
    REQUIRE(a.text == b.text);
    REQUIRE(a.steps == b.steps);
    for (int l = 0; l < a.layers; ++l)
      for (int t = 0; t < a.steps; ++t)
        for (int h = 0; h < a.heads; ++h)
          for (int k = 0; k < a.S; ++k) REQUIRE(a.cross_at(l, t, h, k) == Approx(b.cross_at(l, t, h, k)).margin(1e-6));
  }
  REQUIRE_THROWS_WITH(batch.translate_batch(s, 5), Catch::Matchers::Contains("max_batch = 4"));
}

// Without attention weights the encoder runs only up to the batch's longest source (the
// later steps are padding, masked out of every attention): the same tokens and probabilities
// as a run that records the weights over all num_steps positions, one at a time and batched
// with sources of different lengths, greedy and beam 4, on both whole-corpus models.
TEST_CASE("text-only translation skips the padding steps with the same results", "[translate]") {
  for (const char* name : {"transformer-fra", "transformer-fra-bpe"}) {
    auto model = Model::load(test::model_path(name));
    Limits lim;
    lim.max_batch = 3;
    lim.max_beam = 4;
    Translator text(model, lim), full(model, lim);
    const bool bpe = model->bpe() != nullptr;
    std::string_view s[3] = {bpe ? "Go." : "go .", bpe ? "I'm home." : "i'm home .",
                             bpe ? "Tom wants to know where you bought your new bicycle."
                                 : "tom wants to know where you bought your new bicycle ."};
    for (int beam : {1, 4}) {
      DecodeOptions t, f;
      t.attention = false;
      t.beam_size = f.beam_size = beam;
      INFO(name << " beam " << beam);
      text.translate_batch(s, 3, t);
      full.translate_batch(s, 3, f);
      for (int i = 0; i < 3; ++i) {
        const Translation& a = text.result(i);
        const Translation& b = full.result(i);
        REQUIRE(a.src_valid < a.S);  // padding there is to skip
        REQUIRE(a.text == b.text);
        REQUIRE(a.num_tokens == b.num_tokens);
        for (int k = 0; k < a.num_tokens; ++k) {
          REQUIRE(a.tokens[k] == b.tokens[k]);
          REQUIRE(a.probs[k] == Approx(b.probs[k]).margin(1e-6));
        }
      }
      // one at a time (each replaces the text session's results; full's stay)
      for (int i = 0; i < 3; ++i) {
        const Translation& one = text.translate(s[i], t);
        REQUIRE(std::string(one.text) == std::string(full.result(i).text));
      }
    }
  }
}

TEST_CASE("source handling follows predict_seq2seq", "[translate]") {
  auto model = Model::load(test::model_path("transformer-d2l"));
  Translator tr(model);
  const auto& r = tr.translate("i'm home .");
  REQUIRE(r.src_len == 4);  // three tokens + <eos>
  REQUIRE(r.src_valid == 4);
  REQUIRE(r.src_ids[3] == model->src_vocab().eos_id);
  REQUIRE(r.src_ids[4] == model->src_vocab().pad_id);
  REQUIRE(!r.truncated);
  // Scores are probabilities; every attention row sums to 1.
  for (int k = 0; k < r.num_tokens; ++k) REQUIRE((r.probs[k] > 0.f && r.probs[k] <= 1.f));
  const auto& u = tr.translate("zyzzyva qwxz .");
  REQUIRE(u.num_unknown == 2);
  const auto& lng = tr.translate("a b c d e f g h i j k l");
  REQUIRE(lng.truncated);
  REQUIRE(lng.src_valid == 10);
  REQUIRE(lng.src_len == 13);
  REQUIRE_THROWS_WITH(tr.translate("   "), Catch::Matchers::Contains("empty sentence"));
  REQUIRE_THROWS_WITH(tr.translate(std::string(5000, 'a')), Catch::Matchers::Contains("too long"));
  REQUIRE_THROWS_WITH(tr.translate("\xff"), Catch::Matchers::Contains("not valid UTF-8"));
  DecodeOptions o;
  o.max_steps = 2;
  const auto& m = tr.translate("i'm home .", o);
  REQUIRE(m.steps == 2);
  REQUIRE(m.num_tokens == 2);
  REQUIRE(!m.eos);
  o.max_steps = 11;  // over the session's limit: an error, not a reallocation
  REQUIRE_THROWS_WITH(tr.translate("i'm home .", o), Catch::Matchers::Contains("max_tgt_steps = 10"));
}
