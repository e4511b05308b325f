// Each CUDA kernel on host data (cuda_session.h, namespace check): copy in, run, copy out.
// Only the tests call these, to hold every kernel against its CPU reference.
#include <algorithm>
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
#include "ops/scratch.h"

namespace attnlite::cuda::check {
namespace {

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
  }
}

// A device copy of a host array (or an uninitialised one of n elements), freed on scope exit.
template <class T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count, const T* host = nullptr) : n(count) {
    ok(cudaMalloc(&p, (n ? n : 1) * sizeof(T)), "cudaMalloc");
    if (host) ok(cudaMemcpy(p, host, n * sizeof(T), cudaMemcpyHostToDevice), "copy in");
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  void to_host(T* host) const {
    ok(cudaGetLastError(), "kernel launch");
    ok(cudaMemcpy(host, p, n * sizeof(T), cudaMemcpyDeviceToHost), "copy out");
  }
};

}  // namespace

void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K,
            bool relu, int mode) {
  Dev<float> dy((size_t)M * N), dx((size_t)M * K, x), dw((size_t)N * K, w);
  Dev<float> db(b ? (size_t)N : 0, b);
  cuda::Blas blas((cuda::BlasMode)mode, nullptr);
  const cublasStatus_t st = cuda::linear(blas, dy.p, N, dx.p, K, dw.p, b ? db.p : nullptr, M, N, K,
                                         relu ? cuda::kActRelu : cuda::kActNone, nullptr);
  ok(cudaDeviceSynchronize(), "linear");
  if (st != CUBLAS_STATUS_SUCCESS) throw Error("cuBLAS SGEMM failed");
  dy.to_host(y);
}

bool linear_strided(float* y, const float* x, const float* w, const float* b, int n, int M,
                    int N, int K, int mode) {
  // the layers' weights, biases and outputs each padded to a multiple of 64 floats, as the
  // weights' copy (256-byte alignment) and the drivers' carving place them
  const auto pad = [](long v) { return (v + 63) / 64 * 64; };
  const long sw = pad((long)N * K), sb = pad(N), sy = pad((long)M * N);
  std::vector<float> hw((size_t)(sw * n), 0.f), hb((size_t)(sb * n), 0.f);
  for (int i = 0; i < n; ++i) {
    std::copy(w + (long)i * N * K, w + (long)(i + 1) * N * K, hw.begin() + i * sw);
    if (b) std::copy(b + (long)i * N, b + (long)(i + 1) * N, hb.begin() + i * sb);
  }
  Dev<float> dy((size_t)(sy * n)), dx((size_t)M * K, x), dw(hw.size(), hw.data());
  Dev<float> db(b ? hb.size() : 0, hb.data());
  ok(cudaMemset(dy.p, 0, dy.n * sizeof(float)), "memset");
  cuda::Blas blas((cuda::BlasMode)mode, nullptr);
  const bool done = cuda::linear_strided(blas, dy.p, sy, N, dx.p, K, dw.p, sw, b ? db.p : nullptr,
                                         sb, n, M, N, K, nullptr);
  ok(cudaDeviceSynchronize(), "linear_strided");
  std::vector<float> all((size_t)(sy * n));
  dy.to_host(all.data());
  for (int i = 0; i < n; ++i)
    std::copy(all.begin() + i * sy, all.begin() + i * sy + (long)M * N, y + (long)i * M * N);
  return done;
}

