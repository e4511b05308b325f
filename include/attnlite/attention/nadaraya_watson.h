// d2l 10.2: Nadaraya-Watson kernel regression (attention pooling).
// weights[i, j] = softmax_j(-((q_i - k_ij) * w)^2 / 2), y_i = sum_j weights[i, j] v_ij.
// w = 1 is the non-parametric Gaussian kernel; a learned w is the parametric model.
//
// Legend: nq queries, nk keys per query.
#pragma once

namespace attnlite::attention {

// keys/values: (nq, nk) with row stride ld, or ld = 0 to share one (nk) row by all queries.
// y (nq) predictions, weights (nq, nk) receives the attention weights (required).
void nadaraya_watson(float* y, float* weights, const float* queries, int nq, const float* keys,
                     const float* values, int nk, int ld, float w = 1.f);

// d/dw of sum_i (y_i - target_i)^2 for the parametric model; returns the loss too.
// weights is scratch (nq, nk).
float nadaraya_watson_loss_grad(float* grad_w, float* weights, const float* queries, int nq,
                                const float* keys, const float* values, int nk, int ld, float w,
                                const float* targets);

}  // namespace attnlite::attention
