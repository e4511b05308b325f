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
void rnn_forward(float* y, float* h, float* c, const RNNWeights& w, const float* x, int T, int B,
                 const ops::Ctx& cx);

// One step for all layers: x (B, I) -> top-layer output in h[L-1]; h, c updated in place.
void rnn_step(float* h, float* c, const RNNWeights& w, const float* x, int B, const ops::Ctx& cx);

}  // namespace attnlite::models
