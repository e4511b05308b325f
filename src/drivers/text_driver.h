// attnlite — the interface of a decoder-only text model's driver (internal), as the generator
// (src/tasks/generate.cpp) sees it: one sequence's run state on an op set (the per-layer
// key/value caches over the context, the logits, the causal attention weights), all in op
// memory. The language model family implements it (src/families/lm/driver.cpp).
//
// Legend: T context, NH heads, L layers, V vocabulary.
#pragma once
#include "attnlite/arena.h"
#include "attnlite/ops/ops.h"

namespace attnlite::drivers {

class TextDriver {
 public:
  virtual ~TextDriver() = default;
  // Every buffer from `mem` (op memory); a counting arena first, then the real block.
  virtual void carve(Arena& mem) = 0;
  // Tokens (host, Tn) at positions t0 .. t0 + Tn - 1 (t0 + Tn <= T), their keys and values
  // cached. Returns logits in op memory: (Tn, V) when all_logits, else (V) of the last one.
  // attention: the rows [t0, t0 + Tn) of attention() are written.
  virtual const float* forward(const int* tokens, int Tn, int t0, bool all_logits, bool attention,
                               const ops::Ctx& cx) = 0;
  // Zeroes the attention weights (a new sequence).
  virtual void clear_attention(const ops::Ops& op) = 0;
  // (L, NH, T, T): [l][h][q][k], k <= q.
  virtual const float* attention() const = 0;
  virtual long attention_len() const = 0;
  virtual int context() const = 0;
  virtual int vocab() const = 0;
};

}  // namespace attnlite::drivers
