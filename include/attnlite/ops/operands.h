// attnlite — the weights an op reads: a linear layer's matrix and bias, an embedding table,
// each fp32 or int8 with per-row scales, as views of memory someone else owns (a model's
// WeightStore, weights.h, binds them by name; a device keeps its copies).
#pragma once
#include <algorithm>
#include <cstdint>

namespace attnlite {

// Output features per panel of Linear::wp: wp[p][k][j] = w[p·kLinearPanel + j][k].
constexpr int kLinearPanel = 16;

// y (M, out) = x (M, in) · Wᵀ + b, the nn.Linear layout. W is fp32 (w) or int8 (q, scale).
struct Linear {
  const float* w = nullptr;      // (out, in), or nullptr when int8
  const float* b = nullptr;      // (out) or nullptr
  int out = 0, in = 0;
  const int8_t* q = nullptr;     // (out, in) int8
  const float* scale = nullptr;  // (out): W[o][i] = scale[o] * q[o][i]
  // w as the CPU's SIMD kernels stream it (their linear_pack, made at load; ops.h
  // linear_packed_floats), or nullptr: then w is read as stored.
  const float* wp = nullptr;
  // Op memory that an op set may expand q into for a product it runs in fp32 (a device's GEMM
  // of many rows), shared by all of a session's layers: set where a device holds the int8
  // matrix (drivers::DeviceWeights), else nullptr. It holds expand_rows() rows of the matrix
  // (all of them, or kExpandFloats floats' worth: a larger layer is expanded a slice of output
  // features at a time).
  float* expand = nullptr;
  static constexpr long kExpandFloats = 1L << 20;
  static long expand_rows(long out, long in) {
    return in <= 0 ? out : std::min(out, std::max(1L, kExpandFloats / in));
  }
  bool int8() const { return q != nullptr; }
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
