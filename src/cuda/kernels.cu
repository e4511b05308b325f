// CUDA kernels of the Transformer path; see kernels.cuh for each one's contract and its CPU
// reference. Plain, readable kernels: a warp or a block per row for the reductions, a warp
// per output feature for the linear layers of few rows, cuBLAS for the others. No fast-math
// intrinsics, so the results stay within ~1e-6 of the CPU.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/ops/operands.h"
#include "cuda/cublas_library.h"
#include "cuda/device.h"
#include "cuda/kernels.cuh"

namespace attnlite::cuda {
namespace {

constexpr float kMaskValue = -1e6f;  // d2l's masked_softmax value (ops::kMaskValue, ops/valid_lens.h)
constexpr int kRowThreads = 256;     // threads per row block (a multiple of 32)
constexpr int kAttnThreads = 128;

int blocks_for(long n, int threads) { return (int)((n + threads - 1) / threads); }

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Reduces v over the block (blockDim.x a multiple of 32); every thread gets the result.
// red: shared scratch of 32 values. Safe to call several times in a row.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T identity, T* red) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // the previous call's readers are done with red
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < (int)(blockDim.x >> 5) ? red[lane] : identity;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__global__ void embed_positions_kernel(float* x, const float* table, const float* P,
                                       const int* ids, int R, int T, int H, int pos,
                                       float scale) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long)R * H) return;
  const int r = (int)(i / H), c = (int)(i % H);
  const int p = pos >= 0 ? pos : r % T;
  const float e = table[(long)ids[r] * H + c] * scale;  // embedding(X) * sqrt(H)
  x[i] = e + P[(long)p * H + c];                        // + P[:, :T]
}

// The activation a layer's epilogue applies (kActNone, kActRelu, kActGelu: PyTorch's exact,
// erf-based GELU).
__device__ __forceinline__ float activate(float v, int act) {
  if (act == kActRelu) return v > 0.f ? v : 0.f;
  if (act == kActGelu) return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
  return v;
}

__global__ void bias_act_kernel(float* y, int ldy, const float* b, int R, int N, int act) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long)R * N) return;
  const int r = (int)(i / N), c = (int)(i % N);
  float* p = y + (long)r * ldy + c;
  *p = activate(b ? *p + b[c] : *p, act);
}

// The output of a GEMV's feature n from the warp's sum v: scaled (int8 layers), the bias
// added, the activation applied; the one expression of both GEMV kernels.
template <bool I8>
__device__ __forceinline__ float gemv_finish(float v, float scale, const float* b, int n, int act) {
  if (I8) v *= scale;
  return activate(b ? v + b[n] : v, act);
}

// a[u] = p[k0 + 32 u] for the U loads a lane issues before using any, zero past n.
template <class T, int U>
__device__ __forceinline__ void load_ahead(T (&a)[U], const T* p, int k0, int n) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int k = k0 + 32 * u;
    a[u] = k < n ? __ldg(p + k) : T{};
  }
}

// ys[i] (M, N_i) = x (M, K) · W_iᵀ + b_i, then act, for few rows (M <= kGemvMaxRows) and up
// to kGemvMaxLayers layers over the same x (attention's Q, K and V) in one launch: one warp
// per output feature reads its row of W once for every row of x (cuBLAS would take a GEMV
// launch per layer and a second kernel for the bias). Lane l sums k = l, l + 32, ... (float4
// steps when Vec), then the warp adds the 32 partial sums as a tree: a fixed order.
// I8: the rows are int8 (L.Q, L.S); lane l sums 16 weights at a time (one 16-byte load, when
// Vec; else one at a time) and the feature's sum is scaled by S[n] before the bias.
// BF16: the rows are bfloat16 (L.H); lane l sums 8 weights at a time (one 16-byte load, when
// Vec; else one at a time), each widened to fp32 exactly.
// More rows (bfloat16 only, gemv_fits, outside BlasMode::Gemv): chunks of 8 rows, each as
// above, so a row's sums are those of a launch of up to 8 rows. The chunks of a block's
// features are neighbouring blocks (block i: chunk i % chunks of feature block i / chunks), so
// they run together and read the same weight rows: from memory once, from L2 for the rest,
// even when the matrix is larger than L2 (an output layer of 32,000 words).
constexpr int kWF32 = 0, kWI8 = 1, kWBF16 = 2;
template <bool Vec, int Kind>
__global__ void gemv_kernel(GemvLayers L, const float* x, int ldx, int M, int K, int act) {
  constexpr bool I8 = Kind == kWI8, BF16 = Kind == kWBF16;
  const int chunks = (M + kGemvMaxRows - 1) / kGemvMaxRows;
  const int r0 = (int)(blockIdx.x % chunks) * kGemvMaxRows;  // this block's chunk of rows
  x += (long)r0 * ldx;
  M = min(M - r0, kGemvMaxRows);
  const int lane = threadIdx.x & 31;
  int n = (int)(blockIdx.x / chunks) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (n >= L.start[L.count]) return;  // whole warps leave together: the shuffles see full warps
  int li = 0;
  while (n >= L.start[li + 1]) ++li;
  n -= L.start[li];
  const float* b = L.b[li];
  float* y = L.y[li];
  const int ldy = L.ldy[li];
  float acc[kGemvMaxRows];
#pragma unroll
  for (int m = 0; m < kGemvMaxRows; ++m) acc[m] = 0.f;
  if (I8 && Vec) {
    // two 16-byte loads of Q (32 weights) in flight per lane; lane l adds the weights of
    // k = 16 (l + 32 i) ... 16 (l + 32 i) + 15 in ascending order
    const int4* q16 = reinterpret_cast<const int4*>(L.Q[li] + (long)n * K);
    const int K16 = K / 16;
    for (int k0 = lane; k0 < K16; k0 += 2 * 32) {
      int4 a[2];
      load_ahead(a, q16, k0, K16);
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int k = k0 + 32 * u;
        if (k >= K16) break;
        const int words[4] = {a[u].x, a[u].y, a[u].z, a[u].w};
#pragma unroll
        for (int m = 0; m < kGemvMaxRows; ++m) {
          if (m >= M) break;
          const float4* x4 = reinterpret_cast<const float4*>(x + (long)m * ldx) + 4 * k;
#pragma unroll
          for (int t = 0; t < 4; ++t) {
            const float4 v = x4[t];
            const int w = words[t];
            acc[m] = fmaf((float)(signed char)(w & 0xff), v.x, acc[m]);
            acc[m] = fmaf((float)(signed char)((w >> 8) & 0xff), v.y, acc[m]);
            acc[m] = fmaf((float)(signed char)((w >> 16) & 0xff), v.z, acc[m]);
            acc[m] = fmaf((float)(signed char)((w >> 24) & 0xff), v.w, acc[m]);
          }
        }
      }
    }
  } else if (BF16 && Vec) {
    // four 16-byte loads of H (32 weights) in flight per lane; lane l adds the weights of
    // k = 8 (l + 32 i) ... 8 (l + 32 i) + 7 in ascending order
    const int4* h8 = reinterpret_cast<const int4*>(L.H[li] + (long)n * K);
    const int K8 = K / 8;
    for (int k0 = lane; k0 < K8; k0 += 4 * 32) {
      int4 a[4];
      load_ahead(a, h8, k0, K8);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int k = k0 + 32 * u;
        if (k >= K8) break;
        const int words[4] = {a[u].x, a[u].y, a[u].z, a[u].w};
#pragma unroll
        for (int m = 0; m < kGemvMaxRows; ++m) {
          if (m >= M) break;
          const float4* x4 = reinterpret_cast<const float4*>(x + (long)m * ldx) + 2 * k;
#pragma unroll
          for (int t = 0; t < 2; ++t) {
            const float4 v = x4[t];
            acc[m] = fmaf(bf16_lo(words[2 * t]), v.x, acc[m]);
            acc[m] = fmaf(bf16_hi(words[2 * t]), v.y, acc[m]);
            acc[m] = fmaf(bf16_lo(words[2 * t + 1]), v.z, acc[m]);
            acc[m] = fmaf(bf16_hi(words[2 * t + 1]), v.w, acc[m]);
          }
        }
      }
    }
  } else if (Vec) {
    // four float4 loads of W (and of each x row) in flight per lane before the FMAs that use
    // them; lane l still adds k = l, l + 32, ... in ascending order
    const float4* w4 = reinterpret_cast<const float4*>(L.W[li] + (long)n * K);
    const int K4 = K / 4;
    for (int k0 = lane; k0 < K4; k0 += 4 * 32) {
      float4 a[4];
      load_ahead(a, w4, k0, K4);
#pragma unroll
      for (int m = 0; m < kGemvMaxRows; ++m) {
        if (m >= M) break;
        const float4* x4 = reinterpret_cast<const float4*>(x + (long)m * ldx);
        float4 v[4];
        load_ahead(v, x4, k0, K4);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          if (k0 + 32 * u >= K4) break;
          acc[m] = fmaf(a[u].x, v[u].x, acc[m]);
          acc[m] = fmaf(a[u].y, v[u].y, acc[m]);
          acc[m] = fmaf(a[u].z, v[u].z, acc[m]);
          acc[m] = fmaf(a[u].w, v[u].w, acc[m]);
        }
      }
    }
  } else {  // one weight at a time
    const int8_t* q = I8 ? L.Q[li] + (long)n * K : nullptr;
    const uint16_t* h = BF16 ? L.H[li] + (long)n * K : nullptr;
    const float* w = I8 || BF16 ? nullptr : L.W[li] + (long)n * K;
    for (int k = lane; k < K; k += 32) {
      const float a = I8 ? (float)q[k] : BF16 ? bf16_lo((int)h[k]) : w[k];
#pragma unroll
      for (int m = 0; m < kGemvMaxRows; ++m) {
        if (m >= M) break;
        acc[m] = fmaf(a, x[(long)m * ldx + k], acc[m]);
      }
    }
  }
  const float scale = I8 ? L.S[li][n] : 1.f;
