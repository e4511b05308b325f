// The Transformer's encoder and greedy decoder on a CUDA device: a device copy of
// TransformerWeights (one cudaMalloc), one preallocated workspace (one cudaMalloc), one
// pinned staging block (one cudaMallocHost), then only kernel launches, cuBLAS calls and
// small copies per translation. The forward pass mirrors transformer_encode /
// transformer_decode (src/models/transformer.cpp) step for step.
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "cuda/cuda_session.h"
#include "cuda/kernels.cuh"

namespace attnlite::cuda {

namespace {

std::atomic<long> g_mallocs{0};

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}
void ok(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + what + ": " + cublasGetStatusString(s));
}

void* device_alloc(size_t bytes, const char* what) {
  void* p = nullptr;
  ++g_mallocs;
  const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(std::string("CUDA: cannot allocate ") + std::to_string(bytes) + " bytes for " +
                what + ": " + cudaGetErrorString(e));
  }
  return p;
}

// Hands out 256-byte aligned pieces of one block; with base == nullptr it only counts, so
// sizing and carving run the same code (as attnlite::Arena on the host).
struct Carver {
  char* base = nullptr;
  size_t off = 0;
  template <class T>
  T* take(size_t n) {
    const size_t bytes = (n * sizeof(T) + 255) / 256 * 256;
    T* p = base ? reinterpret_cast<T*>(base + off) : nullptr;
    off += bytes;
    return p;
  }
};

// Calls f(pointer, count) for every weight tensor of a Transformer, in one fixed order.
template <class F>
void visit_weights(TransformerWeights& w, const TransformerConfig& c, F&& f) {
  const size_t H = (size_t)c.num_hiddens;
  auto lin = [&](Linear& l) {
    f(l.w, (size_t)l.out * l.in);
    if (l.b) f(l.b, (size_t)l.out);
  };
  auto mha = [&](MultiHeadAttentionW& a) {
    lin(a.W_q);
    lin(a.W_k);
    lin(a.W_v);
    lin(a.W_o);
  };
  auto norm = [&](AddNormW& n) {
    f(n.gamma, (size_t)n.n);
    f(n.beta, (size_t)n.n);
  };
  f(w.enc_embedding.w, (size_t)c.src_vocab_size * H);
  for (auto& e : w.enc) {
    mha(e.attention);
    norm(e.addnorm1);
    lin(e.ffn.dense1);
    lin(e.ffn.dense2);
    norm(e.addnorm2);
  }
  f(w.dec_embedding.w, (size_t)c.tgt_vocab_size * H);
  for (auto& d : w.dec) {
    mha(d.attention1);
    norm(d.addnorm1);
    mha(d.attention2);
    norm(d.addnorm2);
    lin(d.ffn.dense1);
    lin(d.ffn.dense2);
    norm(d.addnorm3);
  }
  lin(w.dense);
}

// cuBLAS gets its own workspace inside ours (cublasSetWorkspace), so it never allocates
// during a call; 32 MiB is NVIDIA's recommendation for Hopper.
constexpr size_t kCublasWorkspace = size_t(32) << 20;

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

struct Session::Impl {
  const Model& m;
  const TransformerConfig& c;
  int B, S, T, L, NH, H, F, V, P_rows;

  // device weights: the host structs with device pointers
  TransformerWeights dw;
  const float* P = nullptr;          // (P_rows, H) positional encodings
  void* weights = nullptr;
  size_t weights_bytes = 0;

  // device workspace
  void* block = nullptr;
  size_t block_bytes = 0;
  int* d_src = nullptr;              // (B, S)
  int* d_valid = nullptr;            // (B)
  int* d_tok = nullptr;              // (B)
  int* d_ids = nullptr;              // (B)
  float* d_probs = nullptr;          // (B)
  float *x = nullptr, *q = nullptr, *k = nullptr, *v = nullptr;  // (B*S, H) each
  float *ctx = nullptr, *a = nullptr, *f = nullptr;              // (B*S, H) each
  float* hid = nullptr;              // (B*S, F)
  float* logits = nullptr;           // (B, V)
  float* cross_k = nullptr;          // (L, B, S, H)
  float* cross_v = nullptr;          // (L, B, S, H)
  float* cache_k = nullptr;          // (L, B, T, H)  self-attention keys, row t = step t
  float* cache_v = nullptr;          // (L, B, T, H)
  float* att_enc = nullptr;          // (B, L, NH, S, S)   the Translation layouts
  float* att_self = nullptr;         // (B, L, T, NH, T)
  float* att_cross = nullptr;        // (B, L, T, NH, S)
  void* cublas_ws = nullptr;         // kCublasWorkspace bytes

