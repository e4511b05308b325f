// attnlite — the op interface the blocks are written against. One implementation per
// device: the CPU (ops::cpu(): the scalar reference or the SIMD kernel table, ops/kernels.h)
// and CUDA (ops::cuda(), built with -DATTNLITE_CUDA=ON). A block calls only these ops on the
// buffers it is given, so the same block code runs wherever the buffers live.
//
// Every pointer an op takes lives in the op set's memory (host memory for the CPU, device
// memory for CUDA), except where a parameter says "host" and for the ops on host arrays
// (below). Ops write their output first, take const inputs and int sizes, never allocate
// (scratch comes from the caller's arena) and never throw on the hot path. This header
// depends on nothing above the op tier.
//
// ops::counting() is the dry run: a set whose ops do nothing but take the scratch the other
// sets take (each op's declared once, src/ops/scratch.h), used with a counting Arena to
// measure the scratch a forward pass takes (drivers size their workspace with it).
//
// Legend: R rows, M/N/K matrix sizes, H hidden size, NH heads, B batch, Tq queries, Tk keys,
// Hh recurrent hidden size, V vocabulary size.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "attnlite/arena.h"
#include "attnlite/ops/operands.h"
#include "attnlite/ops/valid_lens.h"


namespace attnlite::ops {

// Where attention weights go: element (b, h, q, k) at
// data[b * b_stride + h * h_stride + q * ld + k]. Empty (data == nullptr) = not wanted.
struct AttnOut {
  float* data = nullptr;
  long b_stride = 0, h_stride = 0;
  int ld = 0;
  // The book's dense (B * NH, Tq, Tk) layout.
  static AttnOut dense(float* p, int NH, int Tq, int Tk) {
    return {p, (long)NH * Tq * Tk, (long)Tq * Tk, Tk};
  }
};

// Relu: max(x, 0); Gelu: PyTorch's exact gelu, x * (1 + erf(x / sqrt(2))) / 2.
enum class Act { None, Relu, Gelu };
enum class Cell { GRU, LSTM };

// Device work an op set recorded for replay (CUDA graphs), owned by the session that asked for
// it and released with it; opaque to the blocks.
class Recording {
 public:
  virtual ~Recording() = default;
};
enum class Reuse { Step, Pass };
// What one recorded step depends on besides device memory: every host value that reaches its
// launches (rows, step, position, source length, scratch offset...); unused slots stay 0.
struct StepKey {
  static constexpr int kSlots = 8;
  long v[kSlots] = {};
  bool operator==(const StepKey& o) const {
    for (int i = 0; i < kSlots; ++i)
      if (v[i] != o.v[i]) return false;
    return true;
  }
};

class Ops {
 public:
  virtual ~Ops() = default;
  virtual const char* name() const = 0;
  // True when buffers are plain host memory (the CPU): results can be read in place.
  virtual bool host_memory() const = 0;
  // True for the dry-run set (ops::counting()).
  virtual bool counting() const { return false; }
  // True where the set holds the fp32 matrices of linear layers in bfloat16 (ops::cuda(
  // Precision::BF16)): a session's copy of the weights (drivers::DeviceWeights) rounds them,
  // and its linear layers read Linear::h; every product still adds in fp32.
  virtual bool bf16_weights() const { return false; }