#pragma unroll
  for (int m = 0; m < kGemvMaxRows; ++m) {
    if (m >= M) break;
    float v = acc[m];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == m) y[(long)(r0 + m) * ldy + n] = gemv_finish<I8>(v, scale, b, n, act);
  }
}

// ---- the GEMV of 9 to 64 rows (BlasMode::Gemv) ---------------------------------------------
// gemv_kernel reads every row of x from memory for each feature; past 8 rows those loads are
// what it waits on. Here a block of kRowsWarps warps stages a chunk of up to MR rows of x in
// shared memory, a tile of KT columns at a time, and each warp computes F features over all of
// the chunk's rows from it: lane l holds its weights of the tile for each of its features in
// registers (the next tile's loads issued before this one is staged and used, so that they
// arrive meanwhile) and reads each row's values of x from shared memory once for all F. A tile
// is U steps of gemv_kernel's: in step u lane l takes the KL weights from k0 + 32·KL·u + KL·l
// (Vec: one 16-byte load of 4 fp32, 8 bfloat16 or 16 int8 weights; else one weight), so a lane
// adds its weights in the order gemv_kernel's lane does and each row's partial sums are the
// same; the warp then adds the 32 lanes' sums of its MR rows in the same tree as gemv_kernel
// (lanes 16 apart first, then 8, ...), each level halving the rows a lane holds, so that lane
// l ends with row l's. A row's outputs are thus those of gemv_kernel, bit for bit, whatever
// the batch around it.
constexpr int kRowsWarps = 4, kRowsThreads = kRowsWarps * 32;
constexpr int kRowsWideN = 4096;  // from this many features, 4 a warp (gemv_rows)

// The levels of the warp's tree from lanes O apart down to 1 apart: v holds MR rows of one
// lane; a level where O >= MR adds whole rows, one where O < MR leaves a lane the rows whose
// bit O is its own (the first O of v) and adds the partner's.
template <int MR, int O>
__device__ __forceinline__ void warp_sum_level(float (&v)[MR], int lane) {
  if constexpr (O >= 1) {
    if constexpr (O >= MR) {
#pragma unroll
      for (int i = 0; i < MR; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], O);
    } else {
      const bool up = (lane & O) != 0;
#pragma unroll
      for (int i = 0; i < O; ++i) {
        const float send = up ? v[i] : v[i + O], keep = up ? v[i + O] : v[i];
        v[i] = keep + __shfl_xor_sync(0xffffffffu, send, O);
      }
    }
    warp_sum_level<MR, O / 2>(v, lane);
  }
}

// Sums v (MR rows of one lane) over the warp as gemv_kernel's tree; returns row
// (lane % MR)'s sum. MR a power of two, 2 <= MR <= 32.
template <int MR>
__device__ __forceinline__ float warp_sum_rows(float (&v)[MR], int lane) {
  warp_sum_level<MR, 16>(v, lane);
  return v[0];
}

template <bool Vec, int Kind, int MR, int F>
__global__ void __launch_bounds__(kRowsThreads) gemv_rows_kernel(GemvLayers L, const float* x, int ldx,
                                                                 int M, int K, int act) {
  constexpr bool I8 = Kind == kWI8, BF16 = Kind == kWBF16;
  constexpr int KL = !Vec ? 1 : I8 ? 16 : BF16 ? 8 : 4;  // a lane's weights per step
  constexpr int U = !Vec ? 4 : I8 || BF16 ? 1 : 2;      // steps per tile
  constexpr int KS = 32 * KL, KT = U * KS;              // columns of a step, of a tile
  constexpr int W = U * KL;                             // a lane's weights per tile and feature
  static_assert(MR * KT * sizeof(float) <= 32768, "a tile of x fits in 32 KiB");
  __shared__ float4 xs4[MR * KT / 4];                   // (MR, KT)
  float* xs = reinterpret_cast<float*>(xs4);
  const int chunks = (M + MR - 1) / MR;
  const int r0 = (int)(blockIdx.x % chunks) * MR;  // this block's chunk of rows
  const int rows = min(M - r0, MR);
  x += (long)r0 * ldx;
  const int lane = threadIdx.x & 31;
  const int n0 = (int)(blockIdx.x / chunks) * (kRowsWarps * F) + (int)(threadIdx.x >> 5) * F;
  int li[F], nf[F];
  bool has[F];
#pragma unroll
  for (int f = 0; f < F; ++f) {  // the layer and feature of each of the warp's features
    const int n = n0 + f;
    has[f] = n < L.start[L.count];
    int i = 0;
    while (has[f] && n >= L.start[i + 1]) ++i;
    li[f] = i;
    nf[f] = has[f] ? n - L.start[i] : 0;
  }
  float acc[F][MR];
#pragma unroll
  for (int f = 0; f < F; ++f)
#pragma unroll
    for (int m = 0; m < MR; ++m) acc[f][m] = 0.f;
  // This lane's weights of a tile as loaded (Raw: 16 bytes of int8 or bfloat16, a float4,
  // or one weight), zeros past K (Vec: K is a multiple of KL); the next tile's are loaded
  // before the current one is staged and used, so that they arrive meanwhile.
  using Raw = std::conditional_t<!Vec, float, std::conditional_t<I8 || BF16, int4, float4>>;
  Raw raw[F][U];
  const auto load = [&](int t0) {
#pragma unroll
    for (int f = 0; f < F; ++f)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = t0 + KS * u + KL * lane;
        const bool in = has[f] && k < K;
        const long at = (long)nf[f] * K + k;
        if constexpr (Vec && I8)
          raw[f][u] = in ? __ldg(reinterpret_cast<const int4*>(L.Q[li[f]] + at)) : int4{};
        else if constexpr (Vec && BF16)
          raw[f][u] = in ? __ldg(reinterpret_cast<const int4*>(L.H[li[f]] + at)) : int4{};
        else if constexpr (Vec)
          raw[f][u] = in ? __ldg(reinterpret_cast<const float4*>(L.W[li[f]] + at)) : float4{};
        else
          raw[f][u] = !in ? 0.f
                      : I8 ? (float)L.Q[li[f]][at]
                      : BF16 ? bf16_lo((int)L.H[li[f]][at])
                             : L.W[li[f]][at];
      }
  };
  load(0);
  for (int k0 = 0; k0 < K; k0 += KT) {
    float w[F][W];  // the tile's weights in fp32
#pragma unroll
    for (int f = 0; f < F; ++f)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float* wu = w[f] + KL * u;
        const Raw a = raw[f][u];
        if constexpr (Vec && I8) {
          const int words[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
          for (int t = 0; t < 16; ++t) wu[t] = (float)(signed char)((words[t / 4] >> (8 * (t % 4))) & 0xff);
        } else if constexpr (Vec && BF16) {
          const int words[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
          for (int t = 0; t < 4; ++t) {
            wu[2 * t] = bf16_lo(words[t]);
            wu[2 * t + 1] = bf16_hi(words[t]);
          }
        } else if constexpr (Vec) {
          wu[0] = a.x, wu[1] = a.y, wu[2] = a.z, wu[3] = a.w;
        } else {
          wu[0] = a;
        }
      }
    if (k0 + KT < K) load(k0 + KT);
    __syncthreads();  // every warp is done with the previous tile
    // the tile: rows [0, rows) of x's columns k0 .. k0 + KT - 1, zeros past them and past K;
    // a thread's loads 8 at a time in flight before their stores
    if constexpr (Vec) {
      constexpr int kEach = MR * KT / 4 / kRowsThreads, kAhead = kEach < 8 ? kEach : 8;
      static_assert(kEach * kRowsThreads * 4 == MR * KT && kEach % kAhead == 0, "the tile splits evenly");
#pragma unroll
      for (int j0 = 0; j0 < kEach; j0 += kAhead) {
        float4 v[kAhead];
#pragma unroll
        for (int j = 0; j < kAhead; ++j) {
          const int i = (int)threadIdx.x + kRowsThreads * (j0 + j);
          const int r = i / (KT / 4), c = k0 + (i % (KT / 4)) * 4;
          v[j] = r < rows && c < K ? __ldg(reinterpret_cast<const float4*>(x + (long)r * ldx + c))
                                   : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int j = 0; j < kAhead; ++j) xs4[(int)threadIdx.x + kRowsThreads * (j0 + j)] = v[j];
      }
    } else {
      constexpr int kEach = MR * KT / kRowsThreads;
      static_assert(kEach * kRowsThreads == MR * KT, "the tile splits evenly");
      float v[kEach];
#pragma unroll
      for (int j = 0; j < kEach; ++j) {
        const int i = (int)threadIdx.x + kRowsThreads * j;
        const int r = i / KT, c = k0 + i % KT;
        v[j] = r < rows && c < K ? __ldg(x + (long)r * ldx + c) : 0.f;
      }
#pragma unroll
      for (int j = 0; j < kEach; ++j) xs[(int)threadIdx.x + kRowsThreads * j] = v[j];
    }
    __syncthreads();
#pragma unroll
    for (int m = 0; m < MR; ++m) {
      if (m >= rows) break;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float* xr = xs + m * KT + KS * u + KL * lane;
        if constexpr (Vec) {
#pragma unroll
          for (int j = 0; j < KL; j += 4) {
            const float4 v = *reinterpret_cast<const float4*>(xr + j);
#pragma unroll
            for (int f = 0; f < F; ++f) {
              const float* wf = w[f] + KL * u + j;
              acc[f][m] = fmaf(wf[0], v.x, acc[f][m]);
              acc[f][m] = fmaf(wf[1], v.y, acc[f][m]);
              acc[f][m] = fmaf(wf[2], v.z, acc[f][m]);
              acc[f][m] = fmaf(wf[3], v.w, acc[f][m]);
            }
          }
        } else {
#pragma unroll
          for (int f = 0; f < F; ++f) acc[f][m] = fmaf(w[f][u], xr[0], acc[f][m]);
        }
      }
    }
  }
