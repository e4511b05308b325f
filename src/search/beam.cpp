// Beam search (the rules are stated in attnlite/translate.h; tools/beam_ref.py is the same
// search on the book's PyTorch modules). The sentences still searched are the decoder's row
// blocks: hypothesis j of block i's sentence block_[i] is decoder row i*K + j, and every
// per-row array here follows the decoder's rows; a block is its sentence's own (i = b) until
// sentences that are done leave the batch (drop_done). Each step takes, per row, only the
// op set's top_rows: the row's 2K best logits and its log-softmax constants (on a GPU they
// are found there, and the logits never leave it), and reorders every block's rows with one
// driver call.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "attnlite/ops/ops.h"
#include "search/search.h"

namespace attnlite::search {

namespace {

// log p(x) of a row in float64 from its constants (Ops::top_rows, as exp_sum gives them):
// (x - max) - log(sum).
struct LogSoftmax {
  double max = 0, logsum = 0;
  double operator()(float x) const { return ((double)x - max) - logsum; }
};

// order (n) <- 0..n-1 sorted by score descending, ties by index (a stable insertion sort).
void rank(int* order, const double* score, int n) {
  for (int i = 0; i < n; ++i) {
    int k = i;
    for (; k > 0 && score[i] > score[order[k - 1]]; --k) order[k] = order[k - 1];
    order[k] = i;
  }
}

}  // namespace

void Beam::carve(Arena& host, const Setup& s) {
  s_ = s;
  const size_t B = s.lim.B, K = s.lim.K, R = B * K, T = s.lim.T;
  F_ = (int)(K * (T + 1));
  const size_t F = F_;
  top_id_ = host.take<int>(R * 2 * K);
  top_val_ = host.floats(R * 2 * K);
  row_max_ = host.floats(R);
  row_sum_ = host.take<double>(R);
  tok_in_ = host.take<int>(R);
  logp_ = host.take<double>(R);
  parent_ = host.take<int>(R);
  live_tok_ = host.take<int>(R * T);
  next_tok_ = host.take<int>(R * T);
  live_prob_ = host.floats(R * T);
  next_prob_ = host.floats(R * T);
  cands_ = host.take<Candidate>(2 * K);
  fin_tok_ = host.take<int>(B * F * T);
  fin_prob_ = host.floats(B * F * T);
  fin_logp_ = host.take<double>(B * F);
  fin_score_ = host.take<double>(B * F);
  fin_len_ = host.take<int>(B * F);
  fin_eos_ = host.take<int>(B * F);
  fin_count_ = host.take<int>(B);
  fin_best_ = host.take<int>(B);
  order_ = host.take<int>(F);
  done_ = host.take<char>(B);
  block_ = host.take<int>(B);
  keep_ = host.take<int>(R);
}

// Appends a finished hypothesis to sentence b's list: row `row`'s first ntok tokens, with
// <eos> after them when eos. The best so far keeps the row's attention.
void Beam::add_finished(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int b, int row, int ntok,
                        bool eos, double lp, const DecodeOptions& o) {
  const int T = s_.lim.T, f = fin_count_[b]++;
  const long fi = (long)b * F_ + f;
  std::memcpy(fin_tok_ + fi * T, live_tok_ + (long)row * T, sizeof(int) * ntok);
  std::memcpy(fin_prob_ + fi * T, live_prob_ + (long)row * T, sizeof(float) * ntok);
  fin_logp_[fi] = lp;
  fin_len_[fi] = ntok + (eos ? 1 : 0);
  fin_eos_[fi] = eos;
  fin_score_[fi] = penalized(lp, fin_len_[fi], o.length_penalty);
  if (fin_best_[b] >= 0 && !(fin_score_[fi] > fin_score_[(long)b * F_ + fin_best_[b]])) return;
  fin_best_[b] = f;
  if (o.attention) d.keep_attention(b, row, cx);
}

// Whether sentence b's n-best list is final (its live hypotheses: rows b0 .. b0+K-1): it
// holds K finished hypotheses and no live one can finish above the K-th. A live row's score
// logp ≤ 0 only falls as tokens are added, and a finished score is logp / length^alpha with
// length ≤ steps, so no descendant scores above logp / steps^alpha (logp itself when alpha is
// 0); one that ties ranks after the K already there (results() keeps the order of arrival),
// and the kept attention changes only on a strictly better one. Stopping here therefore
// returns the list the full search returns.
bool Beam::settled(int b, int b0, int K, int steps, float alpha) const {
  const int nf = fin_count_[b];
  if (nf < K) return false;
  double best_live = -INFINITY;
  for (int j = 0; j < K; ++j) best_live = std::max(best_live, logp_[b0 + j]);
  // the K-th best finished score is at least the bound: K finished scores reach it
  const double bound = penalized(best_live, steps, alpha);
  const double* score = fin_score_ + (long)b * F_;
  int reach = 0;
  for (int f = 0; f < nf && reach < K; ++f) reach += score[f] >= bound;
  return reach == K;
}

// Step t of sentence b in block i: rank the candidates, finish <eos> ones, pick the next K
// live hypotheses and move every per-row state to them (the decoder's rows: parent_, for the
// step's reorder). False when the sentence stops. Hypothesis h's candidates are row `at`'s
// of top_rows: `at` = i at step 0 (one row per block, every hypothesis being the same),
// i*K + h after.
//
// The candidates are the search's 2K best (score, then order of offer: hypothesis, token):
// at most K end in <eos>, so K others remain. Any of them is among its own row's 2K best
// logits (a row's score rises with its logit, equal scores come from equal logits, offered
// by token), so offering only those, in order, selects the same list as every token would.
bool Beam::select(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int i, int b, int K, int t,
                  const DecodeOptions& o) {
  const int T = s_.lim.T, b0 = i * K, cap = 2 * K;
  int nc = 0;
  for (int h = 0; h < (t == 0 ? 1 : K); ++h) {
    const int at = t == 0 ? i : b0 + h;
    const int* id = top_id_ + (long)at * cap;
    const float* val = top_val_ + (long)at * cap;
    const LogSoftmax ls{row_max_[at], std::log(row_sum_[at])};
    const double base = logp_[b0 + h];
    for (int c = 0; c < cap; ++c) {
      // Offers come in (hyp, token) order, so an equal score never moves ahead of an earlier one.
      const double lp = ls(val[c]), score = base + lp;
      if (nc == cap && !(score > cands_[nc - 1].score)) break;  // nor can the row's next ones
      int to = nc < cap ? nc++ : cap - 1;
      for (; to > 0 && score > cands_[to - 1].score; --to) cands_[to] = cands_[to - 1];
      cands_[to] = {score, lp, h, id[c]};
    }
  }
  int nl = 0;
  bool all_eos = true;
  for (int r = 0; r < nc && nl < K; ++r) {
    const Candidate& c = cands_[r];
    if (c.token == s_.eos) {
      if (r < K) add_finished(d, cx, b, b0 + c.hyp, t, /*eos=*/true, c.score, o);
      continue;
    }
    if (r < K) all_eos = false;
    const long dst = b0 + nl, from = b0 + c.hyp;
    parent_[dst] = c.hyp;
    std::memcpy(next_tok_ + dst * T, live_tok_ + from * T, sizeof(int) * t);
    std::memcpy(next_prob_ + dst * T, live_prob_ + from * T, sizeof(float) * t);
    next_tok_[dst * T + t] = c.token;
    next_prob_[dst * T + t] = (float)std::exp(c.lp);
    tok_in_[dst] = c.token;
    logp_[dst] = c.score;  // the offers above are done reading the old scores
    ++nl;
  }
  if (all_eos) {
    for (int j = 0; j < K; ++j) parent_[b0 + j] = j;  // its rows are not read again
    return false;
  }
  return true;
}

// Blocks [0, blocks) hold sentences block_[i], `active` of them not done (active < blocks); the
// done ones leave as keep_unfinished (greedy.cpp) says, each kept row's state moving with it,
// here and in the decoder. Returns the blocks that the next step runs; `steps` steps have run.
int Beam::drop_done(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int blocks, int active, int K,
                    int steps) {
  const int m = keep_unfinished(done_, block_, blocks, active, K, keep_);
  if (m == blocks) return blocks;
  const long T = s_.lim.T;
  for (long to = 0; to < (long)m * K; ++to) {
    const long from = keep_[to];
    if (to == from) continue;
    tok_in_[to] = tok_in_[from];
    logp_[to] = logp_[from];
    std::memcpy(live_tok_ + to * T, live_tok_ + from * T, sizeof(int) * steps);
    std::memcpy(live_prob_ + to * T, live_prob_ + from * T, sizeof(float) * steps);
  }
  d.keep_rows(keep_, m * K, steps, cx);
  return m;
}

void Beam::run(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, const Sources& in, int steps,
               const DecodeOptions& o, NBestLists& out) {
  const int n = in.n, K = o.beam_size;
  d.encode(in.src, in.valid, n, K, o.attention, cx);
  for (int b = 0; b < n; ++b) {
    done_[b] = 0;
    fin_count_[b] = 0;
    fin_best_[b] = -1;
    block_[b] = b;
  }
  for (int r = 0; r < n * K; ++r) {
    tok_in_[r] = s_.bos;
    logp_[r] = 0.0;
  }
  // Sentences that are done leave a batch of more rows than the op set's floor when no
  // attention is recorded (as greedy.cpp's finished rows).
  const bool drop = !o.attention;
  int blocks = n, active = n, t = 0;
  for (; t < steps && active > 0; ++t) {
    if (drop && active < blocks && (long)blocks * K > s_.drop_floor)
      blocks = drop_done(d, cx, blocks, active, K, t);
    const int rows = blocks * K;
    const float* logits = d.step(tok_in_, rows, t, o.d2l_compat ? 0 : t, o.attention, cx);
    // step 0: every block's K rows are one row repeated, so one row per block
    cx.op.top_rows(top_id_, top_val_, row_max_, row_sum_, logits, t == 0 ? (long)K * s_.V : s_.V,
                   t == 0 ? blocks : rows, s_.V, 2 * K, cx.scratch);
    bool moved = false;
    for (int i = 0; i < blocks; ++i) {
      const int b = block_[i];
      if (done_[b]) {
        for (int j = 0; j < K; ++j) parent_[i * K + j] = j;
        continue;
      }
      const bool go = select(d, cx, i, b, K, t, o);
      for (int j = 0; go && j < K; ++j) moved |= parent_[i * K + j] != j;
      if (go && !settled(b, i * K, K, steps, o.length_penalty)) continue;
      done_[b] = 1;
      --active;
    }
    if (moved) d.reorder(parent_, blocks, K, t, o.attention, cx);
    std::swap(live_tok_, next_tok_);
    std::swap(live_prob_, next_prob_);
  }
  for (int i = 0; i < blocks; ++i) {
    const int b = block_[i];
    if (!done_[b])  // out of steps: the live hypotheses finish as they are
      for (int j = 0; j < K; ++j)
        add_finished(d, cx, b, i * K + j, t, /*eos=*/false, logp_[i * K + j], o);
  }
  for (int b = 0; b < n; ++b) results(b, K, out);
}

// Sentence b's n-best list, best first; the first is the one whose attention was kept.
void Beam::results(int b, int K, NBestLists& out) {
  const int nf = fin_count_[b], T = s_.lim.T;
  rank(order_, fin_score_ + (long)b * F_, nf);
  out.size[b] = std::min(K, nf);
  for (int k = 0; k < out.size[b]; ++k) {
    const long fi = (long)b * F_ + order_[k];
    out.hyps[(long)b * s_.lim.K + k] = {{}, fin_tok_ + fi * T, fin_prob_ + fi * T,
                                        fin_len_[fi] - fin_eos_[fi], fin_len_[fi],
                                        fin_eos_[fi] != 0, fin_logp_[fi], fin_score_[fi]};
  }
}

}  // namespace attnlite::search
