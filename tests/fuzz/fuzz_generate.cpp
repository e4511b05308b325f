// libFuzzer target: a language model (kind "lm") driven by arbitrary prompts and options.
// Bytes 0-7 are the options, the rest the prompt:
//   byte 0   bit 0 sample, bit 1 attention, bits 2-3 the mode: 0 generate, 1 start + step
//            until done, 2 start + at most 3 steps then generate again from the same session
//            (a fresh start must reset everything), 3 score (perplexity of the prompt);
//            bit 4: run twice and compare (same options and seed give the same tokens)
//   byte 1   max_tokens: -1 .. 14 (negative is an error)
//   byte 2   temperature: 0 (error), NaN (error), -1 (error), or 0.05 .. 3.2
//   byte 3   top_k: -1 (error), 0 .. 254 (k over the vocabulary size keeps everything)
//   byte 4   top_p: 0 (error), 1.5 (error), NaN (error), else 1/255 .. 1
//   bytes 5-7 the seed
// Errors must be attnlite::Error naming the field; every Generation must be well formed:
// ids in the vocabulary, counts adding up, probabilities in [0, 1], the text equal to the
// tokens' words, causal attention rows summing to 1 with zeros above the diagonal, the length
// within max_tokens and the context.
//
// Model: $ATTNLITE_FUZZ_MODEL, else lm-fra under ATTNLITE_FUZZ_MODELS_DIR.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/vocab.h"