#pragma unroll
  for (int f = 0; f < F; ++f) {
    const float v = warp_sum_rows<MR>(acc[f], lane);
    if (has[f] && lane < rows) {
      const int n = nf[f];
      L.y[li[f]][(long)(r0 + lane) * L.ldy[li[f]] + n] =
          gemv_finish<I8>(v, I8 ? L.S[li[f]][n] : 1.f, L.b[li[f]], n, act);
    }
  }
}

// w (N, K) = S[o] · Q[o][k]: the int8 matrix in fp32, as the CPU's dequantize() computes it.
__global__ void expand_i8_kernel(float* w, const int8_t* Q, const float* S, int N, int K) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long)N * K) return;
  w[i] = S[i / K] * (float)Q[i];
}

// w (n) = the bfloat16 values H (n) in fp32 (exact: bf16_value).
__global__ void expand_bf16_kernel(float* w, const uint16_t* H, long n) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = bf16_lo((int)H[i]);
}

__global__ void add_layer_norm_kernel(float* out, const float* x, const float* y,
                                      const float* yb, const float* gamma, const float* beta,
                                      int n, float eps) {
  extern __shared__ float sum[];  // (n) this row of x + y, then 32 for the reductions
  float* red = sum + n;
  const long row = blockIdx.x;
  const float* xr = x + row * n;
  const float* yr = y ? y + row * n : nullptr;
  float part = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    // dropout(Y) + X (Y's bias first, as its product's own launch would), or X alone
    sum[i] = y ? (yb ? yr[i] + yb[i] : yr[i]) + xr[i] : xr[i];
    part += sum[i];
  }
  const float mean = block_reduce(part, Sum{}, 0.f, red) / (float)n;
  part = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) part += (sum[i] - mean) * (sum[i] - mean);
  const float var = block_reduce(part, Sum{}, 0.f, red) / (float)n;
  const float inv = 1.f / sqrtf(var + eps);
  float* o = out + row * n;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    o[i] = (sum[i] - mean) * inv * gamma[i] + beta[i];
}

// The same for rows of up to 32 * PerLane values: one warp per row, the row in registers
// (lane l holds i = l, l + 32, ...), the two sums as shuffle trees; no shared memory and no
// block barrier. Every load of the row, gamma and beta is issued before the first sum (their
// indices clamped to the row, the values past n masked by a select, not a branch): a single
// warp that waited on each load in turn took ~15 µs for 512 values.
template <int PerLane, bool HasY>
__global__ void add_layer_norm_warp_kernel(float* out, const float* x, const float* y,
                                           const float* yb, const float* gamma,
                                           const float* beta, int R, int n, float eps) {
  const int lane = threadIdx.x & 31;
  const long row = (long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= R) return;  // whole warps leave together
  const float* xr = x + row * n;
  const float* yr = HasY ? y + row * n : nullptr;
  float v[PerLane], g[PerLane], bt[PerLane];
#pragma unroll
  for (int t = 0; t < PerLane; ++t) {
    const int i = min(lane + 32 * t, n - 1);
    // dropout(Y) + X (Y's bias first, as its product's own launch would), or X
    v[t] = HasY ? (yb ? __ldg(yr + i) + __ldg(yb + i) : __ldg(yr + i)) + __ldg(xr + i) : __ldg(xr + i);
    g[t] = __ldg(gamma + i);
    bt[t] = __ldg(beta + i);
  }
  float part = 0.f;
#pragma unroll
  for (int t = 0; t < PerLane; ++t) part += lane + 32 * t < n ? v[t] : 0.f;
  for (int o = 16; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
  const float mean = part / (float)n;
  part = 0.f;
#pragma unroll
  for (int t = 0; t < PerLane; ++t) {
    const float c = v[t] - mean;
    part += lane + 32 * t < n ? c * c : 0.f;
  }
  for (int o = 16; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
  const float inv = 1.f / sqrtf(part / (float)n + eps);
  float* o = out + row * n;
#pragma unroll
  for (int t = 0; t < PerLane; ++t) {
    const int i = lane + 32 * t;
    if (i < n) o[i] = (v[t] - mean) * inv * g[t] + bt[t];
  }
}

// One block per (batch, head, query), in three phases, each issuing all its loads before their
// first use (a step's attention is a few microseconds of latency, not of bandwidth):
//   1. a thread per key: its score q · k / sqrt(D), the key's row read as float4 (up to 16
//      loads in flight), masked at keys >= the valid length (masked_softmax);
//   2. the softmax over the block (max, then the sum of exp);
//   3. ctx = p · V: G = blockDim / D groups of D threads, thread (g, d) sums dimension d over
//      the keys j = g, g + G, ... (eight loads in flight), then the groups' sums are added in
//      group order.
// With app.k (KvAppend), the last Tq keys and values are this call's rows of app.k and app.v,
// which the block also writes into the cache (its own slice: no other block reads it).
template <bool Vec>
__global__ void attend_kernel(float* ctx, AttnDst attn, const float* __restrict__ q,
                              const float* __restrict__ k, const float* __restrict__ v,
                              int kv_stride, int Tq, int Tk, int H, int NH, ValidDev vl,
                              float scale, KvAppend app) {
  extern __shared__ float4 sm4[];  // qs (D), p (Tk), red (32), wsum (G · D)
  float* sm = reinterpret_cast<float*>(sm4);
  const int D = H / NH, G = max(1, (int)blockDim.x / D);
  const int qi = blockIdx.y, b = blockIdx.x / NH, h = blockIdx.x % NH;
  float* qs = sm;
  float* p = sm + ((D + 3) & ~3);
  float* red = p + Tk;
  float* wsum = red + 32;
  const float* qrow = q + ((long)b * Tq + qi) * H + (long)h * D;
  for (int d = threadIdx.x; d < D; d += blockDim.x) qs[d] = __ldg(qrow + d);
  // rows t0 .. Tk - 1 of keys and values: this call's, (Tq, H) from kn and vn
  const int t0 = app.k ? Tk - Tq : Tk;
  const float* kn = app.k ? app.k + (long)b * Tq * H + (long)h * D : nullptr;
  const float* vn = app.k ? app.v + (long)b * Tq * H + (long)h * D : nullptr;
  if (app.k) {
    const long at = ((long)b * kv_stride + t0 + qi) * H + (long)h * D;
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
      app.kc[at + d] = kn[(long)qi * H + d];
      app.vc[at + d] = vn[(long)qi * H + d];
    }
  }
  int len = vl.kind == ValidDev::PerBatch   ? vl.data[b]
            : vl.kind == ValidDev::PerQuery ? vl.data[(long)b * Tq + qi]
            : vl.kind == ValidDev::Causal   ? vl.offset + qi + 1
                                            : Tk;
  if (len < 0) len = 0;
  __syncthreads();

  const float* kb = k + (long)b * kv_stride * H + (long)h * D;
  for (int j = threadIdx.x; j < Tk; j += blockDim.x) {
    const float* kr = j < t0 ? kb + (long)j * H : kn + (long)(j - t0) * H;
    float s = 0.f;
    if (Vec) {
      const float4* k4 = reinterpret_cast<const float4*>(kr);
      const float4* q4 = reinterpret_cast<const float4*>(qs);
      const int D4 = D / 4;
      for (int d0 = 0; d0 < D4; d0 += 16) {
        float4 a[16];
#pragma unroll
        for (int u = 0; u < 16; ++u)
          a[u] = d0 + u < D4 ? __ldg(k4 + d0 + u) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int u = 0; u < 16; ++u) {
          if (d0 + u >= D4) break;
          const float4 c = q4[d0 + u];
          s = fmaf(a[u].x, c.x, s);
          s = fmaf(a[u].y, c.y, s);
          s = fmaf(a[u].z, c.z, s);
          s = fmaf(a[u].w, c.w, s);
        }
      }
    } else {
      for (int d0 = 0; d0 < D; d0 += 16) {
        float a[16];
#pragma unroll
        for (int u = 0; u < 16; ++u) a[u] = d0 + u < D ? __ldg(kr + d0 + u) : 0.f;
#pragma unroll
        for (int u = 0; u < 16; ++u) {
          if (d0 + u >= D) break;
          s = fmaf(a[u], qs[d0 + u], s);
        }
      }
    }
    p[j] = j < len ? s * scale : kMaskValue;
  }
  __syncthreads();
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < Tk; j += blockDim.x) mx = fmaxf(mx, p[j]);
  mx = block_reduce(mx, Max{}, -INFINITY, red);
  float part = 0.f;
  for (int j = threadIdx.x; j < Tk; j += blockDim.x) {
    p[j] = expf(p[j] - mx);
    part += p[j];
  }
  const float inv = 1.f / block_reduce(part, Sum{}, 0.f, red);
  float* a = attn.data ? attn.data + b * attn.b_stride + h * attn.h_stride + (long)qi * attn.ld
                       : nullptr;
  for (int j = threadIdx.x; j < Tk; j += blockDim.x) {
    p[j] *= inv;
    if (a) a[j] = p[j];
  }
  __syncthreads();

  const float* vb = v + (long)b * kv_stride * H + (long)h * D;
  const int g = threadIdx.x / D;
  if (g < G) {
    for (int d = threadIdx.x % D; d < D; d += blockDim.x) {  // several rounds only when D > blockDim
      float c = 0.f;
      for (int j0 = g; j0 < Tk; j0 += 8 * G) {
        float x[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int j = j0 + u * G;
          x[u] = j < Tk ? __ldg((j < t0 ? vb + (long)j * H : vn + (long)(j - t0) * H) + d) : 0.f;
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int j = j0 + u * G;
          if (j >= Tk) break;
          c = fmaf(p[j], x[u], c);
        }
      }
      wsum[g * D + d] = c;
    }
  }
  __syncthreads();
  float* crow = ctx + ((long)b * Tq + qi) * H + (long)h * D;
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float c = 0.f;
    for (int w = 0; w < G; ++w) c += wsum[w * D + d];
    crow[d] = c;
  }
}

