// attnlite — language-model sessions (a decoder-only Transformer, kind "lm":
// models/language_model.h). A Generator owns (or is handed) one aligned block sized by
// required_bytes(model, limits); after construction nothing allocates. Results are views into
// that block, valid until the next call.
//
// Threads: a Generator and the generation it hands out belong to one thread at a time;
// several Generators (and other sessions) may run at once over one shared Model, as for
// translate.h's Translator. A seed gives the same tokens on whichever thread it runs.
//
// Input: the prompt is preprocessed and split as the book does (preprocess_nmt), each word
// looked up in the vocabulary (<unk> when absent) and <bos> put in front. The model reads at
// most `context` = the model's max_len positions: the prompt (with <bos>) must fit, and
// generation stops once the sequence has `context` + 1 tokens (the last one was predicted
// from `context` positions), at <eos>, or after max_tokens new tokens.
//
// Decoding is KV-cached: the prompt runs in one causal pass, then each new token in one step
// over the cached keys and values of every layer (equal to the full causal pass; the tests
// compare the two).
//
// Choosing the next token from the logits z (V) of the last position:
//   - greedy (GenerateOptions::sample false): the largest logit, the lowest id on ties;
//   - sampling: p = softmax(z / temperature) in float64. Candidates are every token sorted by
//     p descending, ties to the lower id. With top_k > 0 only the first top_k stay. With
//     top_p < 1 only the shortest prefix whose summed p reaches top_p stays (at least one
//     token). Then u = uniform() * (sum of the kept p), and the choice is the first kept
//     candidate whose running sum of p exceeds u (the last kept one if rounding leaves none).
//   - uniform() is (next() >> 11) * 2^-53 from SplitMix64, whose state starts at `seed`:
//       state += 0x9E3779B97F4A7C15; z = state;
//       z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//       next() = z ^ (z >> 31)                         (uint64 arithmetic, wrapping)
//     one draw per sampled token (none when a logit is not finite: then the choice is greedy).
//     The same model, prompt, options and seed give the same
//     tokens on every platform (up to float rounding of the logits; the tests pin a sample).
//
// Perplexity (score / perplexity): each sentence becomes <bos> w1 .. wn <eos>; the model reads
// <bos> w1 .. wn in one causal pass and predicts w1 .. wn <eos>. With NLL the sum over every
// predicted token of -log softmax(z)[token] (float64) and N the number of predicted tokens
// (n + 1 per sentence; <bos> is never predicted), perplexity = exp(NLL / N). Sentences with
// more than context - 1 words do not fit and are skipped (counted), empty lines too.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "attnlite/model.h"
#include "attnlite/device.h"
#include "attnlite/sampling.h"

namespace attnlite {


struct GenerateLimits {
  size_t max_input_bytes = 4096;  // longer prompts are an error, not a truncation
  Device device = Device::CPU;
  Precision precision = Precision::F32;  // BF16 (CUDA): linear layers' matrices in bfloat16
};

// A generation so far (views). Positions: 0 is <bos>, 1 .. num_prompt are the prompt's words,
// then the generated tokens (the last one only once it was fed back, see attention).
struct Generation {
  std::string_view text;          // prompt words and generated tokens joined by spaces
                                  // (without <bos> and <eos>)
  std::string_view continuation;  // the generated tokens joined by spaces (without <eos>)
  const int* tokens = nullptr;    // (num_tokens) ids: <bos>, prompt, generated (with <eos>)
  int num_tokens = 0;
  int num_prompt = 0;             // prompt words (tokens[1 .. num_prompt])
  int num_generated = 0;          // generated tokens (with <eos> when it came)
  int num_unknown = 0;            // prompt words mapped to <unk>
  const float* probs = nullptr;   // (num_generated) softmax(z)[token] of each generated
                                  // token (temperature 1, before any cut)
  bool eos = false;               // stopped at <eos>
  bool done = false;              // no further step (eos, max_tokens or context full)

  // Causal self-attention: attn[((l * heads + h) * ld + q) * ld + k] is the weight query
  // position q gives key position k <= q (0 above the diagonal), layer l, head h; rows
  // q < positions hold data (positions = the tokens the model has read).
  int layers = 0, heads = 0, ld = 0, positions = 0;
  const float* attn = nullptr;    // (L, NH, ld, ld) or null when not recorded
  float attn_at(int l, int h, int q, int k) const {
    return attn[(((long)l * heads + h) * ld + q) * ld + k];
  }
};

struct Perplexity {
  double nll = 0;      // summed -log p of every predicted token
  long tokens = 0;     // predicted tokens (N)
  long sentences = 0;  // sentences scored
  long skipped = 0;    // empty or too long for the context
  double value() const;  // exp(nll / tokens); NaN when nothing was scored
};

class Generator {
 public:
  explicit Generator(std::shared_ptr<const Model> model, const GenerateLimits& limits = {},
                     void* block = nullptr, size_t block_bytes = 0);
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  static size_t required_bytes(const Model& model, const GenerateLimits& limits);

  // The whole generation: start(), then step() until done.
  const Generation& generate(std::string_view prompt, const GenerateOptions& opts = {});
  // Incremental: start() reads the prompt (one pass) and chooses the first token; each step()
  // feeds the last token back and chooses the next. Both return the generation so far.
  // Throws attnlite::Error on an empty, over-long or invalid prompt or bad options.
  const Generation& start(std::string_view prompt, const GenerateOptions& opts = {});
  const Generation& step();
  const Generation& result() const;

  // -log p of one sentence's tokens, added to `acc` (see the formula above); false when the
  // sentence was skipped (empty, too long).
  bool score(std::string_view sentence, Perplexity& acc);
  // Logits (num_tokens, V) of one causal pass over ids (num_tokens <= context), in the
  // session's host buffer; attention too when wanted (result().attn, positions = num_tokens).
  const float* forward(const int* ids, int num_tokens, bool attention = false);

  const Model& model() const { return *model_; }
  int context() const;  // the model's max_len
  size_t workspace_bytes() const;

 private:
  struct Impl;
  std::shared_ptr<const Model> model_;
  GenerateLimits limits_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlite
