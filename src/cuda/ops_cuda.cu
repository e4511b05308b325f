// The CUDA op set (ops::cuda()): every op of ops/ops.h on device memory, in stream order on
// the calling thread's default stream (cudaStreamPerThread), each thread with its own cuBLAS
// handle. Int8 weights stay int8 on the device (drivers/op_memory.h): the GEMV of few rows
// reads them as they are, a product of more rows expands the layer into Linear::expand first.
// The kernels are in kernels.cu; the small pointwise ones of the embedding, the positions,
// additive attention and the recurrent cells are here.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/ops/ops.h"
#include "attnlite/device.h"
#include "attnlite/weights.h"
#include "cuda/cublas_library.h"
#include "cuda/device.h"
#include "cuda/kernels.cuh"
#include "ops/scratch.h"

namespace attnlite::cuda {

using ops::ValidLens;

namespace {

std::atomic<long> g_mallocs{0}, g_graphs{0}, g_graph_launches{0}, g_kept_rows{0};
constexpr int kThreads = 256;
int blocks_for(long n) { return (int)((n + kThreads - 1) / kThreads); }
const cudaStream_t kStream = cudaStreamPerThread;

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
  }
}

__global__ void add_kernel(float* y, const float* a, const float* b, long n) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + b[i];
}

__global__ void patches_kernel(float* out, const float* img, int B, int C, int H, int W, int p,
                               float scale) {
  const int Hp = H / p, Wp = W / p, K = C * p * p;
  const long n = (long)B * Hp * Wp * K;
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int k = (int)(i % K);
  const long patch = i / K;
  const int b = (int)(patch / ((long)Hp * Wp)), pi = (int)(patch % ((long)Hp * Wp));
  const int py = pi / Wp, px = pi % Wp, c = k / (p * p), y = (k / p) % p, x = k % p;
  out[i] = img[(((long)b * C + c) * H + py * p + y) * W + px * p + x] * scale;
}

// x[r * ldx + c] = table[ids[r]][c] * scale; an int8 table (q, rows' scales s): (s[id] * q) *
// scale, the CPU's embedding_rows().
__global__ void embed_kernel(float* x, int ldx, const float* table, const int8_t* q, const float* s,
                             const int* ids, int R, int dim, float scale) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long)R * dim) return;
  const int r = (int)(i / dim), c = (int)(i % dim);
  const long at = (long)ids[r] * dim + c;
  x[(long)r * ldx + c] = (q ? s[ids[r]] * (float)q[at] : table[at]) * scale;
}

// rows (b, t) of x (B, Tn, H) += P[pos + t or pos] (fixed = the same row for every t)
__global__ void add_positions_kernel(float* x, const float* P, int B, int Tn, int H, int pos,
                                     bool fixed) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long)B * Tn * H) return;
  const int t = (int)((i / H) % Tn), c = (int)(i % H);
  x[i] += P[(long)(fixed ? pos : t) * H + c];
}

// One block per batch row: scores = w_v · tanh(qp + kp[j]), masked softmax, ctx = p · v.
// An int8 w_v (wq, its one row's scale ws): w_v[d] = ws[0] * wq[d]; a bfloat16 one (wh):
// w_v[d] = bf16_value(wh[d]).
__global__ void additive_kernel(float* ctx, int ldc, float* attn, const float* qp,
                                const float* kp, const float* v, const float* w_v,
                                const int8_t* wq, const float* ws, const uint16_t* wh, int Tk,
                                int Hh, int Dv, ValidDev vl) {
  const int b = blockIdx.x;
  float* p = attn + (long)b * Tk;
  int len = vl.kind == ValidDev::PerBatch ? vl.data[b] : Tk;
  if (len < 0) len = 0;
  for (int j = threadIdx.x; j < Tk; j += blockDim.x) {
    float s = 0.f;
    for (int d = 0; d < Hh; ++d)
      s += (wq ? ws[0] * (float)wq[d] : wh ? cuda::bf16_lo(wh[d]) : w_v[d]) *
           tanhf(qp[(long)b * Hh + d] + kp[((long)b * Tk + j) * Hh + d]);
    p[j] = j < len ? s : -1e6f;
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // Tk is the source length: a serial softmax is cheap and exact
    float mx = -INFINITY;
    for (int j = 0; j < Tk; ++j) mx = fmaxf(mx, p[j]);
    float sum = 0.f;
    for (int j = 0; j < Tk; ++j) sum += (p[j] = expf(p[j] - mx));
    for (int j = 0; j < Tk; ++j) p[j] /= sum;
  }
  __syncthreads();
  for (int d = threadIdx.x; d < Dv; d += blockDim.x) {
    float c = 0.f;
    for (int j = 0; j < Tk; ++j) c += p[j] * v[((long)b * Tk + j) * Dv + d];
    ctx[(long)b * ldc + d] = c;
  }
}

