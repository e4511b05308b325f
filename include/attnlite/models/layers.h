// attnlite — the Transformer's small layers (d2l 10.7.2-10.7.3), written against ops::Ops.
//
// Legend: R rows (batch x steps), H num_hiddens, F ffn hidden size, V vocab size.
#pragma once
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/ops/ops.h"
#include "attnlite/weights.h"

namespace attnlite::models {

// AddNorm: LayerNorm(Y + X) over the last `n` values (n = prod(normalized_shape)), eps 1e-5.
struct AddNormWeights {
  const float* gamma = nullptr;  // (n)
  const float* beta = nullptr;   // (n)
  int n = 0;
};
AddNormWeights bind_add_norm(WeightStore& ws, const std::string& prefix,
                       const std::vector<int64_t>& normalized_shape);
// out (R, n) = LN(x + y); out may alias x or y.
void add_norm(float* out, const AddNormWeights& w, const float* x, const float* y, int rows,
              const ops::Ctx& cx);

// PositionWiseFFN: dense2(relu(dense1(x))).
struct FFNWeights {
  Linear dense1;  // (F, in)
  Linear dense2;  // (out, F)
};
FFNWeights bind_ffn(WeightStore& ws, const std::string& prefix, int in, int hidden, int out);
// out (R, out) from x (R, in).
void ffn(float* out, const FFNWeights& w, const float* x, int rows, const ops::Ctx& cx);
// out (R, in) = AddNorm(x, ffn(x)) = LN(x + dense2(relu(dense1(x)))), the block's last
// sub-layer (out == in); f (R, in): room for ffn(x), left unspecified. out may alias x.
void ffn_add_norm(float* out, float* f, const FFNWeights& w, const AddNormWeights& norm,
                  const float* x, int rows, const ops::Ctx& cx);

}  // namespace attnlite::models
