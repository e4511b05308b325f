// attnlite — the weights an op reads: a linear layer's matrix and bias, an embedding table,
// each fp32 or int8 with per-row scales, as views of memory someone else owns (a model's
// WeightStore, weights.h, binds them by name; a device keeps its copies). A device may also
// hold a linear layer's matrix in bfloat16 (Precision::BF16, device.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

namespace attnlite {

// Output features per panel of Linear::wp: wp[p][k][j] = w[p·kLinearPanel + j][k].
constexpr int kLinearPanel = 16;

// bfloat16: the upper 16 bits of an fp32 value. bf16_bits rounds to the nearest, ties to the
// even bits (what PyTorch's .to(torch.bfloat16) does); a finite value past bfloat16's largest
// (3.3895e38) becomes infinity, which bf16_finite tells. NaN stays NaN.
inline uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
inline float bf16_value(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline bool bf16_finite(uint16_t h) { return (h & 0x7f80u) != 0x7f80u; }

// y (M, out) = x (M, in) · Wᵀ + b, the nn.Linear layout. W is fp32 (w), int8 (q, scale) or,
// in a device's copy, bfloat16 (h).
struct Linear {
  const float* w = nullptr;      // (out, in), or nullptr when int8 or bfloat16
  const float* b = nullptr;      // (out) or nullptr
  int out = 0, in = 0;
  const int8_t* q = nullptr;     // (out, in) int8
  const float* scale = nullptr;  // (out): W[o][i] = scale[o] * q[o][i]
  // w as the CPU's SIMD kernels stream it (their linear_pack, made at load; ops.h
  // linear_packed_floats), or nullptr: then w is read as stored.
  const float* wp = nullptr;
  const uint16_t* h = nullptr;   // (out, in) bfloat16 bits (bf16_value): a device's copy only
  // Op memory that an op set may expand q or h into for a product it runs in fp32 (a device's
  // GEMM of many rows), shared by all of a session's layers: set where a device holds an int8
  // or bfloat16 matrix (drivers::DeviceWeights), else nullptr. It holds expand_rows() rows of
  // the matrix (all of them, or kExpandFloats floats' worth: a larger layer is expanded a
  // slice of output features at a time).
  float* expand = nullptr;
  static constexpr long kExpandFloats = 1L << 20;
  static long expand_rows(long out, long in) {
    return in <= 0 ? out : std::min(out, std::max(1L, kExpandFloats / in));
  }
  bool int8() const { return q != nullptr; }
  bool bf16() const { return h != nullptr; }
};

// An embedding table (rows, dim), fp32 (w) or int8 per row (q, scale).
struct Embedding {
  const float* w = nullptr;
  const int8_t* q = nullptr;
  const float* scale = nullptr;
  int rows = 0, dim = 0;
  bool int8() const { return q != nullptr; }
};

}  // namespace attnlite
