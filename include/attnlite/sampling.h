// attnlite — how a generator chooses each next token (GenerateOptions: greedy, or sampling
// with temperature, top-k and top-p from a seeded SplitMix64). The sampler (src/search)
// works with these alone; generate.h states the rule.
#pragma once
#include <cstdint>

namespace attnlite {

// The seeded generator of the sampling rule (generate.h): SplitMix64.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (double)(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

struct GenerateOptions {
  int max_tokens = 0;       // new tokens at most; 0: until <eos> or the context is full
  bool sample = false;      // false: greedy; true: the sampling rule above
  float temperature = 1.f;  // > 0 (sampling)
  int top_k = 0;            // 0: no top-k cut; else >= 1
  float top_p = 1.f;        // in (0, 1]; 1: no nucleus cut
  uint64_t seed = 0;
  bool attention = true;    // record the attention weights
};
// Throws attnlite::Error naming the first bad field (temperature <= 0 or NaN, top_k < 0,
// top_p outside (0, 1], max_tokens < 0).
void validate(const GenerateOptions& opts);

}  // namespace attnlite