// (value, index) pairs: the larger value wins, the lower index among equals.
__device__ void better(float& best, int& bi, float ov, int oi) {
  if (ov > best || (ov == best && oi < bi)) { best = ov; bi = oi; }
}

// The (value, index) pair that Take::keep keeps over the whole block (blockDim.x a multiple
// of 32); every thread gets it. Lanes past the block's warps offer (none, INT_MAX). rv, ri:
// shared scratch of 32.
template <class Take>
__device__ void block_pick(float& best, int& bi, float* rv, int* ri, float none) {
  for (int o = 16; o > 0; o >>= 1)
    Take::keep(best, bi, __shfl_xor_sync(0xffffffffu, best, o), __shfl_xor_sync(0xffffffffu, bi, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  __syncthreads();  // the previous call's readers are done with rv, ri
  if (lane == 0) { rv[warp] = best; ri[warp] = bi; }
  __syncthreads();
  best = lane < nw ? rv[lane] : none;
  bi = lane < nw ? ri[lane] : INT_MAX;
  for (int o = 16; o > 0; o >>= 1)
    Take::keep(best, bi, __shfl_xor_sync(0xffffffffu, best, o), __shfl_xor_sync(0xffffffffu, bi, o));
}

struct Better {
  __device__ static void keep(float& best, int& bi, float ov, int oi) { better(best, bi, ov, oi); }
};

// The arg max over the block; every thread gets it.
__device__ void block_argmax(float& best, int& bi, float* rv, int* ri) {
  block_pick<Better>(best, bi, rv, ri, -INFINITY);
}

// Row r's partial sums of its C chunks, added in chunk order.
__device__ double chunks_total(const double* ps, int r, int C) {
  double s = 0.0;
  for (int c = 0; c < C; ++c) s += ps[(long)r * C + c];
  return s;
}

// The greedy pick in three launches over a grid of (row, chunk) blocks, so that a 32,000-word
// row is read by many blocks instead of one. 1: each chunk's arg max.
__global__ void argmax_chunks_kernel(float* pv, int* pi, const float* logits, int V, int L) {
  __shared__ float rv[32];
  __shared__ int ri[32];
  const int r = blockIdx.x, c = blockIdx.y, C = gridDim.y;
  const float* lg = logits + (long)r * V;
  const int lo = c * L, hi = min(V, lo + L);
  float best = -INFINITY;
  int bi = INT_MAX;
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x)  // ids ascend: strict > keeps the first
    if (bi == INT_MAX || lg[i] > best) { best = lg[i]; bi = i; }
  block_argmax(best, bi, rv, ri);
  if (threadIdx.x == 0) { pv[(long)r * C + c] = best; pi[(long)r * C + c] = bi; }
}

// 2: every chunk's block reads the row's arg max from the chunks' and sums exp(l - max) over
// its own chunk in double; chunk 0 writes the id.
__global__ void softmax_chunks_kernel(double* ps, int* ids, const float* pv, const int* pi,
                                      const float* logits, int V, int L) {
  __shared__ float rv[32];
  __shared__ int ri[32];
  __shared__ double rd[32];
  const int r = blockIdx.x, c = blockIdx.y, C = gridDim.y;
  const float* lg = logits + (long)r * V;
  float best = -INFINITY;
  int bi = INT_MAX;
  for (int j = threadIdx.x; j < C; j += blockDim.x) better(best, bi, pv[(long)r * C + j], pi[(long)r * C + j]);
  block_argmax(best, bi, rv, ri);
  if (bi == INT_MAX) bi = 0;
  const double m = (double)lg[bi];
  const int lo = c * L, hi = min(V, lo + L);
  double s = 0.0;
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) s += exp((double)lg[i] - m);
  s = block_reduce(s, Sum{}, 0.0, rd);
  if (threadIdx.x == 0) {
    ps[(long)r * C + c] = s;
    if (c == 0) ids[r] = bi;
  }
}

// 3: one thread per row adds its chunks' sums in chunk order.
__global__ void argmax_finish_kernel(float* probs, double* logp, const double* ps, int R, int C) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const double s = chunks_total(ps, r, C);
  probs[r] = (float)(1.0 / s);
  if (logp) logp[r] = -log(s);
}

// ---- beam search: each row's candidates, the rows' reorder ----------------------------

// Beam candidates' order (ops::Ops::top_rows): whether (a, ia) comes before (b, ib).
__device__ __forceinline__ bool ahead(float a, int ia, float b, int ib) {
  const bool na = isnan(a), nb = isnan(b);
  if (na != nb) return nb;
  if (!na && a != b) return a > b;
  return ia < ib;
}

// After every pair: what a thread or chunk without one offers.
__device__ __forceinline__ float no_value() { return __int_as_float(0x7fc00000); }  // NaN

__device__ __forceinline__ void take_first(float& best, int& bi, float ov, int oi) {
  if (ahead(ov, oi, best, bi)) { best = ov; bi = oi; }
}

struct First {
  __device__ static void keep(float& best, int& bi, float ov, int oi) { take_first(best, bi, ov, oi); }
};

// The first pair over the block in that order; every thread gets it.
__device__ void block_first(float& best, int& bi, float* rv, int* ri) {
  block_pick<First>(best, bi, rv, ri, no_value());
}

// out_v, out_i (n) = the n first of `count` pairs (value at[j], id ids[j] or j + base when ids
// is null): n rounds, each the block's first pick among the pairs after the previous pick.
// Slots past the last pair get (NaN, INT_MAX).
__device__ void block_top(float* out_v, int* out_i, const float* at, const int* ids, int base,
                          int count, int n, float* rv, int* ri) {
  float pv = 0.f;
  int pi = -1;
  for (int k = 0; k < n; ++k) {
    float best = no_value();
    int bi = INT_MAX;
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
      const float x = at[j];
      const int i = ids ? ids[j] : base + j;
      if (k > 0 && !ahead(pv, pi, x, i)) continue;  // taken in an earlier round
      take_first(best, bi, x, i);
    }
    block_first(best, bi, rv, ri);
    if (threadIdx.x == 0) { out_v[k] = best; out_i[k] = bi; }
    pv = best;
    pi = bi;
  }
}

