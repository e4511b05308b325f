// attnlite — the searches (internal), written once against drivers::Seq2SeqDriver: greedy
// decoding (d2l's predict_seq2seq) and beam search (the rules stated in attnlite/translate.h).
// Each carves its host buffers from the session block and fills the n-best list of every
// sentence; nothing in them depends on the model family or the device.
#pragma once
#include "attnlite/arena.h"
#include "attnlite/decoding.h"
#include "drivers/driver.h"

namespace attnlite::search {

// The sources of one call, host memory: n sentences of S ids, their valid lengths.
struct Sources {
  const int* src = nullptr;    // (n, S)
  const int* valid = nullptr;  // (n)
  int n = 0;
};

// Token ids the searches need and the sizes they reserve for.
struct Setup {
  int bos = 0, eos = 0, V = 0;
  drivers::Limits lim;  // B sentences, K = max beam, T target steps
  int drop_floor = 0;  // finished rows leave only a batch of more rows (Ops::drop_floor)
};

// The n-best lists of every sentence (host memory; text is filled in by the caller).
struct NBestLists {
  Hypothesis* hyps = nullptr;  // (B, K): sentence b's at b * K
  int* size = nullptr;         // (B)
  void carve(Arena& host, const Setup& s) {
    hyps = host.take<Hypothesis>((size_t)s.lim.B * s.lim.K);
    size = host.take<int>((size_t)s.lim.B);
  }
};

class Greedy {
 public:
  void carve(Arena& host, const Setup& s);
  // Each sentence's greedy translation is its one hypothesis; attention in its slot.
  void run(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, const Sources& in, int steps,
           const DecodeOptions& o, NBestLists& out);

 private:
  int drop_finished(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int rows, int live, int steps);

  Setup s_;
  int* tok_in_ = nullptr;   // (B) row r's input
  int* ids_ = nullptr;      // (B)
  float* probs_ = nullptr;  // (B)
  double* lp_ = nullptr;    // (B)
  double* logp_ = nullptr;  // (B)
  char* done_ = nullptr;    // (B)
  int* sentence_ = nullptr; // (B) row r's sentence
  int* keep_ = nullptr;     // (B) drop_finished's rows
  int* tokens_ = nullptr;   // (B, T)
  float* tprobs_ = nullptr; // (B, T)
};

class Beam {
 public:
  void carve(Arena& host, const Setup& s);
  // K = o.beam_size hypotheses per sentence; the best one's attention in its slot.
  void run(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, const Sources& in, int steps,
           const DecodeOptions& o, NBestLists& out);

 private:
  struct Candidate {
    double score;  // parent's score + lp
    double lp;     // this token's log-probability
    int hyp, token;
  };
  bool select(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int i, int b, int K, int t,
              const DecodeOptions& o);
  void add_finished(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int b, int row, int ntok,
                    bool eos, double lp, const DecodeOptions& o);
  void results(int b, int K, NBestLists& out);
  bool settled(int b, int b0, int K, int steps, float alpha) const;
  int drop_done(drivers::Seq2SeqDriver& d, const ops::Ctx& cx, int blocks, int active, int K,
                int steps);

  Setup s_;
  int F_ = 0;                     // finished hypotheses a sentence can collect: K * (T + 1)
  int* top_id_ = nullptr;         // (R, 2K) each row's candidates (Ops::top_rows)
  float* top_val_ = nullptr;      // (R, 2K)
  float* row_max_ = nullptr;      // (R) each row's log-softmax constants
  double* row_sum_ = nullptr;     // (R)
  int* tok_in_ = nullptr;         // (R)
  double* logp_ = nullptr;        // (R) live scores
  int* parent_ = nullptr;         // (R)
  int *live_tok_ = nullptr, *next_tok_ = nullptr;      // (R, T)
  float *live_prob_ = nullptr, *next_prob_ = nullptr;  // (R, T)
  Candidate* cands_ = nullptr;    // (2 K)
  int* fin_tok_ = nullptr;        // (B, F, T)
  float* fin_prob_ = nullptr;     // (B, F, T)
  double *fin_logp_ = nullptr, *fin_score_ = nullptr;  // (B, F)
  int *fin_len_ = nullptr, *fin_eos_ = nullptr;        // (B, F)
  int* fin_count_ = nullptr;      // (B)
  int* fin_best_ = nullptr;       // (B) best finished so far, -1 before the first
  int* order_ = nullptr;          // (F)
  char* done_ = nullptr;          // (B)
  int* block_ = nullptr;          // (B) block i's sentence
  int* keep_ = nullptr;           // (R) drop_done's rows
};

// logp / length^alpha (alpha 0: logp itself).
double penalized(double logp, int length, float alpha);

// Both searches' rule for leaving a batch: blocks [0, blocks) of K decoder rows hold sentences
// sentence[i], `active` of them not done (active < blocks). Once a quarter of the blocks are
// done, the others move to the front: sentence[] lists the kept blocks' sentences in order,
// keep[] (blocks * K) the kept rows as Seq2SeqDriver::keep_rows takes them, and the kept
// blocks are returned; before that, `blocks` (nothing moves). Each move leaves at most three
// quarters of the blocks, so the rows moved add up to at most three times the batch.
int keep_unfinished(const char* done, int* sentence, int blocks, int active, int K, int* keep);

}  // namespace attnlite::search
