// The book's preprocessing, tokenizer, vocabulary lookups and bleu.
#include <catch2/catch.hpp>

#include "attnlite/error.h"
#include "attnlite/vocab.h"

using namespace attnlite;

namespace {
std::string pre(std::string_view s) {
  std::string out(s.size() * 2 + 8, '\0');
  out.resize(preprocess_nmt(s, out.data(), out.size()));
  return out;
}
}  // namespace

TEST_CASE("preprocess_nmt as the book", "[tokenizer]") {
  REQUIRE(pre("Go.") == "go .");
  REQUIRE(pre("Run!") == "run !");
  REQUIRE(pre("I'm home.") == "i'm home .");
  REQUIRE(pre("go .") == "go .");                  // already spaced: unchanged
  REQUIRE(pre("Wait, what?") == "wait , what ?");
  REQUIRE(pre("Cours\u202f!") == "cours !");       // narrow no-break space
  REQUIRE(pre("Va\u00a0!") == "va !");             // no-break space
  REQUIRE(pre("ÉTÉ À Noël") == "été à noël");      // Latin-1 lowercase
  REQUIRE(pre(".") == ".");                        // no space before a leading mark
  REQUIRE(pre("") == "");
  REQUIRE_THROWS_WITH(pre("caf\xc3"), Catch::Matchers::Contains("not valid UTF-8"));
  REQUIRE_THROWS_AS(pre("\xc0\xaf"), Error);       // overlong
  REQUIRE_THROWS_AS(pre("\xed\xa0\x80"), Error);   // surrogate
  char small[4];
  REQUIRE_THROWS_WITH(preprocess_nmt("hello", small, sizeof small), Catch::Matchers::Contains("too long"));
}

TEST_CASE("tokenize splits on spaces", "[tokenizer]") {
  REQUIRE(tokenize("I'm home.") == std::vector<std::string>{"i'm", "home", "."});
  REQUIRE(tokenize("  two   spaces ") == std::vector<std::string>{"two", "spaces"});
  REQUIRE(tokenize("").empty());
}

TEST_CASE("Vocab lookups and validation", "[tokenizer]") {
  Vocab v({"<unk>", "<pad>", "<bos>", "<eos>", "va", "!"});
  REQUIRE(v.lookup("va") == 4);
  REQUIRE(v.lookup("!") == 5);
  REQUIRE(v.lookup("nope") == v.unk_id);
  REQUIRE((v.pad_id == 1 && v.bos_id == 2 && v.eos_id == 3));
  REQUIRE_THROWS_WITH(Vocab({"<pad>", "<unk>", "<bos>", "<eos>"}), Catch::Matchers::Contains("start with '<unk>'"));
  REQUIRE_THROWS_WITH(Vocab({"<unk>", "<pad>", "<bos>", "<eos>", "a", "a"}), Catch::Matchers::Contains("twice"));
  REQUIRE_THROWS_WITH(Vocab({"<unk>", "<pad>", "<bos>", "<eos>", "a b"}), Catch::Matchers::Contains("space"));
}

TEST_CASE("bleu(k=2) reproduces the book's printed scores", "[tokenizer]") {
  REQUIRE(bleu("va !", "va !", 2) == Approx(1.0));
  REQUIRE(bleu("il est paresseux .", "il est calme .", 2) == Approx(0.658).margin(5e-4));
  REQUIRE(bleu("il est mouillé .", "il est calme .", 2) == Approx(0.658).margin(5e-4));
  REQUIRE(bleu("je sais .", "j'ai perdu .", 2) == Approx(0.0));
  REQUIRE(bleu("je suis chez moi .", "je suis chez moi .", 2) == Approx(1.0));
  // brevity penalty: exp(1 - 4/2)
  REQUIRE(bleu("je suis", "je suis chez moi", 2) == Approx(std::exp(-1.0)));
  REQUIRE(bleu("", "je suis", 2) == 0.0);  // the book would divide by zero
}

TEST_CASE("corpus BLEU-4 matches tools/splits.py's corpus_bleu", "[tokenizer]") {
  // values printed by /usr/bin/python3 with tools/splits.py on the same inputs
  CorpusBleu b;
  b.add("je suis chez moi .", {"je suis à la maison .", "je suis chez moi ."});
  b.add("il est calme .", {"il est tranquille ."});
  b.add("va !", {"va !", "bouge !"});
  b.add("le chat est sur le tapis .", {"le chat est sur le tapis rouge ."});
  REQUIRE(b.score() == Approx(0.7382871275248485).epsilon(1e-12));
  REQUIRE(b.hyp_len() == 5 + 4 + 2 + 7);
  REQUIRE(b.ref_len() == 5 + 4 + 2 + 8);  // the closest reference length of each
  CorpusBleu none;
  none.add("il est calme .", {"il est tranquille ."});
  REQUIRE(none.score() == 0.0);  // no 4-gram matches
  CorpusBleu short_hyp;
  short_hyp.add("a b c d e", {"a b c d e f g h i j"});
  REQUIRE(short_hyp.score() == Approx(0.36787944117144233).epsilon(1e-12));  // exp(1 - 10/5)
  CorpusBleu empty;
  REQUIRE(empty.score() == 0.0);
  REQUIRE_THROWS_AS(empty.add("x", {}), Error);
}