namespace {
// linear_i8 (T int8_t, with scales) and linear_bf16 (T uint16_t): the weights w in their
// stored form, through the op set's path.
template <class T>
void linear_stored(const char* what, float* y, const float* x, const T* w, const float* scale,
                   const float* b, int M, int N, int K, bool relu, int gemv_n, int mode) {
  constexpr bool kI8 = std::is_same<T, int8_t>::value;
  // the room a device's weights give (Linear::expand_rows), no more: memcheck sees any overrun
  Dev<float> dy((size_t)M * N), dx((size_t)M * K, x), ds(kI8 ? (size_t)N : 0, scale);
  Dev<float> dexp((size_t)(Linear::expand_rows(N, K) * K));
  Dev<T> dw((size_t)N * K, w);
  Dev<float> db(b ? (size_t)N : 0, b);
  const int act = relu ? cuda::kActRelu : cuda::kActNone;
  if (gemv_n > 1) {  // N outputs as gemv_n layers of one launch, each writing its own columns
    GemvLayers L;
    const int per = (N + gemv_n - 1) / gemv_n;
    for (int i = 0; i < gemv_n; ++i) {
      const int lo = std::min(N, i * per), n = std::min(N, lo + per) - lo;
      if constexpr (kI8) {
        L.Q[i] = dw.p + (long)lo * K;
        L.S[i] = ds.p + lo;
      } else {
        L.H[i] = dw.p + (long)lo * K;
      }
      L.b[i] = b ? db.p + lo : nullptr;
      L.y[i] = dy.p + lo;
      L.ldy[i] = N;
      L.start[i + 1] = L.start[i] + n;
    }
    L.count = gemv_n;
    cuda::gemv(L, dx.p, K, M, K, act, nullptr, (cuda::BlasMode)mode);
    ok(cudaDeviceSynchronize(), what);
    dy.to_host(y);
    return;
  }
  cuda::Blas blas((cuda::BlasMode)mode, nullptr);
  cublasStatus_t st;
  if constexpr (kI8)
    st = cuda::linear_i8(blas, dy.p, N, dx.p, K, dw.p, ds.p, dexp.p, b ? db.p : nullptr, M, N, K, act, nullptr);
  else
    st = cuda::linear_bf16(blas, dy.p, N, dx.p, K, dw.p, dexp.p, b ? db.p : nullptr, M, N, K, act, nullptr);
  ok(cudaDeviceSynchronize(), what);
  if (st != CUBLAS_STATUS_SUCCESS) throw Error("cuBLAS SGEMM failed");
  dy.to_host(y);
}
}  // namespace

void linear_i8(float* y, const float* x, const signed char* q, const float* scale, const float* b,
               int M, int N, int K, bool relu, int gemv_n, int mode) {
  linear_stored("linear_i8", y, x, reinterpret_cast<const int8_t*>(q), scale, b, M, N, K, relu, gemv_n,
                mode);
}

void linear_bf16(float* y, const float* x, const uint16_t* h, const float* b, int M, int N, int K,
                 bool relu, int gemv_n, int mode) {
  linear_stored<uint16_t>("linear_bf16", y, x, h, nullptr, b, M, N, K, relu, gemv_n, mode);
}

double linear_us(int M, int N, int K, int layers, bool relu, int mode, int copies, int reps) {
  if (M < 1 || N < 1 || K < 1 || layers < 1 || layers > kGemvMaxLayers || copies < 1 || reps < 1)
    throw Error("linear_us: bad sizes");
  const cudaStream_t stream = cudaStreamPerThread;
  // each copy's layers, weights and biases 64 floats apart at least (as the weights' copy
  // places them), outputs likewise
  const auto pad = [](long v) { return (v + 63) / 64 * 64; };
  const long sw = pad((long)N * K), sb = pad(N), sy = pad((long)M * N);
  Dev<float> dx((size_t)M * K), dw((size_t)(sw * layers * copies)), db((size_t)(sb * layers * copies));
  Dev<float> dy((size_t)(sy * layers));
  ok(cudaMemset(dx.p, 0, dx.n * sizeof(float)), "memset");
  ok(cudaMemset(dw.p, 0, dw.n * sizeof(float)), "memset");
  ok(cudaMemset(db.p, 0, db.n * sizeof(float)), "memset");
  cuda::Blas blas((cuda::BlasMode)mode, stream);
  const int act = relu ? cuda::kActRelu : cuda::kActNone;
  const auto call = [&](int c) {
    const float* w = dw.p + sw * layers * c;
    const float* b = db.p + sb * layers * c;
    if (layers == 1) {
      if (cuda::linear(blas, dy.p, N, dx.p, K, w, b, M, N, K, act, stream) != CUBLAS_STATUS_SUCCESS)
        throw Error("linear_us: a product failed");
    } else if (!cuda::linear_strided(blas, dy.p, sy, N, dx.p, K, w, sw, b, sb, layers, M, N, K, stream)) {
      throw Error("linear_us: the strided product did not take these layers");
    }
  };
  for (int c = 0; c < copies; ++c) call(c);  // plans made (and timed, mode 2) outside the capture
  ok(cudaStreamSynchronize(stream), "linear_us");
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
  try {
    for (int c = 0; c < copies; ++c) call(c);
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    throw;
  }
  ok(cudaStreamEndCapture(stream, &graph), "capture");
  const cudaError_t st = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  ok(st, "cudaGraphInstantiate");
  const float us = time_runs([&] {
    return cudaGraphLaunch(exec, stream) == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
  }, reps, stream);
  cudaGraphExecDestroy(exec);
  if (us == FLT_MAX) throw Error("linear_us: a replay of the graph failed");
  return us / copies;
}

