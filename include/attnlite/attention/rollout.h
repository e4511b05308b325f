// attnlite — attention rollout (Abnar & Zuidema, 2020): how much each token's output draws on
// each input through a stack of self-attention layers. R_0 = I, R_l = Â_l · R_(l-1), Â_l =
// the rows of (the mean of layer l's heads + I), normalised; in float64. The classifier's
// rollout (classify.h) and the rollout figures (src/figures) run this one definition.
//
// Legend: L layers, NH heads, T tokens.
#pragma once

namespace attnlite::attention {

// R, next, layer: (T, T) float64 buffers of the caller's; attn(l, h, q, k) reads a weight;
// after layer l, done(l, R) sees the product so far. Returns R_L (R or next).
template <class Attn, class Done>
const double* rollout(double* R, double* next, double* layer, int L, int NH, int T, Attn&& attn,
                      Done&& done) {
  for (int q = 0; q < T; ++q)
    for (int k = 0; k < T; ++k) R[(long)q * T + k] = q == k;
  for (int l = 0; l < L; ++l) {
    for (int q = 0; q < T; ++q) {  // Â = (mean over heads + I), rows normalised
      double sum = 0;
      for (int k = 0; k < T; ++k) {
        double v = q == k ? 1.0 : 0.0;
        for (int h = 0; h < NH; ++h) v += (double)attn(l, h, q, k) / NH;
        layer[(long)q * T + k] = v;
        sum += v;
      }
      for (int k = 0; k < T; ++k) layer[(long)q * T + k] /= sum;
    }
    for (int q = 0; q < T; ++q)  // R = Â_l · R
      for (int k = 0; k < T; ++k) {
        double v = 0;
        for (int j = 0; j < T; ++j) v += layer[(long)q * T + j] * R[(long)j * T + k];
        next[(long)q * T + k] = v;
      }
    double* t = R;
    R = next;
    next = t;
    done(l, static_cast<const double*>(R));
  }
  return R;
}

}  // namespace attnlite::attention
