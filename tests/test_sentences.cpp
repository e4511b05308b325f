// Cutting a text into sentences (sentences.h): each rule, the spans' contract, and what a
// translator makes of a text of several sentences cut so against the same sentences alone.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "attnlite/model.h"
#include "attnlite/sentences.h"
#include "attnlite/translate.h"
#include "fixture.h"

using namespace attnlite;

namespace {
std::vector<std::string> sentences_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view v : split_sentences(text)) out.emplace_back(v);
  return out;
}
using SentenceList = std::vector<std::string>;
}  // namespace

TEST_CASE("split_sentences ends a sentence at . ! ? and a space", "[sentences]") {
  CHECK(sentences_of("I'm home. I'm happy. Where is the station? Tom likes cats.") ==
        SentenceList{"I'm home.", "I'm happy.", "Where is the station?", "Tom likes cats."});
  CHECK(sentences_of("Run! Now.") == SentenceList{"Run!", "Now."});
  CHECK(sentences_of("Really?! Yes!!! OK") == SentenceList{"Really?!", "Yes!!!", "OK"});
  // typed on a phone: lowercase, no final full stop
  CHECK(sentences_of("i'm home. i'm happy") == SentenceList{"i'm home.", "i'm happy"});
  // the book's preprocessed form, a space before each mark
  CHECK(sentences_of("go . i lost . he's calm .") == SentenceList{"go .", "i lost .", "he's calm ."});
  // closing marks stay with their sentence
  CHECK(sentences_of("\"Is she young?\" \"Yes, she is.\"") == SentenceList{"\"Is she young?\"", "\"Yes, she is.\""});
  CHECK(sentences_of("(He left.) She stayed.") == SentenceList{"(He left.)", "She stayed."});
  CHECK(sentences_of("\u201cHi.\u201d \u2018Bye.\u2019 \u00abSalut.\u00bb Ok.") ==
        SentenceList{"\u201cHi.\u201d", "\u2018Bye.\u2019", "\u00abSalut.\u00bb", "Ok."});
  // any space: tabs, new lines, no-break spaces
  CHECK(sentences_of("One.\tTwo.\nThree.\u00a0Four.\u202fFive.") == SentenceList{"One.", "Two.", "Three.", "Four.", "Five."});
  CHECK(sentences_of("Ça va. À demain.") == SentenceList{"Ça va.", "À demain."});
}

TEST_CASE("split_sentences keeps a period that ends no sentence", "[sentences]") {
  CHECK(sentences_of("It costs 3.5 euros. Fine.") == SentenceList{"It costs 3.5 euros.", "Fine."});
  CHECK(sentences_of("Mr. Smith met Dr. Jones and Mrs. Brown.") == SentenceList{"Mr. Smith met Dr. Jones and Mrs. Brown."});
  CHECK(sentences_of("mr. smith is here. ok") == SentenceList{"mr. smith is here.", "ok"});
  CHECK(sentences_of("Fruit, e.g. apples. Or i.e. Pears.") == SentenceList{"Fruit, e.g. apples.", "Or i.e. Pears."});
  CHECK(sentences_of("J. K. Rowling wrote it. It was I. Yes.") == SentenceList{"J. K. Rowling wrote it.", "It was I.", "Yes."});
  // after etc, a.m., "U.S." and the like: an end only before a capital or a digit
  CHECK(sentences_of("Apples, pears, etc. and plums.") == SentenceList{"Apples, pears, etc. and plums."});
  CHECK(sentences_of("Apples, pears, etc. Then plums.") == SentenceList{"Apples, pears, etc.", "Then plums."});
  CHECK(sentences_of("I live in the U.S. now. I live in the U.S. It is big.") ==
        SentenceList{"I live in the U.S. now.", "I live in the U.S.", "It is big."});
  CHECK(sentences_of("Come at 9 a.m. sharp. At 5 p.m. \"Tom\" leaves.") ==
        SentenceList{"Come at 9 a.m. sharp.", "At 5 p.m.", "\"Tom\" leaves."});
  // an ellipsis the same
  CHECK(sentences_of("Wait... what? I waited\u2026 Nobody came. So... 3 left.") ==
        SentenceList{"Wait... what?", "I waited\u2026", "Nobody came.", "So...", "3 left."});
  // no space after: one word
  CHECK(sentences_of("See www.example.com.Now or U.S.A!Yes") == SentenceList{"See www.example.com.Now or U.S.A!Yes"});
}

