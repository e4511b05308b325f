// Byte-pair encoding (attnlite/bpe.h) against tools/bpe.py, and a sub-word Transformer with
// shared embeddings against PyTorch (tests/fixtures/bpe_tiny*, tools/make_bpe_fixtures.py).
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attnlite/bpe.h"
#include "attnlite/error.h"
#include "attnlite/model.h"
#include "attnlite/safetensors.h"
#include "attnlite/translate.h"
#include "fixture.h"
#include "st_writer.h"

using namespace attnlite;
using nlohmann::json;

namespace {

json bpe_expected() {
  std::ifstream f(std::string(ATTNLITE_FIXTURES_DIR) + "/bpe_tiny.json");
  REQUIRE(f);
  return json::parse(f);
}

std::string joined(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : " ") + s;
  return r;
}

Vocab small_vocab(std::vector<std::string> extra) {
  std::vector<std::string> t{"<unk>", "<pad>", "<bos>", "<eos>"};
  t.insert(t.end(), extra.begin(), extra.end());
  return Vocab(t);
}

std::string detok(const Vocab& v, const std::vector<std::string>& pieces) {
  std::vector<int> ids;
  for (const auto& p : pieces) ids.push_back(v.lookup(p));
  std::string out(256, '\0');
  out.resize(Bpe::detokenize(v, ids.data(), (int)ids.size(), out.data(), out.size()));
  return out;
}

// The model file with its attnlite.bpe replaced.
std::shared_ptr<const Model> with_table(const std::string& table) {
  auto st = SafeTensors::load(test::fixture_path("bpe_tiny"));
  auto f = test::StFile::from(st);
  f.metadata["attnlite.bpe"] = table;
  const auto bytes = f.bytes();
  return Model::from_bytes(bytes.data(), bytes.size());
}

}  // namespace

TEST_CASE("bpe: the words of a sentence, as tools/bpe.py splits them") {
  auto words = [](const std::string& s) {
    std::string out(Bpe::words_capacity(s.size()), '\0');
    out.resize(Bpe::words(s, out.data(), out.size()));
    return out;
  };
  CHECK(words("Where is the station?") == "Where_ is_ the_ station_ ?_");
  CHECK(words("  Hi,  you!  ") == "Hi_ ,_ you_ !_");
  CHECK(words("Cours\u202f!") == "Cours_ !_");
  CHECK(words("a\tb\nc") == "a_ b_ c_");
  CHECK(words("Wait...") == "Wait_ ._ ._ ._");
  CHECK(words("3.14") == "3_ .14_");  // the book's rule: a space before every '.'
  CHECK(words("") == "");
  CHECK(words("   ") == "");
  CHECK_THROWS_WITH(words("caf\xC3"), Catch::Contains("not valid UTF-8"));
}

TEST_CASE("bpe: detokenizing joins pieces, keeps the corpus's spacing before ? ! :") {
  const Vocab v = small_vocab({"O", "ù_", "est_", "la_", "ga", "re_", "?_", "._", ",_", "!_",
                               ":_", "Je_", "_", "vois_", "J'", "ai_", "faim_"});
  CHECK(detok(v, {"O", "ù_", "est_", "la_", "ga", "re_", "?_"}) == "Où est la gare ?");
  CHECK(detok(v, {"J'", "ai_", "faim_", "._"}) == "J'ai faim.");
  CHECK(detok(v, {"Je_", "vois_", ",_", "la_", "gare_"}).rfind("Je vois, la", 0) == 0);
  CHECK(detok(v, {"Je_", "._", "._", "._"}) == "Je...");
  CHECK(detok(v, {"Je_", ":_", "vois_", "!_"}) == "Je : vois !");
  CHECK(detok(v, {"_", "Je_", "_"}) == "Je");             // empty words vanish
  CHECK(detok(v, {"ga"}) == "ga");                         // no end-of-word at the end
  CHECK(detok(v, {"<unk>", "est_"}) == "<unk>est");         // as tools/bpe.py writes it
  CHECK(detok(v, {}) == "");
}

