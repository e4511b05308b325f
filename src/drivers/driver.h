// attnlite — the interface every encoder-decoder model family implements (a "driver"), as the
// searches see it (src/search). A driver owns the model's run state for one session: the
// encoder outputs, the per-row decoder state (KV caches, RNN state), the logits and the
// attention weights, all in the op set's memory.
//
// Rows: sentence b's K hypotheses are decoder rows b*K .. b*K+K-1 (K = 1 for greedy search).
// Attention: with K = 1 each step's weights go straight to sentence b's slot; with K > 1 each
// row keeps its own history, reordered with the row, and keep_attention() copies the history
// of a finished hypothesis to its sentence's slot.
//
// Sizing: carve() takes every buffer from the arenas (host memory, op memory; the same arena
// on the CPU), on a counting arena first and then on the real block. The scratch a session
// needs is measured by running encode() and step() at the limits with ops::counting() on a
// counting arena (Translator does this), so no size is written down twice.
#pragma once
#include <memory>

#include "attnlite/arena.h"
#include "attnlite/ops/ops.h"

namespace attnlite::drivers {

// What a session reserves: B sentences, K hypotheses each, S source steps, T target steps.
struct Limits {
  int B = 1, K = 1, S = 0, T = 0;
};

// Attention weights of one sentence slot, in op memory (the layouts of attnlite::Translation).
struct AttentionSlot {
  const float* enc_self = nullptr;  // (L, NH, S, S) or null
  const float* dec_self = nullptr;  // (L, T, NH, T) or null
  const float* cross = nullptr;     // (L, T, NH, S), Bahdanau (T, S)
  long enc_self_len = 0, dec_self_len = 0, cross_len = 0;  // floats
};

class Seq2SeqDriver {
 public:
  virtual ~Seq2SeqDriver() = default;

  virtual void carve(Arena& host, Arena& mem) = 0;
  // The encoder over n sources src (n, S) with valid lengths (n) (host arrays), each
  // sentence's decoder state copied to its K rows; attention: record (and zero the slots and
  // histories first).
  virtual void encode(const int* src, const int* valid, int n, int K, bool attention,
                      const ops::Ctx& cx) = 0;
  // One decoder step for rows [0, rows): tokens (host, rows) at step t, positional row pos.
  // Returns the logits (rows, V) in op memory.
  virtual const float* step(const int* tokens, int rows, int t, int pos, bool attention,
                            const ops::Ctx& cx) = 0;
  // Beam search, once a step for the whole batch: in each of the first `blocks` sentences'
  // blocks of K rows, row b*K + j continues row b*K + parent[b*K + j] (host, blocks * K,
  // each in [0, K)), with its state for steps [0, t].
  virtual void reorder(const int* parent, int blocks, int K, int t, bool attention,
                       const ops::Ctx& cx) = 0;
  // K > 1: the attention history of `row` becomes sentence b's slot.
  virtual void keep_attention(int b, int row, const ops::Ctx& cx) = 0;
  // A search without attention: rows [0, n) continue rows keep[0..n) (host, ascending, so
  // keep[i] >= i), with their state for the `steps` steps run so far; the next step runs n
  // rows (beam search: whole sentences, their K rows in order).
  virtual void keep_rows(const int* keep, int n, int steps, const ops::Ctx& cx) = 0;
  virtual AttentionSlot attention(int b) const = 0;
};

// What every seq2seq driver keeps the same way: the sizes, the current search's rows, the
// source ids, each row's source valid length and the step's input tokens in op memory.
class Seq2SeqRows : public Seq2SeqDriver {
 protected:
  Seq2SeqRows(const ops::Ops& op, const Limits& lim)
      : op_(op), B_(lim.B), KM_(lim.K), R_(lim.B * lim.K), S_(lim.S), T_(lim.T) {}

  void carve_rows(Arena& host, Arena& mem) {
    row_valid_host_ = host.take<int>((size_t)R_);
    src_ = mem.take<int>((size_t)B_ * S_);
    valid_ = mem.take<int>((size_t)B_);
    row_valid_ = mem.take<int>((size_t)R_);
    tokens_ = mem.take<int>((size_t)R_);
    row_map_ = mem.take<int>((size_t)R_);
  }
  // A new search of n sentences with K rows each: uploads the sources, their valid lengths
  // and every row's (host arrays; null in the dry run). S (≤ S_): the source steps the
  // encoder runs, the first S of each sentence's S_ ids, packed as (n, S).
  void begin(const int* src, const int* valid, int n, int K, const ops::Ops& op) { begin(src, valid, n, K, S_, op); }
  void begin(const int* src, const int* valid, int n, int K, int S, const ops::Ops& op) {
    K_ = K;
    rows_ = n * K;
    if (S == S_ || !src)
      op.upload(src_, src, sizeof(int) * (size_t)n * S_);
    else
      for (int b = 0; b < n; ++b) op.upload(src_ + (long)b * S, src + (long)b * S_, sizeof(int) * (size_t)S);
    op.upload(valid_, valid, sizeof(int) * (size_t)n);
    if (valid)
      for (int r = 0; r < rows_; ++r) row_valid_host_[r] = valid[r / K];
    op.upload(row_valid_, row_valid_host_, sizeof(int) * (size_t)rows_);
  }
  // keep_rows(): each row's source valid length follows its row.
  void keep_row_lens(const int* keep, int n, const ops::Ops& op) {
    for (int i = 0; i < n; ++i) row_valid_host_[i] = row_valid_host_[keep[i]];
    op.upload(row_valid_, row_valid_host_, sizeof(int) * (size_t)n);
    rows_ = n;
  }
  const int* upload_tokens(const int* tokens, int rows, const ops::Ops& op) {
    op.upload(tokens_, tokens, sizeof(int) * (size_t)rows);
    return tokens_;
  }
  // reorder(): the rows' parents in op memory, for ops::Ops::permute_blocks; keep_rows(): the
  // kept rows, for ops::Ops::keep_rows.
  const int* upload_row_map(const int* map, int rows, const ops::Ops& op) {
    op.upload(row_map_, map, sizeof(int) * (size_t)rows);
    return row_map_;
  }
  ops::ValidLens row_lens() const { return ops::ValidLens::per_batch(row_valid_); }

  const ops::Ops& op_;
  int B_, KM_, R_, S_, T_;
  int K_ = 1, rows_ = 0;           // the current search: hypotheses per sentence, rows
  int* row_valid_host_ = nullptr;  // (R)
  int* src_ = nullptr;             // (B, S)
  int* valid_ = nullptr;           // (B) source valid length of each sentence
  int* row_valid_ = nullptr;       // (R) source valid length of each row
  int* tokens_ = nullptr;          // (R) this step's inputs
  int* row_map_ = nullptr;         // (R) reorder's parents or keep_rows' rows
};

}  // namespace attnlite::drivers