  // y (M, N) = x (M, K) · Wᵀ + b, then act; nn.Linear (fp32 or int8 weights).
  virtual void linear(float* y, const float* x, const Linear& w, int M,
                      Act act = Act::None) const = 0;
  // ys[i] (M, ws[i]->out) = x (M, K) · W_iᵀ + b_i for n layers over the same input (attention's
  // Q, K and V projections). The default is n linear calls; the CPU set makes them one product
  // when their packed weights and biases lie end to end (bind_linear_stack, weights.h), the
  // CUDA set one GEMV launch for up to 4 layers over up to 8 rows.
  virtual void linear_n(float* const* ys, const Linear* const* ws, int n, const float* x, int M,
                        Arena& scratch) const;
  // out (R, n) = LayerNorm(x + y) · gamma + beta, biased variance (the book's AddNorm);
  // y == nullptr: LayerNorm(x) (nn.LayerNorm). out may alias x or y.
  virtual void add_layer_norm(float* out, const float* x, const float* y, const float* gamma,
                              const float* beta, int R, int n, float eps, Arena& scratch) const = 0;
  // out (R, w.out) = LayerNorm(res + x · Wᵀ + b) · gamma + beta: a linear layer, then the
  // book's AddNorm of the residual res (R, w.out) and its product; y (R, w.out) is room for
  // the product, left holding an unspecified value. out may alias res. The default: linear
  // into y, res added to it, then add_layer_norm of the sum (no scratch). The CUDA set adds
  // b in the norm's pass where the product would add it in a launch of its own.
  virtual void linear_add_layer_norm(float* out, float* y, const float* x, const Linear& w,
                                     const float* res, const float* gamma, const float* beta,
                                     int R, float eps, Arena& scratch) const;
  // y (n) = a + b elementwise (a residual connection); y may alias a or b.
  virtual void add(float* y, const float* a, const float* b, long n) const = 0;
  // Non-overlapping p x p patches of images (B, C, H, W): out (B, N, C·p·p), N = (H/p)·(W/p)
  // in row-major patch order, each patch's values in (c, i, j) order (nn.Conv2d's weight
  // layout, so a linear layer over them is Conv2d(kernel_size=p, stride=p)), times scale.
  virtual void patches(float* out, const float* images, int B, int C, int H, int W, int p,
                       float scale) const = 0;
  // x (R, dim), rows of stride ldx, = table[ids[r]] · scale (ids: R, in op memory).
  virtual void embed(float* x, int ldx, const Embedding& table, const int* ids, int R,
                     float scale) const = 0;
  // x (B, Tn, H) += P[pos(t)], pos(t) = positions[t] (host, Tn) or t when positions is null.
  virtual void add_positions(float* x, const float* P, int B, int Tn, int H,
                             const int* positions) const = 0;
  // Scaled dot-product attention of NH heads over already projected rows: ctx (B, Tq, H)
  // from q (B, Tq, H), k and v (B, *, H) with batch stride kv_stride rows; scores masked
  // with -1e6 as d2l's masked_softmax (vl data in op memory); weights to attn if wanted.
  virtual void attend(float* ctx, const AttnOut& attn, const float* q, const float* k,
                      const float* v, int kv_stride, int B, int Tq, int Tk, int H, int NH,
                      const ValidLens& vl, Arena& scratch) const = 0;
  // Attention over a key/value cache that grows (a decoder's self-attention): this call's
  // keys and values k_new, v_new (B, Tq, H) go into the cache kc, vc (B, kv_stride, H) at rows
  // t0 .. t0 + Tq - 1, then attend(ctx, attn, q, kc, vc, kv_stride, B, Tq, t0 + Tq, H, NH, vl).
  // The default: two copy_2d, then attend; the CUDA set appends in its attention kernel.
  virtual void append_attend(float* ctx, const AttnOut& attn, const float* q, const float* k_new,
                             const float* v_new, float* kc, float* vc, int kv_stride, int t0,
                             int B, int Tq, int H, int NH, const ValidLens& vl,
                             Arena& scratch) const;
  // Additive attention over projected queries qp (B, Hh) and keys kp (B, Tk, Hh):
  // score = w_v · tanh(qp + kp), masked softmax over Tk (vl per batch), ctx (B, Dv), rows of
  // stride ldc, = weights · v (B, Tk, Dv); weights to attn (B, Tk) (required).
  virtual void additive_attend(float* ctx, int ldc, float* attn, const float* qp,
                               const float* kp, const float* v, const Linear& w_v, int B,
                               int Tk, int Hh, int Dv, const ValidLens& vl,
                               Arena& scratch) const = 0;
  // One recurrent cell update from the input gates gi (B, G·Hh) and hidden gates gh
  // (B, G·Hh) with PyTorch's gate order and formulas: h (B, Hh), c (LSTM) in place.
  // gi and gh are clobbered.
  virtual void rnn_cell(float* h, float* c, float* gi, float* gh, Cell cell, int B,
                        int Hh) const = 0;
  // One GRU step, its input and hidden products fused with the gates: h (B, Hh) in place from
  // x (B, ih.in), or from gi (B, 3Hh) = input products already taken (then clobbered), or
  // from both: gi holds the products of inputs outside x (b_ih included) and x·ih.wᵀ is added
  // (ih then without bias). packed: the layer's gru_pack (below), or nullptr. The default
  // takes the products with linear() and updates with rnn_cell(); the CPU set runs the fused
  // kernel on packed weights.
  virtual void gru_step(float* h, const float* x, float* gi, const Linear& ih, const Linear& hh,
                        const float* packed, int B, Arena& scratch) const;
  // Greedy choice per row of logits (R, V): ids, probs (softmax probability of the id) and
  // logp (its log-probability, summed in float64) into HOST arrays (R). Lowest id on ties.
  virtual void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R,
                           int V, Arena& scratch) const = 0;
  // Beam search's candidates per row of logits (R rows of V at stride ld): each row's n best
  // logits (1 <= n <= V) in order, the larger value first, a NaN after every number, equal
  // values by the lower id, as ids (R, n) and values (R, n); and the row's log-softmax
  // constants as exp_sum gives them, max (R) and sum (R). All four are HOST arrays.
  virtual void top_rows(int* ids, float* vals, float* max, double* sum, const float* logits,
                        long ld, int R, int V, int n, Arena& scratch) const = 0;
  // Beam search's reorder of a batch's rows in blocks of K <= 64 (the largest beam): for every
  // block b < nb and j < K, row b*K + j (len floats at stride) becomes the old row
  // b*K + from[b*K + j], each from[·] in [0, K) (op memory). tmp: K * len floats of op memory
  // the op may use.
  virtual void permute_blocks(float* rows, long stride, long len, const int* from, int nb,
                              int K, float* tmp) const = 0;
  // The searches' leaving of finished rows (drivers::Seq2SeqDriver::keep_rows): row i (len
  // floats at stride) becomes the old row keep[i] for i < n, keep (op memory) ascending with
  // keep[i] >= i, so that every row moves towards the front.
  virtual void keep_rows(float* rows, long stride, long len, const int* keep, int n) const = 0;
  // Finished rows leave only a batch of more rows than this (search::Setup): 0 in host memory,
  // where a step costs its rows; the default elsewhere never (std::numeric_limits<int>::max()).
  // The CUDA set says where its steps start to cost their rows rather than their launches
  // (docs/cuda.md).
  virtual int drop_floor() const;