TEST_CASE("split_sentences: spaces, marks alone, spans", "[sentences]") {
  CHECK(sentences_of("").empty());
  CHECK(sentences_of("  \t\n ").empty());
  CHECK(sentences_of("   Hello.   ") == SentenceList{"Hello."});
  CHECK(sentences_of("Hello") == SentenceList{"Hello"});
  CHECK(sentences_of("...") == SentenceList{"..."});
  // marks with no word before them are not a sentence of their own
  CHECK(sentences_of("!!! Hi. ? Ok") == SentenceList{"!!! Hi.", "? Ok"});
  CHECK(sentences_of("Hi.   ") == SentenceList{"Hi."});
  // spans: offsets into the text, a counting call, a short buffer
  const std::string text = "  Go. Run!  Hi ";
  CHECK(split_sentences(text, nullptr, 0) == 3);
  SentenceSpan sp[2] = {{99, 99}, {99, 99}};
  REQUIRE(split_sentences(text, sp, 2) == 3);
  CHECK(sp[0].begin == 2);
  CHECK(sp[0].end == 5);
  CHECK(sp[1].begin == 6);
  CHECK(sp[1].end == 10);
  // not UTF-8: bytes are bytes
  CHECK(sentences_of("\xff\xfe. Ok.") == SentenceList{"\xff\xfe.", "Ok."});
  CHECK(sentences_of("Ok.\xc2") == SentenceList{"Ok.\xc2"});
  CHECK(sentences_of("Ok. \xe2\x80") == SentenceList{"Ok.", "\xe2\x80"});
}

TEST_CASE("sentences cut from a text translate as they do alone", "[sentences][translate]") {
  auto model = Model::load(test::model_path("transformer-fra-bpe"));
  Limits lim;
  lim.max_batch = 4;
  Translator tr(model, lim);
  const std::string text = "I'm home. i'm happy! Where is the station?";
  const auto parts = split_sentences(text);
  REQUIRE(parts.size() == 3);
  std::vector<std::string> alone;
  for (std::string_view p : parts) {
    tr.translate(p, DecodeOptions{});
    alone.emplace_back(tr.result(0).text);
  }
  CHECK(alone[0] == "Je suis chez moi.");
  tr.translate_batch(parts.data(), (int)parts.size(), DecodeOptions{});
  for (size_t k = 0; k < parts.size(); ++k) CHECK(std::string(tr.result((int)k).text) == alone[k]);
}

TEST_CASE("Model::sentences: those a translator reads a token of, else the whole text",
          "[sentences]") {
  auto bpe_model = Model::load(test::model_path("transformer-fra-bpe"));
  auto words_model = Model::load(test::model_path("transformer-d2l"));
  auto texts_of = [](const Model& m, const std::string& text) {
    SentenceList out;
    for (const SentenceSpan& s : m.sentences(text)) out.push_back(text.substr(s.begin, s.end - s.begin));
    return out;
  };
  const std::string smile = "\xf0\x9f\x98\x80";  // U+1F600, which no model reads
  CHECK(texts_of(*bpe_model, "I'm home. Where is the station? " + smile) ==
        SentenceList{"I'm home.", "Where is the station?"});
  CHECK(texts_of(*bpe_model, smile + " Run! Now. " + smile + "! ") ==
        SentenceList{smile + " Run!", "Now.", smile + "!"});
  CHECK(texts_of(*words_model, "go . i lost .") == SentenceList{"go .", "i lost ."});
  // No sentence with a token, a blank text, invalid UTF-8: one span, the whole text (bytes
  // [0, size), spaces kept), for the translator to refuse with its reason.
  for (const std::string& whole : {smile + " " + smile + " ", std::string(), std::string("  "),
                                   std::string("Go. \xff. Run.")}) {
    const auto spans = bpe_model->sentences(whole);
    REQUIRE(spans.size() == 1);
    CHECK((spans[0].begin == 0 && spans[0].end == whole.size()));
  }
  Translator tr(bpe_model, Limits{});
  CHECK_THROWS_WITH(tr.translate(smile + " " + smile, DecodeOptions{}),
                    Catch::Contains("empty sentence"));
  CHECK_THROWS_WITH(tr.translate("Go. \xff. Run.", DecodeOptions{}), Catch::Contains("UTF-8"));
}