  // pinned host staging
  void* pinned = nullptr;
  int* h_src = nullptr;              // (B, S)
  int* h_valid = nullptr;            // (B)
  int* h_tok = nullptr;              // (B)
  int* h_ids = nullptr;              // (B)
  float* h_probs = nullptr;          // (B)

  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;

  Impl(const Model& model, int max_batch, int S_, int T_)
      : m(model), c(model.transformer), B(max_batch), S(S_), T(T_) {
    L = c.num_layers;
    NH = c.num_heads;
    H = c.num_hiddens;
    F = c.ffn_num_hiddens;
    V = c.tgt_vocab_size;
    P_rows = S > T ? S : T;
  }

  void carve(Carver& cv) {
    const size_t R = (size_t)B * S, Hs = H;
    d_src = cv.take<int>(R);
    d_valid = cv.take<int>(B);
    d_tok = cv.take<int>(B);
    d_ids = cv.take<int>(B);
    d_probs = cv.take<float>(B);
    x = cv.take<float>(R * Hs);
    q = cv.take<float>(R * Hs);
    k = cv.take<float>(R * Hs);
    v = cv.take<float>(R * Hs);
    ctx = cv.take<float>(R * Hs);
    a = cv.take<float>(R * Hs);
    f = cv.take<float>(R * Hs);
    hid = cv.take<float>(R * F);
    logits = cv.take<float>((size_t)B * V);
    cross_k = cv.take<float>((size_t)L * R * Hs);
    cross_v = cv.take<float>((size_t)L * R * Hs);
    cache_k = cv.take<float>((size_t)L * B * T * Hs);
    cache_v = cv.take<float>((size_t)L * B * T * Hs);
    att_enc = cv.take<float>((size_t)B * L * NH * S * S);
    att_self = cv.take<float>((size_t)B * L * T * NH * T);
    att_cross = cv.take<float>((size_t)B * L * T * NH * S);
    cublas_ws = cv.take<char>(kCublasWorkspace);
  }

  void carve_pinned(Carver& cv) {
    h_src = cv.take<int>((size_t)B * S);
    h_valid = cv.take<int>(B);
    h_tok = cv.take<int>(B);
    h_ids = cv.take<int>(B);
    h_probs = cv.take<float>(B);
  }

  void upload_weights() {
    dw = m.tw;
    // int8 weights go up as fp32 (cuBLAS SGEMM): dequantized copies on the host, freed
    // once they are on the device.
    std::vector<std::vector<float>> host;
    auto fp32 = [&](auto& t) {
      if (!t.int8()) return;
      host.push_back(dequantize(t));
      t.w = host.back().data();
      t.q = nullptr;
      t.scale = nullptr;
    };
    fp32(dw.enc_embedding);
    fp32(dw.dec_embedding);
    for (auto& e : dw.enc) {
      for (Linear* l : {&e.attention.W_q, &e.attention.W_k, &e.attention.W_v, &e.attention.W_o,
                        &e.ffn.dense1, &e.ffn.dense2})
        fp32(*l);
    }
    for (auto& d : dw.dec) {
      for (Linear* l : {&d.attention1.W_q, &d.attention1.W_k, &d.attention1.W_v,
                        &d.attention1.W_o, &d.attention2.W_q, &d.attention2.W_k,
                        &d.attention2.W_v, &d.attention2.W_o, &d.ffn.dense1, &d.ffn.dense2})
        fp32(*l);
    }
    fp32(dw.dense);
    size_t total = 0;
    visit_weights(dw, c, [&](const float*&, size_t n) { total += (n + 63) / 64 * 64; });
    total += ((size_t)P_rows * H + 63) / 64 * 64;
    weights_bytes = total * sizeof(float);
    weights = device_alloc(weights_bytes, "the weights");
    float* base = static_cast<float*>(weights);
    size_t off = 0;
    auto put = [&](const float*& p, size_t n) {
      ok(cudaMemcpy(base + off, p, n * sizeof(float), cudaMemcpyHostToDevice), "weight upload");
      p = base + off;
      off += (n + 63) / 64 * 64;
    };
    visit_weights(dw, c, put);
    const float* host_P = m.P.data();
    put(host_P, (size_t)P_rows * H);
    P = host_P;
  }

