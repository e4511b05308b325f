// libFuzzer target: the book's text handling on arbitrary bytes. The input is split at the
// first 0x01 byte into a sentence A and a label B: split_sentences, normalize_source,
// preprocess_nmt, split_tokens and tokenize run on A, bleu on (A, B). Invalid UTF-8 must be an attnlite::Error, never a crash; the
// outputs must satisfy the properties checked below.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/normalize.h"
#include "attnlite/sentences.h"
#include "attnlite/vocab.h"

using namespace attnlite;

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_tokenizer: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace {

std::string preprocess(std::string_view s, size_t cap) {
  std::string out(cap, '\0');
  out.resize(preprocess_nmt(s, out.data(), out.size()));
  return out;
}

void check_split(std::string_view text) {
  const int total = split_tokens(text, nullptr, 0);
  FUZZ_CHECK(total >= 0 && (size_t)total <= text.size());
  std::vector<std::string_view> all((size_t)total);
  FUZZ_CHECK(split_tokens(text, all.data(), total) == total);
  for (auto t : all) {
    FUZZ_CHECK(!t.empty() && t.find(' ') == std::string_view::npos);
    FUZZ_CHECK(t.data() >= text.data() && t.data() + t.size() <= text.data() + text.size());
  }
  // A short array only receives the first tokens (ASan watches the bounds).
  std::string_view few[3];
  FUZZ_CHECK(split_tokens(text, few, 3) == total);
  for (int i = 0; i < total && i < 3; ++i) FUZZ_CHECK(few[i] == all[(size_t)i]);
}

// A text cut into sentences (any bytes): the spans are in bounds, in order, apart, not empty,
// with no space at either end; only spaces lie between them; a counting call and a short
// array agree with the whole list; a sentence cut again is itself.
void check_sentences(std::string_view text) {
  const size_t total = split_sentences(text, nullptr, 0);
  FUZZ_CHECK(total <= text.size());
  std::vector<SentenceSpan> all(total);
  FUZZ_CHECK(split_sentences(text, all.data(), total) == total);
  auto space = [](unsigned char c) {  // the bytes of ASCII white space, U+00A0 and U+202F
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xc2 || c == 0xa0 || c == 0xe2 ||
           c == 0x80 || c == 0xaf;
  };
  size_t at = 0;
  for (const SentenceSpan& sp : all) {
    FUZZ_CHECK(at <= sp.begin && sp.begin < sp.end && sp.end <= text.size());
    for (size_t i = at; i < sp.begin; ++i) FUZZ_CHECK(space((unsigned char)text[i]));
    const unsigned char first = (unsigned char)text[sp.begin], last = (unsigned char)text[sp.end - 1];
    FUZZ_CHECK(first != ' ' && !(first >= '\t' && first <= '\r'));
    FUZZ_CHECK(last != ' ' && !(last >= '\t' && last <= '\r'));
    const std::string_view one = text.substr(sp.begin, sp.end - sp.begin);
    SentenceSpan again[2];
    FUZZ_CHECK(split_sentences(one, again, 2) == 1 && again[0].begin == 0 && again[0].end == one.size());
    at = sp.end;
  }
  for (size_t i = at; i < text.size(); ++i) FUZZ_CHECK(space((unsigned char)text[i]));
  SentenceSpan few[2];
  FUZZ_CHECK(split_sentences(text, few, 2) == total);
  for (size_t k = 0; k < total && k < 2; ++k)
    FUZZ_CHECK(few[k].begin == all[k].begin && few[k].end == all[k].end);
}

// The translator's normalization: no longer than its input, idempotent, no space at either
// end nor two in a row, no sentence in capitals left (two of A-Z and none of a-z) nor in
// Title Case (three or more words, each with only its first letter in A-Z), an exact buffer
// suffices and one byte less is an error; it refuses exactly the input preprocessing
// refuses (invalid UTF-8).
void check_normalize(std::string_view a, bool valid) {
  std::string out(a.size(), '\0');
  size_t n = 0;
  try {
    n = normalize_source(a, out.data(), out.size());
  } catch (const Error&) {
    FUZZ_CHECK(!valid);
    return;
  }
  FUZZ_CHECK(valid && n <= a.size());
  out.resize(n);
  FUZZ_CHECK(normalize_source(out) == out);
  FUZZ_CHECK(out.empty() || (out.front() != ' ' && out.back() != ' '));
  FUZZ_CHECK(out.find("  ") == std::string::npos);
  int capitals = 0;
  bool lower = false;
  for (char c : out) {
    capitals += c >= 'A' && c <= 'Z';
    lower = lower || (c >= 'a' && c <= 'z');
  }
  FUZZ_CHECK(lower || capitals <= 1);
  // nor in Title Case: words (a letter, then letters and apostrophes), each capitalized alone
  std::vector<std::string> words;
  bool in_word = false;
  for (char c : out) {
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (letter && !in_word) words.emplace_back();
    in_word = letter || (in_word && c == '\'');
    if (in_word) words.back() += c;
  }
  size_t title = 0;
  for (const std::string& w : words) {
    size_t upper = 0;
    for (char c : w) upper += c >= 'A' && c <= 'Z';
    title += w[0] >= 'A' && w[0] <= 'Z' && upper == 1;
  }
  FUZZ_CHECK(words.size() < 3 || title < words.size());
  std::string exact(n, '\0');
  FUZZ_CHECK(normalize_source(a, exact.data(), n) == n && exact == out);
  if (n) {
    bool threw = false;
    try {
      normalize_source(a, exact.data(), n - 1);
    } catch (const Error&) {
      threw = true;
    }
    FUZZ_CHECK(threw);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t sep = in.find('\x01');
  const std::string_view a = in.substr(0, sep);
  const std::string_view b = sep == std::string_view::npos ? std::string_view() : in.substr(sep + 1);

  check_split(a);  // split_tokens takes any bytes
  check_sentences(a);  // so does split_sentences
  std::string pre;
  bool valid = true;
  try {
    pre = preprocess(a, a.size() * 2 + 16);
  } catch (const Error&) {
    valid = false;
  }
  check_normalize(a, valid);
  if (valid) {
    check_split(pre);
    // Preprocessing is idempotent: its output is valid UTF-8, already lowercased and spaced.
    FUZZ_CHECK(preprocess(pre, pre.size() * 2 + 16) == pre);
    // A buffer that is exactly big enough suffices; one byte less is an error.
    FUZZ_CHECK(preprocess(a, pre.size()) == pre);
    if (!pre.empty()) {
      bool threw = false;
      try {
        preprocess(a, pre.size() - 1);
      } catch (const Error&) {
        threw = true;
      }
      FUZZ_CHECK(threw);
    }
    const std::vector<std::string> toks = tokenize(a);
    const int n = split_tokens(pre, nullptr, 0);
    FUZZ_CHECK((int)toks.size() == n);
  } else {
    bool threw = false;
    try {
      tokenize(a);
    } catch (const Error&) {
      threw = true;
    }
    FUZZ_CHECK(threw);
  }

  for (int k : {1, 2, 4}) {
    const double s = bleu(a, b, k);
    FUZZ_CHECK(s >= 0.0 && s <= 1.0 + 1e-12);  // also rejects NaN
  }
  const double self = bleu(a, a, 2);
  FUZZ_CHECK(std::isfinite(self) && self >= 0.0 && self <= 1.0 + 1e-12);
  return 0;
}