// 1: each (row, chunk) block's n best.
__global__ void top_chunks_kernel(float* pv, int* pi, const float* logits, long ld, int V, int L,
                                  int n) {
  __shared__ float rv[32];
  __shared__ int ri[32];
  const int r = blockIdx.x, c = blockIdx.y, C = gridDim.y;
  const int lo = c * L, hi = min(V, lo + L);
  const long at = ((long)r * C + c) * n;
  block_top(pv + at, pi + at, logits + r * ld + lo, nullptr, lo, max(0, hi - lo), n, rv, ri);
}

// 2: every (row, chunk) block finds the row's first value among the chunks' firsts and sums
// exp(x - it) over its chunk in double; block (row, 0) also writes the row's n best from the
// chunks' and its max.
__global__ void top_merge_kernel(int* ids, float* vals, float* max, double* ps, const float* pv,
                                 const int* pi, const float* logits, long ld, int V, int L,
                                 int n) {
  __shared__ float rv[32];
  __shared__ int ri[32];
  __shared__ double rd[32];
  const int r = blockIdx.x, c = blockIdx.y, C = gridDim.y;
  const float* cv = pv + (long)r * C * n;
  const int* ci = pi + (long)r * C * n;
  float best = no_value();
  int bi = INT_MAX;
  for (int j = threadIdx.x; j < C; j += blockDim.x) take_first(best, bi, cv[(long)j * n], ci[(long)j * n]);
  block_first(best, bi, rv, ri);
  const double m = (double)best;
  const float* lg = logits + r * ld;
  const int lo = c * L, hi = min(V, lo + L);
  double s = 0.0;
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) s += exp((double)lg[i] - m);
  s = block_reduce(s, Sum{}, 0.0, rd);
  if (threadIdx.x == 0) ps[(long)r * C + c] = s;
  if (c != 0) return;
  if (threadIdx.x == 0) max[r] = best;
  block_top(vals + (long)r * n, ids + (long)r * n, cv, ci, 0, C * n, n, rv, ri);
}

// 3: one thread per row adds its chunks' sums in chunk order.
__global__ void top_finish_kernel(double* sum, const double* ps, int R, int C) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  sum[r] = chunks_total(ps, r, C);
}

constexpr int kMaxBlockRows = 64;  // the largest beam (translate.h: max_beam)

__global__ void permute_blocks_kernel(float* rows, long stride, long len, const int* from, int nb,
                                      int K) {
  const long n = (long)nb * len;
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const long b = i / len, c = i % len;
    float* col = rows + b * K * stride + c;
    const int* f = from + b * K;
    float v[kMaxBlockRows];
    for (int j = 0; j < K; ++j) v[j] = col[(long)f[j] * stride];
    for (int j = 0; j < K; ++j)
      if (f[j] != j) col[(long)j * stride] = v[j];  // the rows that change
  }
}

// keep_rows: a block per 32 columns (grid-stride), 32 x 32 threads; it walks the rows in chunks
// of 32, all of a chunk's reads before any of its writes. keep ascending with keep[i] >= i: a
// chunk reads rows at or past its own first row, which no earlier chunk wrote.
constexpr int kKeepCols = 32, kKeepRows = 32;
__global__ void keep_rows_kernel(float* rows, long stride, long len, const int* keep, int n) {
  for (long c0 = (long)blockIdx.x * kKeepCols; c0 < len; c0 += (long)gridDim.x * kKeepCols) {
    const long c = c0 + threadIdx.x;
    for (int i0 = 0; i0 < n; i0 += kKeepRows) {
      const int i = i0 + (int)threadIdx.y;
      const int from = i < n ? keep[i] : i;
      const bool move = from != i && c < len;
      float v = 0.f;
      if (move) v = rows[(long)from * stride + c];
      __syncthreads();
      if (move) rows[(long)i * stride + c] = v;
      __syncthreads();
    }
  }
}

}  // namespace

void embed_positions(float* x, const float* table, const float* P, const int* ids, int R,
                     int T, int H, int pos, float scale, cudaStream_t stream) {
  const long n = (long)R * H;
  embed_positions_kernel<<<blocks_for(n, kRowThreads), kRowThreads, 0, stream>>>(
      x, table, P, ids, R, T, H, pos, scale);
}

void bias_act(float* y, int ldy, const float* b, int R, int N, int act, cudaStream_t stream) {
  const long n = (long)R * N;
  bias_act_kernel<<<blocks_for(n, kRowThreads), kRowThreads, 0, stream>>>(y, ldy, b, R, N, act);
}

// gemv_rows_kernel's launch: F features a warp (4 for wide layers, whose blocks fill the GPU
// anyway: each tile's reads of shared memory then serve twice the FMAs), rows in chunks of 32
// (int8 with 16-byte rows: 16, the tile being 512 columns wide), 32 KiB of x a tile for 16-byte
// rows (fp32 256 columns, bfloat16 256, int8 512), 16 KiB else (128). A layer of few features
// makes few blocks (512 features at 2 a warp: 64 of 4 warps, one SM in two of an H100 or H200
// idle): when chunks of 16 rows make more blocks and those of 32 make fewer than kRowsFill,
// chunks of 16, so that each block stages and computes half the rows and twice as many SMs
// work (the weights are read once per chunk, from L2 the second time). A row's outputs are
// the same bits with chunks of either size.
constexpr int kRowsFill = 128;
static_assert(kRowsWideN / (kRowsWarps * 4) >= kRowsFill, "wide layers fill the GPU in chunks of 32 rows");
template <bool Vec, int Kind, int MR, int F>
static void gemv_rows_grid(const GemvLayers& L, const float* x, int ldx, int M, int K, int act,
                           cudaStream_t stream) {
  const int N = L.start[L.count];
  const int grid = (N + kRowsWarps * F - 1) / (kRowsWarps * F) * ((M + MR - 1) / MR);
  gemv_rows_kernel<Vec, Kind, MR, F><<<grid, kRowsThreads, 0, stream>>>(L, x, ldx, M, K, act);
}
template <bool Vec, int Kind, int F>
static void gemv_rows_f(const GemvLayers& L, const float* x, int ldx, int M, int K, int act,
                        cudaStream_t stream) {
  if constexpr (Vec && Kind == kWI8) {
    gemv_rows_grid<Vec, Kind, 16, F>(L, x, ldx, M, K, act, stream);
  } else if constexpr (F == 4) {  // kRowsWideN features and more: 256 blocks a chunk at least
    gemv_rows_grid<Vec, Kind, 32, F>(L, x, ldx, M, K, act, stream);
  } else {
    const int N = L.start[L.count];
    const int blocks = (N + kRowsWarps * F - 1) / (kRowsWarps * F);  // a chunk's
    if (blocks * ((M + 31) / 32) < kRowsFill && (M + 15) / 16 > (M + 31) / 32)
      gemv_rows_grid<Vec, Kind, 16, F>(L, x, ldx, M, K, act, stream);
    else
      gemv_rows_grid<Vec, Kind, 32, F>(L, x, ldx, M, K, act, stream);
  }
}
template <bool Vec, int Kind>
static void gemv_rows(const GemvLayers& L, const float* x, int ldx, int M, int K, int act,
                      cudaStream_t stream) {
  if constexpr (Vec) {
    if (L.start[L.count] >= kRowsWideN) {
      gemv_rows_f<Vec, Kind, 4>(L, x, ldx, M, K, act, stream);
      return;
    }
  }
  gemv_rows_f<Vec, Kind, 2>(L, x, ldx, M, K, act, stream);  // (one weight at a time: always 2)
}

// One GEMV launch of a layer kind: past kGemvMaxRows rows with `rows` the GEMV of many rows,
// else gemv_kernel (bfloat16 past kGemvMaxRows rows: its chunks of 8 rows).
template <bool Vec, int Kind>
static void gemv_launch(const GemvLayers& L, const float* x, int ldx, int M, int K, int act,
                        cudaStream_t stream, bool rows) {
  if (rows && M > kGemvMaxRows) {
    gemv_rows<Vec, Kind>(L, x, ldx, M, K, act, stream);
    return;
  }
  const int N = L.start[L.count];
  constexpr int kWarps = 4;  // 128 blocks for 512 features: every SM of an H100/H200 busy
  // a block: 4 features by a chunk of up to 8 rows (more than one chunk for bfloat16 only)
  const int grid = (N + kWarps - 1) / kWarps * ((M + kGemvMaxRows - 1) / kGemvMaxRows);
  gemv_kernel<Vec, Kind><<<grid, kWarps * 32, 0, stream>>>(L, x, ldx, M, K, act);
}