  void setup() {
    std::string why;
    if (!available(&why))
      throw Error("CUDA was requested but no CUDA device is available (" + why + ")");
    ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    ok(cublasCreate(&blas), "cublasCreate");
    ok(cublasSetStream(blas, stream), "cublasSetStream");
    // FP32 everywhere: default math (no TF32), compute type CUBLAS_COMPUTE_32F per call.
    ok(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    upload_weights();
    Carver count;
    carve(count);
    block_bytes = count.off;
    block = device_alloc(block_bytes, "the workspace");
    Carver real{static_cast<char*>(block), 0};
    carve(real);
    ok(cublasSetWorkspace(blas, cublas_ws, kCublasWorkspace), "cublasSetWorkspace");
    Carver pcount;
    carve_pinned(pcount);
    ++g_mallocs;
    ok(cudaMallocHost(&pinned, pcount.off), "cudaMallocHost");
    Carver preal{static_cast<char*>(pinned), 0};
    carve_pinned(preal);
  }

  ~Impl() {
    if (stream) (void)cudaStreamSynchronize(stream);
    if (blas) cublasDestroy(blas);
    if (stream) cudaStreamDestroy(stream);
    if (pinned) cudaFreeHost(pinned);
    if (block) cudaFree(block);
    if (weights) cudaFree(weights);
    (void)cudaGetLastError();
  }

  void lin(float* y, const Linear& l, const float* in, int M, bool relu = false) {
    ok(linear(blas, y, l.out, in, l.in, l.w, l.b, M, l.out, l.in, relu, stream), "linear");
  }
  void lin_strided(float* y, int ldy, const Linear& l, const float* in, int M) {
    ok(linear(blas, y, ldy, in, l.in, l.w, l.b, M, l.out, l.in, false, stream), "linear");
  }
  void norm(float* out, const AddNormW& w, const float* X, const float* Y, int R) {
    add_layer_norm(out, X, Y, w.gamma, w.beta, R, w.n, 1e-5f, stream);  // LN(Y + X)
  }

  void encode(const int* src, const int* valid, int n, bool attention) {
    std::memcpy(h_src, src, sizeof(int) * (size_t)n * S);
    std::memcpy(h_valid, valid, sizeof(int) * (size_t)n);
    ok(cudaMemcpyAsync(d_src, h_src, sizeof(int) * (size_t)n * S, cudaMemcpyHostToDevice, stream), "copy src");
    ok(cudaMemcpyAsync(d_valid, h_valid, sizeof(int) * n, cudaMemcpyHostToDevice, stream), "copy valid lens");
    if (attention) {
      ok(cudaMemsetAsync(att_enc, 0, sizeof(float) * (size_t)n * L * NH * S * S, stream), "memset");
      ok(cudaMemsetAsync(att_self, 0, sizeof(float) * (size_t)n * L * T * NH * T, stream), "memset");
      ok(cudaMemsetAsync(att_cross, 0, sizeof(float) * (size_t)n * L * T * NH * S, stream), "memset");
    }
    const int R = n * S;
    // X = pos_encoding(embedding(X) * sqrt(H)), positions 0..S-1
    embed_positions(x, dw.enc_embedding.w, P, d_src, R, S, H, /*pos=*/-1, std::sqrt((float)H), stream);
    for (int l = 0; l < L; ++l) {
      const EncoderBlockW& w = dw.enc[(size_t)l];
      lin(q, w.attention.W_q, x, R);
      lin(k, w.attention.W_k, x, R);
      lin(v, w.attention.W_v, x, R);
      AttnDst dst;
      if (attention) dst = {att_enc + (long)l * NH * S * S, (long)L * NH * S * S, (long)S * S, S};
      attend(ctx, dst, q, k, v, S, n, S, S, H, NH, d_valid, stream);
      lin(a, w.attention.W_o, ctx, R);
      norm(a, w.addnorm1, x, a, R);                 // Y = AddNorm(X, attention)
      lin(hid, w.ffn.dense1, a, R, /*relu=*/true);
      lin(f, w.ffn.dense2, hid, R);
      norm(x, w.addnorm2, a, f, R);                 // AddNorm(Y, ffn(Y))
    }
    // each decoder layer's encoder-decoder keys and values, once per source batch
    for (int l = 0; l < L; ++l) {
      const DecoderBlockW& w = dw.dec[(size_t)l];
      lin(cross_k + (long)l * B * S * H, w.attention2.W_k, x, R);
      lin(cross_v + (long)l * B * S * H, w.attention2.W_v, x, R);
    }
    ok(cudaGetLastError(), "the encoder kernels");
  }

  void decode_step(const int* tokens, int n, int t, int pos, bool attention) {
    std::memcpy(h_tok, tokens, sizeof(int) * (size_t)n);
    ok(cudaMemcpyAsync(d_tok, h_tok, sizeof(int) * n, cudaMemcpyHostToDevice, stream), "copy tokens");
    float *y = a, *z = k;  // the encoder's buffers, free now (n rows <= B * S)
    embed_positions(x, dw.dec_embedding.w, P, d_tok, n, 1, H, pos, std::sqrt((float)H), stream);
    for (int l = 0; l < L; ++l) {
      const DecoderBlockW& w = dw.dec[(size_t)l];
      float* ck = cache_k + (long)l * B * T * H;
      float* cv = cache_v + (long)l * B * T * H;
      // 1. self-attention over cache rows 0..t; this step's keys/values go to row t
      lin(q, w.attention1.W_q, x, n);
      lin_strided(ck + (long)t * H, T * H, w.attention1.W_k, x, n);
      lin_strided(cv + (long)t * H, T * H, w.attention1.W_v, x, n);
      AttnDst self;
      if (attention) self = {att_self + ((long)l * T + t) * NH * T, (long)L * T * NH * T, T, T};
      attend(ctx, self, q, ck, cv, T, n, 1, t + 1, H, NH, /*valid=*/nullptr, stream);
      lin(y, w.attention1.W_o, ctx, n);
      norm(y, w.addnorm1, x, y, n);                 // Y = AddNorm(X, X2)
      // 2. encoder-decoder attention
      lin(q, w.attention2.W_q, y, n);
      AttnDst cross;
      if (attention) cross = {att_cross + ((long)l * T + t) * NH * S, (long)L * T * NH * S, S, S};
      attend(ctx, cross, q, cross_k + (long)l * B * S * H, cross_v + (long)l * B * S * H, S, n,
             1, S, H, NH, d_valid, stream);
      lin(z, w.attention2.W_o, ctx, n);
      norm(z, w.addnorm2, y, z, n);                 // Z = AddNorm(Y, Y2)
      // 3. position-wise FFN
      lin(hid, w.ffn.dense1, z, n, /*relu=*/true);
      lin(f, w.ffn.dense2, hid, n);
      norm(x, w.addnorm3, z, f, n);
    }
    lin(logits, dw.dense, x, n);
    argmax_rows(d_ids, d_probs, logits, n, V, stream);
    ok(cudaMemcpyAsync(h_ids, d_ids, sizeof(int) * n, cudaMemcpyDeviceToHost, stream), "copy ids");
    ok(cudaMemcpyAsync(h_probs, d_probs, sizeof(float) * n, cudaMemcpyDeviceToHost, stream), "copy probs");
    ok(cudaGetLastError(), "the decoder kernels");
    ok(cudaStreamSynchronize(stream), "the decoder step");
  }

  void fetch_attention(float* enc, float* self, float* cross, int n) {
    ok(cudaMemcpyAsync(enc, att_enc, sizeof(float) * (size_t)n * L * NH * S * S, cudaMemcpyDeviceToHost, stream), "copy attention");
    ok(cudaMemcpyAsync(self, att_self, sizeof(float) * (size_t)n * L * T * NH * T, cudaMemcpyDeviceToHost, stream), "copy attention");
    ok(cudaMemcpyAsync(cross, att_cross, sizeof(float) * (size_t)n * L * T * NH * S, cudaMemcpyDeviceToHost, stream), "copy attention");
    ok(cudaStreamSynchronize(stream), "copy attention");
  }
};

Session::Session(const Model& m, int max_batch, int S, int T) {
  if (m.kind != ModelKind::Transformer)
    throw Error("only the Transformer runs on CUDA; use Device::CPU for the Bahdanau model");
  impl_ = std::make_unique<Impl>(m, max_batch, S, T);
  impl_->setup();
}
Session::~Session() = default;

void Session::encode(const int* src, const int* valid, int n, bool attention) {
  impl_->encode(src, valid, n, attention);
}
void Session::decode_step(const int* tokens, int n, int t, int pos, bool attention) {
  impl_->decode_step(tokens, n, t, pos, attention);
}
const int* Session::ids() const { return impl_->h_ids; }
const float* Session::probs() const { return impl_->h_probs; }
void Session::fetch_attention(float* enc, float* self, float* cross, int n) {
  impl_->fetch_attention(enc, self, cross, n);
}
size_t Session::weight_bytes() const { return impl_->weights_bytes; }
size_t Session::workspace_bytes() const { return impl_->block_bytes; }
size_t Session::required_workspace_bytes(const Model& m, int max_batch, int S, int T) {
  Impl impl(m, max_batch, S, T);
  Carver count;
  impl.carve(count);
  return count.off;
}

}  // namespace attnlite::cuda
