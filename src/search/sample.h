// attnlite — choosing a language model's next token (internal): greedy, or sampling with
// temperature, top-k and top-p from a seeded SplitMix64, exactly the rule generate.h states.
#pragma once
#include "attnlite/arena.h"
#include "attnlite/sampling.h"

namespace attnlite::search {

class Sampler {
 public:
  // Buffers for a vocabulary of V tokens, from the host arena.
  void carve(Arena& host, int V);
  // The next token from logits z (host, V). prob receives softmax(z)[token] (temperature 1).
  int choose(const float* z, const GenerateOptions& o, SplitMix64& rng, float* prob);

 private:
  int V_ = 0;
  int* order_ = nullptr;   // (V) candidates
  double* p_ = nullptr;    // (V) probabilities
  float* soft_ = nullptr;  // (V) greedy: softmax(z), float (the kernels' softmax)
};

// log softmax(z)[id] in float64, over V logits.
double log_softmax_at(const float* z, int V, int id);

}  // namespace attnlite::search
