#include "beam.h"

namespace attnlite::beam {

LogSoftmax log_softmax(const float* logits, int V) {
  LogSoftmax r;
  float mx = logits[0];
  for (int v = 1; v < V; ++v) mx = logits[v] > mx ? logits[v] : mx;
  double s = 0.0;
  for (int v = 0; v < V; ++v) s += std::exp((double)logits[v] - (double)mx);
  r.max = mx;
  r.logsum = std::log(s);
  return r;
}

void rank(int* order, const double* score, int n) {
  for (int i = 0; i < n; ++i) {
    int k = i;
    for (; k > 0 && score[i] > score[order[k - 1]]; --k) order[k] = order[k - 1];
    order[k] = i;
  }
}

void expand_rows(float* rows, long len, int n, int K) {
  // Backwards: row b is read before anything at index <= b is written.
  for (int b = n - 1; b >= 0; --b)
    for (int j = K - 1; j >= 0; --j)
      if ((long)b * K + j != b)
        std::memmove(rows + ((long)b * K + j) * len, rows + (long)b * len, sizeof(float) * len);
}

}  // namespace attnlite::beam