void gemv(const GemvLayers& L, const float* x, int ldx, int M, int K, int act, cudaStream_t stream,
          BlasMode mode) {
  const int N = L.start[L.count];
  if (N <= 0 || M <= 0) return;
  const int kind = L.Q[0] ? kWI8 : L.H[0] ? kWBF16 : kWF32;
  // 16-byte rows: K a multiple of 4 floats (8 bfloat16, 16 int8 weights), every row start
  // aligned
  bool vec = K % (kind == kWI8 ? 16 : kind == kWBF16 ? 8 : 4) == 0 && ldx % 4 == 0 &&
             (uintptr_t)x % 16 == 0;
  for (int i = 0; i < L.count; ++i)
    vec = vec && (kind == kWI8 ? (uintptr_t)L.Q[i] : kind == kWBF16 ? (uintptr_t)L.H[i] : (uintptr_t)L.W[i]) %
                         16 == 0;
  const bool rows = mode == BlasMode::Gemv;
  if (kind == kWI8 && vec)
    gemv_launch<true, kWI8>(L, x, ldx, M, K, act, stream, rows);
  else if (kind == kWI8)
    gemv_launch<false, kWI8>(L, x, ldx, M, K, act, stream, rows);
  else if (kind == kWBF16 && vec)
    gemv_launch<true, kWBF16>(L, x, ldx, M, K, act, stream, rows);
  else if (kind == kWBF16)
    gemv_launch<false, kWBF16>(L, x, ldx, M, K, act, stream, rows);
  else if (vec)
    gemv_launch<true, kWF32>(L, x, ldx, M, K, act, stream, rows);
  else
    gemv_launch<false, kWF32>(L, x, ldx, M, K, act, stream, rows);
}

// One layer of N features for gemv: fp32 (W), int8 (Q, S) or bfloat16 (H).
static GemvLayers one_layer(const float* W, const int8_t* Q, const float* S, const uint16_t* H,
                            const float* b, float* y, int ldy, int N) {
  GemvLayers L;
  L.W[0] = W;
  L.Q[0] = Q;
  L.S[0] = S;
  L.H[0] = H;
  L.b[0] = b;
  L.y[0] = y;
  L.ldy[0] = ldy;
  L.start[1] = N;
  L.count = 1;
  return L;
}

// ---- cuBLASLt: products with the bias (and ReLU) in the GEMM's epilogue ----------------

// The largest power of two (up to 256) that divides a byte address or a stride: what the
// heuristic may assume of a matrix (its CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES, which
// default to 256).
static unsigned align_of(uintptr_t v) {
  unsigned a = 256;
  while (a > 4 && v % a) a >>= 1;
  return a;
}

// One product, or `batch` products over one x at strides sw, sy, sb (in floats).
struct LtCall {
  float* y;
  int ldy;
  const float* x;
  int ldx;
  const float* W;
  const float* b;
  int M, N, K, act, batch;
  long long sw, sy, sb;
};

// Each product as one SGEMM (CUBLAS_COMPUTE_32F), then bias_act when there is a bias or an
// activation: the path without cuBLASLt.
static cublasStatus_t sgemm_bias(Blas& blas, const LtCall& c, cudaStream_t stream) {
  const float one = 1.f, zero = 0.f;
  for (int i = 0; i < c.batch; ++i) {
    float* y = c.y + i * c.sy;
    const float* b = c.b ? c.b + i * c.sb : nullptr;
    const cublasStatus_t st =
        blas.api->GemmEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, c.N, c.M, c.K, &one, c.W + i * c.sw,
                         CUDA_R_32F, c.K, c.x, CUDA_R_32F, c.ldx, &zero, y, CUDA_R_32F, c.ldy,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    if (b || c.act) bias_act(y, c.ldy, b, c.M, c.N, c.act, stream);
  }
  return CUBLAS_STATUS_SUCCESS;
}

// One product's shape, its descriptors and the way it runs: a cuBLASLt algorithm, or
// sgemm_bias. The bias pointer is the one attribute set per call (the others are the key).
struct LtPlan {
  struct Key {
    int M = 0, N = 0, K = 0, ldx = 0, ldy = 0, batch = 0, epilogue = 0;
    long long sw = 0, sy = 0, sb = 0;
    unsigned align_w = 0, align_x = 0, align_y = 0;
    bool operator==(const Key& o) const {
      return M == o.M && N == o.N && K == o.K && ldx == o.ldx && ldy == o.ldy && batch == o.batch &&
             epilogue == o.epilogue && sw == o.sw && sy == o.sy && sb == o.sb &&
             align_w == o.align_w && align_x == o.align_x && align_y == o.align_y;
    }
    bool bias() const { return epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS; }
  } key;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool lt = false;     // run through cuBLASLt with algo; false: sgemm_bias
  bool final = false;  // chosen for good (false: chosen during a stream capture, timed later)
  void release(const Cublas& api) {
    if (d) api.LtMatrixLayoutDestroy(d);
    if (b) api.LtMatrixLayoutDestroy(b);
    if (a) api.LtMatrixLayoutDestroy(a);
    if (op) api.LtMatmulDescDestroy(op);
    op = nullptr;
    a = b = d = nullptr;
  }
};

struct LtPlans {
  std::vector<LtPlan> v;
  size_t next = 0;  // the slot replaced next once v is full (the oldest)
  const Cublas& api;  // the library the descriptors came from
  explicit LtPlans(const Cublas& lib) : api(lib) { v.reserve(Blas::kBlasPlans); }
  ~LtPlans() {
    for (auto& p : v) p.release(api);
  }
};

Blas::Blas(BlasMode m, cudaStream_t stream) : api(&cublas()) {
  if (api->Create(&h) != CUBLAS_STATUS_SUCCESS) throw Error("cuBLAS: cannot create a handle");
  api->SetStream(h, stream);
  if (m == BlasMode::Sgemm) return;
  if (api->LtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    lt = nullptr;
    return;
  }
  if (cudaMalloc(&work, kWorkBytes) != cudaSuccess) {  // without it: SGEMM and bias_act
    (void)cudaGetLastError();
    work = nullptr;
    api->LtDestroy(lt);
    lt = nullptr;
    return;
  }
  plans = std::make_unique<LtPlans>(*api);
  mode = m;
}

Blas::~Blas() {
  plans.reset();
  if (work) cudaFree(work);
  if (lt) api->LtDestroy(lt);
  if (h) api->Destroy(h);
}

static cublasStatus_t run_plan(Blas& blas, const LtPlan& p, const cublasLtMatmulAlgo_t& algo,
                               const LtCall& c, cudaStream_t stream) {
  if (c.b) {
    const cublasStatus_t st =
        blas.api->LtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c.b,
                                           sizeof(c.b));
    if (st != CUBLAS_STATUS_SUCCESS) return st;
  }
  const float one = 1.f, zero = 0.f;
  return blas.api->LtMatmul(blas.lt, p.op, &one, c.W, p.a, c.x, p.b, &zero, c.y, p.d, c.y, p.d,
                            &algo, blas.work, Blas::kWorkBytes, stream);
}

// The descriptors of p's key. false: cuBLASLt refused one.
static bool describe(const Cublas& api, LtPlan& p) {
  const LtPlan::Key& key = p.key;
  // Row-major y (M, N) is column-major yᵀ (N, M) = W · xᵀ: A = W read as the column-major
  // (K, N) matrix Wᵀ, op(A) = T; B = xᵀ (K, M); D = yᵀ (N, M). The bias runs along D's N rows.
  const cublasOperation_t T = CUBLAS_OP_T;
  const auto epi = (cublasLtEpilogue_t)key.epilogue;
  bool good = api.LtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
              api.LtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof(T)) == CUBLAS_STATUS_SUCCESS &&
              api.LtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)) == CUBLAS_STATUS_SUCCESS &&
              api.LtMatrixLayoutCreate(&p.a, CUDA_R_32F, key.K, key.N, key.K) == CUBLAS_STATUS_SUCCESS &&
              api.LtMatrixLayoutCreate(&p.b, CUDA_R_32F, key.K, key.M, key.ldx) == CUBLAS_STATUS_SUCCESS &&
              api.LtMatrixLayoutCreate(&p.d, CUDA_R_32F, key.N, key.M, key.ldy) == CUBLAS_STATUS_SUCCESS;
  if (good && key.batch > 1) {
    const int32_t n = key.batch;
    const int64_t sw = key.sw, sx = 0, sy = key.sy, sb = key.sb;  // x: the same for every layer
    good = api.LtMatrixLayoutSetAttribute(p.a, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n, sizeof(n)) == CUBLAS_STATUS_SUCCESS &&
           api.LtMatrixLayoutSetAttribute(p.a, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sw, sizeof(sw)) == CUBLAS_STATUS_SUCCESS &&
           api.LtMatrixLayoutSetAttribute(p.b, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n, sizeof(n)) == CUBLAS_STATUS_SUCCESS &&
           api.LtMatrixLayoutSetAttribute(p.b, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sx, sizeof(sx)) == CUBLAS_STATUS_SUCCESS &&
           api.LtMatrixLayoutSetAttribute(p.d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n, sizeof(n)) == CUBLAS_STATUS_SUCCESS &&
           api.LtMatrixLayoutSetAttribute(p.d, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sy, sizeof(sy)) == CUBLAS_STATUS_SUCCESS &&
           (!key.bias() || api.LtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &sb, sizeof(sb)) == CUBLAS_STATUS_SUCCESS);
  }
  return good;
}