__device__ float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

// PyTorch's GRU (r, z, n) and LSTM (i, f, g, o) cell updates, one thread per unit.
__global__ void rnn_cell_kernel(float* h, float* c, const float* gi, const float* gh, bool gru,
                                int B, int Hh) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long)B * Hh) return;
  const int b = (int)(i / Hh), k = (int)(i % Hh);
  const int G = (gru ? 3 : 4) * Hh;
  const float* x = gi + (long)b * G;
  const float* g = gh + (long)b * G;
  if (gru) {
    const float r = sigmoid(x[k] + g[k]), z = sigmoid(x[Hh + k] + g[Hh + k]);
    const float n = tanhf(x[2 * Hh + k] + r * g[2 * Hh + k]);
    h[i] = (h[i] - n) * z + n;
  } else {
    const float in = sigmoid(x[k] + g[k]), f = sigmoid(x[Hh + k] + g[Hh + k]);
    const float gg = tanhf(x[2 * Hh + k] + g[2 * Hh + k]), o = sigmoid(x[3 * Hh + k] + g[3 * Hh + k]);
    c[i] = f * c[i] + in * gg;
    h[i] = o * tanhf(c[i]);
  }
}

// A session's CUDA graphs, one per step key that came back (ops::Ops::replay): a key's entry
// is made at its first step, its graph at its second or third (graph_mode). Bounded: at most
// kMaxKeys keys, a new key taking the place of the oldest one without a graph once there are
// that many (so that a session's many one-off keys, such as the steps of large batches that
// shrank, do not shut out the keys that come later); past kMaxGraphs graphs, steps run launch
// by launch as before.
struct Graphs final : ops::Recording {
  static constexpr size_t kMaxKeys = 1024, kMaxGraphs = 256;
  struct Entry {
    ops::StepKey key;
    int passes = 1;       // calls with this key so far, up to its capture
    bool failed = false;  // capturing it did not give a graph: it always runs eagerly
    cudaGraphExec_t exec = nullptr;
  };
  std::vector<Entry> entries;
  size_t graphs = 0;
  size_t next_out = 0;  // where the search for the entry a new key replaces starts
  static_assert(kMaxGraphs < kMaxKeys, "a full table has entries without a graph");
  // Records key's first pass: a new entry, or in place of the oldest without a graph (entries
  // are replaced in turn; with kMaxGraphs < kMaxKeys there always is one).
  void add(const ops::StepKey& key) {
    if (entries.size() < kMaxKeys) {
      entries.push_back({key, 1, false, nullptr});
      return;
    }
    for (size_t k = 0; k < entries.size(); ++k) {
      Entry& e = entries[(next_out + k) % entries.size()];
      if (e.exec) continue;
      e = {key, 1, false, nullptr};
      next_out = (next_out + k + 1) % entries.size();
      return;
    }
  }
  Graphs() { entries.reserve(kMaxKeys); }
  ~Graphs() override {
    for (auto& e : entries)
      if (e.exec) cudaGraphExecDestroy(e.exec);
  }
};

