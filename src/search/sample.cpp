#include "search/sample.h"

#include <algorithm>
#include <cmath>

#include "attnlite/ops/ops.h"

namespace attnlite::search {

void Sampler::carve(Arena& host, int V) {
  V_ = V;
  order_ = host.take<int>((size_t)V);
  p_ = host.take<double>((size_t)V);
  soft_ = host.floats((size_t)V);
}

double log_softmax_at(const float* z, int V, int id) {
  double m = z[0];
  for (int v = 1; v < V; ++v) m = std::max(m, (double)z[v]);
  double s = 0;
  for (int v = 0; v < V; ++v) s += std::exp((double)z[v] - m);
  return (double)z[id] - m - std::log(s);
}

int Sampler::choose(const float* z, const GenerateOptions& o, SplitMix64& rng, float* prob) {
  const int V = V_;
  // one pass: the arg max (the lowest id on ties) and whether every logit is finite
  int id = 0;
  bool finite = std::isfinite(z[0]);
  for (int v = 1; v < V; ++v) {
    finite = finite && std::isfinite(z[v]);
    if (z[v] > z[id]) id = v;
  }
  if (!o.sample || !finite) {  // greedy (also when logits overflowed: hostile weights)
    // its probability with the SIMD softmax (float; the sampling rule below is float64)
    std::copy(z, z + V, soft_);
    ops::cpu().softmax_rows(soft_, V, 1, V);
    *prob = soft_[id];
    return id;
  }
  // p = softmax(z / temperature), float64
  const double t = o.temperature;
  const double m = (double)z[id] / t;
  double s = 0;
  for (int v = 0; v < V; ++v) s += (p_[v] = std::exp((double)z[v] / t - m));
  for (int v = 0; v < V; ++v) p_[v] /= s;
  // candidates by p descending, ties to the lower id; top-k keeps the first k
  for (int v = 0; v < V; ++v) order_[v] = v;
  const double* p = p_;
  auto before = [p](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); };
  int n = V;
  if (o.top_k > 0 && o.top_k < V) {
    n = o.top_k;
    std::partial_sort(order_, order_ + n, order_ + V, before);
  } else {
    std::sort(order_, order_ + V, before);
  }
  // top-p keeps the shortest prefix whose summed p reaches top_p
  double kept = 0;
  int cut = 0;
  while (cut < n) {
    kept += p[order_[cut++]];
    if (o.top_p < 1.f && kept >= (double)o.top_p) break;
  }
  n = cut;
  const double u = rng.uniform() * kept;
  double run = 0;
  id = order_[n - 1];
  for (int i = 0; i < n; ++i) {
    run += p[order_[i]];
    if (run > u) {
      id = order_[i];
      break;
    }
  }
  *prob = (float)std::exp(log_softmax_at(z, V, id));
  return id;
}

}  // namespace attnlite::search