using namespace attnlite;

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_generate: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace {

Generator& generator() {
  static std::unique_ptr<Generator> g = [] {
    const char* env = std::getenv("ATTNLITE_FUZZ_MODEL");
    const std::string path = env ? env : std::string(ATTNLITE_FUZZ_MODELS_DIR) + "/lm-fra.safetensors";
    GenerateLimits lim;
    lim.max_input_bytes = 512;
    return std::make_unique<Generator>(Model::load(path), lim);
  }();
  return *g;
}

void check(const Generator& gen, std::string_view prompt, const Generation& r, const GenerateOptions& o) {
  const Vocab& v = gen.model().tgt_vocab();
  const int ctx = gen.context();
  FUZZ_CHECK(r.num_prompt >= 0 && r.num_generated >= 0 && r.num_unknown >= 0);
  FUZZ_CHECK(r.num_unknown <= r.num_prompt);
  FUZZ_CHECK(r.num_tokens == 1 + r.num_prompt + r.num_generated);
  FUZZ_CHECK(r.num_prompt + 1 <= ctx);
  FUZZ_CHECK(r.num_tokens <= ctx + 1);
  if (o.max_tokens > 0) FUZZ_CHECK(r.num_generated <= o.max_tokens);
  FUZZ_CHECK(r.tokens[0] == v.bos_id);
  // The text: the prompt's words as preprocessed, then the generated tokens but <eos>.
  std::string text, cont;
  for (const std::string& w : tokenize(prompt)) text += (text.empty() ? "" : " ") + w;
  for (int i = 0; i < r.num_tokens; ++i) {
    const int id = r.tokens[i];
    FUZZ_CHECK(id >= 0 && id < v.size());
    if (i <= r.num_prompt || (id == v.eos_id && i == r.num_tokens - 1)) continue;
    const std::string& w = v.token(id);
    text += " " + w;
    cont += (cont.empty() ? "" : " ") + w;
  }
  FUZZ_CHECK(r.text == text);
  FUZZ_CHECK(r.continuation == cont);
  for (int k = 0; k < r.num_generated; ++k) FUZZ_CHECK(r.probs[k] >= 0.f && r.probs[k] <= 1.f);
  // <eos> only as the last token, and then the generation is over.
  for (int i = 1; i + 1 < r.num_tokens; ++i) FUZZ_CHECK(r.tokens[i] != v.eos_id || i <= r.num_prompt);
  FUZZ_CHECK(r.eos == (r.num_generated > 0 && r.tokens[r.num_tokens - 1] == v.eos_id));
  if (r.eos) FUZZ_CHECK(r.done);
  if (!o.attention || !r.attn) return;
  FUZZ_CHECK(r.positions >= 1 && r.positions <= r.num_tokens && r.positions <= r.ld);
  for (int l = 0; l < r.layers; ++l)
    for (int h = 0; h < r.heads; ++h)
      for (int q = 0; q < r.positions; ++q) {
        double s = 0;
        for (int k = 0; k < r.positions; ++k) {
          const float a = r.attn_at(l, h, q, k);
          FUZZ_CHECK(std::isfinite(a) && a >= 0.f);
          if (k > q) FUZZ_CHECK(a == 0.f);
          s += a;
        }
        FUZZ_CHECK(std::fabs(s - 1) < 1e-4);
      }
}

std::vector<int> tokens_of(const Generation& r) { return {r.tokens, r.tokens + r.num_tokens}; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  Generator& gen = generator();
  const uint8_t mode = data[0];
  GenerateOptions o;
  o.sample = mode & 1;
  o.attention = mode & 2;
  o.max_tokens = (int)(data[1] & 15) - 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  switch (data[2]) {
    case 0: o.temperature = 0.f; break;
    case 1: o.temperature = nan; break;
    case 2: o.temperature = -1.f; break;
    default: o.temperature = 0.0125f * data[2]; break;
  }
  o.top_k = data[3] == 255 ? -1 : data[3];
  switch (data[4]) {
    case 0: o.top_p = 0.f; break;
    case 1: o.top_p = 1.5f; break;
    case 2: o.top_p = nan; break;
    default: o.top_p = data[4] / 255.f; break;
  }
  o.seed = (uint64_t)data[5] | (uint64_t)data[6] << 8 | (uint64_t)data[7] << 16;
  const std::string_view prompt(reinterpret_cast<const char*>(data + 8), size - 8);
  // validate() checks every field, for greedy decoding too (score takes no options).
  const bool bad = (mode >> 2 & 3) != 3 && (o.max_tokens < 0 || !(o.temperature > 0) || o.top_k < 0 || !(o.top_p > 0 && o.top_p <= 1));
  try {
    switch (mode >> 2 & 3) {
      case 0:
        check(gen, prompt, gen.generate(prompt, o), o);
        break;
      case 1: {
        const Generation* r = &gen.start(prompt, o);
        for (int n = 0; !r->done; ++n) {
          check(gen, prompt, *r, o);
          FUZZ_CHECK(n <= gen.context());
          r = &gen.step();
        }
        check(gen, prompt, *r, o);
        break;
      }
      case 2: {
        const Generation* r = &gen.start(prompt, o);
        for (int n = 0; n < 3 && !r->done; ++n) r = &gen.step();
        const std::vector<int> partial = tokens_of(*r);
        const Generation& full = gen.generate(prompt, o);
        check(gen, prompt, full, o);
        // Each step only appends: the partial generation is a prefix of the whole one.
        FUZZ_CHECK(full.num_tokens >= (int)partial.size());
        for (size_t i = 0; i < partial.size(); ++i) FUZZ_CHECK(full.tokens[i] == partial[i]);
        break;
      }
      default: {
        Perplexity p;
        const bool scored = gen.score(prompt, p);
        FUZZ_CHECK(p.sentences == (scored ? 1 : 0) && p.skipped == (scored ? 0 : 1));
        if (scored) FUZZ_CHECK(p.tokens >= 1 && std::isfinite(p.nll) && p.nll >= 0);
        return 0;
      }
    }
    FUZZ_CHECK(!bad);
    if (mode & 16) {
      const std::vector<int> first = tokens_of(gen.result());
      FUZZ_CHECK(tokens_of(gen.generate(prompt, o)) == first);
    }
  } catch (const Error& e) {
    const std::string m = e.what();
    FUZZ_CHECK(!m.empty());
    if (bad) FUZZ_CHECK(m.find("max_tokens") != std::string::npos || m.find("temperature") != std::string::npos ||
                        m.find("top_k") != std::string::npos || m.find("top_p") != std::string::npos);
  }
  return 0;
}
