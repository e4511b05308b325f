// attnlite — translation sessions. A Translator owns (or is handed) one aligned block sized
// by required_bytes(model, limits); after construction, translate() allocates nothing.
// Results are views into that block, valid until the next call.
//
// Threads: a Translator and the results it hands out belong to one thread at a time (calls
// on one Translator from two threads at once are a data race). Any number of Translators,
// Generators and Classifiers may run at once on different threads over one shared Model
// (model.h); each holds a reference, so the Model outlives every session using it. The
// results equal, bitwise, those of the same calls on one thread (with the pool of threads.h
// on: the same tokens, probabilities within 1e-5); tests/test_concurrency.cpp.
//
// Decoding follows d2l's predict_seq2seq: the source is tokenized, <eos> appended, padded or
// truncated to num_steps; greedy argmax from <bos>, stopping at <eos> or after max steps.
//
// Beam search (DecodeOptions::beam_size K > 1; tools/attnlite_tools/search.py is the same
// algorithm on the book's PyTorch modules, and the tests compare the two):
//   - Per sentence, the K hypotheses are decoder batch rows (Transformer: their own KV-cache
//     rows; Bahdanau: their own GRU hidden-state rows). Step 0 has one live hypothesis, <bos>
//     with log-probability 0.
//   - At each step every live hypothesis h is extended by every token v; a candidate's raw
//     score is score(h) + log_softmax(logits(h))[v], computed and summed in float64.
//   - Candidates are ranked by raw score, descending; ties go to the lower h, then the lower v.
//     Walking that ranking: a candidate ending in <eos> at rank < K is finished (its length
//     counts the generated tokens including <eos>); <eos> candidates at rank >= K are dropped;
//     the others become the next live hypotheses, in ranking order, until there are K.
//   - A sentence stops after max steps, or at the first step whose K best candidates all end
//     in <eos>. After max steps its K live hypotheses are finished, in beam order, with
//     length = their number of tokens.
//   - It also stops as soon as the list can no longer change: K hypotheses have finished and
//     no live one can finish above the K-th (a live raw score only falls, and no length is
//     over max steps, so none can score above best_live_logp / max_steps^alpha). The list,
//     its scores and the kept attention are those of the full search; only steps are saved.
//   - score = logp / length^alpha (alpha = DecodeOptions::length_penalty; 0 keeps the raw
//     logp). Finished hypotheses are sorted by score, descending, ties to the one finished
//     first; the first K are the n-best list (Translator::nbest) and the first of them is the
//     Translation, with its tokens, probabilities and attention weights of every step.
// The search itself uses raw scores; alpha only changes the final choice. With K = 1 this
// is greedy decoding. Both searches run for every model family on every device.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "attnlite/arena.h"
#include "attnlite/decoding.h"
#include "attnlite/device.h"
#include "attnlite/model.h"

namespace attnlite {

struct Limits {
  int max_batch = 1;
  int max_beam = 1;               // largest DecodeOptions::beam_size; buffers hold
                                  // max_batch x max_beam hypotheses
  int max_tgt_steps = 0;          // 0: the model's num_steps (the book's limit)
  size_t max_input_bytes = 4096;  // longer input is an error, not a truncation
  Device device = Device::CPU;    // CUDA: weights and every activation live on the GPU
  Precision precision = Precision::F32;  // BF16 (CUDA): linear layers' fp32 matrices held
                                         // in bfloat16 (device.h)
};

// The n-best list of one sentence, best first (scores non-increasing): beam_size entries
// after beam search, one (the greedy translation) after greedy decoding.
struct NBest {
  const Hypothesis* hyps = nullptr;
  int size = 0;
  const Hypothesis& operator[](int k) const { return hyps[k]; }
  const Hypothesis* begin() const { return hyps; }
  const Hypothesis* end() const { return hyps + size; }
};

// Attention weights of one sentence (views). Transformer: L layers, NH heads,
// S = num_steps source positions, `steps` decoder calls, ld = max target steps.
struct Translation {
  std::string_view text;          // the French output: tokens joined by spaces, or for
                                  // sub-word models (Model::bpe) the detokenized pieces
  const int* tokens = nullptr;    // (num_tokens) predicted ids, without <eos>
  const float* probs = nullptr;   // (num_tokens) softmax probability of each chosen token
  int num_tokens = 0;
  int steps = 0;                  // decoder calls (num_tokens + 1 when <eos> was produced)
  bool eos = false;               // stopped at <eos> (else at the step limit)

  const int* src_ids = nullptr;   // (S) padded source ids
  int src_len = 0;                // tokens + <eos> before truncation (the book's valid length)
  int src_valid = 0;              // min(src_len, S)
  bool truncated = false;         // the sentence had more than S - 1 tokens
  int num_unknown = 0;            // source words (sub-word models: characters) mapped to <unk>

  int layers = 0, heads = 0, S = 0, ld = 0;
  const float* enc_self = nullptr;  // (L, NH, S, S)           Transformer
  const float* dec_self = nullptr;  // (L, ld, NH, ld): [l][t][h][k], k <= t
  const float* cross = nullptr;     // (L, ld, NH, S)           Transformer: [l][t][h][s]
                                    // (ld, S)                  Bahdanau: [t][s]
  float enc_self_at(int l, int h, int q, int k) const { return enc_self[(((long)l * heads + h) * S + q) * S + k]; }
  float dec_self_at(int l, int t, int h, int k) const { return dec_self[(((long)l * ld + t) * heads + h) * ld + k]; }
  float cross_at(int l, int t, int h, int s) const {
    return layers ? cross[(((long)l * ld + t) * heads + h) * S + s] : cross[(long)t * S + s];
  }
};

class Translator {
 public:
  explicit Translator(std::shared_ptr<const Model> model, const Limits& limits = {},
                      void* block = nullptr, size_t block_bytes = 0);
  ~Translator();
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  static size_t required_bytes(const Model& model, const Limits& limits);

  // One sentence, normalized first (normalize.h: typographic quotes and apostrophes, dashes,
  // Unicode spaces, emoji, a sentence in capitals...). Throws attnlite::Error on empty (also
  // once normalized), over-long or invalid UTF-8 input.
  const Translation& translate(std::string_view sentence, const DecodeOptions& opts = {});
  // n <= max_batch sentences decoded together; result(i) for each. A sentence it refuses is
  // named by its index, from 0: "sentence 1 of 3: empty sentence" (translate(): "empty
  // sentence").
  void translate_batch(const std::string_view* sentences, int n, const DecodeOptions& opts = {});
  const Translation& result(int i) const;
  // The n-best list of sentence i of the last call.
  NBest nbest(int i) const;

  const Model& model() const { return *model_; }
  const Limits& limits() const { return limits_; }
  size_t workspace_bytes() const;
  size_t scratch_peak() const;

 private:
  struct Impl;
  std::shared_ptr<const Model> model_;
  Limits limits_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlite
