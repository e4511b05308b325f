#include "attnlite/models/layers.h"

namespace attnlite::models {

AddNormWeights bind_add_norm(WeightStore& ws, const std::string& prefix,
                       const std::vector<int64_t>& normalized_shape) {
  AddNormWeights w;
  w.gamma = ws.get(prefix + "ln.weight", normalized_shape);
  w.beta = ws.get(prefix + "ln.bias", normalized_shape);
  w.n = 1;
  for (int64_t d : normalized_shape) w.n *= (int)d;
  return w;
}

void add_norm(float* out, const AddNormWeights& w, const float* x, const float* y, int rows,
              const ops::Ctx& cx) {
  cx.op.add_layer_norm(out, x, y, w.gamma, w.beta, rows, w.n, 1e-5f, cx.scratch);
}

FFNWeights bind_ffn(WeightStore& ws, const std::string& prefix, int in, int hidden, int out) {
  FFNWeights w;
  w.dense1 = bind_linear(ws, prefix + "dense1", in, hidden, true);
  w.dense2 = bind_linear(ws, prefix + "dense2", hidden, out, true);
  return w;
}

void ffn(float* out, const FFNWeights& w, const float* x, int rows, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  float* h = cx.scratch.floats((size_t)rows * w.dense1.out);
  cx.op.linear(h, x, w.dense1, rows, ops::Act::Relu);  // dense2(relu(dense1(x)))
  cx.op.linear(out, h, w.dense2, rows);
}

void ffn_add_norm(float* out, float* f, const FFNWeights& w, const AddNormWeights& norm,
                  const float* x, int rows, const ops::Ctx& cx) {
  ArenaScope scope(cx.scratch);
  float* h = cx.scratch.floats((size_t)rows * w.dense1.out);
  cx.op.linear(h, x, w.dense1, rows, ops::Act::Relu);  // dense2(relu(dense1(x)))
  cx.op.linear_add_layer_norm(out, f, h, w.dense2, x, norm.gamma, norm.beta, rows, 1e-5f,
                              cx.scratch);
}

}  // namespace attnlite::models