  // Ops on HOST arrays, whatever the set: the book's blocks on host arrays (masked softmax,
  // dot-product attention, Nadaraya-Watson pooling), the searches' rules on logits already
  // downloaded, and the fused GRU step's weight layout, made when a model is bound. Callers
  // reach them through ops::cpu(); the defaults (src/ops/ops.cpp) run the CPU set's.
  //
  // c (M, N) rows of stride ldc = alpha · a (M, K) · bᵀ, b (N, K); strided rows.
  virtual void gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb,
                       int M, int N, int K, float alpha) const;
  // c (M, N) = a (M, K) · b (K, N); strided rows.
  virtual void gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb,
                       int M, int N, int K) const;
  // d2l's masked softmax of x (BH, Tq, Tk) in place, rows of stride ld (>= Tk): the scores of
  // keys at or beyond a valid length become kMaskValue (valid_lens.h), then each row's
  // softmax. Batch row bh uses the valid lengths of bh / heads (the book's
  // repeat_interleave(valid_lens, num_heads)); vl data on the host.
  virtual void masked_softmax(float* x, int BH, int Tq, int Tk, const ValidLens& vl, int heads,
                              int ld) const;
  // Softmax of `rows` rows of n values in place, rows of stride ld.
  virtual void softmax_rows(float* x, int ld, int rows, int n) const;
  // The constants of a log-softmax over x (n >= 1): *max = max(x), *sum = Σ exp(x − max)
  // (summed in float64), so that log p(x_i) = x_i − max − log(sum).
  virtual void exp_sum(const float* x, int n, float* max, double* sum) const;
  // gru_step's packed weights for a GRU layer of input size in and hidden size Hh:
  // gru_packed_floats(in, Hh) floats, written by gru_pack from the layer's ih (3Hh, in) and
  // hh (3Hh, Hh) (fp32 weights).
  virtual size_t gru_packed_floats(int in, int Hh) const;
  virtual void gru_pack(float* packed, const Linear& ih, const Linear& hh) const;
  // The CPU's packed layout of an fp32 linear layer (out, in): linear_packed_floats floats
  // (0 when its kernels read w as stored, or when padding the layer to whole panels would
  // more than double it beyond 1 MiB), written by linear_pack from l.w; Linear::wp.
  virtual size_t linear_packed_floats(int out, int in) const;
  virtual void linear_pack(float* wp, const Linear& l) const;

  // Memory: copies within op memory (regions may not overlap), strided 2-D copies of
  // `rows` rows of `bytes` each, zeroing, and transfers to and from the host.
  virtual void copy(void* dst, const void* src, size_t bytes) const = 0;
  virtual void copy_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                       size_t bytes, int rows) const = 0;
  virtual void zero(void* dst, size_t bytes) const = 0;
  virtual void upload(void* dst, const void* host, size_t bytes) const = 0;
  virtual void download(void* host, const void* src, size_t bytes) const = 0;
  // One block of op memory (a session's weights or workspace), 256-byte aligned; throws
  // attnlite::Error when it cannot be had. Sessions allocate at construction only.
  virtual void* alloc(size_t bytes) const = 0;
  virtual void release(void* p) const = 0;
  // Waits until every op issued so far has finished (no-op on the CPU).
  virtual void sync() const {}
  // Runs fn(arg), which only issues ops of this set (no download, no sync, nothing the host
  // reads afterwards) whose arguments depend on `key` alone; `rows` is the step's row count.
  // An op set that records (CUDA: graphs) may instead replay what an earlier call with an
  // equal key and the same `rec` issued: it records a key once it comes back (the second or
  // third time it sees it), in `rec` (made on first use). `reuse` says how often a key comes
  // back: Step, a decoder step (its key holds the batch's source length, so a batch of many
  // rows rarely meets its key again); Pass, a forward pass keyed by its batch size (every
  // full batch meets it again). The default, and every host op set, runs fn.
  virtual void replay(std::unique_ptr<Recording>& rec, const StepKey& key, int rows, Reuse reuse,
                      void (*fn)(void*), void* arg) const {
    (void)rec;
    (void)key;
    (void)rows;
    (void)reuse;
    fn(arg);
  }
};

// What a block needs to run: the op set and the scratch arena (in the op set's memory).
struct Ctx {
  const Ops& op;
  Arena& scratch;
};

// The CPU op set, over the kernel table in use (below).
const Ops& cpu();
// The dry-run op set: every op does nothing (scratch sizing with a counting Arena).
const Ops& counting();
// The CUDA op set; bf16_weights: the one that holds linear layers' fp32 matrices in bfloat16
// (Ops::bf16_weights). Throws attnlite::Error naming why when attnlite was built without
// CUDA or no device is available.
const Ops& cuda(bool bf16_weights = false);

// The CPU op set's kernel table: the SIMD one when it is built and the CPU has its
// instructions, else the scalar reference. A process-wide setting for tests and tools, not
// to be changed while sessions run.
enum class KernelTable { Scalar, Simd };
void use_kernels(KernelTable);  // throws attnlite::Error when the SIMD table is not available
KernelTable kernel_table();     // the table in use
// Its name: "scalar", or the SIMD table's ("avx512", "avx2-fma", "neon", "simd128", ...).
const char* kernels_name();

}  // namespace attnlite::ops