TEST_CASE("bpe: the tiny model's pieces and translations equal tools/bpe.py's and PyTorch's") {
  const json ex = bpe_expected();
  auto f32 = Model::load(test::fixture_path("bpe_tiny"));
  auto i8 = Model::load(test::fixture_path("bpe_tiny-int8"));
  REQUIRE(f32->bpe());
  CHECK(f32->bpe()->num_merges() == 300);
  CHECK(i8->is_int8());
  Limits lim;
  Translator tf(f32, lim), ti(i8, lim);
  DecodeOptions o;
  for (const auto& e : ex["sentences"]) {
    const std::string src = e["source"];
    INFO(src);
    CHECK(joined(f32->source_tokens(src)) == joined(e["pieces"].get<std::vector<std::string>>()));
    for (auto* pair : {&tf, &ti}) {
      const json& want = e[pair == &tf ? "f32" : "int8"];
      const Translation& r = pair->translate(src, o);
      std::vector<int> ids(r.tokens, r.tokens + r.num_tokens);
      CHECK(ids == want["ids"].get<std::vector<int>>());
      CHECK(std::string(r.text) == want["text"].get<std::string>());
    }
  }
  const Translation& r = tf.translate("Look at \xE6\xBC\xA2\xE5\xAD\x97 now.", o);
  CHECK(r.num_unknown == 2);
  CHECK(tf.translate("Tom bought a Zyxquorp.", o).num_unknown == 0);
}

TEST_CASE("bpe: a broken merge table is refused with a message") {
  auto st = SafeTensors::load(test::fixture_path("bpe_tiny"));
  json t = json::parse(st.metadata().at("attnlite.bpe"));
  auto refused = [&](const json& table, const std::string& msg) {
    INFO(table.dump().substr(0, 200));
    CHECK_THROWS_WITH(with_table(table.dump()), Catch::Contains(msg));
  };
  CHECK_NOTHROW(with_table(t.dump()));
  CHECK_THROWS_WITH(with_table("{\"end_of_word\":"), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(with_table("[1,2]"), Catch::Contains("not a JSON object"));
  json u = t;
  u.erase("merges");
  refused(u, "lacks 'merges'");
  u = t;
  u["end_of_word"] = "</w>";
  refused(u, "end_of_word");
  u = t;
  u["alphabet"].push_back(u["alphabet"][0]);
  refused(u, "appears twice");
  u = t;
  u["alphabet"][0] = "ab";
  refused(u, "not one UTF-8 character");
  u = t;
  u["alphabet"][0] = "\xFF";
  CHECK_THROWS(with_table(u.dump(-1, ' ', false, json::error_handler_t::replace)));
  u = t;
  u["merges"].insert(u["merges"].begin(), json::array({"zz", "q"}));
  refused(u, "not both symbols");
  u = t;
  u["merges"][0] = json::array({"a"});
  refused(u, "is not a pair");
  u = t;
  u["merges"].push_back(json::array({"Q", "Q"}));  // "QQ" is no vocabulary token
  refused(u, "is not in the vocabulary");
  u = t;
  u["alphabet"] = json::array({"_", "a"});
  refused(u, "not both symbols");  // the merges need characters no longer there
  u = t;
  u["merges"] = 3;
  refused(u, "merges is not a JSON array");
}

TEST_CASE("bpe: shared embeddings need one vocabulary") {
  auto st = SafeTensors::load(test::fixture_path("bpe_tiny"));
  auto f = test::StFile::from(st);
  json vocab = json::parse(f.metadata["attnlite.tgt_vocab"]);
  std::swap(vocab[4], vocab[5]);
  f.metadata["attnlite.tgt_vocab"] = vocab.dump();
  const auto bytes = f.bytes();
  CHECK_THROWS_WITH(Model::from_bytes(bytes.data(), bytes.size()),
                    Catch::Contains("shared_embeddings needs one vocabulary"));
}
