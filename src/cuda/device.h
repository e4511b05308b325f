// attnlite — the CUDA backend's host-side interface (plain C++: the tests include it without
// CUDA headers). Built only with -DATTNLITE_CUDA=ON. The op set itself is ops::cuda()
// (src/cuda/ops_cuda.cu); a session's device memory is two blocks, made when the session is:
// the weights (drivers/op_memory.h) and the workspace its drivers carve.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace attnlite::cuda {

// cudaGetDeviceCount > 0. On false, *reason (if given) gets cudaGetErrorString's text.
bool available(std::string* reason = nullptr);
// Device 0's name, or "none (<reason>)".
std::string device_name();
// cudaMalloc calls the backend has made in this process.
long malloc_count();
// CUDA graphs of decoder steps made, and launched, in this process (ops::Ops::replay).
long graphs_made();
long graph_launches();
// Ops::keep_rows calls of the CUDA set in this process (finished rows leaving a batch).
long kept_rows_calls();
// The shared memory an attention block may take on the current device, in bytes: the
// device's opt-in limit (cudaDevAttrMaxSharedMemoryPerBlockOptin: 227 KiB on an H100 or H200,
// where a kernel gets 48 KiB without opting in), the attention kernel opted in at the first
// call (ops::cuda() makes it). Attention whose query, scores and sums need more is an error.
size_t attend_shared_limit();

// Each kernel on host data, for the tests that hold it against the CPU reference. These
// allocate device memory per call (they are not on the translate path).
namespace check {
// y (M, N) = x (M, K) · wᵀ + b (b may be nullptr), then ReLU when relu, through the op set's
// path: the GEMV for few rows, more rows as `mode` (cuda::BlasMode: 0 SGEMM + the bias kernel,
// 1 cuBLASLt's epilogue from 65 rows, 2 the faster of the two, timed per shape, 3 the GEMV up
// to 64 rows, then as 1).                                                   CPU: linear
void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K,
            bool relu, int mode = 1);
// y (n, M, N): layer i's y_i = x (M, K) · w_iᵀ + b_i for w (n, N, K), b (n, N) or nullptr,
// through the op set's strided path (M past the GEMV's rows; layers 64 floats apart at least),
// in `mode` as above. Returns whether that path took it (false: nothing ran, y is zeros).
//                                                                         CPU: linear, n times
bool linear_strided(float* y, const float* x, const float* w, const float* b, int n, int M,
                    int N, int K, int mode);
// The same with int8 weights q (N, K) and scales (N), through the op set's path: the GEMV on
// q for few rows, more rows expanded into fp32 first (with `gemv_n` layers, where the GEMV
// fits: the N outputs split into that many layers of one launch), in `mode` as above.
//                                                                          CPU: linear_i8
void linear_i8(float* y, const float* x, const signed char* q, const float* scale, const float* b,
               int M, int N, int K, bool relu, int gemv_n = 1, int mode = 1);
// The same with bfloat16 weights h (N, K) (bf16_bits): the GEMV on h for few rows, more rows
// widened into fp32 first.                          CPU: linear on the widened values (bf16_value)
void linear_bf16(float* y, const float* x, const uint16_t* h, const float* b, int M, int N, int K,
                 bool relu, int gemv_n = 1, int mode = 1);
// Microseconds per call of the op set's product path for M rows through `layers` layers of
// (N, K) over one input, with biases, in `mode` (as linear above): one layer with `relu`, or
// several as one strided product (attention's Q, K and V; no activation). The weights are
// `copies` sets used in turn, so that, as in a decoding step, they come from memory rather
// than from L2; the calls (copies of them, after one unmeasured call of each) are captured as
// one CUDA graph on the thread's stream and replayed `reps` times. For bench_cuda --products.
double linear_us(int M, int N, int K, int layers, bool relu, int mode, int copies, int reps);
// out (R, n) = LayerNorm(x + (y + yb)) · gamma + beta, eps 1e-5; yb (n) or nullptr.
//                                                                          CPU: add_norm
void add_layer_norm(float* out, const float* x, const float* y, const float* yb,
                    const float* gamma, const float* beta, int R, int n);
// x (R, H) = table[ids] · scale + P[pos or r % T].                        CPU: embedding +
// add_positional_encoding
void embed_positions(float* x, const float* table, int rows_in_table, const float* P,
                     int P_rows, const int* ids, int R, int T, int H, int pos, float scale);
// ctx (B, Tq, H), attn (B * NH, Tq, Tk) from q (B, Tq, H), k and v (B, Tk, H); valid (B)
// or nullptr.                                                              CPU: attend_heads
void attend(float* ctx, float* attn, const float* q, const float* k, const float* v, int B,
            int Tq, int Tk, int H, int NH, const int* valid);
// ids (R), probs (R), logp (R, or nullptr) from logits (R, V).  CPU: ops::cpu().argmax_rows
void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V);
// cuBLAS as the backend loads it (cuda/cublas_library.h): with no names, the process's own
// load (waiting for it); with a name, a fresh load of that library (empty: the usual one).
struct CublasLoad {
  bool loaded = false;
  std::string error;               // why not, when !loaded
  std::string blas_path, lt_path;  // the files the functions came from
  int blas_major = 0;              // cublasGetProperty(MAJOR_VERSION)
  long lt_version = 0;             // cublasLtGetVersion()
  int header_major = 0;            // CUBLAS_VER_MAJOR of the headers built against
};
CublasLoad cublas_load(const std::string& blas_name = "", const std::string& lt_name = "");
}  // namespace check

}  // namespace attnlite::cuda
