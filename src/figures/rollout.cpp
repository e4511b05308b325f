// Attention rollout (Abnar & Zuidema, 2020) through the layers of a stack of self-attention
// layers: the figures of the Vision Transformer (vit_maps.cpp) and of a translator's encoder
// (translation_views.cpp) draw it.
#include <vector>

#include "figures/figure_parts.h"

namespace attnlite::figures {
using namespace attnlite::render;  // figures are drawn with the renderer

std::vector<std::vector<float>> detail::rollouts(int layers, int heads, int T,
                                                 const std::function<float(int, int, int, int)>& attn) {
  // R_l = Â_l · R_(l-1), Â = rows of (mean of the heads + I) normalised (float64, as
  // Classifier::rollout).
  std::vector<double> R((size_t)T * T, 0.0), A((size_t)T * T), tmp((size_t)T * T);
  std::vector<std::vector<float>> out;
  for (int q = 0; q < T; ++q) R[(size_t)q * T + q] = 1.0;
  for (int l = 0; l < layers; ++l) {
    for (int q = 0; q < T; ++q) {
      double sum = 0.0;
      for (int k = 0; k < T; ++k) {
        double a = q == k ? 1.0 : 0.0;
        for (int h = 0; h < heads; ++h) a += (double)attn(l, h, q, k) / heads;
        A[(size_t)q * T + k] = a;
        sum += a;
      }
      for (int k = 0; k < T; ++k) A[(size_t)q * T + k] /= sum;
    }
    for (int q = 0; q < T; ++q)
      for (int k = 0; k < T; ++k) {
        double v = 0.0;
        for (int j = 0; j < T; ++j) v += A[(size_t)q * T + j] * R[(size_t)j * T + k];
        tmp[(size_t)q * T + k] = v;
      }
    R.swap(tmp);
    out.emplace_back(R.begin(), R.end());
  }
  return out;
}

}  // namespace attnlite::figures
