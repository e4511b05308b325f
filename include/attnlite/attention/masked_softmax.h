// d2l 10.3.1: masked softmax. Positions at or beyond a valid length are set to -1e6 before
// the softmax, so their weights come out exactly 0 (and a row of valid length 0 comes out
// uniform, as in the book).
//
// Legend: BH batch (times heads), Tq queries, Tk keys.
#pragma once

namespace attnlite::attention {

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

constexpr float kMaskValue = -1e6f;

// d2l.sequence_mask: x (rows, cols); entries at col >= valid_len[row] become `value`.
void sequence_mask(float* x, int rows, int cols, const int* valid_len, float value);

// x (BH, Tq, Tk) in place, rows of stride ld (>= Tk). Batch row b of x uses valid lengths
// of batch b / heads, which is the book's repeat_interleave(valid_lens, num_heads).
void masked_softmax(float* x, int BH, int Tq, int Tk, const ValidLens& vl, int heads = 1,
                    int ld = 0);

}  // namespace attnlite::attention
