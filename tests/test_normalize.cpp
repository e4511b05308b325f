// The translator's input normalization (normalize.h): each rule, the buffer contract, errors,
// and a translator reading typographic forms exactly as the straight ones, a sentence in
// capitals or in Title Case as the lowercased one, and a sentence with emoji as the words
// alone.
#include <catch2/catch.hpp>
#include <string>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "attnlite/normalize.h"
#include "attnlite/translate.h"
#include "fixture.h"

using namespace attnlite;

TEST_CASE("normalize_source folds what the corpus never writes", "[normalize]") {
  CHECK(normalize_source("I\u2019m home.") == "I'm home.");
  CHECK(normalize_source("\u2018a\u2019 \u201ab\u201b \u2032 \u02bc \u02b9 \u02bb ` \u00b4 \u2039 \u203a") ==
        "'a' 'b' ' ' ' ' ' ' ' '");
  CHECK(normalize_source("\u201cHi\u201d \u201eyo\u201f \u00absalut\u00bb \u2033") == "\"Hi\" \"yo\" \"salut\" \"");
  CHECK(normalize_source("a\u2010b\u2011c\u2012d\u2013e\u2014f\u2015g \u2212 1 \ufe58 \ufe63") ==
        "a-b-c-d-e-f-g - 1 - -");
  CHECK(normalize_source("Wait\u2026") == "Wait...");
  CHECK(normalize_source("\uff28\uff45\uff4c\uff4c\uff4f\uff01 \uff5e\uff01") == "Hello! ~!");
  // A full-width grave accent is a grave accent, which is an apostrophe: idempotent (found by
  // fuzz_tokenizer: one pass gave '`', a second "'").
  CHECK(normalize_source("I\uff40m \uff37\uff40") == "I'm W'");
  CHECK(normalize_source("\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06") == "fffiflffifflstst");
  CHECK(normalize_source("\u200bso\u00adft\u200c\u200d\u2060\ufeff") == "soft");
  // emoji, with their variation selectors, skin tones, keycaps, joiners and tags
  CHECK(normalize_source("I\u2019m home \U0001F60A") == "I'm home");
  CHECK(normalize_source("I \u2764\ufe0f you\u2728 \U0001F44B\U0001F3FD\u200d\U0001F469 1\ufe0f\u20e3") ==
        "I you 1");
  CHECK(normalize_source("\U0001F3F4\U000E0067\U000E0062\U000E007F go \u231a\u231b\u23e9\u23fa\u2b50") == "go");
  CHECK(normalize_source("\U0001F000\U0001FAFF\u2600\u27bf\u2b00\u2bff\ufe00\ufe0f\U000E0020 ok") == "ok");
  CHECK(normalize_source(" \t a\u00a0\u202f\u2000\u200a\u3000b\r\n\v\f\u0085\u1680\u2028\u2029\u205fc  ") == "a b c");
}

TEST_CASE("normalize_source lowercases a sentence in capitals", "[normalize]") {
  CHECK(normalize_source("I'M HOME.") == "i'm home.");
  CHECK(normalize_source("WHERE IS THE STATION?") == "where is the station?");
  CHECK(normalize_source("I\u2019M  HOME\u2026") == "i'm home...");        // after the other rules
  CHECK(normalize_source("\uff28\uff25\uff2c\uff2c\uff2f\uff01") == "hello!");  // full-width capitals
  CHECK(normalize_source("TOM, 19, \u00c9MILE") == "tom, 19, \u00c9mile");  // A-Z only: \u00c9 stays
  CHECK(normalize_source("OK") == "ok");
  // Kept: one capital is no sentence in capitals, and one of a-z anywhere keeps the case.
  for (const char* s : {"I", "I.", "A 1 2 3", "I'M HOMe", "TOM is here.", "NASA and the ESA", "x Y Z",
                        "\u00c9T\u00c9", "\u0391\u0392\u0393 \u041f\u0420\u0418"})
    CHECK(normalize_source(s) == s);
}

TEST_CASE("normalize_source lowercases a sentence in Title Case", "[normalize]") {
  CHECK(normalize_source("Where Is The Station?") == "where is the station?");
  CHECK(normalize_source("I Love You") == "i love you");
  CHECK(normalize_source("I\u2019m Home Now.") == "i'm home now.");           // after the other rules
  CHECK(normalize_source("Tom Loves Mary, 19 Times!") == "tom loves mary, 19 times!");
  CHECK(normalize_source("'Tis The Season") == "'tis the season");
  CHECK(normalize_source("\uff37\uff48\uff45\uff52\uff45 \uff29\uff53 \uff29\uff54") == "where is it");
  CHECK(normalize_source("Caf\u00e9 Au Lait") == "caf\u00e9 au lait");      // A-Z only
  // Kept: two words, a word with two capitals or none, a word after a letter not in A-Z.
  for (const char* s : {"Thank You", "Happy New", "I Love NY", "McDonald Is Here", "O'Brien Is Here",
                        "Tom loves Mary.", "Where is The Station", "\u00c9mile Is Here", "Go Home"})
    CHECK(normalize_source(s) == s);
}

