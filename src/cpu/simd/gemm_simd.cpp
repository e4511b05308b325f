// attnlite — SIMD matrix products: linear (x·wᵀ + b), gemm_nt (alpha·a·bᵀ), gemm_nn (a·b).
//
// Four code paths:
//  * Blocked GEMM (larger M, fp32 with K < 128, K not a multiple of 8, and every gemm_nn): a
//    6x16 register-blocked micro-kernel (12 accumulators of 8 floats, two vector loads of
//    the B panel and six broadcasts of A per k, k unrolled by 4). B is packed per (K block
//    of up to 512) x (16 columns) into a 64-byte aligned 32 KiB stack panel: for the "nt"
//    layout (w is (N,K), as nn.Linear) the pack is an 8x8 in-register transpose, for "nn" a
//    plain copy; tails in N are zero-padded in the panel and only the valid columns are
//    stored. A (the activations) is read in place, rows broadcast element by element, M
//    blocked by 1020 rows. K is split into nearly equal blocks; the first block writes
//    C = alpha·acc + bias, the others accumulate into C.
//  * linear_i8 (int8 weights, fp32 scale per output feature): the same paths; the
//    blocked one dequantizes w while packing its panel, the others widen 8 int8 weights
//    to floats per vector.
//  * Small M (nt layout: beam search's hypotheses, small batches, short sources; fp32 at
//    4 ≤ M ≤ 8 with K ≥ 128, int8 at 4 ≤ M ≤ 7): dot-product tiles over w as stored, 4 x 3
//    for fp32, 4 x 2 for int8: each weight vector (widened once when int8) serves four
//    rows, and nothing is packed (the packing of the blocked path costs as much as its
//    FMAs at M = 4).
//  * Dot-product GEMV (M ≤ 3, nt layout: step-by-step decoding): every output is a dot
//    product of a row of x with a row of w, both contiguous in K. 8 (M = 1) or 4 (M = 2, 3)
//    rows of w at a time with one FMA accumulator per (row of x, row of w), reduced by
//    horizontal adds at the end; w is streamed exactly once.
// And linear_packed, on fp32 weights packed once at load (linear_pack: the blocked path's
// panels, whole): M = 1 streams them with four FMA chains a panel (two adjacent panels at
// once for short rows, four from the matrix's quarters for long ones); M ≥ 2 is the blocked
// path reading the panels in place, for 7 to 48 rows in chunks of K that every tile takes in
// turn while the last one prefetches the next chunk (gemm_blocked_with); ReLU/GELU on each
// tile while it is in L1.
// Otherwise no software prefetches: the GEMV reads its panels front to back, which the
// hardware prefetchers follow on their own, and on a CPU with this table alone (Zen 3:
// bench/RESULTS.md, round ten) every prefetch distance tried there streamed slower.
// Tails in M, N and K are all handled in place; nothing is allocated.
#include <type_traits>

#include "attnlite/ops/kernels.h"
#include "kernels_simd.h"
#include "simd_math.h"

