// attnlite — the fused GRU step in SIMD: eight hidden units per block, two vector accumulators
// (even and odd k) per gate product (r, z, the input and the hidden part of n), the input and hidden products
// taken as broadcasts of x[k] and h[k] times the packed weight rows (no horizontal sums), the
// gates applied in the same registers, one pass over the block's weights. Contract and
// packing: include/attnlite/ops/kernels.h (gru_step, gru_pack).
#include "attnlite/ops/kernels.h"
#include "kernels_simd.h"
#include "simd_math.h"

namespace attnlite::ops::simd {

static_assert(kGruBlock == kW, "one vector of hidden units per block");

// n ≤ 8 floats from src, the rest of the vector 0.
static inline v8 load_n(const float* src, int n) {
  if (n == kW) return simde_mm256_loadu_ps(src);
  alignas(32) float v[kW] = {};
  for (int u = 0; u < n; ++u) v[u] = src[u];
  return simde_mm256_load_ps(v);
}

// r, z, n += Σ_k s[k] · (the r, z, n rows of w for k), over K packed steps of 3 vectors.
// Even and odd k go to separate accumulators (six FMA chains instead of three: one chain per
// gate waited on the FMA latency at every k), added at the end.
static inline void gate_sums(v8& r, v8& z, v8& n, const float* w, const float* s, int K) {
  const v8 zero = simde_mm256_setzero_ps();
  v8 r1 = zero, z1 = zero, n1 = zero;
  int k = 0;
  for (; k + 2 <= K; k += 2, w += 6 * kW) {
    const v8 s0 = v_set(s[k]), s1 = v_set(s[k + 1]);
    r = simde_mm256_fmadd_ps(s0, simde_mm256_loadu_ps(w), r);
    z = simde_mm256_fmadd_ps(s0, simde_mm256_loadu_ps(w + kW), z);
    n = simde_mm256_fmadd_ps(s0, simde_mm256_loadu_ps(w + 2 * kW), n);
    r1 = simde_mm256_fmadd_ps(s1, simde_mm256_loadu_ps(w + 3 * kW), r1);
    z1 = simde_mm256_fmadd_ps(s1, simde_mm256_loadu_ps(w + 4 * kW), z1);
    n1 = simde_mm256_fmadd_ps(s1, simde_mm256_loadu_ps(w + 5 * kW), n1);
  }
  if (k < K) {
    const v8 s0 = v_set(s[k]);
    r = simde_mm256_fmadd_ps(s0, simde_mm256_loadu_ps(w), r);
    z = simde_mm256_fmadd_ps(s0, simde_mm256_loadu_ps(w + kW), z);
    n = simde_mm256_fmadd_ps(s0, simde_mm256_loadu_ps(w + 2 * kW), n);
  }
  r = simde_mm256_add_ps(r, r1);
  z = simde_mm256_add_ps(z, z1);
  n = simde_mm256_add_ps(n, n1);
}

void gru_step(float* h, float* tmp, const float* x, const float* gi, const float* pk, int B,
              int in, int H) {
  const long block = gru_block_floats(in, H);
  for (int b = 0; b < B; ++b) {
    float* hb = h + (long)b * H;
    const float* xb = x ? x + (long)b * in : nullptr;
    const float* gb = gi ? gi + (long)b * 3 * H : nullptr;
    for (int j0 = 0; j0 < H; j0 += kW) {
      const float* p = pk + (long)(j0 / kW) * block;
      const int n = H - j0 < kW ? H - j0 : kW;
      v8 r = simde_mm256_loadu_ps(p + 3 * kW), z = simde_mm256_loadu_ps(p + 4 * kW);
      v8 ni, nh = simde_mm256_loadu_ps(p + 5 * kW);
      if (gb) {
        r = simde_mm256_add_ps(load_n(gb + j0, n), r);
        z = simde_mm256_add_ps(load_n(gb + H + j0, n), z);
        ni = load_n(gb + 2 * H + j0, n);
      } else {
        r = simde_mm256_add_ps(simde_mm256_loadu_ps(p), r);
        z = simde_mm256_add_ps(simde_mm256_loadu_ps(p + kW), z);
        ni = simde_mm256_loadu_ps(p + 2 * kW);
      }
      if (xb) gate_sums(r, z, ni, p + 6 * kW, xb, in);
      gate_sums(r, z, nh, p + 6 * kW + 3L * kW * in, hb, H);
      r = sigmoid_gate8(r);
      z = sigmoid_gate8(z);
      const v8 ng = tanh_gate8(simde_mm256_fmadd_ps(r, nh, ni));
      // h' = (h − n)·z + n
      const v8 out = simde_mm256_fmadd_ps(simde_mm256_sub_ps(load_n(hb + j0, n), ng), z, ng);
      if (n == kW) {
        simde_mm256_storeu_ps(tmp + j0, out);
      } else {
        alignas(32) float o[kW];
        simde_mm256_store_ps(o, out);
        for (int u = 0; u < n; ++u) tmp[j0 + u] = o[u];
      }
    }
    for (int j = 0; j < H; ++j) hb[j] = tmp[j];
  }
}

}  // namespace attnlite::ops::simd
