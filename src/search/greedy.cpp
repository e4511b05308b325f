// Greedy decoding, as d2l's predict_seq2seq: from <bos>, feed back the argmax of each step
// until <eos> or the step limit. In a batch each row runs as its sentence would alone; a
// finished row keeps <eos> as its input while the others go on, or leaves the batch
// (drop_finished).
#include <cmath>

#include "search/search.h"

namespace attnlite::search {

double penalized(double logp, int length, float alpha) {
  return alpha == 0.f ? logp : logp / std::pow((double)length, (double)alpha);
}

void Greedy::carve(Arena& host, const Setup& s) {
  s_ = s;
  const size_t B = s.lim.B, T = s.lim.T;
  tok_in_ = host.take<int>(B);
  ids_ = host.take<int>(B);
  probs_ = host.floats(B);
  lp_ = host.take<double>(B);
  logp_ = host.take<double>(B);
  done_ = host.take<char>(B);
  sentence_ = host.take<int>(B);
  keep_ = host.take<int>(B);
  tokens_ = host.take<int>(B * T);
  tprobs_ = host.floats(B * T);
}

int keep_unfinished(const char* done, int* sentence, int blocks, int active, int K, int* keep) {
  if (4 * (blocks - active) < blocks) return blocks;
  int m = 0;
  for (int i = 0; i < blocks; ++i) {
    if (done[sentence[i]]) continue;
    sentence[m] = sentence[i];
    for (int j = 0; j < K; ++j) keep[m * K + j] = i * K + j;
    ++m;
  }
  return m;
}

// Rows [0, rows) hold sentences sentence_[r], `live` of them unfinished (live < rows); the
// finished ones leave as keep_unfinished says, each row's input moving with it. Returns the
// rows that the next step runs.
int Greedy::drop_finished(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int rows, int live,
                          int steps) {
  const int n = keep_unfinished(done_, sentence_, rows, live, 1, keep_);
  if (n == rows) return rows;
  for (int r = 0; r < n; ++r) tok_in_[r] = tok_in_[keep_[r]];
  d.keep_rows(keep_, n, steps, cx);
  return n;
}

void Greedy::run(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, const Sources& in, int steps,
                 const DecodeOptions& o, NBestLists& out) {
  const int n = in.n, T = s_.lim.T, K = s_.lim.K;
  d.encode(in.src, in.valid, n, 1, o.attention, cx);
  for (int b = 0; b < n; ++b) {
    tok_in_[b] = s_.bos;
    sentence_[b] = b;
    done_[b] = 0;
    logp_[b] = 0.0;
    out.hyps[(long)b * K] = Hypothesis{};
  }
  // Finished rows leave a batch of more rows than the op set's floor (on a device, where a small
  // batch's step costs its launches rather than its rows, they stay) when no attention is
  // recorded (its slots are the rows' own).
  const bool drop = !o.attention;
  int rows = n, live = n;
  for (int t = 0; t < steps && live > 0; ++t) {
    if (drop && live < rows && rows > s_.drop_floor) rows = drop_finished(d, cx, rows, live, t);
    const float* logits = d.step(tok_in_, rows, t, o.d2l_compat ? 0 : t, o.attention, cx);
    cx.op.argmax_rows(ids_, probs_, lp_, logits, rows, s_.V, cx.scratch);
    for (int r = 0; r < rows; ++r) {
      const int b = sentence_[r];
      if (done_[b]) continue;
      Hypothesis& h = out.hyps[(long)b * K];
      const int id = ids_[r];
      h.length = t + 1;
      tok_in_[r] = id;
      logp_[b] += lp_[r];
      if (id == s_.eos) {
        h.eos = true;
        done_[b] = 1;
        --live;
        continue;
      }
      tokens_[(long)b * T + h.num_tokens] = id;
      tprobs_[(long)b * T + h.num_tokens] = probs_[r];
      ++h.num_tokens;
    }
  }
  for (int b = 0; b < n; ++b) {
    Hypothesis& h = out.hyps[(long)b * K];
    h.tokens = tokens_ + (long)b * T;
    h.probs = tprobs_ + (long)b * T;
    h.logp = logp_[b];
    h.score = penalized(logp_[b], h.length, o.length_penalty);
    out.size[b] = 1;
  }
}

}  // namespace attnlite::search