// Which steps become graphs, and when (ATTNLITE_CUDA_GRAPHS in the environment, read at each
// step). Unset: a key's second pass for forward passes keyed by their batch size
// (ops::Reuse::Pass: the ViT's) and for decoder steps of up to kGemvMaxRows rows (a sentence
// or a beam of up to 8 at a time), whose ~70 small launches cost more than their GPU work; a
// key's third pass for the decoder steps of batches of up to kGraphBatchRows rows, whose keys
// (the batch's source length) come back less often: a key seen three times is likely to come
// again, and a capture never replayed costs more than it saves; larger batches never (their
// GPU work outweighs the launches: the CLI's 256-line batches ran 5-10% slower as graphs).
// "small": steps of up to kGemvMaxRows rows and forward passes only; "all": every step at
// its key's second pass; "0": none.
constexpr int kGraphBatchRows = 32;
enum class GraphMode { Off, Small, Adaptive, All };
GraphMode graph_mode() {
  const char* e = std::getenv("ATTNLITE_CUDA_GRAPHS");
  if (e && std::strcmp(e, "0") == 0) return GraphMode::Off;
  if (e && std::strcmp(e, "small") == 0) return GraphMode::Small;
  if (e && std::strcmp(e, "all") == 0) return GraphMode::All;
  return GraphMode::Adaptive;
}

ValidDev device_lens(const ValidLens& vl) {
  switch (vl.kind) {
    case ValidLens::PerBatch: return {ValidDev::PerBatch, vl.data, 0};
    case ValidLens::PerQuery: return {ValidDev::PerQuery, vl.data, 0};
    case ValidLens::Causal: return {ValidDev::Causal, nullptr, vl.offset};
    default: return {};
  }
}

class CudaOps final : public ops::Ops {
 public:
  explicit CudaOps(bool bf16) : bf16_(bf16) {}
  const char* name() const override { return bf16_ ? "cuda-bf16" : "cuda"; }
  bool host_memory() const override { return false; }
  bool bf16_weights() const override { return bf16_; }

