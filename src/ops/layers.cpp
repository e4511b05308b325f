#include "attnlite/ops/layers.h"

#include "attnlite/ops/kernels.h"

namespace attnlite {

AddNormW bind_add_norm(WeightStore& ws, const std::string& prefix,
                       const std::vector<int64_t>& normalized_shape) {
  AddNormW w;
  w.gamma = ws.get(prefix + "ln.weight", normalized_shape);
  w.beta = ws.get(prefix + "ln.bias", normalized_shape);
  w.n = 1;
  for (int64_t d : normalized_shape) w.n *= (int)d;
  return w;
}

void add_norm(float* out, const AddNormW& w, const float* x, const float* y, int rows,
              Arena& scratch) {
  ArenaScope scope(scratch);
  const auto& K = ops::kernels();
  float* sum = scratch.floats((size_t)rows * w.n);
  K.add(sum, y, x, rows * w.n);  // dropout(Y) + X, dropout being identity at inference
  K.layer_norm(out, sum, w.gamma, w.beta, rows, w.n, 1e-5f);
}

FFNW bind_ffn(WeightStore& ws, const std::string& prefix, int in, int hidden, int out) {
  FFNW w;
  w.dense1 = bind_linear(ws, prefix + "dense1", in, hidden, true);
  w.dense2 = bind_linear(ws, prefix + "dense2", hidden, out, true);
  return w;
}

void ffn(float* out, const FFNW& w, const float* x, int rows, Arena& scratch) {
  ArenaScope scope(scratch);
  float* h = scratch.floats((size_t)rows * w.dense1.out);
  linear(h, w.dense1, x, rows);
  ops::kernels().relu(h, rows * w.dense1.out);
  linear(out, w.dense2, h, rows);
}

void embedding(float* out, const float* table, int dim, const int* ids, int n, float scale) {
  for (int i = 0; i < n; ++i) {
    const float* row = table + (long)ids[i] * dim;
    float* o = out + (long)i * dim;
    for (int d = 0; d < dim; ++d) o[d] = row[d] * scale;
  }
}

}  // namespace attnlite