namespace attnlite::ops::simd {
namespace {

constexpr int MR = 6;    // micro-tile rows (of A / C)
constexpr int NR = 16;   // micro-tile columns: two vectors
// Block sizes (kernels_simd.h), tuned on an AMD Zen 4 core (32 KiB L1d, 1 MiB L2); overridable
// at compile time for other targets. KC = 512 keeps K ≤ 512 in one block, so C is written once instead
// of being read back per K block (+8% on 512x2048x512 against KC = 256); a large MC packs
// each panel of w once per K block instead of once per M block (+3%). The 32 KiB panel and
// the 6 rows of A stream from L1/L2 at ~15 bytes per cycle, well within L2 bandwidth.
constexpr int KC = ATTNLITE_GEMM_KC;  // max K block: the B panel is KC x NR floats (32 KiB)
constexpr int MC = ATTNLITE_GEMM_MC;  // M block (a multiple of MR)
static_assert(MC % MR == 0 && KC % 8 == 0, "block sizes");

inline int imin(int a, int b) { return a < b ? a : b; }

// Stores one row of the micro-tile: C (=|+=) alpha·(r0 | r1) (+ bias), nr valid columns.
inline void store_row(float* cr, v8 r0, v8 r1, int nr, v8 va, const float* bias, bool first) {
  r0 = simde_mm256_mul_ps(r0, va);
  r1 = simde_mm256_mul_ps(r1, va);
  if (nr == NR) {
    if (!first) {
      r0 = simde_mm256_add_ps(r0, simde_mm256_loadu_ps(cr));
      r1 = simde_mm256_add_ps(r1, simde_mm256_loadu_ps(cr + kW));
    } else if (bias) {
      r0 = simde_mm256_add_ps(r0, simde_mm256_loadu_ps(bias));
      r1 = simde_mm256_add_ps(r1, simde_mm256_loadu_ps(bias + kW));
    }
    simde_mm256_storeu_ps(cr, r0);
    simde_mm256_storeu_ps(cr + kW, r1);
  } else {
    alignas(32) float t[NR];
    simde_mm256_store_ps(t, r0);
    simde_mm256_store_ps(t + kW, r1);
    for (int j = 0; j < nr; ++j) cr[j] = (first ? (bias ? bias[j] : 0.f) : cr[j]) + t[j];
  }
}

// A tile's part of a K block taken in chunks (gemm_blocked_with on packed weights): its
// sums so far in `acc` (R x NR floats), read unless this is the block's first chunk and
// written back unless it is the last, which stores C as a whole block does; `fetch`: the
// lines to prefetch, one per k step (or null).
struct Chunk {
  float* acc = nullptr;
  bool first = true, last = true;
  const float* fetch = nullptr;
  int fetch_n = 0;  // lines at fetch, fetch + NR, ...: the first fetch_n k steps fetch one each
};

// C (R x NR, ldc) (=|+=) alpha · A (R x kc, lda) · P (kc x NR, packed, aligned).
// first: C = alpha·acc + bias (bias may be null); else C += alpha·acc. Only nr columns of C
// are written. The accumulators are named variables, not an array: GCC otherwise mirrors
// an accumulator array to the stack on every k step. kChunk: part of the K block (Chunk);
// the sums are the same FMA chains, stored and reloaded exactly between the parts.
template <int R, bool kChunk = false>
inline void micro(int kc, const float* a, long lda, const float* p, float* c, long ldc, int nr,
                  float alpha, const float* bias, bool first, Chunk ch = {}) {
  static_assert(R >= 1 && R <= MR, "micro-tile rows");
  const v8 z = simde_mm256_setzero_ps();
  v8 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z;
  v8 c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
  if constexpr (kChunk) {
    if (!ch.first) {
      const float* s = ch.acc;
      c00 = simde_mm256_load_ps(s), c01 = simde_mm256_load_ps(s + kW);
      if constexpr (R > 1) c10 = simde_mm256_load_ps(s + 2 * kW), c11 = simde_mm256_load_ps(s + 3 * kW);
      if constexpr (R > 2) c20 = simde_mm256_load_ps(s + 4 * kW), c21 = simde_mm256_load_ps(s + 5 * kW);
      if constexpr (R > 3) c30 = simde_mm256_load_ps(s + 6 * kW), c31 = simde_mm256_load_ps(s + 7 * kW);
      if constexpr (R > 4) c40 = simde_mm256_load_ps(s + 8 * kW), c41 = simde_mm256_load_ps(s + 9 * kW);
      if constexpr (R > 5) c50 = simde_mm256_load_ps(s + 10 * kW), c51 = simde_mm256_load_ps(s + 11 * kW);
    }
  }
  const float* a0 = a;
  const float* a1 = a + lda;
  const float* a2 = a + 2 * lda;
  const float* a3 = a + 3 * lda;
  const float* a4 = a + 4 * lda;
  const float* a5 = a + 5 * lda;
#pragma GCC unroll 4
  for (int k = 0; k < kc; ++k) {
    if constexpr (kChunk)
      if (k < ch.fetch_n) __builtin_prefetch(ch.fetch + (long)k * NR, 0, 2);
    const v8 b0 = simde_mm256_load_ps(p + (long)k * NR);
    const v8 b1 = simde_mm256_load_ps(p + (long)k * NR + kW);
    v8 av = simde_mm256_broadcast_ss(a0 + k);
    c00 = simde_mm256_fmadd_ps(av, b0, c00);
    c01 = simde_mm256_fmadd_ps(av, b1, c01);
    if constexpr (R > 1) {
      av = simde_mm256_broadcast_ss(a1 + k);
      c10 = simde_mm256_fmadd_ps(av, b0, c10);
      c11 = simde_mm256_fmadd_ps(av, b1, c11);
    }
    if constexpr (R > 2) {
      av = simde_mm256_broadcast_ss(a2 + k);
      c20 = simde_mm256_fmadd_ps(av, b0, c20);
      c21 = simde_mm256_fmadd_ps(av, b1, c21);
    }
    if constexpr (R > 3) {
      av = simde_mm256_broadcast_ss(a3 + k);
      c30 = simde_mm256_fmadd_ps(av, b0, c30);
      c31 = simde_mm256_fmadd_ps(av, b1, c31);
    }
    if constexpr (R > 4) {
      av = simde_mm256_broadcast_ss(a4 + k);
      c40 = simde_mm256_fmadd_ps(av, b0, c40);
      c41 = simde_mm256_fmadd_ps(av, b1, c41);
    }
    if constexpr (R > 5) {
      av = simde_mm256_broadcast_ss(a5 + k);
      c50 = simde_mm256_fmadd_ps(av, b0, c50);
      c51 = simde_mm256_fmadd_ps(av, b1, c51);
    }
  }
  if constexpr (kChunk) {
    if (!ch.last) {
      float* s = ch.acc;
      simde_mm256_store_ps(s, c00), simde_mm256_store_ps(s + kW, c01);
      if constexpr (R > 1) simde_mm256_store_ps(s + 2 * kW, c10), simde_mm256_store_ps(s + 3 * kW, c11);
      if constexpr (R > 2) simde_mm256_store_ps(s + 4 * kW, c20), simde_mm256_store_ps(s + 5 * kW, c21);
      if constexpr (R > 3) simde_mm256_store_ps(s + 6 * kW, c30), simde_mm256_store_ps(s + 7 * kW, c31);
      if constexpr (R > 4) simde_mm256_store_ps(s + 8 * kW, c40), simde_mm256_store_ps(s + 9 * kW, c41);
      if constexpr (R > 5) simde_mm256_store_ps(s + 10 * kW, c50), simde_mm256_store_ps(s + 11 * kW, c51);
      return;
    }
  }
  const v8 va = v_set(alpha);
  store_row(c, c00, c01, nr, va, bias, first);
  if constexpr (R > 1) store_row(c + ldc, c10, c11, nr, va, bias, first);
  if constexpr (R > 2) store_row(c + 2 * ldc, c20, c21, nr, va, bias, first);
  if constexpr (R > 3) store_row(c + 3 * ldc, c30, c31, nr, va, bias, first);
  if constexpr (R > 4) store_row(c + 4 * ldc, c40, c41, nr, va, bias, first);
  if constexpr (R > 5) store_row(c + 5 * ldc, c50, c51, nr, va, bias, first);
}

// 8x8 transpose in registers: r[i][j] -> r[j][i].
inline void transpose8(v8 r[8]) {
  const v8 t0 = simde_mm256_unpacklo_ps(r[0], r[1]), t1 = simde_mm256_unpackhi_ps(r[0], r[1]);
  const v8 t2 = simde_mm256_unpacklo_ps(r[2], r[3]), t3 = simde_mm256_unpackhi_ps(r[2], r[3]);
  const v8 t4 = simde_mm256_unpacklo_ps(r[4], r[5]), t5 = simde_mm256_unpackhi_ps(r[4], r[5]);
  const v8 t6 = simde_mm256_unpacklo_ps(r[6], r[7]), t7 = simde_mm256_unpackhi_ps(r[6], r[7]);
  const v8 u0 = simde_mm256_shuffle_ps(t0, t2, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
  const v8 u1 = simde_mm256_shuffle_ps(t0, t2, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
  const v8 u2 = simde_mm256_shuffle_ps(t1, t3, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
  const v8 u3 = simde_mm256_shuffle_ps(t1, t3, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
  const v8 u4 = simde_mm256_shuffle_ps(t4, t6, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
  const v8 u5 = simde_mm256_shuffle_ps(t4, t6, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
  const v8 u6 = simde_mm256_shuffle_ps(t5, t7, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
  const v8 u7 = simde_mm256_shuffle_ps(t5, t7, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
  r[0] = simde_mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = simde_mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = simde_mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = simde_mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = simde_mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = simde_mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = simde_mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = simde_mm256_permute2f128_ps(u3, u7, 0x31);
}

// P[k][j] = B[j][k] for j < nr (B rows of length ≥ kc, stride ldb), 0 for nr ≤ j < NR.
void pack_nt(float* p, const float* b, long ldb, int nr, int kc) {
  if (nr == NR) {
    int k = 0;
    for (; k + kW <= kc; k += kW) {
      for (int h = 0; h < NR; h += kW) {
        v8 r[8];
        for (int i = 0; i < 8; ++i) r[i] = simde_mm256_loadu_ps(b + (h + i) * ldb + k);
        transpose8(r);
        for (int i = 0; i < 8; ++i) simde_mm256_store_ps(p + (long)(k + i) * NR + h, r[i]);
      }
    }
    for (; k < kc; ++k)
      for (int j = 0; j < NR; ++j) p[(long)k * NR + j] = b[j * ldb + k];
  } else {
    for (int j = 0; j < nr; ++j)
      for (int k = 0; k < kc; ++k) p[(long)k * NR + j] = b[j * ldb + k];
    for (int k = 0; k < kc; ++k)
      for (int j = nr; j < NR; ++j) p[(long)k * NR + j] = 0.f;
  }
}

// P[k][j] = B[k][j] for j < nr (B rows of stride ldb), 0 for nr ≤ j < NR.
void pack_nn(float* p, const float* b, long ldb, int nr, int kc) {
  if (nr == NR) {
    for (int k = 0; k < kc; ++k) {
      simde_mm256_store_ps(p + (long)k * NR, simde_mm256_loadu_ps(b + k * ldb));
      simde_mm256_store_ps(p + (long)k * NR + kW, simde_mm256_loadu_ps(b + k * ldb + kW));
    }
  } else {
    for (int k = 0; k < kc; ++k) {
      for (int j = 0; j < nr; ++j) p[(long)k * NR + j] = b[k * ldb + j];
      for (int j = nr; j < NR; ++j) p[(long)k * NR + j] = 0.f;
    }
  }
}

// P[k][j] = scale[j] · Q[j][k] for j < nr (int8 rows of stride ldq), 0 for nr ≤ j < NR:
// the int8 weights dequantized while they are packed, so the fp32 micro-kernel does the rest.
void pack_nt_i8(float* p, const int8_t* q, long ldq, const float* scale, int nr, int kc) {
  if (nr == NR) {
    int k = 0;
    for (; k + kW <= kc; k += kW) {
      for (int h = 0; h < NR; h += kW) {
        v8 r[8];
        for (int i = 0; i < 8; ++i) {
          const simde__m128i b8 = simde_mm_loadl_epi64(
              reinterpret_cast<const simde__m128i*>(q + (h + i) * ldq + k));
          r[i] = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_cvtepi8_epi32(b8)),
                                    v_set(scale[h + i]));
        }
        transpose8(r);
        for (int i = 0; i < 8; ++i) simde_mm256_store_ps(p + (long)(k + i) * NR + h, r[i]);
      }
    }
    for (; k < kc; ++k)
      for (int j = 0; j < NR; ++j) p[(long)k * NR + j] = scale[j] * (float)q[j * ldq + k];
  } else {
    for (int j = 0; j < nr; ++j)
      for (int k = 0; k < kc; ++k) p[(long)k * NR + j] = scale[j] * (float)q[j * ldq + k];
    for (int k = 0; k < kc; ++k)
      for (int j = nr; j < NR; ++j) p[(long)k * NR + j] = 0.f;
  }
}

// The micro-tile of `rows` rows (1 to MR).
template <bool kChunk = false>
inline void micro_rows(int rows, int kc, const float* a, long lda, const float* p, float* c,
                       long ldc, int nr, float alpha, const float* bias, bool first,
                       Chunk ch = {}) {
  switch (rows) {
    case 6: micro<6, kChunk>(kc, a, lda, p, c, ldc, nr, alpha, bias, first, ch); break;
    case 5: micro<5, kChunk>(kc, a, lda, p, c, ldc, nr, alpha, bias, first, ch); break;
    case 4: micro<4, kChunk>(kc, a, lda, p, c, ldc, nr, alpha, bias, first, ch); break;
    case 3: micro<3, kChunk>(kc, a, lda, p, c, ldc, nr, alpha, bias, first, ch); break;
    case 2: micro<2, kChunk>(kc, a, lda, p, c, ldc, nr, alpha, bias, first, ch); break;
    default: micro<1, kChunk>(kc, a, lda, p, c, ldc, nr, alpha, bias, first, ch); break;
  }
}

// act (kActRelu, kActGelu) on rows x nr of C (stride ldc), in place, by the relu and gelu
// kernels: a fused epilogue gives what a pass over y afterwards would.
void apply_act(float* c, long ldc, int rows, int nr, int act) {
  for (int r = 0; r < rows; ++r)
    (act == kActRelu ? relu : gelu)(c + r * ldc, nr);
}

// C = alpha · A · op(B) (+ bias), K ≥ 1, then act. pack(panel, n0, k0, nr, kc) returns the
// panel of op(B)[k0 .. k0+kc)[n0 .. n0+nr), zero-padded to NR columns and 32-byte aligned:
// `panel` filled (in L1), or with kPacked the weights' own panel, packed at load (read in
// place, from memory). The rows of an M block go in ceil(mc / MR) tiles as equal as can be
// (20 rows as 5 + 5 + 5 + 5, not 6 + 6 + 6 + 2, whose last tile loads as much per FMA as
// three). With 2 to kChunkTiles tiles on a packed panel, the tiles take the K block in chunks
// of kChunkK steps, all of them one chunk before the next, and the last tile prefetches what
// the first reads next: the panel comes from memory at an even pace instead of stalling the
// first tile while the others run on what it brought (base model, Zen 3: M = 16 over the
// 32000 x 512 output layer 26% faster, M = 20 24%). Each output is the same FMA chain.
constexpr int kChunkK = 64;     // k steps per chunk: 4 KiB of a panel
constexpr int kChunkTiles = 8;  // up to 48 rows (beyond, a panel serves enough tiles)
template <bool kPacked = false, typename Pack>
void gemm_blocked_with(float* c, long ldc, const float* a, long lda, int M, int N, int K,
                       float alpha, const float* bias, Pack pack, int act = kActNone) {
  alignas(64) float buf[KC * NR];
  // K blocks of nearly equal size, at most KC (a multiple of 8 except the last).
  const int nkb = (K + KC - 1) / KC;
  const int kb = ((K + nkb - 1) / nkb + 7) / 8 * 8;
  for (int k0 = 0; k0 < K; k0 += kb) {
    const int kc = imin(kb, K - k0);
    const bool first = k0 == 0, last = k0 + kc >= K;
    for (int m0 = 0; m0 < M; m0 += MC) {
      const int mc = imin(MC, M - m0);
      for (int n0 = 0; n0 < N; n0 += NR) {
        const int nr = imin(NR, N - n0);
        const float* panel = pack(buf, n0, k0, nr, kc);
        const float* bn = first && bias ? bias + n0 : nullptr;
        const int tiles = (mc + MR - 1) / MR;
        if constexpr (kPacked) {
          if (tiles >= 2 && tiles <= kChunkTiles) {
            alignas(32) float acc[kChunkTiles * MR * NR];
            const float* next = n0 + NR < N ? pack(buf, n0 + NR, k0, nr, kc) : nullptr;
            for (int j = 0; j < kc; j += kChunkK) {
              const int jc = imin(kChunkK, kc - j);
              const bool final_chunk = j + jc >= kc;
              // this panel's next chunk, or the next panel's first
              const float* fetch = final_chunk ? next : panel + (long)(j + jc) * NR;
              const int fetch_n = final_chunk ? (next ? imin(kChunkK, kc) : 0) : imin(kChunkK, kc - j - jc);
              for (int t = 0, m = m0; t < tiles; ++t) {
                const int rows = (mc * (t + 1)) / tiles - (mc * t) / tiles;
                float* cm = c + m * ldc + n0;
                const bool fetcher = t == tiles - 1;
                micro_rows<true>(rows, jc, a + m * lda + k0 + j, lda, panel + (long)j * NR, cm, ldc, nr,
                                 alpha, bn, first,
                                 {acc + t * MR * NR, j == 0, final_chunk, fetcher ? fetch : nullptr,
                                  fetcher ? fetch_n : 0});
                if (final_chunk && last && act != kActNone) apply_act(cm, ldc, rows, nr, act);
                m += rows;
              }
            }
            continue;
          }
        }
        for (int t = 0, m = m0; t < tiles; ++t) {
          const int rows = (mc * (t + 1)) / tiles - (mc * t) / tiles;
          const float* am = a + m * lda + k0;
          float* cm = c + m * ldc + n0;
          micro_rows(rows, kc, am, lda, panel, cm, ldc, nr, alpha, bn, first);
          if (last && act != kActNone) apply_act(cm, ldc, rows, nr, act);
          m += rows;
        }
      }
    }
  }
}

// C = alpha · A · op(B) (+ bias), op(B) = Bᵀ with B (N,K) when NT, else B (K,N). K ≥ 1.
template <bool NT>
void gemm_blocked(float* c, long ldc, const float* a, long lda, const float* b, long ldb, int M,
                  int N, int K, float alpha, const float* bias) {
  gemm_blocked_with(c, ldc, a, lda, M, N, K, alpha, bias,
                    [b, ldb](float* p, int n0, int k0, int nr, int kc) {
                      if (NT)
                        pack_nt(p, b + n0 * ldb + k0, ldb, nr, kc);
                      else
                        pack_nn(p, b + k0 * ldb + n0, ldb, nr, kc);
                      return (const float*)p;
                    });
}

// Eight consecutive weights as floats: fp32 rows load directly; int8 rows are widened
// (8 bytes -> 8 int32 -> 8 floats), so w is streamed at a quarter of the fp32 bytes, which is
// what step-by-step decoding is bound by.
inline v8 load8(const float* p) { return simde_mm256_loadu_ps(p); }
inline v8 load8(const int8_t* p) {
  const simde__m128i b8 = simde_mm_loadl_epi64(reinterpret_cast<const simde__m128i*>(p));
  return simde_mm256_cvtepi32_ps(simde_mm256_cvtepi8_epi32(b8));
}

// R rows of A times C rows of B (both contiguous in K; B fp32 or int8):
// C[r][j] = dot · (scale ? scale[j] : alpha) + bias[j].
template <int R, int C, class TB>
inline void dot_tile(const float* a, long lda, const TB* b, long ldb, int K, float* c, long ldc,
                     float alpha, const float* scale, const float* bias) {
  v8 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) acc[r][j] = simde_mm256_setzero_ps();
  int k = 0;
  for (; k + kW <= K; k += kW) {
    v8 av[R];
    for (int r = 0; r < R; ++r) av[r] = simde_mm256_loadu_ps(a + r * lda + k);
    for (int j = 0; j < C; ++j) {
      const v8 bv = load8(b + j * ldb + k);
      for (int r = 0; r < R; ++r) acc[r][j] = simde_mm256_fmadd_ps(av[r], bv, acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r) {
    alignas(32) float out[C < 4 ? 4 : C];
    if constexpr (C == 1) {
      out[0] = hsum(acc[r][0]);
    } else {
      for (int j = 0; j < C; j += 4)
        simde_mm_store_ps(out + j, hsum4(acc[r][j], acc[r][j + 1], acc[r][j + 2], acc[r][j + 3]));
    }
    const float* ar = a + r * lda;
    for (int j = 0; j < C; ++j) {
      const TB* bj = b + j * ldb;
      float s = out[j];
      for (int kk = k; kk < K; ++kk) s += ar[kk] * (float)bj[kk];
      const float y = s * (scale ? scale[j] : alpha);  // then + bias, not fused (the AVX-512
      c[r * ldc + j] = bias ? y + bias[j] : y;            // table's int8 column does the same)
    }
  }
}

// R ≤ 3 rows of A times every row of B (N of them): 8 (R = 1) or 4 rows of B at a time.
template <int R, class TB>
void gemv_rows(float* c, long ldc, const float* a, long lda, const TB* b, long ldb, int N,
               int K, float alpha, const float* scale, const float* bias) {
  auto tile = [&](auto cols, int n) {
    dot_tile<R, decltype(cols)::value>(a, lda, b + n * ldb, ldb, K, c + n, ldc, alpha,
                                        scale ? scale + n : nullptr, bias ? bias + n : nullptr);
  };
  int n = 0;
  if constexpr (R == 1)
    for (; n + 8 <= N; n += 8) tile(std::integral_constant<int, 8>{}, n);
  for (; n + 4 <= N; n += 4) tile(std::integral_constant<int, 4>{}, n);
  for (; n < N; ++n) tile(std::integral_constant<int, 1>{}, n);
}

// Small M (4 ≤ M ≤ 32: beam hypotheses, batches, short sources), K a multiple of 8: four rows
// of x times C rows of w (fp32 or int8, as stored) per tile, each weight vector loaded (and,
// for int8, widened) once for four rows, 4·C named accumulators; nothing is packed. The
// epilogue reduces each row's C sums in one hsum4 and applies scale (or alpha) and bias.
template <int C, class TB>
inline void tile_4xc(const float* a, long lda, const TB* b, long ldb, int K, float* c, long ldc,
                     float alpha, const float* scale, const float* bias) {
  static_assert(C >= 1 && C <= 4, "C rows of w per tile");
  v8 acc[4][C];
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < C; ++j) acc[r][j] = simde_mm256_setzero_ps();
  for (int k = 0; k < K; k += kW) {
    v8 w[C];
    for (int j = 0; j < C; ++j) w[j] = load8(b + j * ldb + k);
    for (int r = 0; r < 4; ++r) {
      const v8 x = simde_mm256_loadu_ps(a + r * lda + k);
      for (int j = 0; j < C; ++j) acc[r][j] = simde_mm256_fmadd_ps(x, w[j], acc[r][j]);
    }
  }
  const v8 z = simde_mm256_setzero_ps();
  for (int r = 0; r < 4; ++r) {
    alignas(16) float out[4];
    simde_mm_store_ps(out, hsum4(acc[r][0], C > 1 ? acc[r][C > 1 ? 1 : 0] : z,
                                 C > 2 ? acc[r][C > 2 ? 2 : 0] : z, C > 3 ? acc[r][C > 3 ? 3 : 0] : z));
    for (int j = 0; j < C; ++j) {
      const float m = scale ? scale[j] : alpha;
      c[r * ldc + j] = bias ? out[j] * m + bias[j] : out[j] * m;
    }
  }
}

// y (M,N) for 4 ≤ M, K % 8 == 0: 4 x C tiles with the weights' rows outermost (a tile of w
// stays in L1 while every group of four rows of x passes), N % C by 4 x 1 tiles, the last
// M % 4 rows by the GEMV's tiles.
template <int C, class TB>
void small_m(float* y, long ldy, const float* x, long ldx, const TB* b, long ldb, int M, int N,
             int K, float alpha, const float* scale, const float* bias) {
  const int M4 = M / 4 * 4, NC = N / C * C;
  auto off = [](const float* p, int n) { return p ? p + n : nullptr; };
  for (int n = 0; n < NC; n += C)
    for (int m = 0; m < M4; m += 4)
      tile_4xc<C>(x + m * ldx, ldx, b + n * ldb, ldb, K, y + m * ldy + n, ldy, alpha, off(scale, n),
                  off(bias, n));
  for (int n = NC; n < N; ++n)
    for (int m = 0; m < M4; m += 4)
      tile_4xc<1>(x + m * ldx, ldx, b + n * ldb, ldb, K, y + m * ldy + n, ldy, alpha, off(scale, n),
                  off(bias, n));
  const float* xr = x + M4 * ldx;
  float* yr = y + M4 * ldy;
  switch (M - M4) {
    case 1: gemv_rows<1>(yr, ldy, xr, ldx, b, ldb, N, K, alpha, scale, bias); break;
    case 2: gemv_rows<2>(yr, ldy, xr, ldx, b, ldb, N, K, alpha, scale, bias); break;
    case 3: gemv_rows<3>(yr, ldy, xr, ldx, b, ldb, N, K, alpha, scale, bias); break;
    default: break;
  }
}

// Small M with int8 weights, K a multiple of 8: four rows of x times two rows of q per tile,
// each weight vector widened once for four rows; named accumulators; the epilogue in vectors.
inline void i8_tile_4x2(const float* a, long lda, const int8_t* q, long ldq, int K, float* c,
                        long ldc, const float* scale, const float* bias) {
  v8 c00 = simde_mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
     c30 = c00, c31 = c00;
  const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
  const int8_t *q0 = q, *q1 = q + ldq;
  for (int k = 0; k < K; k += kW) {
    const v8 w0 = load8(q0 + k), w1 = load8(q1 + k);
    v8 x = simde_mm256_loadu_ps(a0 + k);
    c00 = simde_mm256_fmadd_ps(x, w0, c00);
    c01 = simde_mm256_fmadd_ps(x, w1, c01);
    x = simde_mm256_loadu_ps(a1 + k);
    c10 = simde_mm256_fmadd_ps(x, w0, c10);
    c11 = simde_mm256_fmadd_ps(x, w1, c11);
    x = simde_mm256_loadu_ps(a2 + k);
    c20 = simde_mm256_fmadd_ps(x, w0, c20);
    c21 = simde_mm256_fmadd_ps(x, w1, c21);
    x = simde_mm256_loadu_ps(a3 + k);
    c30 = simde_mm256_fmadd_ps(x, w0, c30);
    c31 = simde_mm256_fmadd_ps(x, w1, c31);
  }
  // {r0 c0, r0 c1, r1 c0, r1 c1} and the same for rows 2, 3: scaled, biased, stored by pairs.
  const simde__m128 sc = simde_mm_setr_ps(scale[0], scale[1], scale[0], scale[1]);
  const simde__m128 bs = bias ? simde_mm_setr_ps(bias[0], bias[1], bias[0], bias[1]) : simde_mm_setzero_ps();
  const simde__m128 lo = simde_mm_add_ps(simde_mm_mul_ps(hsum4(c00, c01, c10, c11), sc), bs);
  const simde__m128 hi = simde_mm_add_ps(simde_mm_mul_ps(hsum4(c20, c21, c30, c31), sc), bs);
  simde_mm_storel_pi(reinterpret_cast<simde__m64*>(c), lo);
  simde_mm_storeh_pi(reinterpret_cast<simde__m64*>(c + ldc), lo);
  simde_mm_storel_pi(reinterpret_cast<simde__m64*>(c + 2 * ldc), hi);
  simde_mm_storeh_pi(reinterpret_cast<simde__m64*>(c + 3 * ldc), hi);
}

// y (M,N) for 4 ≤ M, K % 8 == 0: 4 x 2 tiles, odd N and the last M % 4 rows by the GEMV's tiles.
// (small_m's loops with this tile as tile_4xc<2, int8_t> give the same numbers, but beam 4
// over the test split ran 5-8% slower through them, measured alternating.)
void linear_i8_small_m(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
                       int M, int N, int K) {
  const int M4 = M / 4 * 4, N2 = N / 2 * 2;
  for (int n = 0; n < N2; n += 2)
    for (int m = 0; m < M4; m += 4)
      i8_tile_4x2(x + (long)m * K, K, q + (long)n * K, K, K, y + (long)m * N + n, N, scale + n, b ? b + n : nullptr);
  if (N2 < N)
    for (int m = 0; m < M4; ++m)
      dot_tile<1, 1>(x + (long)m * K, K, q + (long)N2 * K, K, K, y + (long)m * N + N2, N, 1.f, scale + N2,
                     b ? b + N2 : nullptr);
  const float* xr = x + (long)M4 * K;
  float* yr = y + (long)M4 * N;
  switch (M - M4) {
    case 1: gemv_rows<1>(yr, N, xr, K, q, K, N, K, 1.f, scale, b); break;
    case 2: gemv_rows<2>(yr, N, xr, K, q, K, N, K, 1.f, scale, b); break;
    case 3: gemv_rows<3>(yr, N, xr, K, q, K, N, K, 1.f, scale, b); break;
    default: break;
  }
}

// When the small-M tiles run. fp32: 4 ≤ M ≤ 8 with K ≥ 128 and a multiple of 8 (below 128
// the blocked kernel's broadcasts beat the tiles' horizontal sums: 2.4x at M = 10, K = 32),
// 4 x 3 tiles (faster than 4 x 2 and 4 x 4). int8: 4 ≤ M ≤ 7, the hand-written 4 x 2 tile
// (in beam search over the test split it beats the 4 x 3 template by 6%, though not in
// bench_kernels' hot loop). Measured with bench_kernels BM_linear_small_m and bench/beam.sh
// (bench/RESULTS.md, "Small-M GEMM"). The int8 bound, ATTNLITE_SMALL_M_I8, is in
// kernels_simd.h: the AVX-512 table's int8 tiles take the same rows.
#ifndef ATTNLITE_SMALL_M
#define ATTNLITE_SMALL_M 8
#endif
#ifndef ATTNLITE_SMALL_M_MIN_K
#define ATTNLITE_SMALL_M_MIN_K 128
#endif
#ifndef ATTNLITE_TILE_C
#define ATTNLITE_TILE_C 3
#endif
constexpr int kSmallM = ATTNLITE_SMALL_M;
constexpr int kSmallMinK = ATTNLITE_SMALL_M_MIN_K;
constexpr int kTileC = ATTNLITE_TILE_C;
constexpr int kSmallMI8 = ATTNLITE_SMALL_M_I8;

#if ATTNLITE_PACKED_WEIGHTS
// One row of x times weights packed at load (linear_pack): per panel of NR output features,
// two vectors of sums over even k and two over odd k (four independent FMA chains; for short
// rows two panels side by side, eight), x broadcast element by element, the panel read front
// to back. y = sums + bias, then act. P panels at once (P = 1, 2, 4), `gap` panels apart:
// 4P chains sharing each broadcast of x.
template <int P>
inline void gemv_panels(float* y, const float* x, const float* p, const float* bias, int n0, int N,
                        int K, int act, int gap = 1) {
  const v8 z = simde_mm256_setzero_ps();
  const long stride = (long)gap * K * NR;  // from one of the P panels to the next
  v8 e0[P], e1[P], o0[P], o1[P];
  for (int q = 0; q < P; ++q) e0[q] = e1[q] = o0[q] = o1[q] = z;
  int k = 0;
  for (; k + 2 <= K; k += 2) {
    const v8 a0 = simde_mm256_broadcast_ss(x + k), a1 = simde_mm256_broadcast_ss(x + k + 1);
    for (int q = 0; q < P; ++q) {
      const float* pk = p + q * stride + (long)k * NR;
      e0[q] = simde_mm256_fmadd_ps(a0, simde_mm256_load_ps(pk), e0[q]);
      e1[q] = simde_mm256_fmadd_ps(a0, simde_mm256_load_ps(pk + kW), e1[q]);
      o0[q] = simde_mm256_fmadd_ps(a1, simde_mm256_load_ps(pk + NR), o0[q]);
      o1[q] = simde_mm256_fmadd_ps(a1, simde_mm256_load_ps(pk + NR + kW), o1[q]);
    }
  }
  if (k < K) {
    const v8 a0 = simde_mm256_broadcast_ss(x + k);
    for (int q = 0; q < P; ++q) {
      const float* pk = p + q * stride + (long)k * NR;
      e0[q] = simde_mm256_fmadd_ps(a0, simde_mm256_load_ps(pk), e0[q]);
      e1[q] = simde_mm256_fmadd_ps(a0, simde_mm256_load_ps(pk + kW), e1[q]);
    }
  }
  for (int q = 0; q < P; ++q) {
    const int m0 = n0 + q * gap * NR, nr = imin(NR, N - m0);
    store_row(y + m0, simde_mm256_add_ps(e0[q], o0[q]), simde_mm256_add_ps(e1[q], o1[q]), nr,
              v_set(1.f), bias ? bias + m0 : nullptr, /*first=*/true);
    if (act != kActNone) apply_act(y + m0, N, 1, nr, act);
  }
}

// Up to this K, two panels at once: a short row's four chains end before the FMA latency is
// hidden (the book's 32-wide layers: 1 x 201 x 32 went from 24.5 to 28.6 GMAC/s, 1 x 96 x 64
// from 26 to 33). Longer rows stream from memory, where one panel's chains are enough, but
// one stream is not: a matrix of at least kStreams * 2 panels is read as kStreams streams
// side by side, its quarters (panel i of each at once), which the memory system serves
// faster than one (Zen 3, the 32000 x 512 output layer: 18-19.6 GB/s against 15.5-16).
// Same sums in the same order either way.
constexpr int kStreams = 4;
#ifndef ATTNLITE_GEMV_TWO_PANELS_MAX_K
#define ATTNLITE_GEMV_TWO_PANELS_MAX_K 128
#endif

void gemv_packed(float* y, const float* x, const float* wp, const float* bias, int N, int K,
                 int act) {
  int n0 = 0;
  const int panels = (N + NR - 1) / NR;
  if (K <= ATTNLITE_GEMV_TWO_PANELS_MAX_K) {
    for (; n0 + NR < N; n0 += 2 * NR)
      gemv_panels<2>(y, x, wp + (long)(n0 / NR) * K * NR, bias, n0, N, K, act);
  } else if (panels >= 2 * kStreams) {
    const int part = panels / kStreams;  // panels per stream; the rest one by one below
    for (int i = 0; i < part; ++i)
      gemv_panels<kStreams>(y, x, wp + (long)i * K * NR, bias, i * NR, N, K, act, part);
    n0 = part * kStreams * NR;
  }
  for (; n0 < N; n0 += NR) gemv_panels<1>(y, x, wp + (long)(n0 / NR) * K * NR, bias, n0, N, K, act);
}

#endif  // ATTNLITE_PACKED_WEIGHTS

// C (M,N) = alpha · A (M,K) · B(N,K)ᵀ + bias.
void gemm_nt_any(float* c, long ldc, const float* a, long lda, const float* b, long ldb, int M,
                 int N, int K, float alpha, const float* bias) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) c[m * ldc + n] = bias ? bias[n] : 0.f;
    return;
  }
  switch (M) {
    case 1: gemv_rows<1>(c, ldc, a, lda, b, ldb, N, K, alpha, nullptr, bias); return;
    case 2: gemv_rows<2>(c, ldc, a, lda, b, ldb, N, K, alpha, nullptr, bias); return;
    case 3: gemv_rows<3>(c, ldc, a, lda, b, ldb, N, K, alpha, nullptr, bias); return;
    default:
      if (M <= kSmallM && K % kW == 0 && K >= kSmallMinK) {
        small_m<kTileC>(c, ldc, a, lda, b, ldb, M, N, K, alpha, nullptr, bias);
        return;
      }
      gemm_blocked<true>(c, ldc, a, lda, b, ldb, M, N, K, alpha, bias);
      return;
  }
}

}  // namespace

void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K) {
  gemm_nt_any(y, N, x, K, w, K, M, N, K, 1.f, b);
}

void linear_i8(float* y, const float* x, const int8_t* q, const float* scale, const float* b,
               int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) y[(long)m * N + n] = b ? b[n] : 0.f;
    return;
  }
  switch (M) {
    case 1: gemv_rows<1>(y, N, x, K, q, K, N, K, 1.f, scale, b); return;
    case 2: gemv_rows<2>(y, N, x, K, q, K, N, K, 1.f, scale, b); return;
    case 3: gemv_rows<3>(y, N, x, K, q, K, N, K, 1.f, scale, b); return;
    default:
      if (M <= kSmallMI8 && K % kW == 0) {
        linear_i8_small_m(y, x, q, scale, b, M, N, K);
        return;
      }
      gemm_blocked_with(y, N, x, K, M, N, K, 1.f, b,
                        [q, scale, K](float* p, int n0, int k0, int nr, int kc) {
                          pack_nt_i8(p, q + (long)n0 * K + k0, K, scale + n0, nr, kc);
                          return (const float*)p;
                        });
  }
}

#if ATTNLITE_PACKED_WEIGHTS
void linear_pack(float* wp, const float* w, int N, int K) {
  for (int n0 = 0; n0 < N; n0 += NR)
    pack_nt(wp + (long)(n0 / NR) * K * NR, w + (long)n0 * K, K, imin(NR, N - n0), K);
}

// M = 1: the packed GEMV; larger M: the blocked GEMM reading its panels in place (nothing
// packed per call, whatever M; at M = 2, 3 its 4 and 6 accumulators hide the FMA latency).
void linear_packed(float* y, const float* x, const float* wp, const float* b, int M, int N,
                   int K, int act) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) y[(long)m * N + n] = b ? b[n] : 0.f;
    if (act != kActNone) apply_act(y, N, M, N, act);
    return;
  }
  if (M == 1) {
    gemv_packed(y, x, wp, b, N, K, act);
    return;
  }
  gemm_blocked_with<true>(
      y, N, x, K, M, N, K, 1.f, b,
      [wp, K](float*, int n0, int k0, int, int) { return wp + (long)(n0 / NR) * K * NR + (long)k0 * NR; },
      act);
}