  void linear(float* y, const float* x, const Linear& w, int M, ops::Act act) const override {
    const int a = act == ops::Act::Relu ? cuda::kActRelu : act == ops::Act::Gelu ? cuda::kActGelu : cuda::kActNone;
    if (!w.int8() && !w.bf16()) {
      cuda::linear(blas(), y, w.out, x, w.in, w.w, w.b, M, w.out, w.in, a, kStream);
      return;
    }
    if (!cuda::gemv_fits(M, w.bf16(), blas().mode) && !w.expand)
      throw Error(std::string("CUDA: an ") + (w.int8() ? "int8" : "bfloat16") + " linear layer of " +
                  std::to_string(M) + " rows needs room to expand its weights (Linear::expand), and has none");
    if (w.int8())
      cuda::linear_i8(blas(), y, w.out, x, w.in, w.q, w.scale, w.expand, w.b, M, w.out, w.in, a, kStream);
    else
      cuda::linear_bf16(blas(), y, w.out, x, w.in, w.h, w.expand, w.b, M, w.out, w.in, a, kStream);
  }
  // Up to kGemvMaxLayers layers over one input of few rows (cuda::gemv_fits: for bfloat16
  // ones and in BlasMode::Gemv up to 64), all fp32, all int8 or all bfloat16: one GEMV
  // launch for all of them.
  void linear_n(float* const* ys, const Linear* const* ws, int n, const float* x, int M,
                Arena& scratch) const override {
    const cuda::BlasMode mode = blas().mode;
    if (!cuda::gemv_fits(M, false, mode) && strided(ys, ws, n, x, M)) return;
    bool one = n >= 1 && n <= cuda::kGemvMaxLayers && cuda::gemv_fits(M, ws[0]->bf16(), mode);
    for (int i = 0; one && i < n; ++i)
      one = (ws[i]->w || ws[i]->q || ws[i]->h) && ws[i]->int8() == ws[0]->int8() &&
            ws[i]->bf16() == ws[0]->bf16() && ws[i]->in == ws[0]->in;
    if (!one) return Ops::linear_n(ys, ws, n, x, M, scratch);
    cuda::GemvLayers L;
    for (int i = 0; i < n; ++i) {
      L.W[i] = ws[i]->w;
      L.Q[i] = ws[i]->q;
      L.H[i] = ws[i]->h;
      L.S[i] = ws[i]->scale;
      L.b[i] = ws[i]->b;
      L.y[i] = ys[i];
      L.ldy[i] = ws[i]->out;
      L.start[i + 1] = L.start[i] + ws[i]->out;
    }
    L.count = n;
    cuda::gemv(L, x, ws[0]->in, M, ws[0]->in, cuda::kActNone, kStream, mode);
  }
  void add(float* y, const float* a, const float* b, long n) const override {
    if (n > 0) add_kernel<<<blocks_for(n), kThreads, 0, kStream>>>(y, a, b, n);
  }
  void add_layer_norm(float* out, const float* x, const float* y, const float* gamma,
                      const float* beta, int R, int n, float eps, Arena&) const override {
    cuda::add_layer_norm(out, x, y, nullptr, gamma, beta, R, n, eps, kStream);
  }
  // Past the GEMV's rows (its bias is fused) and short of cuBLASLt's epilogue (cuda::lt_rows;
  // in BlasMode::Sgemm any number of rows), a product's bias is a launch of its own (bias_act):
  // the norm's kernel adds it instead, in the same order (product + bias, then + res). (In
  // BlasMode::LtTuned such a product is timed, and may run, without the bias in an epilogue.)
  void linear_add_layer_norm(float* out, float* y, const float* x, const Linear& w,
                             const float* res, const float* gamma, const float* beta, int R,
                             float eps, Arena&) const override {
    const cuda::BlasMode mode = blas().mode;
    const bool apart = w.b && !cuda::gemv_fits(R, w.bf16(), mode) && !cuda::lt_rows(mode, R);
    Linear product = w;
    if (apart) product.b = nullptr;
    linear(y, x, product, R, ops::Act::None);
    cuda::add_layer_norm(out, res, y, apart ? w.b : nullptr, gamma, beta, R, w.out, eps, kStream);
  }
  void patches(float* out, const float* img, int B, int C, int H, int W, int p,
               float scale) const override {
    const long n = (long)B * (H / p) * (W / p) * C * p * p;
    if (n > 0) patches_kernel<<<blocks_for(n), kThreads, 0, kStream>>>(out, img, B, C, H, W, p, scale);
  }
  void embed(float* x, int ldx, const Embedding& t, const int* ids, int R, float scale) const override {
    embed_kernel<<<blocks_for((long)R * t.dim), kThreads, 0, kStream>>>(x, ldx, t.w, t.q, t.scale, ids, R,
                                                                         t.dim, scale);
  }
  void add_positions(float* x, const float* P, int B, int Tn, int H, const int* positions) const override {
    const long n = (long)B * Tn * H;
    if (!positions || Tn == 1) {
      add_positions_kernel<<<blocks_for(n), kThreads, 0, kStream>>>(x, P, B, Tn, H,
                                                                     positions ? positions[0] : 0, positions);
      return;
    }
    for (int t = 0; t < Tn; ++t)  // explicit positions of several steps: one row per launch
      for (int b = 0; b < B; ++b)
        add_positions_kernel<<<blocks_for(H), kThreads, 0, kStream>>>(x + ((long)b * Tn + t) * H, P, 1, 1,
                                                                      H, positions[t], true);
  }
  void attend(float* ctx, const ops::AttnOut& attn, const float* q, const float* k, const float* v,
              int kv_stride, int B, int Tq, int Tk, int H, int NH, const ValidLens& vl,
              Arena&) const override {
    cuda::attend(ctx, {attn.data, attn.b_stride, attn.h_stride, attn.ld}, q, k, v, kv_stride, B, Tq,
                 Tk, H, NH, device_lens(vl), kStream);
  }
  // this call's keys and values written into the cache by the attention kernel: one launch
  // where the default's two copies and the attention are three
  void append_attend(float* ctx, const ops::AttnOut& attn, const float* q, const float* k_new,
                     const float* v_new, float* kc, float* vc, int kv_stride, int t0, int B, int Tq,
                     int H, int NH, const ValidLens& vl, Arena&) const override {
    cuda::attend(ctx, {attn.data, attn.b_stride, attn.h_stride, attn.ld}, q, kc, vc, kv_stride, B, Tq,
                 t0 + Tq, H, NH, device_lens(vl), kStream, {k_new, v_new, kc, vc});
  }
  void additive_attend(float* ctx, int ldc, float* attn, const float* qp, const float* kp,
                       const float* v, const Linear& w_v, int B, int Tk, int Hh, int Dv,
                       const ValidLens& vl, Arena&) const override {
    additive_kernel<<<B, 128, 0, kStream>>>(ctx, ldc, attn, qp, kp, v, w_v.w, w_v.q, w_v.scale, w_v.h, Tk,
                                            Hh, Dv, device_lens(vl));
  }
  void rnn_cell(float* h, float* c, float* gi, float* gh, ops::Cell cell, int B, int Hh) const override {
    rnn_cell_kernel<<<blocks_for((long)B * Hh), kThreads, 0, kStream>>>(h, c, gi, gh, cell == ops::Cell::GRU,
                                                                         B, Hh);
  }
  void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V,
                   Arena& scratch) const override {
    ArenaScope scope(scratch);
    const ops::ArgmaxRowsScratch d = ops::argmax_rows_scratch(scratch, R, V);
    cuda::argmax_rows(d.ids, d.probs, d.logp, logits, R, V, {d.part_v, d.part_i, d.part_s, d.chunks},
                      kStream);
    // the three results lie in one carved span: one copy and one wait per step when it is small
    const char* lo = reinterpret_cast<const char*>(d.ids);
    const size_t span = (size_t)(reinterpret_cast<const char*>(d.logp + R) - lo);
    alignas(16) char host[4096];
    if (span <= sizeof(host)) {
      download(host, lo, span);
      std::memcpy(ids, host, sizeof(int) * R);
      std::memcpy(probs, host + (reinterpret_cast<const char*>(d.probs) - lo), sizeof(float) * R);
      if (logp) std::memcpy(logp, host + (reinterpret_cast<const char*>(d.logp) - lo), sizeof(double) * R);
      return;
    }
    download(ids, d.ids, sizeof(int) * R);
    download(probs, d.probs, sizeof(float) * R);
    if (logp) download(logp, d.logp, sizeof(double) * R);
  }

  void top_rows(int* ids, float* vals, float* max, double* sum, const float* logits, long ld,
                int R, int V, int n, Arena& scratch) const override {
    ArenaScope scope(scratch);
    const ops::TopRowsScratch d = ops::top_rows_scratch(scratch, R, V, n);
    cuda::top_rows(d.ids, d.vals, d.max, d.sum, logits, ld, R, V, n,
                   {d.part_v, d.part_i, d.part_s, d.chunks}, kStream);
    download(sum, d.sum, sizeof(double) * R);
    download(ids, d.ids, sizeof(int) * (size_t)R * n);
    download(vals, d.vals, sizeof(float) * (size_t)R * n);
    download(max, d.max, sizeof(float) * R);
  }
  void permute_blocks(float* rows, long stride, long len, const int* from, int nb, int K,
                      float*) const override {
    cuda::permute_blocks(rows, stride, len, from, nb, K, kStream);
  }
  void keep_rows(float* rows, long stride, long len, const int* keep, int n) const override {
    cuda::keep_rows(rows, stride, len, keep, n, kStream);
    ++g_kept_rows;
  }
  // ATTNLITE_CUDA_DROP in the environment, read when a session is made: unset, finished rows
  // leave batches of more than kGraphBatchRows rows, whose steps cost their rows rather than
  // their ~70 launches and are not recorded as graphs (replay); batches of up to 32 rows, whose
  // steps are, keep theirs (and their steps' keys); "all", every batch (as on the CPU); "0",
  // none.
  int drop_floor() const override {
    const char* e = std::getenv("ATTNLITE_CUDA_DROP");
    if (e && std::strcmp(e, "0") == 0) return std::numeric_limits<int>::max();
    if (e && std::strcmp(e, "all") == 0) return 0;
    return kGraphBatchRows;
  }

  void copy(void* dst, const void* src, size_t bytes) const override {
    if (bytes) ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, kStream), "copy");
  }
  void copy_2d(void* dst, size_t dp, const void* src, size_t sp, size_t bytes, int rows) const override {
    if (bytes && rows)
      ok(cudaMemcpy2DAsync(dst, dp, src, sp, bytes, rows, cudaMemcpyDeviceToDevice, kStream), "copy_2d");
  }
  void zero(void* dst, size_t bytes) const override {
    if (bytes) ok(cudaMemsetAsync(dst, 0, bytes, kStream), "zero");
  }
  void upload(void* dst, const void* host, size_t bytes) const override {
    if (bytes) ok(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, kStream), "upload");
  }
  void download(void* host, const void* src, size_t bytes) const override {
    if (!bytes) return;
    ok(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, kStream), "download");
    ok(cudaStreamSynchronize(kStream), "download");
  }
  void* alloc(size_t bytes) const override {
    void* p = nullptr;
    ++g_mallocs;
    const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw Error("CUDA: cannot allocate " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(e));
    }
    return p;
  }
  void release(void* p) const override { cudaFree(p); }
  void sync() const override { ok(cudaStreamSynchronize(kStream), "a CUDA op"); }

  // The first call with a key runs fn launch by launch; the second captures it into a graph
  // and launches the graph; later calls launch the graph alone.
  void replay(std::unique_ptr<ops::Recording>& rec, const ops::StepKey& key, int rows,
              ops::Reuse reuse, void (*fn)(void*), void* arg) const override {
    const GraphMode mode = graph_mode();
    const bool batch = reuse == ops::Reuse::Step && rows > cuda::kGemvMaxRows;
    if (mode == GraphMode::Off || (mode == GraphMode::Small && batch) ||
        (mode == GraphMode::Adaptive && batch && rows > kGraphBatchRows))
      return fn(arg);
    const int capture_at = mode == GraphMode::Adaptive && batch ? 3 : 2;  // the key's nth pass
    if (!rec) rec = std::make_unique<Graphs>();
    auto& g = static_cast<Graphs&>(*rec);  // only this op set makes a session's recording
    Graphs::Entry* e = nullptr;
    for (auto& x : g.entries)
      if (x.key == key) { e = &x; break; }
    if (!e) {
      g.add(key);
      return fn(arg);
    }
    if (!e->exec) {
      if (e->failed || g.graphs >= Graphs::kMaxGraphs || ++e->passes < capture_at) return fn(arg);
      e->exec = capture(fn, arg);
      if (!e->exec) {
        e->failed = true;
        return fn(arg);
      }
      ++g.graphs;
      ++g_graphs;
    }
    ++g_graph_launches;
    ok(cudaGraphLaunch(e->exec, kStream), "replaying a step");
  }

 private:
  // fn's ops captured on the thread's stream (in capture mode nothing runs) and instantiated,
  // or nullptr when that fails (an op refused in capture mode: fn then ran nothing).
  static cudaGraphExec_t capture(void (*fn)(void*), void* arg) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaError_t st = cudaStreamBeginCapture(kStream, cudaStreamCaptureModeThreadLocal);
    if (st == cudaSuccess) {
      bool thrown = false;
      try {
        fn(arg);
      } catch (...) {  // an op's CUDA error: end the capture all the same
        thrown = true;
      }
      st = cudaStreamEndCapture(kStream, &graph);
      if (thrown) st = cudaErrorStreamCaptureInvalidated;
      if (st == cudaSuccess && graph) st = cudaGraphInstantiate(&exec, graph, 0);
      if (graph) cudaGraphDestroy(graph);
    }
    if (st != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return exec;
  }

  // fp32 layers of one shape whose weights, biases and outputs lie at constant strides (a
  // stacked Q, K, V as the weights' copy and the drivers' carving place them): one strided
  // product for all of them (cuda::linear_strided). false: nothing launched.
  static bool strided(float* const* ys, const Linear* const* ws, int n, const float* x, int M) {
    if (n < 2) return false;
    const Linear& w0 = *ws[0];
    if (!w0.w || w0.int8()) return false;
    const auto gap = [](const void* a, const void* b, long long* s) {  // b - a in floats, > 0
      const intptr_t d = (intptr_t)b - (intptr_t)a;
      if (d <= 0 || d % (intptr_t)sizeof(float)) return false;
      *s = d / (intptr_t)sizeof(float);
      return true;
    };
    long long sw = 0, sb = 0, sy = 0;
    for (int i = 1; i < n; ++i) {
      const Linear& w = *ws[i];
      long long a = 0, b = 0, c = 0;
      if (!w.w || w.int8() || w.in != w0.in || w.out != w0.out || !w.b != !w0.b) return false;
      if (!gap(ws[i - 1]->w, w.w, &a) || !gap(ys[i - 1], ys[i], &c) || (w0.b && !gap(ws[i - 1]->b, w.b, &b)))
        return false;
      if (i > 1 && (a != sw || b != sb || c != sy)) return false;
      sw = a, sb = b, sy = c;
    }
    // outputs must not overlap: each layer's (M, out) rows lie before the next one's
    if (sy < (long long)M * w0.out) return false;
    return cuda::linear_strided(blas(), ys[0], sy, w0.out, x, w0.in, w0.w, sw, w0.b, sb, n, M,
                                w0.out, w0.in, kStream);
  }

  // One BLAS per thread (cuBLAS, and cuBLASLt for products with their bias in the epilogue),
  // on the per-thread stream, made on the thread's first use, in the mode ATTNLITE_CUDA_LT
  // says (cuda::BlasMode): "0" SGEMM + the bias kernel always, "tune" timed per shape, "gemv"
  // the GEMV up to 64 rows, unset (or anything else) the default.
  static cuda::Blas& blas() {
    thread_local cuda::Blas b(blas_mode(), kStream);
    return b;
  }
  static cuda::BlasMode blas_mode() {
    const char* e = std::getenv("ATTNLITE_CUDA_LT");
    if (e && std::strcmp(e, "0") == 0) return cuda::BlasMode::Sgemm;
    if (e && std::strcmp(e, "tune") == 0) return cuda::BlasMode::LtTuned;
    if (e && std::strcmp(e, "gemv") == 0) return cuda::BlasMode::Gemv;
    return cuda::BlasMode::Lt;
  }

  const bool bf16_;
};

}  // namespace

