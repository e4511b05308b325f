// attnlite — the fused GRU step in SIMD: eight hidden units per block, one vector accumulator
// per gate product (r, z, the input and the hidden part of n), the input and hidden products
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
        const float* w = p + 6 * kW;
        for (int k = 0; k < in; ++k, w += 3 * kW) {
          const v8 xk = v_set(xb[k]);
          r = simde_mm256_fmadd_ps(xk, simde_mm256_loadu_ps(w), r);
          z = simde_mm256_fmadd_ps(xk, simde_mm256_loadu_ps(w + kW), z);
          ni = simde_mm256_fmadd_ps(xk, simde_mm256_loadu_ps(w + 2 * kW), ni);
        }
      }
      const float* w = p + 6 * kW + 3L * kW * in;
      for (int k = 0; k < H; ++k, w += 3 * kW) {
        const v8 hk = v_set(hb[k]);
        r = simde_mm256_fmadd_ps(hk, simde_mm256_loadu_ps(w), r);
        z = simde_mm256_fmadd_ps(hk, simde_mm256_loadu_ps(w + kW), z);
        nh = simde_mm256_fmadd_ps(hk, simde_mm256_loadu_ps(w + 2 * kW), nh);
      }
      r = sigmoid8(r);
      z = sigmoid8(z);
      const v8 ng = tanh8(simde_mm256_fmadd_ps(r, nh, ni));
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
