// libFuzzer target: arbitrary bytes as sentences for a shipped model. Byte 0 picks the mode:
//   bit 0  d2l_compat          bit 1  translate_batch over the rest split at 0x01 bytes
//   bit 2  no attention        bit 3  the Bahdanau model (when models/ has one)
//   bit 4  beam search, beam size 2 + bits 5-6; bit 7 a length penalty of 0.75
// The rest is the sentence. Errors must be attnlite::Error (empty, too long, invalid UTF-8,
// batch over max_batch); a translation must be well formed; the sentences the model cuts the
// text into (Model::sentences) are spans of it in order.
//
// Models: $ATTNLITE_FUZZ_MODEL (one file), else the shipped models under ATTNLITE_FUZZ_MODELS_DIR.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"

using namespace attnlite;

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_translate: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace {

constexpr int kMaxBatch = 4;
constexpr int kMaxBeam = 5;
std::vector<std::unique_ptr<Translator>> g_translators;

bool exists(const std::string& p) { return std::ifstream(p).good(); }

void check(const Translator& tr, const Translation& r, bool beam) {
  const Model& m = tr.model();
  FUZZ_CHECK(r.num_tokens >= 0 && r.num_tokens <= r.ld);
  FUZZ_CHECK(r.steps >= r.num_tokens && r.steps <= r.ld);
  if (!beam) FUZZ_CHECK(r.eos == (r.steps == r.num_tokens + 1));
  FUZZ_CHECK(r.S == m.num_steps());
  FUZZ_CHECK(r.src_valid >= 1 && r.src_valid <= r.S && r.src_valid == std::min(r.src_len, r.S));
  FUZZ_CHECK(r.truncated == (r.src_len > r.S));
  FUZZ_CHECK(r.num_unknown >= 0 && r.num_unknown <= r.src_valid);
  size_t len = 0;
  for (int k = 0; k < r.num_tokens; ++k) {
    FUZZ_CHECK(r.tokens[k] >= 0 && r.tokens[k] < m.tgt_vocab().size());
    FUZZ_CHECK(r.probs[k] >= 0.0f && r.probs[k] <= 1.0f && (beam || r.probs[k] > 0.0f));
    len += m.tgt_vocab().token(r.tokens[k]).size() + (k ? 1 : 0);
  }
  // a word model's text is its tokens joined by spaces; a sub-word model's (ATTNLITE_FUZZ_MODEL)
  // is its pieces detokenized: each end of word a space at most, none before . or ,
  FUZZ_CHECK(m.bpe() ? r.text.size() <= len : r.text.size() == len);
  for (int s = 0; s < r.S; ++s) FUZZ_CHECK(r.src_ids[s] >= 0 && r.src_ids[s] < m.src_vocab().size());
}

// The n-best list: beam_size hypotheses (one for greedy), best first, the first one being
// the Translation.
void check_nbest(const Translator& tr, int i, int beam_size) {
  const Model& m = tr.model();
  const NBest nb = tr.nbest(i);
  FUZZ_CHECK(nb.size == beam_size);
  FUZZ_CHECK(nb[0].text == tr.result(i).text);
  for (int k = 0; k < nb.size; ++k) {
    const Hypothesis& h = nb[k];
    FUZZ_CHECK(h.num_tokens >= 0 && h.length == h.num_tokens + (h.eos ? 1 : 0));
    for (int t = 0; t < h.num_tokens; ++t) FUZZ_CHECK(h.tokens[t] >= 0 && h.tokens[t] < m.tgt_vocab().size());
    if (k) FUZZ_CHECK(!(nb[k - 1].score < h.score));
  }
}

// Model::sentences: never empty, never throws, spans in order inside the text; unless it is
// the one span of the whole text (the fallback), each reads as at least one token.
void check_sentences(const Model& m, std::string_view text) {
  const std::vector<SentenceSpan> spans = m.sentences(text);
  FUZZ_CHECK(!spans.empty());
  size_t at = 0;
  for (const SentenceSpan& s : spans) {
    FUZZ_CHECK(s.begin >= at && s.begin <= s.end && s.end <= text.size());
    at = s.end;
  }
  if (spans.size() == 1 && spans[0].begin == 0 && spans[0].end == text.size()) return;
  for (const SentenceSpan& s : spans)
    FUZZ_CHECK(!m.source_tokens(text.substr(s.begin, s.end - s.begin)).empty());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("ATTNLITE_FUZZ_MODEL")) {
    paths.push_back(env);
  } else {
    for (const char* n : {"transformer-d2l", "bahdanau-d2l"}) {
      const std::string p = std::string(ATTNLITE_FUZZ_MODELS_DIR) + "/" + n + ".safetensors";
      if (exists(p)) paths.push_back(p);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "fuzz_translate: no model (set ATTNLITE_FUZZ_MODEL)\n");
    std::exit(1);
  }
  Limits lim;
  lim.max_batch = kMaxBatch;
  lim.max_beam = kMaxBeam;
  lim.max_input_bytes = 1024;
  for (const auto& p : paths) g_translators.push_back(std::make_unique<Translator>(Model::load(p), lim));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  Translator& tr = *g_translators[(mode >> 3 & 1) % g_translators.size()];
  DecodeOptions o;
  o.d2l_compat = mode & 1;
  o.attention = !(mode & 4);
  const bool beam = mode & 16;
  if (beam) {
    o.beam_size = 2 + (mode >> 5 & 3);
    o.length_penalty = (mode & 128) ? 0.75f : 0.f;
  }
  if (!(mode & 2)) {
    check_sentences(tr.model(), text);
    try {
      check(tr, tr.translate(text, o), beam);
      check_nbest(tr, 0, o.beam_size);
    } catch (const Error&) {
    }
    return 0;
  }
  std::vector<std::string_view> parts;
  for (size_t b = 0;;) {
    const size_t e = text.find('\x01', b);
    parts.push_back(text.substr(b, e == std::string_view::npos ? e : e - b));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  const int n = (int)parts.size();
  try {
    tr.translate_batch(parts.data(), n, o);
    FUZZ_CHECK(n <= kMaxBatch);
    for (int i = 0; i < n; ++i) {
      check(tr, tr.result(i), beam);
      check_nbest(tr, i, o.beam_size);
    }
  } catch (const Error& e) {
    if (n > kMaxBatch) FUZZ_CHECK(std::string(e.what()).find("max_batch = 4") != std::string::npos);
  }
  return 0;
}
