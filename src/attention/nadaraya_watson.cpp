#include "attnlite/attention/nadaraya_watson.h"

#include "attnlite/ops/ops.h"

namespace attnlite::attention {

namespace {
// weights (nq, nk) = softmax(-((q - k) w)^2 / 2) row by row.
void nw_weights(float* weights, const float* queries, int nq, const float* keys, int nk, int ld,
                float w) {
  for (int i = 0; i < nq; ++i) {
    const float* k = keys + (long)i * ld;
    float* a = weights + (long)i * nk;
    for (int j = 0; j < nk; ++j) {
      const float d = (queries[i] - k[j]) * w;
      a[j] = -(d * d) / 2.f;
    }
  }
  ops::cpu().softmax_rows(weights, nk, nq, nk);
}
}  // namespace

void nadaraya_watson(float* y, float* weights, const float* queries, int nq, const float* keys,
                     const float* values, int nk, int ld, float w) {
  nw_weights(weights, queries, nq, keys, nk, ld, w);
  for (int i = 0; i < nq; ++i) {
    const float* v = values + (long)i * ld;
    float s = 0.f;
    for (int j = 0; j < nk; ++j) s += weights[(long)i * nk + j] * v[j];
    y[i] = s;
  }
}

float nadaraya_watson_loss_grad(float* grad_w, float* weights, const float* queries, int nq,
                                const float* keys, const float* values, int nk, int ld, float w,
                                const float* targets) {
  nw_weights(weights, queries, nq, keys, nk, ld, w);
  // y_i = sum_j a_ij v_ij; ds_ij/dw = -(q_i - k_ij)^2 w; dy_i/dw = sum_j a_ij (v_ij - y_i) ds_ij/dw.
  double loss = 0.0, grad = 0.0;
  for (int i = 0; i < nq; ++i) {
    const float* k = keys + (long)i * ld;
    const float* v = values + (long)i * ld;
    const float* a = weights + (long)i * nk;
    double y = 0.0;
    for (int j = 0; j < nk; ++j) y += (double)a[j] * v[j];
    double dy = 0.0;
    for (int j = 0; j < nk; ++j) {
      const double d = (double)queries[i] - k[j];
      dy += a[j] * (v[j] - y) * (-(d * d) * w);
    }
    const double r = y - targets[i];
    loss += r * r;
    grad += 2.0 * r * dy;
  }
  *grad_w = (float)grad;
  return (float)loss;
}

}  // namespace attnlite::attention
