#include "attnlite/models/rnn.h"

#include <vector>

namespace attnlite::models {

RNNWeights bind_rnn(WeightStore& ws, const std::string& prefix, ops::Cell cell, int input_size,
              int hidden, int layers) {
  RNNWeights w;
  w.cell = cell;
  w.input_size = input_size;
  w.hidden = hidden;
  w.layers = layers;
  const int G = w.gates() * hidden;
  for (int l = 0; l < layers; ++l) {
    const std::string s = "_l" + std::to_string(l);
    RNNLayerWeights lw;
    lw.in = l == 0 ? input_size : hidden;
    lw.ih = bind_linear_plain(ws, prefix + "weight_ih" + s, prefix + "bias_ih" + s, lw.in, G);
    lw.hh = bind_linear_plain(ws, prefix + "weight_hh" + s, prefix + "bias_hh" + s, hidden, G);
    if (ws.readable()) {
      const ops::Ops& cpu = ops::cpu();
      if (cell == ops::Cell::GRU) {  // the CPU's fused step's layout (host)
        float* p = ws.derived(cpu.gru_packed_floats(lw.in, hidden));
        cpu.gru_pack(p, lw.ih, lw.hh);
        lw.packed = p;
      }
      // the input products of a whole sequence (rnn_forward) are one linear layer: its
      // kernels' layout, as bind_linear makes it
      pack_linear(ws, lw.ih);
    }
    w.layer_weights.push_back(lw);
  }
  return w;
}

void rnn_forward(float* y, float* h, float* c, const RNNWeights& w, const float* x, int T, int B,
                 const ops::Ctx& cx, const Embedding* projected, const int* ids) {
  ArenaScope scope(cx.scratch);
  const int Hh = w.hidden, G = w.gates() * Hh;
  float* gi = cx.scratch.floats((size_t)T * B * G);
  float* gh = cx.scratch.floats((size_t)B * G);
  float* mid = cx.scratch.floats((size_t)T * B * Hh);
  const float* in = x;
  for (int l = 0; l < w.layers; ++l) {
    const RNNLayerWeights& lw = w.layer_weights[l];
    // The last layer writes y; earlier layers alternate through `mid` (in place is safe: the
    // input projection of the whole sequence is taken before any step writes).
    float* out = (w.layers - 1 - l) % 2 == 0 ? y : mid;
    float* hl = h + (long)l * B * Hh;
    float* cl = c ? c + (long)l * B * Hh : nullptr;
    if (l == 0 && projected)
      cx.op.embed(gi, G, *projected, ids, T * B, 1.f);  // looked up
    else
      cx.op.linear(gi, in, lw.ih, T * B);  // the input products of every step at once
    for (int t = 0; t < T; ++t) {
      if (w.cell == ops::Cell::GRU) {
        cx.op.gru_step(hl, nullptr, gi + (long)t * B * G, lw.ih, lw.hh, lw.packed, B, cx.scratch);
      } else {
        cx.op.linear(gh, hl, lw.hh, B);
        cx.op.rnn_cell(hl, cl, gi + (long)t * B * G, gh, w.cell, B, Hh);
      }
      cx.op.copy(out + (long)t * B * Hh, hl, sizeof(float) * B * Hh);
    }
    in = out;
  }
}

void rnn_step(float* h, float* c, const RNNWeights& w, const float* x, int B, const ops::Ctx& cx,
              const RNNLayerWeights* first, float* gi0) {
  ArenaScope scope(cx.scratch);
  const int Hh = w.hidden, G = w.gates() * Hh;
  const bool gru = w.cell == ops::Cell::GRU;
  float* gi = gru ? nullptr : cx.scratch.floats((size_t)B * G);
  float* gh = gru ? nullptr : cx.scratch.floats((size_t)B * G);
  const float* in = x;
  for (int l = 0; l < w.layers; ++l) {
    const RNNLayerWeights& lw = l == 0 && first ? *first : w.layer_weights[l];
    float* given = l == 0 && first ? gi0 : nullptr;
    float* hl = h + (long)l * B * Hh;
    if (gru) {
      cx.op.gru_step(hl, in, given, lw.ih, lw.hh, lw.packed, B, cx.scratch);
    } else {
      cx.op.linear(gi, in, lw.ih, B);
      if (given) cx.op.add(gi, gi, given, (long)B * G);
      cx.op.linear(gh, hl, lw.hh, B);
      cx.op.rnn_cell(hl, c ? c + (long)l * B * Hh : nullptr, gi, gh, w.cell, B, Hh);
    }
    in = hl;
  }
}

RNNLayerWeights split_first_layer(WeightStore& ws, const RNNWeights& w, int n) {
  const RNNLayerWeights& l0 = w.layer_weights[0];
  const int G = l0.ih.out, I = l0.in;
  RNNLayerWeights s;
  s.in = n;
  s.hh = l0.hh;
  float* wc = ws.derived((size_t)G * n);
  for (int o = 0; o < G; ++o)
    for (int k = 0; k < n; ++k) wc[(long)o * n + k] = l0.ih.w[(long)o * I + k];
  s.ih = {wc, nullptr, G, n};
  if (w.cell == ops::Cell::GRU) {
    const ops::Ops& cpu = ops::cpu();
    float* p = ws.derived(cpu.gru_packed_floats(n, w.hidden));
    cpu.gru_pack(p, s.ih, s.hh);
    s.packed = p;
  }
  return s;
}

Embedding project_embedding(WeightStore& ws, const RNNWeights& w, const Embedding& table, int n) {
  const RNNLayerWeights& l0 = w.layer_weights[0];
  const int G = l0.ih.out, I = l0.in, m = I - n, V = table.rows;
  const ops::Ops& cpu = ops::cpu();
  std::vector<int> ids((size_t)V);
  for (int i = 0; i < V; ++i) ids[(size_t)i] = i;
  std::vector<float> rows((size_t)V * m);
  cpu.embed(rows.data(), m, table, ids.data(), V, 1.f);
  float* proj = ws.derived((size_t)V * G);
  if (n == 0) {
    cpu.linear(proj, rows.data(), l0.ih, V);
  } else {
    std::vector<float> wr((size_t)G * m);  // W_ih[:, n:]
    for (int o = 0; o < G; ++o)
      for (int k = 0; k < m; ++k) wr[(size_t)o * m + k] = l0.ih.w[(long)o * I + n + k];
    cpu.linear(proj, rows.data(), Linear{wr.data(), l0.ih.b, G, m}, V);
  }
  Embedding e;
  e.w = proj;
  e.rows = V;
  e.dim = G;
  return e;
}

}  // namespace attnlite::models
