// Scalar reference kernels: plain loops, always built, the ground truth for the tests of every
// other kernel table and of the device op sets.
#include <cmath>

#include "attnlite/ops/kernels.h"

namespace attnlite::ops {
namespace {

void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K) {
  for (int m = 0; m < M; ++m) {
    const float* xr = x + (long)m * K;
    float* yr = y + (long)m * N;
    for (int n = 0; n < N; ++n) {
      const float* wr = w + (long)n * K;
      float s = 0.f;
      for (int k = 0; k < K; ++k) s += xr[k] * wr[k];
      yr[n] = b ? s + b[n] : s;
    }
  }
}

void linear_i8(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
               int M, int N, int K) {
  for (int m = 0; m < M; ++m) {
    const float* xr = x + (long)m * K;
    float* yr = y + (long)m * N;
    for (int n = 0; n < N; ++n) {
      const int8_t* qr = q + (long)n * K;
      float s = 0.f;
      // the reference, not a hot path (the SIMD tables have their own): kept small
#if defined(__clang__)
#pragma clang loop vectorize(disable) interleave(disable) unroll(disable)
#endif
      for (int k = 0; k < K; ++k) s += xr[k] * (float)qr[k];
      yr[n] = b ? s * scale[n] + b[n] : s * scale[n];
    }
  }
}

void gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K, float alpha) {
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float s = 0.f;
      for (int k = 0; k < K; ++k) s += a[(long)m * lda + k] * b[(long)n * ldb + k];
      c[(long)m * ldc + n] = s * alpha;
    }
}

void gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K) {
  for (int m = 0; m < M; ++m) {
    float* cr = c + (long)m * ldc;
    for (int n = 0; n < N; ++n) cr[n] = 0.f;
    for (int k = 0; k < K; ++k) {
      float av = a[(long)m * lda + k];
      const float* br = b + (long)k * ldb;
      for (int n = 0; n < N; ++n) cr[n] += av * br[n];
    }
  }
}

void softmax_rows(float* x, int ld, int rows, int n) {
  for (int r = 0; r < rows; ++r) {
    float* xr = x + (long)r * ld;
    float mx = -INFINITY;
    for (int i = 0; i < n; ++i) mx = xr[i] > mx ? xr[i] : mx;
    float s = 0.f;
    for (int i = 0; i < n; ++i) {
      xr[i] = std::exp(xr[i] - mx);
      s += xr[i];
    }
    float inv = 1.f / s;
    for (int i = 0; i < n; ++i) xr[i] *= inv;
  }
}

void layer_norm(float* y, const float* x, const float* g, const float* b, int rows, int n,
                float eps) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + (long)r * n;
    float* yr = y + (long)r * n;
    float mean = 0.f;
    for (int i = 0; i < n; ++i) mean += xr[i];
    mean /= (float)n;
    float var = 0.f;
    for (int i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= (float)n;
    float inv = 1.f / std::sqrt(var + eps);
    for (int i = 0; i < n; ++i) yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
  }
}

void add(float* y, const float* a, const float* b, int n) {
  for (int i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void relu(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
}
void tanh_(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}
void sigmoid(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = 1.f / (1.f + std::exp(-x[i]));
}
void gelu(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.f + std::erf(x[i] * 0.70710678118654752f));
}

// The reference of the fused GRU step: per block of hidden units, the accumulators start at
// the biases (and gi), take the products in k order, then the gates as nn.GRU has them:
// r = σ(i_r + h_r), z = σ(i_z + h_z), n = tanh(i_n + r·h_n), h' = (1 − z)·n + z·h.
void gru_step(float* h, float* tmp, const float* x, const float* gi, const float* pk, int B,
              int in, int H) {
  constexpr int U = kGruBlock;
  const long block = gru_block_floats(in, H);
  for (int b = 0; b < B; ++b) {
    float* hb = h + (long)b * H;
    const float* xb = x ? x + (long)b * in : nullptr;
    const float* gb = gi ? gi + (long)b * 3 * H : nullptr;
    for (int j0 = 0; j0 < H; j0 += U) {
      const float* p = pk + (long)(j0 / U) * block;
      const int n = H - j0 < U ? H - j0 : U;
      float r[U], z[U], ni[U], nh[U];
      for (int u = 0; u < U; ++u) {
        const bool in_range = u < n;
        if (gb) {
          r[u] = (in_range ? gb[j0 + u] : 0.f) + p[3 * U + u];
          z[u] = (in_range ? gb[H + j0 + u] : 0.f) + p[4 * U + u];
          ni[u] = in_range ? gb[2 * H + j0 + u] : 0.f;
        } else {
          r[u] = p[u] + p[3 * U + u];
          z[u] = p[U + u] + p[4 * U + u];
          ni[u] = p[2 * U + u];
        }
        nh[u] = p[5 * U + u];
      }
      const float* w = p + 6 * U;
      if (xb)
        for (int k = 0; k < in; ++k, w += 3 * U)
          for (int u = 0; u < U; ++u) {
            r[u] += xb[k] * w[u];
            z[u] += xb[k] * w[U + u];
            ni[u] += xb[k] * w[2 * U + u];
          }
      w = p + 6 * U + 3L * U * in;
      for (int k = 0; k < H; ++k, w += 3 * U)
        for (int u = 0; u < U; ++u) {
          r[u] += hb[k] * w[u];
          z[u] += hb[k] * w[U + u];
          nh[u] += hb[k] * w[2 * U + u];
        }
      for (int u = 0; u < n; ++u) {
        const float rg = 1.f / (1.f + std::exp(-r[u]));
        const float zg = 1.f / (1.f + std::exp(-z[u]));
        const float ng = std::tanh(ni[u] + rg * nh[u]);
        tmp[j0 + u] = (hb[j0 + u] - ng) * zg + ng;
      }
    }
    for (int j = 0; j < H; ++j) hb[j] = tmp[j];
  }
}

void exp_sum(const float* x, int n, float* max, double* sum) {
  float m = x[0];
  for (int i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += std::exp((double)x[i] - (double)m);
  *max = m;
  *sum = s;
}

}  // namespace

const Kernels& scalar_kernels() {
  static const Kernels k{"scalar", linear, linear_i8, gemm_nt, gemm_nn, softmax_rows,
                         layer_norm, add,   relu,    tanh_,   sigmoid, gelu,    exp_sum,
                         gru_step, nullptr, nullptr};  // w read as stored
  return k;
}

void gru_pack(float* pk, const float* w_ih, const float* b_ih, const float* w_hh,
              const float* b_hh, int in, int H) {
  constexpr int U = kGruBlock;
  const long block = gru_block_floats(in, H);
  for (int j0 = 0; j0 < H; j0 += U) {
    float* p = pk + (long)(j0 / U) * block;
    for (long i = 0; i < block; ++i) p[i] = 0.f;  // the padding units of the last block
    for (int u = 0; u < U && j0 + u < H; ++u)
      for (int g = 0; g < 3; ++g) {
        const long row = (long)g * H + j0 + u;  // gate g's row of unit j0 + u
        p[g * U + u] = b_ih ? b_ih[row] : 0.f;
        p[(3 + g) * U + u] = b_hh ? b_hh[row] : 0.f;
        for (int k = 0; k < in; ++k) p[6 * U + (3L * k + g) * U + u] = w_ih[row * in + k];
        for (int k = 0; k < H; ++k) p[6 * U + 3L * U * in + (3L * k + g) * U + u] = w_hh[row * H + k];
      }
  }
}

}  // namespace attnlite::ops