void add_layer_norm(float* out, const float* x, const float* y, const float* yb,
                    const float* gamma, const float* beta, int R, int n) {
  Dev<float> dout((size_t)R * n), dx((size_t)R * n, x), dy((size_t)R * n, y);
  Dev<float> dyb(yb ? (size_t)n : 0, yb), dg((size_t)n, gamma), db((size_t)n, beta);
  cuda::add_layer_norm(dout.p, dx.p, dy.p, yb ? dyb.p : nullptr, dg.p, db.p, R, n, 1e-5f, nullptr);
  dout.to_host(out);
}

void embed_positions(float* x, const float* table, int rows_in_table, const float* P,
                     int P_rows, const int* ids, int R, int T, int H, int pos, float scale) {
  Dev<float> dx((size_t)R * H), dt((size_t)rows_in_table * H, table), dp((size_t)P_rows * H, P);
  Dev<int> di((size_t)R, ids);
  cuda::embed_positions(dx.p, dt.p, dp.p, di.p, R, T, H, pos, scale, nullptr);
  dx.to_host(x);
}

void attend(float* ctx, float* attn, const float* q, const float* k, const float* v, int B,
            int Tq, int Tk, int H, int NH, const int* valid) {
  Dev<float> dctx((size_t)B * Tq * H), dq((size_t)B * Tq * H, q);
  Dev<float> dk((size_t)B * Tk * H, k), dv((size_t)B * Tk * H, v);
  Dev<float> da((size_t)B * NH * Tq * Tk);
  Dev<int> dvl(valid ? (size_t)B : 0, valid);
  const AttnDst dst{da.p, (long)NH * Tq * Tk, (long)Tq * Tk, Tk};  // (B * NH, Tq, Tk)
  cuda::attend(dctx.p, dst, dq.p, dk.p, dv.p, Tk, B, Tq, Tk, H, NH, valid ? ValidDev{ValidDev::PerBatch, dvl.p, 0} : ValidDev{},
               nullptr);
  dctx.to_host(ctx);
  da.to_host(attn);
}

void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V) {
  const int C = ops::argmax_chunks(V);
  Dev<float> dl((size_t)R * V, logits), dp((size_t)R), pv((size_t)R * C);
  Dev<int> di((size_t)R), pi((size_t)R * C);
  Dev<double> dlp((size_t)R), ps((size_t)R * C);
  cuda::argmax_rows(di.p, dp.p, logp ? dlp.p : nullptr, dl.p, R, V, {pv.p, pi.p, ps.p, C}, nullptr);
  di.to_host(ids);
  dp.to_host(probs);
  if (logp) dlp.to_host(logp);
}

CublasLoad cublas_load(const std::string& blas_name, const std::string& lt_name) {
  CublasLoad r;
  r.header_major = CUBLAS_VER_MAJOR;
  Cublas t;
  const bool named = !blas_name.empty() || !lt_name.empty();
  if (named) {
    r.loaded = load_cublas(&t, blas_name.empty() ? cublas_soname() : blas_name,
                           lt_name.empty() ? cublaslt_soname() : lt_name, &r.error);
  } else {
    try {
      t = cublas();
      r.loaded = true;
    } catch (const Error& e) {
      r.error = e.what();
    }
  }
  if (!r.loaded) return r;
  r.blas_path = t.blas_path;
  r.lt_path = t.lt_path;
  if (t.GetProperty(MAJOR_VERSION, &r.blas_major) != CUBLAS_STATUS_SUCCESS) r.blas_major = -1;
  r.lt_version = (long)t.LtGetVersion();
  return r;
}

}  // namespace attnlite::cuda::check
