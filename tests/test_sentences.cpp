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
std::vector<std::string> cut(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view v : split_sentences(text)) out.emplace_back(v);
  return out;
}
using V = std::vector<std::string>;
}  // namespace

TEST_CASE("split_sentences ends a sentence at . ! ? and a space", "[sentences]") {
  CHECK(cut("I'm home. I'm happy. Where is the station? Tom likes cats.") ==
        V{"I'm home.", "I'm happy.", "Where is the station?", "Tom likes cats."});
  CHECK(cut("Run! Now.") == V{"Run!", "Now."});
  CHECK(cut("Really?! Yes!!! OK") == V{"Really?!", "Yes!!!", "OK"});
  // typed on a phone: lowercase, no final full stop
  CHECK(cut("i'm home. i'm happy") == V{"i'm home.", "i'm happy"});
  // the book's preprocessed form, a space before each mark
  CHECK(cut("go . i lost . he's calm .") == V{"go .", "i lost .", "he's calm ."});
  // closing marks stay with their sentence
  CHECK(cut("\"Is she young?\" \"Yes, she is.\"") == V{"\"Is she young?\"", "\"Yes, she is.\""});
  CHECK(cut("(He left.) She stayed.") == V{"(He left.)", "She stayed."});
  CHECK(cut("\u201cHi.\u201d \u2018Bye.\u2019 \u00abSalut.\u00bb Ok.") ==
        V{"\u201cHi.\u201d", "\u2018Bye.\u2019", "\u00abSalut.\u00bb", "Ok."});
  // any space: tabs, new lines, no-break spaces
  CHECK(cut("One.\tTwo.\nThree.\u00a0Four.\u202fFive.") == V{"One.", "Two.", "Three.", "Four.", "Five."});
  CHECK(cut("Ça va. À demain.") == V{"Ça va.", "À demain."});
}

TEST_CASE("split_sentences keeps a period that ends no sentence", "[sentences]") {
  CHECK(cut("It costs 3.5 euros. Fine.") == V{"It costs 3.5 euros.", "Fine."});
  CHECK(cut("Mr. Smith met Dr. Jones and Mrs. Brown.") == V{"Mr. Smith met Dr. Jones and Mrs. Brown."});
  CHECK(cut("mr. smith is here. ok") == V{"mr. smith is here.", "ok"});
  CHECK(cut("Fruit, e.g. apples. Or i.e. Pears.") == V{"Fruit, e.g. apples.", "Or i.e. Pears."});
  CHECK(cut("J. K. Rowling wrote it. It was I. Yes.") == V{"J. K. Rowling wrote it.", "It was I.", "Yes."});
  // after etc, a.m., "U.S." and the like: an end only before a capital or a digit
  CHECK(cut("Apples, pears, etc. and plums.") == V{"Apples, pears, etc. and plums."});
  CHECK(cut("Apples, pears, etc. Then plums.") == V{"Apples, pears, etc.", "Then plums."});
  CHECK(cut("I live in the U.S. now. I live in the U.S. It is big.") ==
        V{"I live in the U.S. now.", "I live in the U.S.", "It is big."});
  CHECK(cut("Come at 9 a.m. sharp. At 5 p.m. \"Tom\" leaves.") ==
        V{"Come at 9 a.m. sharp.", "At 5 p.m.", "\"Tom\" leaves."});
  // an ellipsis the same
  CHECK(cut("Wait... what? I waited\u2026 Nobody came. So... 3 left.") ==
        V{"Wait... what?", "I waited\u2026", "Nobody came.", "So...", "3 left."});
  // no space after: one word
  CHECK(cut("See www.example.com.Now or U.S.A!Yes") == V{"See www.example.com.Now or U.S.A!Yes"});
}

TEST_CASE("split_sentences: spaces, marks alone, spans", "[sentences]") {
  CHECK(cut("").empty());
  CHECK(cut("  \t\n ").empty());
  CHECK(cut("   Hello.   ") == V{"Hello."});
  CHECK(cut("Hello") == V{"Hello"});
  CHECK(cut("...") == V{"..."});
  // marks with no word before them are not a sentence of their own
  CHECK(cut("!!! Hi. ? Ok") == V{"!!! Hi.", "? Ok"});
  CHECK(cut("Hi.   ") == V{"Hi."});
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
  CHECK(cut("\xff\xfe. Ok.") == V{"\xff\xfe.", "Ok."});
  CHECK(cut("Ok.\xc2") == V{"Ok.\xc2"});
  CHECK(cut("Ok. \xe2\x80") == V{"Ok.", "\xe2\x80"});
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
