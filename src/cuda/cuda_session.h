// attnlite — the CUDA backend's internal interface (plain C++: translate.cpp and the tests
// include it without CUDA headers). Built only with -DATTNLITE_CUDA=ON.
//
// A Session holds, for one Translator:
//   - one device allocation with every Transformer weight and the positional-encoding rows
//     the limits can reach (uploaded once, at construction);
//   - one device allocation (the workspace) with every activation, the per-layer self-
//     attention KV cache, the cross K/V, the logits, the attention-weight buffers and the
//     cuBLAS workspace, sized from (model, limits);
//   - one pinned host allocation for the per-step ids/probabilities and the inputs.
// After construction nothing calls cudaMalloc: malloc_count() lets tests check that.
//
// Legend: B max batch, n rows in this call (n <= B), S source steps, T target steps,
// H num_hiddens, NH heads, F ffn hidden size, L layers, V target vocabulary.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace attnlite {
class Model;
}

namespace attnlite::cuda {

// cudaGetDeviceCount > 0. On false, *reason (if given) gets cudaGetErrorString's text.
bool available(std::string* reason = nullptr);
// Device 0's name, or "none (<reason>)".
std::string device_name();
// cudaMalloc + cudaMallocHost calls the backend has made in this process.
long malloc_count();

class Session {
 public:
  // Uploads the weights and reserves the workspace. Throws attnlite::Error when no device
  // is available or memory runs out; the model must be a Transformer.
  Session(const Model& m, int max_batch, int S, int T);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Encoder over src (n, S) token ids with valid lengths (n), then every decoder layer's
  // cross keys/values. attention: zero the attention buffers and record the encoder's.
  void encode(const int* src, const int* valid, int n, bool attention);
  // One decoder step: tokens (n) at step t (cache row t), positional encoding row pos.
  // Waits for the GPU; then ids() and probs() hold the greedy choice of each row.
  void decode_step(const int* tokens, int n, int t, int pos, bool attention);
  const int* ids() const;    // (n) argmax of each row's logits (lowest id on ties)
  const float* probs() const;  // (n) its softmax probability
  // Copies the first n rows' attention weights into host buffers laid out as the
  // Translator's: enc (n, L, NH, S, S), self (n, L, T, NH, T), cross (n, L, T, NH, S).
  void fetch_attention(float* enc, float* self, float* cross, int n);

  size_t weight_bytes() const;
  size_t workspace_bytes() const;
  static size_t required_workspace_bytes(const Model& m, int max_batch, int S, int T);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Each kernel on host data, for the tests that hold it against the CPU reference. These
// allocate device memory per call (they are not on the translate path).
namespace check {
// y (M, N) = x (M, K) · wᵀ + b (b may be nullptr), then ReLU when relu.   CPU: linear
void linear(float* y, const float* x, const float* w, const float* b, int M, int N, int K,
            bool relu);
// out (R, n) = LayerNorm(x + y) · gamma + beta, eps 1e-5.                  CPU: add_norm
void add_layer_norm(float* out, const float* x, const float* y, const float* gamma,
                    const float* beta, int R, int n);
// x (R, H) = table[ids] · scale + P[pos or r % T].                        CPU: embedding +
// add_positional_encoding
void embed_positions(float* x, const float* table, int rows_in_table, const float* P,
                     int P_rows, const int* ids, int R, int T, int H, int pos, float scale);
// ctx (B, Tq, H), attn (B * NH, Tq, Tk) from q (B, Tq, H), k and v (B, Tk, H); valid (B)
// or nullptr.                                                              CPU: attend_heads
void attend(float* ctx, float* attn, const float* q, const float* k, const float* v, int B,
            int Tq, int Tk, int H, int NH, const int* valid);
// ids (R), probs (R) from logits (R, V).                      CPU: Translator's greedy pick
void argmax_rows(int* ids, float* probs, const float* logits, int R, int V);
}  // namespace check

}  // namespace attnlite::cuda
