// attnlite — the book's valid_lens: which keys each query may see. The op interface takes
// them (ops.h: attend, additive_attend, masked_softmax) and d2l's masked_softmax
// (attention/masked_softmax.h) is stated in them.
//
// Legend: B batch, Tq queries.
#pragma once

namespace attnlite::ops {

struct ValidLens {
  enum Kind { None, PerBatch, PerQuery, Causal };
  Kind kind = None;
  const int* data = nullptr;  // PerBatch: (B); PerQuery: (B, Tq)
  int offset = 0;             // Causal: query i sees keys [0, offset + i]

  static ValidLens none() { return {}; }
  static ValidLens per_batch(const int* v) { return {PerBatch, v, 0}; }
  static ValidLens per_query(const int* v) { return {PerQuery, v, 0}; }
  static ValidLens causal(int offset) { return {Causal, nullptr, offset}; }

  // The valid lengths of batch row b alone (Tq queries): one (b, head) block of scores.
  ValidLens for_batch(int b, int Tq) const {
    ValidLens o = *this;
    if (kind == PerBatch) o.data = data + b;
    if (kind == PerQuery) o.data = data + (long)b * Tq;
    return o;
  }

  // Valid length for batch row b (already divided by heads) and query q of Tq.
  int get(int b, int q, int Tq) const {
    switch (kind) {
      case PerBatch: return data[b];
      case PerQuery: return data[b * Tq + q];
      case Causal: return offset + q + 1;
      default: return 1 << 30;
    }
  }
};

// d2l's masked_softmax value: what the scores of keys at or beyond a valid length become
// before the softmax, so that their weights come out exactly 0.
constexpr float kMaskValue = -1e6f;

}  // namespace attnlite::ops
