// Attention rollout (attention/rollout.h) after every layer, as the figures of the Vision
// Transformer (vit_maps.cpp) and of a translator's encoder (translation_views.cpp) draw it.
#include <vector>

#include "attnlite/attention/rollout.h"
#include "figures/figure_parts.h"

namespace attnlite::figures {
using namespace attnlite::render;  // figures are drawn with the renderer

std::vector<std::vector<float>> detail::rollouts(int layers, int heads, int T,
                                                 const std::function<float(int, int, int, int)>& attn) {
  std::vector<double> R((size_t)T * T), next((size_t)T * T), layer((size_t)T * T);
  std::vector<std::vector<float>> out;
  attention::rollout(R.data(), next.data(), layer.data(), layers, heads, T, attn,
                     [&](int, const double* P) { out.emplace_back(P, P + (size_t)T * T); });
  return out;
}

}  // namespace attnlite::figures
