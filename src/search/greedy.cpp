// Greedy decoding, as d2l's predict_seq2seq: from <bos>, feed back the argmax of each step
// until <eos> or the step limit. A finished row keeps <eos> as its input while the others go
// on (batches), exactly as one sentence at a time would.
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
  tokens_ = host.take<int>(B * T);
  tprobs_ = host.floats(B * T);
}

void Greedy::run(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, const Sources& in, int steps,
                 const DecodeOptions& o, NBestLists& out) {
  const int n = in.n, T = s_.lim.T, K = s_.lim.K;
  d.encode(in.src, in.valid, n, 1, o.attention, cx);
  for (int b = 0; b < n; ++b) {
    tok_in_[b] = s_.bos;
    done_[b] = 0;
    logp_[b] = 0.0;
    out.hyps[(long)b * K] = Hypothesis{};
  }
  int live = n;
  for (int t = 0; t < steps && live > 0; ++t) {
    const float* logits = d.step(tok_in_, n, t, o.d2l_compat ? 0 : t, o.attention, cx);
    cx.op.argmax_rows(ids_, probs_, lp_, logits, n, s_.V, cx.scratch);
    for (int b = 0; b < n; ++b) {
      if (done_[b]) continue;
      Hypothesis& h = out.hyps[(long)b * K];
      const int id = ids_[b];
      h.length = t + 1;
      tok_in_[b] = id;
      logp_[b] += lp_[b];
      if (id == s_.eos) {
        h.eos = true;
        done_[b] = 1;
        --live;
        continue;
      }
      tokens_[(long)b * T + h.num_tokens] = id;
      tprobs_[(long)b * T + h.num_tokens] = probs_[b];
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
