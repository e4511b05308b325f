// attnlite — multi-layer GRU and LSTM with PyTorch's parameter names and gate order
// (GRU rows r, z, n; LSTM rows i, f, g, o), inference only (no inter-layer dropout),
// written against ops::Ops.
//
// Legend: T steps, B batch, I input size, Hh hidden size, L layers, G gates (3 or 4).
#pragma once
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/ops/ops.h"
#include "attnlite/weights.h"

namespace attnlite::models {

struct RNNLayerWeights {
  Linear ih;  // weight_ih (G*Hh, in), bias_ih (G*Hh)
  Linear hh;  // weight_hh (G*Hh, Hh), bias_hh (G*Hh)
  int in = 0;
  const float* packed = nullptr;  // GRU: ih and hh as the CPU set's gru_pack lays them out
};

struct RNNWeights {
  ops::Cell cell = ops::Cell::GRU;
  int input_size = 0, hidden = 0, layers = 0;
  std::vector<RNNLayerWeights> layer_weights;  // (layers)
  int gates() const { return cell == ops::Cell::GRU ? 3 : 4; }
};
RNNWeights bind_rnn(WeightStore& ws, const std::string& prefix, ops::Cell cell, int input_size,
              int hidden, int layers);

// Whole sequence, time-major like PyTorch: x (T, B, I) -> y (T, B, Hh).
// h (L, B, Hh) holds h0 on entry and h_n on return; c likewise for LSTM (else nullptr).
// With `projected` (rows: the first layer's input products x·W_ihᵀ + b_ih of each possible
// input, an embedding's rows projected at load), layer 0's input products are its rows
// ids (T, B) and x is not read.
void rnn_forward(float* y, float* h, float* c, const RNNWeights& w, const float* x, int T, int B,
                 const ops::Ctx& cx, const Embedding* projected = nullptr,
                 const int* ids = nullptr);

// One step for all layers: x (B, I) -> top-layer output in h[L-1]; h, c updated in place.
// With `first` (a split first layer: its W_ih over x's columns only, no bias) and gi0 (B, G):
// the products of the first layer's other inputs, b_ih included (a decoder's embedding,
// looked up), to which x's are added; gi0 is clobbered.
void rnn_step(float* h, float* c, const RNNWeights& w, const float* x, int B, const ops::Ctx& cx,
              const RNNLayerWeights* first = nullptr, float* gi0 = nullptr);

// The first layer of w split by input columns: the layer over columns [0, n) alone (W_ih
// copied, no bias, the GRU's fused layout when w has one). Store memory, a readable store and
// fp32 W_ih.
RNNLayerWeights split_first_layer(WeightStore& ws, const RNNWeights& w, int n);
// The first layer's input products of every row of `table` (V, I − n), which feeds its
// inputs [n, I): table · W_ih[:, n:]ᵀ + b_ih (V, G·Hh), in store memory, made on the host and
// looked up (ops embed) instead of multiplied. With n = 0 the product is the layer's own linear
// call, the kernel and packed weights of the run-time product. A readable store; fp32 W_ih
// when n > 0.
Embedding project_embedding(WeightStore& ws, const RNNWeights& w, const Embedding& table, int n);

}  // namespace attnlite::models