TEST_CASE("normalize_source capitalizes a word in a-z after a title", "[normalize]") {
  CHECK(normalize_source("mr smith is here") == "mr Smith is here");
  CHECK(normalize_source("i met mrs. brown and ms kaya") == "i met mrs. Brown and ms Kaya");
  CHECK(normalize_source("MR. SMITH IS HERE") == "mr. Smith is here");    // after capitals
  CHECK(normalize_source("Mr. Smith Is Here") == "mr. Smith is here");    // after Title Case
  CHECK(normalize_source("Mr smith, MRS　jones") == "Mr Smith, MRS Jones");  // any case
  CHECK(normalize_source("(mr smith) \"ms kaya\"") == "(mr Smith) \"ms Kaya\"");
  CHECK(normalize_source("mr mr smith") == "mr Mr Smith");  // one after the other, left to right
  // A name after a title may start in a-z in a sentence in Title Case, which is lowercased,
  // then the name capitalized; applying the rules again changes nothing.
  CHECK(normalize_source("Mr smith Is Here") == "mr Smith is here");
  for (const char* s : {"Mr smith Jones", "MR xy", "mr smith", "Mr Smith Is Here", "MR sMITH X"})
    CHECK(normalize_source(normalize_source(s)) == normalize_source(s));
  // Kept: a capital already, no title, a title inside a word, "ms" after a number, a title
  // not followed by one space and a-z.
  for (const char* s : {"Mr. Smith is here.", "mrsmith is here", "hmmr smith", "o'mr smith",
                        "500 ms later", "5 mrs left", "mr.smith", "mr", "mrs. émile",
                        "ms. 5", "mr, smith", "dr. smith", "miss smith", "mr x y", "MR sMITH"})
    CHECK(normalize_source(s) == s);
}

TEST_CASE("normalize_source keeps everything else", "[normalize]") {
  for (const char* s : {"I'm home.", "Don't worry!", "i love you", "Déjà vu, ça va ?", "ΑΒΓ ПРИВЕТ 漢字",
                        "½ № ™ 𝐀 e\u0301", "a+b=c; (x) [y] {z} <w> @#$%^&*_|\\/",
                        // beside the emoji ranges, and text symbols
                        "\u25b6 \u25ff \u27c0 \u2aff \u2c00 \u2319 \u231c \u23e8 \u23fb \ufdff \ufe10 \u20e2 \u20e4",
                        "\U0001EFFF \U0001FB00 \U000E001F \U000E0080 \u00a9 \u00ae \u2122 \u2190"})
    CHECK(normalize_source(s) == s);
  CHECK(normalize_source("") == "");
  CHECK(normalize_source("   \u3000\u200b ") == "");
}

TEST_CASE("blank_source: only spaces, of any kind", "[normalize]") {
  for (const char* s : {"", " ", "\t\r\n", "\u00a0\u202f\u3000\u2009 \u2028"}) CHECK(blank_source(s));
  for (const char* s : {"a", " . ", "\u200b", " \u00ad ", "\U0001F60A", "\ufe0f", " \u3000x"})
    CHECK(!blank_source(s));
}

TEST_CASE("normalize_source: buffers and errors", "[normalize]") {
  const std::string in = "  \u201cOK\u201d\u2026  ";  // 15 bytes -> "\"ok\"..." (7, in capitals)
  char buf[32];
  REQUIRE(normalize_source(in, buf, in.size()) == 7);
  REQUIRE(std::string(buf, 7) == "\"ok\"...");
  REQUIRE(normalize_source(in, buf, 7) == 7);  // exactly enough
  REQUIRE_THROWS_AS(normalize_source(in, buf, 6), Error);
  REQUIRE(normalize_source("", buf, 0) == 0);
  for (const char* bad : {"\xff", "caf\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok \xe2\x82 ."})
    REQUIRE_THROWS_WITH(normalize_source(bad), Catch::Contains("not valid UTF-8"));
  // Never longer than the input, idempotent.
  for (const char* s :
       {"\ufb03\u2026\uff01", "a \u2014 b", "\u00ab x \u00bb", " x  y ", "I'M  HOME ", "\uff29 \uff2d"}) {
    const std::string once = normalize_source(s);
    CHECK(once.size() <= std::string(s).size());
    CHECK(normalize_source(once) == once);
  }
}

TEST_CASE("a translator reads typographic forms as the straight ones", "[normalize][translate]") {
  for (const char* name : {"transformer-fra-bpe", "transformer-fra"}) {
    auto model = Model::load(test::model_path(name));
    Translator tr(model);
    DecodeOptions o;
    o.attention = true;
    const Translation& s = tr.translate("I'm sure \"it's\" fine... don't worry.", o);
    const std::string straight(s.text);
    const int unknown = s.num_unknown;
    const Translation& r = tr.translate("  I\u2019m sure \u201cit\u2019s\u201d fine\u2026 don\u2019t\u00a0worry.\u200b", o);
    CHECK(std::string(r.text) == straight);
    CHECK(r.num_unknown == unknown);
    CHECK(model->source_tokens("I\u2019m") == model->source_tokens("I'm"));
    REQUIRE_THROWS_WITH(tr.translate("\u200b \u3000", o),
                        "empty sentence: nothing in it that a translator reads (emoji and invisible "
                        "characters are left out)");
    REQUIRE_THROWS_WITH(tr.translate(" \U0001F44D\U0001F3FD ", o),
                        Catch::StartsWith("empty sentence: nothing in it"));
    REQUIRE_THROWS_WITH(tr.translate(" \u3000\u00a0\t", o), "empty sentence");  // blank
    // A sentence in capitals reads as the lowercased one.
    const std::string lower(tr.translate("where is the station?", o).text);
    CHECK(std::string(tr.translate("WHERE IS THE STATION?", o).text) == lower);
    CHECK(model->source_tokens("I'M HOME.") == model->source_tokens("i'm home."));
    // So does a sentence in Title Case.
    CHECK(std::string(tr.translate("Where Is The Station?", o).text) == lower);
    // Emoji are not read: the translation of the words alone, and no unknown token.
    const Translation& w = tr.translate("I'm home.", o);
    const std::string words(w.text);
    const Translation& e = tr.translate("\U0001F3E0 I'm \u2764\ufe0f home. \U0001F60A\U0001F44B\U0001F3FD", o);
    CHECK(std::string(e.text) == words);
    CHECK(e.num_unknown == 0);
  }
}