// Up to `max` algorithms cuBLASLt's heuristic offers for p, best first; how many.
static int candidates(Blas& blas, const LtPlan& p, cublasLtMatmulHeuristicResult_t* r, int max) {
  const LtPlan::Key& key = p.key;
  cublasLtMatmulPreference_t pref = nullptr;
  const uint64_t bytes = Blas::kWorkBytes;
  const uint32_t aw = key.align_w, ax = key.align_x, ay = key.align_y;
  int found = 0;
  const bool good =
      blas.api->LtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
      blas.api->LtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof(bytes)) == CUBLAS_STATUS_SUCCESS &&
      blas.api->LtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aw, sizeof(aw)) == CUBLAS_STATUS_SUCCESS &&
      blas.api->LtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ax, sizeof(ax)) == CUBLAS_STATUS_SUCCESS &&
      blas.api->LtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ay, sizeof(ay)) == CUBLAS_STATUS_SUCCESS &&
      blas.api->LtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ay, sizeof(ay)) == CUBLAS_STATUS_SUCCESS &&
      blas.api->LtMatmulAlgoGetHeuristic(blas.lt, p.op, p.a, p.b, p.d, p.d, pref, max, r, &found) == CUBLAS_STATUS_SUCCESS;
  if (pref) blas.api->LtMatmulPreferenceDestroy(pref);
  int n = 0;
  for (int i = 0; good && i < found; ++i)
    if (r[i].state == CUBLAS_STATUS_SUCCESS && r[i].workspaceSize <= Blas::kWorkBytes) r[n++] = r[i];
  return n;
}

// BlasMode::LtTuned: cuBLASLt's heuristic ranks its algorithms by a model, which misjudged
// the short, wide products of decoding (kLtMinRows); there SGEMM + bias_act and up to
// kTuneAlgos of its algorithms each run kTuneReps times on the call's own operands, once per
// shape, and the fastest is kept.
constexpr int kTuneAlgos = 8, kTuneReps = 5;

// The plan for c (made on first use; timed when it has fewer than kLtMinRows rows, the mode
// being LtTuned), or nullptr: run sgemm_bias.
static const LtPlan* lt_plan(Blas& blas, const LtPlan::Key& key, const LtCall& c,
                             cudaStream_t stream) {
  LtPlans& P = *blas.plans;
  cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  const bool capturing = cudaStreamIsCapturing(stream, &cap) != cudaSuccess || cap != cudaStreamCaptureStatusNone;
  (void)cudaGetLastError();
  LtPlan* p = nullptr;
  for (auto& x : P.v)
    if (x.key == key) {
      p = &x;
      break;
    }
  if (p && (p->final || capturing)) return p->lt ? p : nullptr;
  if (!p) {
    if (P.v.size() < Blas::kBlasPlans) {
      p = &P.v.emplace_back();
    } else {
      p = &P.v[P.next];
      P.next = (P.next + 1) % P.v.size();
      p->release(P.api);
    }
    *p = LtPlan{};
    p->key = key;
    if (!describe(*blas.api, *p)) {
      p->final = true;  // never through cuBLASLt
      return nullptr;
    }
  }
  cublasLtMatmulHeuristicResult_t r[kTuneAlgos];
  const int n = candidates(blas, *p, r, c.M < kLtMinRows ? kTuneAlgos : 1);
  p->lt = false;
  p->final = !capturing;
  if (n == 0) {
    p->final = true;
    return nullptr;
  }
  if (c.M >= kLtMinRows) {  // the heuristic's first
    p->final = true;
    p->lt = true;
    p->algo = r[0].algo;
    return p;
  }
  if (capturing) return nullptr;  // nothing may run outside the capture: SGEMM until timed
  float best = time_runs([&] { return sgemm_bias(blas, c, stream); }, kTuneReps, stream);
  for (int i = 0; i < n; ++i) {
    const float t = time_runs([&] { return run_plan(blas, *p, r[i].algo, c, stream); }, kTuneReps, stream);
    if (t < best) {
      best = t;
      p->lt = true;
      p->algo = r[i].algo;
    }
  }
  return p->lt ? p : nullptr;
}

