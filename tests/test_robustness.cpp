// Hostile sentences, batches and limits: every bad request is an attnlite::Error whose message
// names the problem, and the session keeps working afterwards. The table in docs/robustness.md
// points at these tests (and at test_loader.cpp for damaged model files).
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "attnlite/vocab.h"
#include "fixture.h"

using namespace attnlite;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;

namespace {

std::shared_ptr<const Model> transformer() {
  static auto m = Model::load(attnlite::test::model_path("transformer-d2l"));
  return m;
}

std::string words(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += i ? " word" : "word";
  return s;
}

// The session still translates a good sentence after a failed call.
void still_works(Translator& tr) {
  const Translation& r = tr.translate("i'm home .");
  REQUIRE(r.text == "je suis chez moi .");
}

}  // namespace

TEST_CASE("robustness: empty sentences are an error", "[robustness]") {
  Translator tr(transformer());
  for (const char* s : {"", " ", "   ", "\xc2\xa0 \xe2\x80\xaf"}) {
    INFO("sentence [" << s << "]");
    REQUIRE_THROWS_WITH(tr.translate(s), Equals("empty sentence"));
  }
  still_works(tr);
}

TEST_CASE("robustness: a 10,000-word sentence", "[robustness]") {
  const std::string s = words(10000);  // 49,999 bytes
  SECTION("over the default input limit: an error naming the limit") {
    Translator tr(transformer());
    REQUIRE_THROWS_WITH(tr.translate(s), Equals("sentence is too long: 49999 bytes (limit 4096)"));
    still_works(tr);
  }
  SECTION("within a raised limit: truncated to num_steps as the book does") {
    Limits lim;
    lim.max_input_bytes = 1 << 20;
    Translator tr(transformer(), lim);
    const Translation& r = tr.translate(s);
    REQUIRE(r.truncated);
    REQUIRE(r.src_len == 10001);
    REQUIRE(r.src_valid == r.S);
    REQUIRE(r.num_tokens <= r.ld);
    still_works(tr);
  }
}

TEST_CASE("robustness: invalid UTF-8 is an error naming the byte", "[robustness]") {
  Translator tr(transformer());
  REQUIRE_THROWS_WITH(tr.translate("\xff\xfe bad"), Equals("input is not valid UTF-8 (byte 0)"));
  REQUIRE_THROWS_WITH(tr.translate("caf\xc3"), Equals("input is not valid UTF-8 (byte 3)"));
  REQUIRE_THROWS_WITH(tr.translate("go \xc0\xaf ."), Equals("input is not valid UTF-8 (byte 3)"));      // overlong '/'
  REQUIRE_THROWS_WITH(tr.translate("go \xed\xa0\x80 ."), Equals("input is not valid UTF-8 (byte 3)"));  // surrogate
  REQUIRE_THROWS_WITH(tr.translate("\xf4\x90\x80\x80"), Equals("input is not valid UTF-8 (byte 0)"));   // > U+10FFFF
  REQUIRE_THROWS_WITH(tokenize("ok \xe2\x82 ."), Equals("input is not valid UTF-8 (byte 3)"));
  still_works(tr);
}

TEST_CASE("robustness: a sentence of unknown words still translates", "[robustness]") {
  Translator tr(transformer());
  const Translation& r = tr.translate("zyzzyva qwxz .");
  REQUIRE(r.num_unknown == 2);
  REQUIRE(r.src_valid == 4);  // zyzzyva qwxz . <eos>
  REQUIRE(r.src_ids[0] == transformer()->src_vocab().unk_id);
  REQUIRE(r.src_ids[1] == transformer()->src_vocab().unk_id);
  REQUIRE(r.steps >= 1);
  const Translation& all = tr.translate("zyzzyva qwxz");
  REQUIRE(all.num_unknown == 2);
}

TEST_CASE("robustness: a batch over max_batch is an error naming max_batch", "[robustness]") {
  Limits lim;
  lim.max_batch = 4;
  Translator tr(transformer(), lim);
  std::vector<std::string_view> five(5, "go .");
  REQUIRE_THROWS_WITH(tr.translate_batch(five.data(), 5, {}),
                      Equals("batch of 5 sentences is outside [1, max_batch = 4]"));
  REQUIRE_THROWS_WITH(tr.translate_batch(five.data(), 0, {}),
                      Equals("batch of 0 sentences is outside [1, max_batch = 4]"));
  REQUIRE_THROWS_WITH(tr.result(4), Equals("result index out of range"));
  tr.translate_batch(five.data(), 4, {});
  for (int i = 0; i < 4; ++i) REQUIRE(tr.result(i).text == "va !");
  SECTION("one bad sentence fails the batch by name") {
    std::string_view mixed[3] = {"go .", "", "i'm home ."};
    REQUIRE_THROWS_WITH(tr.translate_batch(mixed, 3, {}), Equals("sentence 1 of 3: empty sentence"));
    still_works(tr);
    const std::string long_one(5000, 'a');
    std::string_view late[4] = {"go .", "i'm home .", "go .", long_one};
    REQUIRE_THROWS_WITH(tr.translate_batch(late, 4, {}),
                        Equals("sentence 3 of 4: sentence is too long: 5000 bytes (limit 4096)"));
    // the index and the reason apart, for callers that name the sentence their own way
    try {
      tr.translate_batch(late, 4, {});
      FAIL("the batch was not refused");
    } catch (const ItemError& e) {
      REQUIRE(e.index() == 3);
      REQUIRE(std::string(e.reason()) == "sentence is too long: 5000 bytes (limit 4096)");
    }
    // a batch of one names it too; translate() does not
    REQUIRE_THROWS_WITH(tr.translate_batch(mixed + 1, 1, {}), Equals("sentence 0 of 1: empty sentence"));
    REQUIRE_THROWS_WITH(tr.translate(mixed[1]), Equals("empty sentence"));
    // what is not one sentence's fault names none
    DecodeOptions wide;
    wide.beam_size = 2;
    REQUIRE_THROWS_WITH(tr.translate_batch(mixed, 1, wide), Equals("beam_size 2 is outside [1, max_beam = 1]"));
    still_works(tr);
  }
}

