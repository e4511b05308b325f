// attnlite — how a translator decodes (DecodeOptions: greedy or beam search, the book's
// positions, attention) and what each search finds (a Hypothesis of an n-best list). The
// searches (src/search) work with these alone; translate.h states their rules.
#pragma once
#include <string_view>

namespace attnlite {

struct DecodeOptions {
  // The book feeds the Transformer decoder one token at a time, so every step adds the
  // positional encoding of position 0. attnlite uses position t at step t (what the model
  // was trained with); d2l_compat reproduces the book exactly.
  bool d2l_compat = false;
  int max_steps = 0;          // 0: Limits::max_tgt_steps
  bool attention = true;      // record attention weights
  int beam_size = 1;          // 1: greedy (predict_seq2seq); K > 1: beam search, K <= max_beam
  float length_penalty = 0.f; // alpha: beam hypotheses are ranked by logp / length^alpha
};

// One hypothesis of an n-best list (views, valid until the next call).
struct Hypothesis {
  std::string_view text;          // tokens joined by spaces (sub-word models: detokenized)
  const int* tokens = nullptr;    // (num_tokens) ids, without <eos>
  const float* probs = nullptr;   // (num_tokens) softmax probability of each token
  int num_tokens = 0;
  int length = 0;                 // num_tokens, + 1 when it ended with <eos>
  bool eos = false;
  double logp = 0;                // summed log-probabilities (float64), <eos> included
  double score = 0;               // logp / length^alpha
};

}  // namespace attnlite