bool available(std::string* reason) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();  // clear the sticky error for later calls
    if (reason) *reason = cudaGetErrorString(e != cudaSuccess ? e : cudaErrorNoDevice);
    return false;
  }
  return true;
}

std::string device_name() {
  std::string why;
  if (!available(&why)) return "none (" + why + ")";
  cudaDeviceProp p{};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return "unknown";
  }
  return p.name;
}

long malloc_count() { return g_mallocs.load(); }
long graphs_made() { return g_graphs.load(); }
long graph_launches() { return g_graph_launches.load(); }
long kept_rows_calls() { return g_kept_rows.load(); }

}  // namespace attnlite::cuda

namespace attnlite {

bool cuda_available() { return cuda::available(); }
std::string cuda_device_name() { return cuda::device_name(); }
void cuda_start_up() {
  if (!cuda::available()) return;
  cuda::prefetch_cublas();
  if (cudaFree(nullptr) != cudaSuccess) (void)cudaGetLastError();  // the primary context
}

namespace ops {
const Ops& cuda(bool bf16_weights) {
  std::string why;
  if (!cuda::available(&why))
    throw Error("CUDA was requested but no CUDA device is available (" + why + ")");
  // cuBLAS loads on its own thread while the caller creates the context and uploads weights.
  cuda::prefetch_cublas();
  (void)cuda::attend_shared_limit();  // the attention kernel's opt-in, outside any capture
  static const cuda::CudaOps f32(false), bf16(true);
  return bf16_weights ? bf16 : f32;
}
}  // namespace ops

}  // namespace attnlite
