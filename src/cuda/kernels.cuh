// attnlite — CUDA kernels of the Transformer path. Each launcher names its CPU reference,
// which is the ground truth its test (tests/test_cuda.cpp) compares against. Launchers
// write their output first, take const inputs and int sizes, run on `stream`, never
// allocate and never throw; the session checks cudaGetLastError at its sync points.
//
// Legend: R rows, H num_hiddens, N output features, K input features, NH heads,
// D = H / NH, Tq queries, Tk keys, V vocabulary size.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <memory>

namespace attnlite::cuda {

// x (R, H) = table[ids[r]] · scale + P[p(r)], p(r) = pos >= 0 ? pos : r % T.
// CPU: embedding() then add_positional_encoding() (src/models/layers.cpp,
// src/attention/positional_encoding.cpp).
void embed_positions(float* x, const float* table, const float* P, const int* ids, int R,
                     int T, int H, int pos, float scale, cudaStream_t stream);

// The fp32 values of the two bfloat16 in a 32-bit word (the device's bf16_value,
// ops/operands.h): the lower half is the first element.
__device__ __forceinline__ float bf16_lo(int w) { return __int_as_float((int)((unsigned)w << 16)); }
__device__ __forceinline__ float bf16_hi(int w) { return __int_as_float((int)((unsigned)w & 0xffff0000u)); }

// The activation after a linear layer (ops::Act): none, max(x, 0), exact (erf) gelu.
constexpr int kActNone = 0, kActRelu = 1, kActGelu = 2;

// y (M, N) rows of stride ldy = x (M, K) rows of stride ldx · Wᵀ (+ b) (then act):
// nn.Linear with W (N, K) row-major. Up to kGemvMaxRows rows (gemv_fits: a decoding step at
// batch 1, or a beam of up to 8): one GEMV kernel with the bias and the activation fused. More
// rows, by the thread's BlasMode (below): the GEMV of up to kGemvWideRows rows, one cuBLAS
// SGEMM (CUBLAS_COMPUTE_32F, no TF32) then bias_act when there is a bias or an activation, or
// one cuBLASLt matmul (CUBLAS_COMPUTE_32F) whose epilogue adds the bias and applies ReLU. GELU
// always takes SGEMM + bias_act past the GEMV (cuBLASLt's GELU is the tanh approximation, the
// book's the exact erf one). CPU: linear() / ffn().
constexpr int kGemvMaxRows = 8;
// bfloat16 layers take the GEMV up to kGemvWideRows rows (a decoding step of batches and
// beams up to 64) in every mode: in chunks of kGemvMaxRows rows of one launch, each chunk
// reading the bfloat16 matrix (after the first, mostly from L2), where widening it for SGEMM
// would read and write it in fp32 at every step; in BlasMode::Gemv, the GEMV of many rows.
constexpr int kGemvWideRows = 64;

// Which way products of more than kGemvMaxRows rows run (ATTNLITE_CUDA_LT, docs/cuda.md):
// - Sgemm: SGEMM + bias_act, always;
// - Lt (the default): SGEMM + bias_act up to kLtMinRows - 1 rows, cuBLASLt's epilogue (its
//   heuristic's first algorithm) from kLtMinRows rows. On an H200 the heuristic's pick for
//   the short, wide products of a 32-row decoding step ran 16% slower than SGEMM + bias_act
//   (41.0k against 48.7k tokens/s), while larger products lost nothing;
// - LtTuned: for fewer than kLtMinRows rows too, whichever of SGEMM + bias_act and the
//   heuristic's first kTuneAlgos algorithms ran fastest on the call's own operands, timed at
//   the shape's first use outside a stream capture (until then, SGEMM + bias_act);
// - Gemv: up to kGemvWideRows rows the GEMV of many rows (gemv_rows_kernel: x staged in shared
//   memory, each warp several features over all rows, the bias and activation fused; every
//   layer kind, fp32, int8 and bfloat16, and layers over one input in one launch), as Lt
//   from kLtMinRows rows.
enum class BlasMode { Sgemm, Lt, LtTuned, Gemv };
constexpr int kLtMinRows = 65;
static_assert(kGemvWideRows < kLtMinRows, "BlasMode::Gemv hands over to cuBLASLt past its rows");
// Whether M rows of a layer (bfloat16 or not) take the GEMV in `mode`.
inline bool gemv_fits(int M, bool bf16, BlasMode mode) {
  return M >= 1 && M <= (bf16 || mode == BlasMode::Gemv ? kGemvWideRows : kGemvMaxRows);
}
// Whether a product of M rows (past the GEMV's) goes to cuBLASLt with the bias in its epilogue
// in `mode`: from kLtMinRows rows in Lt, LtTuned and Gemv (an operand's alignment, GELU or a
// failed plan still fall back to SGEMM + bias_act). Below that, Lt runs SGEMM + bias_act, and
// LtTuned times both (until then, SGEMM + bias_act). linear() and the CUDA op set's
// linear_add_layer_norm (which adds the bias in the norm's kernel where no epilogue would)
// both decide by it.
inline bool lt_rows(BlasMode mode, int M) { return mode != BlasMode::Sgemm && M >= kLtMinRows; }

// A thread's BLAS: a cuBLAS handle, and (modes Lt, LtTuned) a cuBLASLt handle with its
// workspace and the plans (descriptors, and the algorithm or SGEMM chosen) of the shapes it
// met, kBlasPlans at most (the oldest replaced past that). Made on the thread's first
// product; never shared between threads.
struct LtPlans;
struct Cublas;
struct Blas {
  static constexpr size_t kWorkBytes = 8u << 20;  // cuBLASLt's workspace (split-K partial sums)
  static constexpr size_t kBlasPlans = 256;
  BlasMode mode = BlasMode::Sgemm;  // Sgemm too when cuBLASLt could not start
  const Cublas* api = nullptr;      // the loaded libraries (cublas_library.h)
  cublasHandle_t h = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* work = nullptr;
  std::unique_ptr<LtPlans> plans;
  // Throws attnlite::Error when cuBLAS cannot be loaded or cannot start; a cuBLASLt that
  // cannot start is left out.
  Blas(BlasMode mode, cudaStream_t stream);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
};

// Up to kGemvMaxLayers linear layers over one input, for gemv: layer i's outputs are features
// start[i] .. start[i + 1] - 1 of the launch; y[i] rows of stride ldy[i].
constexpr int kGemvMaxLayers = 4;
struct GemvLayers {
  const float* W[kGemvMaxLayers] = {};
  const int8_t* Q[kGemvMaxLayers] = {};  // int8 layers: W[o][k] = S[o] · Q[o][k] (W unused)
  const float* S[kGemvMaxLayers] = {};
  const uint16_t* H[kGemvMaxLayers] = {};  // bfloat16 layers: W[o][k] = bf16_value(H[o][k])
  const float* b[kGemvMaxLayers] = {};
  float* y[kGemvMaxLayers] = {};
  int ldy[kGemvMaxLayers] = {};
  int start[kGemvMaxLayers + 1] = {};
  int count = 0;
};
// ys[i] (M, N_i) = x (M, K) · W_iᵀ + b_i, then act, in one launch; M <= kGemvMaxRows, or
// M <= kGemvWideRows for bfloat16 layers and in BlasMode::Gemv (gemv_fits). Past kGemvMaxRows
// rows, BlasMode::Gemv takes the GEMV of many rows, whose outputs are those of chunks of up
// to kGemvMaxRows rows, bit for bit; the other modes (bfloat16 only) the chunks themselves.
// The layers are all fp32, all int8 or all bfloat16: an int8 layer's output is
// S[o] · (x · Q[o]ᵀ) + b, the CPU's int8 product; a bfloat16 layer's is the fp32 product with
// the matrix's values widened (bf16_value, ops/operands.h). CPU: linear() of each layer.
void gemv(const GemvLayers& layers, const float* x, int ldx, int M, int K, int act,
          cudaStream_t stream, BlasMode mode);
cublasStatus_t linear(Blas& blas, float* y, int ldy, const float* x, int ldx, const float* W,
                      const float* b, int M, int N, int K, int act, cudaStream_t stream);
// n fp32 layers of one shape (N, K) over one input x (M, K), more rows than the GEMV takes:
// y_i = x · W_iᵀ + b_i for W_i = W + i·sw, b_i = b + i·sb (b may be nullptr), y_i = y + i·sy
// (rows of stride ldy), all strides positive, in elements (self-attention's Q, K and V; the
// cross-attention's K and V): one strided-batched cuBLASLt matmul with the bias in its
// epilogue where the mode takes cuBLASLt (above), else the n products as SGEMM + bias_act.
// Returns false, having launched nothing, for sizes or strides it does not take: the
// caller then runs the layers one by one. CPU: linear() of each layer.
bool linear_strided(Blas& blas, float* y, long long sy, int ldy, const float* x, int ldx,
                    const float* W, long long sw, const float* b, long long sb, int n, int M,
                    int N, int K, cudaStream_t stream);
// The same with int8 weights Q (N, K) and their scales S (N): as long as the GEMV takes the
// rows (gemv_fits), it reads Q itself (a quarter of fp32's bytes); more rows, Q is expanded
// into `expand` (S[o] · Q[o][k], the values the CPU's dequantize() gives),
// Linear::expand_rows(N, K) features at a time, each slice then an fp32 product. CPU:
// linear() on an int8 Linear.
cublasStatus_t linear_i8(Blas& blas, float* y, int ldy, const float* x, int ldx,
                         const int8_t* Q, const float* S, float* expand, const float* b, int M,
                         int N, int K, int act, cudaStream_t stream);
// The same with bfloat16 weights H (N, K) (Precision::BF16): up to kGemvWideRows rows, the
// GEMV reads H itself (half of fp32's bytes); more rows, H is widened into `expand` a slice
// at a time, each slice then an fp32 product (no tensor cores: every product adds in fp32).
// CPU: linear() on the fp32 Linear of the widened values.
cublasStatus_t linear_bf16(Blas& blas, float* y, int ldy, const float* x, int ldx,
                           const uint16_t* H, float* expand, const float* b, int M, int N, int K,
                           int act, cudaStream_t stream);

// Microseconds per run of `reps` runs of f (a call returning a cublasStatus_t) on the stream,
// timed by events after one unmeasured run, or FLT_MAX when a run fails (the error cleared).
// BlasMode::LtTuned's choices and bench_cuda --products (check::linear_us) time by it.
template <class F>
float time_runs(F&& f, int reps, cudaStream_t stream) {
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  float ms = FLT_MAX;
  if (cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess) {
    bool good = f() == CUBLAS_STATUS_SUCCESS && cudaEventRecord(e0, stream) == cudaSuccess;
    for (int i = 0; good && i < reps; ++i) good = f() == CUBLAS_STATUS_SUCCESS;
    if (!(good && cudaEventRecord(e1, stream) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
          cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess))
      ms = FLT_MAX;
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  (void)cudaGetLastError();
  return ms == FLT_MAX ? FLT_MAX : ms * 1e3f / (float)reps;
}

// y[r * ldy + n] += b[n] (b may be nullptr), then the activation act (kAct*).
void bias_act(float* y, int ldy, const float* b, int R, int N, int act, cudaStream_t stream);

// out (R, n) = LayerNorm(x + (y + yb)) · gamma + beta (biased variance; yb (n): a bias of y's
// product added here rather than in a launch of its own, or nullptr); y == nullptr:
// LayerNorm(x). out may alias x or y. A warp per row up to 1,024 values, a block per row past
// that. CPU: add_norm() (src/models/layers.cpp), the book's AddNorm at inference.
void add_layer_norm(float* out, const float* x, const float* y, const float* yb,
                    const float* gamma, const float* beta, int R, int n, float eps,
                    cudaStream_t stream);

// Where attention weights go: element (b, h, q, k) at data[b*b_stride + h*h_stride +
// q*ld + k], or nowhere when data == nullptr (the CPU's AttnOut).
struct AttnDst {
  float* data = nullptr;
  long b_stride = 0, h_stride = 0;
  int ld = 0;
};

// Valid lengths on the device (the CPU's ValidLens): none, per batch row (data (B)), per
// query (data (B, Tq)) or causal (query i sees keys [0, offset + i]).
struct ValidDev {
  enum Kind { None, PerBatch, PerQuery, Causal } kind = None;
  const int* data = nullptr;
  int offset = 0;
};

// Scaled dot-product attention of every (batch, head, query) over already projected rows:
// ctx (B, Tq, H) from q (B, Tq, H), k and v (B, *, H) with batch stride kv_stride rows.
// Scores masked with -1e6 at keys >= valid[b] (valid (B) or nullptr: no mask), the same
// length for every head (the book's repeat_interleave), softmax, weights to `attn`.
// One block per (batch·head, query). CPU: attend_heads() (src/attention/multi_head.cpp).
// Throws attnlite::Error, launching nothing, where its shared memory (a score per key) passes
// attend_shared_limit() or Tq passes 65,535 (device.h).
// With `app` (Ops::append_attend), k and v are a key/value cache and this call's keys and
// values app.k, app.v (B, Tq, H) go into it at its rows Tk - Tq .. Tk - 1 (app.kc and app.vc:
// the cache, writable) in the same launch: each block writes its own (batch, head, query)'s
// slice and reads those rows from app.k and app.v, so that no block waits on another's writes.
struct KvAppend {
  const float* k = nullptr;  // nullptr: nothing appended
  const float* v = nullptr;
  float* kc = nullptr;
  float* vc = nullptr;
};
void attend(float* ctx, const AttnDst& attn, const float* q, const float* k, const float* v,
            int kv_stride, int B, int Tq, int Tk, int H, int NH, ValidDev vl,
            cudaStream_t stream, const KvAppend& app = {});

// The partial results of argmax_rows: (R, chunks) maxima, their ids and sums, chunks =
// ops::argmax_chunks(V) (src/ops/scratch.h, which carves them).
struct ArgmaxParts {
  float* v = nullptr;
  int* i = nullptr;
  double* s = nullptr;
  int chunks = 1;
};

// ids (R) = argmax of each logits row (the lowest id among equal maxima), probs (R) = its
// softmax probability, summed in double (per chunk, then the chunks in order), logp (R, or
// null) = -log(sum). Three launches over (R, chunks) blocks. CPU: ops::cpu().argmax_rows.
void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V,
                 const ArgmaxParts& parts, cudaStream_t stream);

// The partial results of top_rows: (R, chunks, n) values and ids, (R, chunks) sums, chunks =
// ops::argmax_chunks(V) (src/ops/scratch.h carves them).
struct TopParts {
  float* v = nullptr;
  int* i = nullptr;
  double* s = nullptr;
  int chunks = 1;
};

// Beam search's candidates: ids and vals (R, n) = each row's n best logits (1 <= n <= V; the
// larger value first, a NaN after every number, equal values by the lower id), max (R) = the
// first of them, sum (R) = Σ exp(x − max) in double (per chunk, then the chunks in order);
// rows of V at stride ld. Three launches over (R, chunks) blocks: each chunk's n best (n
// rounds of a block-wide first pick among the values after the previous pick), then the
// row's n best among the chunks' and each chunk's sum, then the sums. CPU:
// ops::cpu().top_rows.
void top_rows(int* ids, float* vals, float* max, double* sum, const float* logits, long ld,
              int R, int V, int n, const TopParts& parts, cudaStream_t stream);

// Rows in blocks of K (K <= 64): row b*K + j (len floats at stride) becomes the old row
// b*K + from[b*K + j] (from: nb * K in device memory). One thread per (block, column) reads
// the block's K values of its column before it writes any, so no copy is needed.
// CPU: ops::cpu().permute_blocks.
void permute_blocks(float* rows, long stride, long len, const int* from, int nb, int K,
                    cudaStream_t stream);

// Rows leaving a batch: row i (len floats at stride) becomes the old row keep[i] for i < n
// (keep: device memory, ascending, keep[i] >= i). In place, one launch: blocks of 32 columns
// read a chunk of 32 rows before writing it, chunk after chunk. CPU: ops::cpu().keep_rows.
void keep_rows(float* rows, long stride, long len, const int* keep, int n, cudaStream_t stream);

}  // namespace attnlite::cuda