TEST_CASE("robustness: Limits out of range are rejected when the session is made", "[robustness]") {
  auto m = transformer();
  auto with = [](int batch, size_t input, int steps) {
    Limits l;
    l.max_batch = batch;
    l.max_input_bytes = input;
    l.max_tgt_steps = steps;
    return l;
  };
  REQUIRE_THROWS_WITH(Translator(m, with(0, 4096, 0)), Equals("limits: max_batch must be in [1, 4096], got 0"));
  REQUIRE_THROWS_WITH(Translator(m, with(4097, 4096, 0)), Equals("limits: max_batch must be in [1, 4096], got 4097"));
  REQUIRE_THROWS_WITH(Translator(m, with(1, 0, 0)), Equals("limits: max_input_bytes must be in [1, 1048576]"));
  REQUIRE_THROWS_WITH(Translator(m, with(1, (1u << 20) + 1, 0)), Equals("limits: max_input_bytes must be in [1, 1048576]"));
  REQUIRE_THROWS_WITH(Translator(m, with(1, 4096, -1)), Equals("limits: max_tgt_steps must be in [1, 1000], got -1"));
  REQUIRE_THROWS_WITH(Translator(m, with(1, 4096, 1001)), Equals("limits: max_tgt_steps must be in [1, 1000], got 1001"));
  REQUIRE_THROWS_WITH(Translator::required_bytes(*m, with(-5, 4096, 0)), Contains("max_batch"));
  REQUIRE_THROWS_WITH(Translator(nullptr), Equals("Translator needs a model"));
  // The largest limits each pass their own check, but together they need far more memory
  // than any machine has: a clear error before anything is allocated.
  Limits huge = with(4096, 1u << 20, 1000);
  huge.max_beam = 64;
  if (sizeof(size_t) >= 8)
    REQUIRE_THROWS_WITH(Translator(m, huge), Contains("exceeds the cap of 17179869184 bytes"));
  else  // a 32-bit machine: the element count alone is more than its size_t holds
    REQUIRE_THROWS_WITH(Translator(m, huge), Contains("overflows the size limit (the session limits are too large)"));
  // 600 sentences of beams of 8 over 64 steps: every buffer fits a quarter of a 32-bit address
  // space, all of them together (1.1-1.2 GB) do not. A 32-bit host (WASM, armv7) refuses them
  // when the session is measured; before, it allocated the block and failed carving it.
  Limits wide = with(600, 4096, 64);
  wide.max_beam = 8;
  if (sizeof(size_t) >= 8) {
    const size_t need = Translator::required_bytes(*m, wide);
    REQUIRE(need > (size_t(1) << 30));
    REQUIRE(need < (size_t(3) << 29));
  } else {
    REQUIRE_THROWS_WITH(Translator(m, wide), StartsWith("the workspace these limits need (") &&
                                                 EndsWith(" bytes) is more than one block can hold here "
                                                          "(1073741823 bytes); lower the session's limits"));
    REQUIRE_THROWS_WITH(Translator::required_bytes(*m, wide), Contains("is more than one block can hold here"));
  }
  SECTION("decode options") {
    Translator tr(m);
    DecodeOptions o;
    o.max_steps = -1;
    REQUIRE_THROWS_WITH(tr.translate("go .", o), Equals("max_steps -1 is outside [0, max_tgt_steps = 10]"));
    o.max_steps = 5000;  // more than the session was sized for
    REQUIRE_THROWS_WITH(tr.translate("go .", o), Equals("max_steps 5000 is outside [0, max_tgt_steps = 10]"));
    still_works(tr);
  }
  SECTION("a caller block that is too small or misaligned") {
    const size_t need = Translator::required_bytes(*m, Limits{});
    AlignedBuffer block(need + 64);
    REQUIRE_THROWS_WITH(Translator(m, Limits{}, block.data(), need - 1),
                        Equals("workspace block of " + std::to_string(need - 1) + " bytes is too small: " +
                               std::to_string(need) + " required"));
    REQUIRE_THROWS_WITH(Translator(m, Limits{}, static_cast<char*>(block.data()) + 4, need),
                        Equals("workspace block must be 64-byte aligned"));
  }
}

TEST_CASE("robustness: preprocess_nmt reports a buffer that is too small", "[robustness]") {
  char out[4];
  REQUIRE(preprocess_nmt("Go.", out, 4) == 4);  // "go ."
  REQUIRE_THROWS_WITH(preprocess_nmt("Go.", out, 3), Equals("input is too long (over 3 bytes after preprocessing)"));
}
