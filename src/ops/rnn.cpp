#include "attnlite/ops/rnn.h"

#include <cmath>
#include <cstring>

#include "attnlite/ops/kernels.h"

namespace attnlite {

RNNW bind_rnn(WeightStore& ws, const std::string& prefix, RNNW::Cell cell, int input_size,
              int hidden, int layers) {
  RNNW w;
  w.cell = cell;
  w.input_size = input_size;
  w.hidden = hidden;
  w.layers = layers;
  const int G = w.gates() * hidden;
  for (int l = 0; l < layers; ++l) {
    const std::string s = "_l" + std::to_string(l);
    RNNLayerW lw;
    lw.in = l == 0 ? input_size : hidden;
    lw.w_ih = ws.get(prefix + "weight_ih" + s, {G, lw.in});
    lw.w_hh = ws.get(prefix + "weight_hh" + s, {G, hidden});
    lw.b_ih = ws.get(prefix + "bias_ih" + s, {G});
    lw.b_hh = ws.get(prefix + "bias_hh" + s, {G});
    w.l.push_back(lw);
  }
  return w;
}

namespace {

// Combines precomputed input gates gi (B, G*Hh) and hidden gates gh (B, G*Hh) into h (B, Hh)
// (and c for LSTM), with PyTorch's formulas.
void cell_update(float* h, float* c, float* gi, float* gh, const RNNW& w, int B) {
  const auto& K = ops::kernels();
  const int Hh = w.hidden, G = w.gates() * Hh;
  for (int b = 0; b < B; ++b) {
    float* i = gi + (long)b * G;
    float* g = gh + (long)b * G;
    float* hb = h + (long)b * Hh;
    if (w.cell == RNNW::GRU) {
      // r, z = sigmoid(i + g); n = tanh(i_n + r * g_n); h = (h - n) * z + n
      K.add(g, g, i, 2 * Hh);
      K.sigmoid(g, 2 * Hh);
      for (int k = 0; k < Hh; ++k) i[2 * Hh + k] += g[k] * g[2 * Hh + k];
      K.tanh(i + 2 * Hh, Hh);
      for (int k = 0; k < Hh; ++k) {
        const float n = i[2 * Hh + k];
        hb[k] = (hb[k] - n) * g[Hh + k] + n;
      }
    } else {
      // i, f, g, o; c = f * c + i * g; h = o * tanh(c)
      float* cb = c + (long)b * Hh;
      K.add(g, g, i, G);
      K.sigmoid(g, 2 * Hh);
      K.tanh(g + 2 * Hh, Hh);
      K.sigmoid(g + 3 * Hh, Hh);
      for (int k = 0; k < Hh; ++k) cb[k] = g[Hh + k] * cb[k] + g[k] * g[2 * Hh + k];
      for (int k = 0; k < Hh; ++k) hb[k] = std::tanh(cb[k]);
      for (int k = 0; k < Hh; ++k) hb[k] *= g[3 * Hh + k];
    }
  }
}

}  // namespace

void rnn_forward(float* y, float* h, float* c, const RNNW& w, const float* x, int T, int B,
                 Arena& scratch) {
  ArenaScope scope(scratch);
  const auto& K = ops::kernels();
  const int Hh = w.hidden, G = w.gates() * Hh;
  float* gi = scratch.floats((size_t)T * B * G);
  float* gh = scratch.floats((size_t)B * G);
  float* mid = scratch.floats((size_t)T * B * Hh);
  const float* in = x;
  for (int l = 0; l < w.layers; ++l) {
    const RNNLayerW& lw = w.l[l];
    // The last layer writes y; earlier layers alternate through `mid` (in place is safe: the
    // input projection of the whole sequence is taken before any step writes).
    float* out = (w.layers - 1 - l) % 2 == 0 ? y : mid;
    float* hl = h + (long)l * B * Hh;
    float* cl = c ? c + (long)l * B * Hh : nullptr;
    K.linear(gi, in, lw.w_ih, lw.b_ih, T * B, G, lw.in);
    for (int t = 0; t < T; ++t) {
      K.linear(gh, hl, lw.w_hh, lw.b_hh, B, G, Hh);
      cell_update(hl, cl, gi + (long)t * B * G, gh, w, B);
      std::memcpy(out + (long)t * B * Hh, hl, sizeof(float) * B * Hh);
    }
    in = out;
  }
}

void rnn_step(float* h, float* c, const RNNW& w, const float* x, int B, Arena& scratch) {
  ArenaScope scope(scratch);
  const auto& K = ops::kernels();
  const int Hh = w.hidden, G = w.gates() * Hh;
  float* gi = scratch.floats((size_t)B * G);
  float* gh = scratch.floats((size_t)B * G);
  const float* in = x;
  for (int l = 0; l < w.layers; ++l) {
    const RNNLayerW& lw = w.l[l];
    float* hl = h + (long)l * B * Hh;
    K.linear(gi, in, lw.w_ih, lw.b_ih, B, G, lw.in);
    K.linear(gh, hl, lw.w_hh, lw.b_hh, B, G, Hh);
    cell_update(hl, c ? c + (long)l * B * Hh : nullptr, gi, gh, w, B);
    in = hl;
  }
}

}  // namespace attnlite