#endif  // ATTNLITE_PACKED_WEIGHTS

void gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K, float alpha) {
  gemm_nt_any(c, ldc, a, lda, b, ldb, M, N, K, alpha, nullptr);
}

// c (1, N) = a (1, K) · B (K, N), B rows of stride ldb: the attention context of one query
// (its weights times the values), K <= KC. Each output is the FMA chain over k in order from
// 0, as the blocked kernel's micro-tile sums a single K block, without packing B.
static void row_times_nn(float* c, const float* a, const float* b, long ldb, int N, int K) {
  int n0 = 0;
  for (; n0 + 2 * kW <= N; n0 += 2 * kW) {
    v8 s0 = simde_mm256_setzero_ps(), s1 = s0;
    for (int k = 0; k < K; ++k) {
      const v8 ak = v_set(a[k]);
      s0 = simde_mm256_fmadd_ps(ak, simde_mm256_loadu_ps(b + k * ldb + n0), s0);
      s1 = simde_mm256_fmadd_ps(ak, simde_mm256_loadu_ps(b + k * ldb + n0 + kW), s1);
    }
    simde_mm256_storeu_ps(c + n0, s0);
    simde_mm256_storeu_ps(c + n0 + kW, s1);
  }
  for (; n0 < N; n0 += kW) {
    const int nr = imin(kW, N - n0);
    v8 s = simde_mm256_setzero_ps();
    for (int k = 0; k < K; ++k) {
      alignas(32) float row[kW] = {};
      for (int j = 0; j < nr; ++j) row[j] = b[k * ldb + n0 + j];
      s = simde_mm256_fmadd_ps(v_set(a[k]), simde_mm256_load_ps(row), s);
    }
    alignas(32) float out[kW];
    simde_mm256_store_ps(out, s);
    for (int j = 0; j < nr; ++j) c[n0 + j] = out[j];
  }
}

void gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
             int K) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) c[(long)m * ldc + n] = 0.f;
    return;
  }
  if (M == 1 && K <= KC) {  // one K block: the blocked kernel's sums are single chains too
    row_times_nn(c, a, b, ldb, N, K);
    return;
  }
  gemm_blocked<false>(c, ldc, a, lda, b, ldb, M, N, K, 1.f, nullptr);
}

}  // namespace attnlite::ops::simd