// y = x · Wᵀ (+ b), ReLU when act says so (batch > 1: strided layers over one x), through
// cuBLASLt where the mode and the plan say so, else sgemm_bias.
static cublasStatus_t lt_linear(Blas& blas, const LtCall& c, cudaStream_t stream) {
  if ((!lt_rows(blas.mode, c.M) && blas.mode != BlasMode::LtTuned) ||
      c.act == kActGelu || (c.b && ((uintptr_t)c.b % 16 || (c.sb * sizeof(float)) % 16)))
    return sgemm_bias(blas, c, stream);
  LtPlan::Key key;
  key.M = c.M, key.N = c.N, key.K = c.K, key.ldx = c.ldx, key.ldy = c.ldy, key.batch = c.batch;
  key.epilogue = c.act == kActRelu ? (c.b ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
                                   : (c.b ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
  if (c.batch > 1) key.sw = c.sw, key.sy = c.sy, key.sb = c.b ? c.sb : 0;
  const uintptr_t fb = sizeof(float);
  key.align_w = std::min(align_of((uintptr_t)c.W), align_of((uintptr_t)c.K * fb));
  key.align_x = std::min(align_of((uintptr_t)c.x), align_of((uintptr_t)c.ldx * fb));
  key.align_y = std::min(align_of((uintptr_t)c.y), align_of((uintptr_t)c.ldy * fb));
  if (c.batch > 1) {
    key.align_w = std::min(key.align_w, align_of((uintptr_t)c.sw * fb));
    key.align_y = std::min(key.align_y, align_of((uintptr_t)c.sy * fb));
  }
  const LtPlan* p = lt_plan(blas, key, c, stream);
  if (p && run_plan(blas, *p, p->algo, c, stream) == CUBLAS_STATUS_SUCCESS) return CUBLAS_STATUS_SUCCESS;
  return sgemm_bias(blas, c, stream);
}

cublasStatus_t linear(Blas& blas, float* y, int ldy, const float* x, int ldx, const float* W,
                      const float* b, int M, int N, int K, int act, cudaStream_t stream) {
  if (gemv_fits(M, false, blas.mode)) {  // few rows (a decoding step): W read once, bias fused
    gemv(one_layer(W, nullptr, nullptr, nullptr, b, y, ldy, N), x, ldx, M, K, act, stream,
         blas.mode);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (M <= 0 || N <= 0) return CUBLAS_STATUS_SUCCESS;
  return lt_linear(blas, {y, ldy, x, ldx, W, b, M, N, K, act, 1, 0, 0, 0}, stream);
}

bool linear_strided(Blas& blas, float* y, long long sy, int ldy, const float* x, int ldx,
                    const float* W, long long sw, const float* b, long long sb, int n, int M,
                    int N, int K, cudaStream_t stream) {
  if (n < 2 || M <= 0 || N <= 0 || K <= 0 || sw <= 0 || sy <= 0 || (b && sb <= 0)) return false;
  if (gemv_fits(M, false, blas.mode) && n <= kGemvMaxLayers) {  // BlasMode::Gemv: one GEMV
    GemvLayers L;
    for (int i = 0; i < n; ++i) {
      L.W[i] = W + i * sw;
      L.b[i] = b ? b + i * sb : nullptr;
      L.y[i] = y + i * sy;
      L.ldy[i] = ldy;
      L.start[i + 1] = L.start[i] + N;
    }
    L.count = n;
    gemv(L, x, ldx, M, K, kActNone, stream, blas.mode);
    return true;
  }
  return lt_linear(blas, {y, ldy, x, ldx, W, b, M, N, K, kActNone, n, sw, sy, sb}, stream) ==
         CUBLAS_STATUS_SUCCESS;
}

// A product of more rows than the GEMV takes over a matrix held in fewer bits: a slice of
// `rows` output features at a time (the room expand has, Linear::expand_rows), expanded into
// fp32 by expand_slice(n0, n), then an fp32 product.
template <class ExpandSlice>
static cublasStatus_t expanded_linear(Blas& blas, float* y, int ldy, const float* x, int ldx,
                                      float* expand, const float* b, int M, int N, int K,
                                      int act, cudaStream_t stream, ExpandSlice expand_slice) {
  const int rows = (int)Linear::expand_rows(N, K);
  for (int n0 = 0; n0 < N; n0 += rows) {
    const int n = std::min(rows, N - n0);
    if ((long)n * K > 0) expand_slice(n0, n);
    const cublasStatus_t st = linear(blas, y + n0, ldy, x, ldx, expand, b ? b + n0 : nullptr, M,
                                     n, K, act, stream);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t linear_i8(Blas& blas, float* y, int ldy, const float* x, int ldx,
                         const int8_t* Q, const float* S, float* expand, const float* b, int M,
                         int N, int K, int act, cudaStream_t stream) {
  if (gemv_fits(M, false, blas.mode)) {
    gemv(one_layer(nullptr, Q, S, nullptr, b, y, ldy, N), x, ldx, M, K, act, stream,
         blas.mode);
    return CUBLAS_STATUS_SUCCESS;
  }
  return expanded_linear(blas, y, ldy, x, ldx, expand, b, M, N, K, act, stream, [&](int n0, int n) {
    expand_i8_kernel<<<blocks_for((long)n * K, kRowThreads), kRowThreads, 0, stream>>>(
        expand, Q + (long)n0 * K, S + n0, n, K);
  });
}

cublasStatus_t linear_bf16(Blas& blas, float* y, int ldy, const float* x, int ldx,
                           const uint16_t* H, float* expand, const float* b, int M, int N, int K,
                           int act, cudaStream_t stream) {
  if (gemv_fits(M, true, blas.mode)) {
    gemv(one_layer(nullptr, nullptr, nullptr, H, b, y, ldy, N), x, ldx, M, K, act, stream,
         blas.mode);
    return CUBLAS_STATUS_SUCCESS;
  }
  return expanded_linear(blas, y, ldy, x, ldx, expand, b, M, N, K, act, stream, [&](int n0, int n) {
    const long count = (long)n * K;
    expand_bf16_kernel<<<blocks_for(count, kRowThreads), kRowThreads, 0, stream>>>(
        expand, H + (long)n0 * K, count);
  });
}

// A warp per row (n <= 1,024), 4 rows a block, with the fewest values a lane that hold a row.
template <bool HasY>
void add_layer_norm_warp(float* out, const float* x, const float* y, const float* yb,
                         const float* gamma, const float* beta, int R, int n, float eps,
                         cudaStream_t stream) {
  constexpr int kRows = 4;
  const dim3 grid((unsigned)((R + kRows - 1) / kRows)), block(kRows * 32);
  if (n <= 32 * 4)
    add_layer_norm_warp_kernel<4, HasY><<<grid, block, 0, stream>>>(out, x, y, yb, gamma, beta, R, n, eps);
  else if (n <= 32 * 8)
    add_layer_norm_warp_kernel<8, HasY><<<grid, block, 0, stream>>>(out, x, y, yb, gamma, beta, R, n, eps);
  else if (n <= 32 * 16)
    add_layer_norm_warp_kernel<16, HasY><<<grid, block, 0, stream>>>(out, x, y, yb, gamma, beta, R, n, eps);
  else
    add_layer_norm_warp_kernel<32, HasY><<<grid, block, 0, stream>>>(out, x, y, yb, gamma, beta, R, n, eps);
}

void add_layer_norm(float* out, const float* x, const float* y, const float* yb,
                    const float* gamma, const float* beta, int R, int n, float eps,
                    cudaStream_t stream) {
  if (R <= 0 || n <= 0) return;
  if (!y) yb = nullptr;
  if (n <= 32 * 32)
    return y ? add_layer_norm_warp<true>(out, x, y, yb, gamma, beta, R, n, eps, stream)
             : add_layer_norm_warp<false>(out, x, y, yb, gamma, beta, R, n, eps, stream);
  const size_t smem = sizeof(float) * ((size_t)n + 32);
  add_layer_norm_kernel<<<R, kRowThreads, smem, stream>>>(out, x, y, yb, gamma, beta, n, eps);
}

size_t attend_shared_limit() {
  // Past 48 KiB a kernel must opt in, up to the device's own limit; made once, when the op set
  // is (ops::cuda()), never inside a capture. 48 KiB where the device says less or refuses.
  static const size_t limit = [] {
    constexpr int kDefault = 48 * 1024;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        optin <= kDefault ||
        cudaFuncSetAttribute(attend_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) != cudaSuccess ||
        cudaFuncSetAttribute(attend_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) != cudaSuccess) {
      (void)cudaGetLastError();
      return (size_t)kDefault;
    }
    return (size_t)optin;
  }();
  return limit;
}

void attend(float* ctx, const AttnDst& attn, const float* q, const float* k, const float* v,
            int kv_stride, int B, int Tq, int Tk, int H, int NH, ValidDev vl,
            cudaStream_t stream, const KvAppend& app) {
  const int D = H / NH, G = std::max(1, kAttnThreads / D);
  const float scale = 1.f / std::sqrt((float)D);
  // the query (D), a score per key (Tk), the reduction (32), the groups' sums (G x D)
  const size_t smem = sizeof(float) * ((size_t)((D + 3) & ~3) + Tk + 32 + (size_t)G * D);
  // A block per (batch·head, query): more shared memory than the device has, or more queries
  // than grid.y's 65,535, would fail the launch and leave ctx unwritten. The heads and inputs
  // that this takes (a key's score each in shared memory) are far past the shipped models:
  // an error that says so, never a wrong translation.
  const size_t limit = attend_shared_limit();
  if (smem > limit || Tq > 65535)
    throw Error("CUDA attention: " + std::to_string(Tq) + " queries over " + std::to_string(Tk) +
                " keys with heads of " + std::to_string(D) + " need " + std::to_string(smem) +
                " bytes of shared memory a block (this GPU: " + std::to_string(limit) +
                ") and a block a query (at most 65,535): run this model on the CPU");
  const dim3 grid((unsigned)(B * NH), (unsigned)Tq);
  // float4 rows: D and H multiples of 4, q and k 16-byte aligned (every row then is)
  const bool vec = D % 4 == 0 && H % 4 == 0 && (uintptr_t)q % 16 == 0 && (uintptr_t)k % 16 == 0 &&
                   (uintptr_t)app.k % 16 == 0;
  (void)cudaGetLastError();  // this launch's error alone below
  if (vec)
    attend_kernel<true><<<grid, kAttnThreads, smem, stream>>>(ctx, attn, q, k, v, kv_stride, Tq,
                                                              Tk, H, NH, vl, scale, app);
  else
    attend_kernel<false><<<grid, kAttnThreads, smem, stream>>>(ctx, attn, q, k, v, kv_stride, Tq,
                                                               Tk, H, NH, vl, scale, app);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw Error(std::string("CUDA attention kernel: ") + cudaGetErrorString(e));
}

void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V,
                 const ArgmaxParts& parts, cudaStream_t stream) {
  if (R <= 0 || V <= 0) return;
  const int C = parts.chunks, L = (V + C - 1) / C;
  const dim3 grid((unsigned)R, (unsigned)C);
  argmax_chunks_kernel<<<grid, kRowThreads, 0, stream>>>(parts.v, parts.i, logits, V, L);
  softmax_chunks_kernel<<<grid, kRowThreads, 0, stream>>>(parts.s, ids, parts.v, parts.i, logits, V, L);
  argmax_finish_kernel<<<blocks_for(R, 128), 128, 0, stream>>>(probs, logp, parts.s, R, C);
}

void top_rows(int* ids, float* vals, float* max, double* sum, const float* logits, long ld,
              int R, int V, int n, const TopParts& parts, cudaStream_t stream) {
  if (R <= 0 || V <= 0 || n <= 0) return;
  if (n > V) throw Error("top_rows: " + std::to_string(n) + " candidates of " + std::to_string(V));
  const int C = parts.chunks, L = (V + C - 1) / C;
  const dim3 grid((unsigned)R, (unsigned)C);
  top_chunks_kernel<<<grid, kRowThreads, 0, stream>>>(parts.v, parts.i, logits, ld, V, L, n);
  top_merge_kernel<<<grid, kRowThreads, 0, stream>>>(ids, vals, max, parts.s, parts.v, parts.i,
                                                     logits, ld, V, L, n);
  top_finish_kernel<<<blocks_for(R, 128), 128, 0, stream>>>(sum, parts.s, R, C);
}

void permute_blocks(float* rows, long stride, long len, const int* from, int nb, int K,
                    cudaStream_t stream) {
  if (nb <= 0 || len <= 0 || K <= 0) return;
  if (K > kMaxBlockRows) throw Error("permute_blocks: blocks of " + std::to_string(K) + " rows");
  const long n = (long)nb * len;
  const int blocks = (int)std::min<long>((n + kRowThreads - 1) / kRowThreads, 1L << 20);
  permute_blocks_kernel<<<blocks, kRowThreads, 0, stream>>>(rows, stride, len, from, nb, K);
}

void keep_rows(float* rows, long stride, long len, const int* keep, int n, cudaStream_t stream) {
  if (n <= 0 || len <= 0) return;
  const int blocks = (int)std::min<long>((len + kKeepCols - 1) / kKeepCols, 1L << 16);
  keep_rows_kernel<<<blocks, dim3(kKeepCols, kKeepRows), 0, stream>>>(rows, stride, len, keep, n);
}

}  // namespace attnlite::cuda
