// attnlite — beam-search bookkeeping shared by both models (internal): log-softmax in
// float64, the ranked candidate list of one sentence, the final ranking, row gathers.
// The rules are those stated in attnlite/translate.h; nothing here allocates.
#pragma once
#include <cmath>
#include <cstring>

namespace attnlite::beam {

// log_softmax(row) in float64: lp(x) = (x - max) - log(sum exp(x - max)).
struct LogSoftmax {
  double max = 0, logsum = 0;
  double operator()(float x) const { return ((double)x - max) - logsum; }
};
LogSoftmax log_softmax(const float* logits, int V);

struct Candidate {
  double score;  // parent's score + lp
  double lp;     // this token's log-probability
  int hyp, token;
};

// The best `cap` candidates of one sentence in ranking order (score descending, then lower
// hyp, then lower token). Offers must come in (hyp, token) order, so an equal score never
// moves ahead of an earlier offer.
struct TopList {
  Candidate* c = nullptr;
  int n = 0, cap = 0;
  void clear() { n = 0; }
  void offer(double score, double lp, int hyp, int token) {
    if (n == cap && !(score > c[n - 1].score)) return;
    int i = n < cap ? n++ : cap - 1;
    for (; i > 0 && score > c[i - 1].score; --i) c[i] = c[i - 1];
    c[i] = {score, lp, hyp, token};
  }
};

// logp / length^alpha (alpha 0: logp itself).
inline double penalized(double logp, int length, float alpha) {
  return alpha == 0.f ? logp : logp / std::pow((double)length, (double)alpha);
}

// order (n) <- 0..n-1 sorted by score descending, ties by index (a stable insertion sort).
void rank(int* order, const double* score, int n);

// rows[j] <- old rows[parent[j]] for j < K; each row `len` floats at `stride`; tmp holds K * len.
template <class T>
void gather_rows(T* rows, long stride, long len, const int* parent, int K, T* tmp) {
  for (int j = 0; j < K; ++j) std::memcpy(tmp + (long)j * len, rows + (long)j * stride, sizeof(T) * len);
  for (int j = 0; j < K; ++j)
    std::memcpy(rows + (long)j * stride, tmp + (long)parent[j] * len, sizeof(T) * len);
}

// Rows 0..n-1 (each `len` floats, packed) copied to rows b*K .. b*K+K-1 in place.
void expand_rows(float* rows, long len, int n, int K);

}  // namespace attnlite::beam
