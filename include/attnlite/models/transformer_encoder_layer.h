// torch.nn.TransformerEncoderLayer at inference (batch_first), written against ops::Ops:
// self-attention (nn.MultiheadAttention, packed in_proj) and a feed-forward block, each with
// a residual connection and a LayerNorm, after (norm_first false, PyTorch's default: post-LN)
// or before (norm_first true: pre-LN) the sub-block:
//
//   post-LN:  x = norm1(x + sa(x));        x = norm2(x + ff(x))
//   pre-LN:   x = x + sa(norm1(x));        x = x + ff(norm2(x))
//   sa(h) = out_proj(attention(h W_qᵀ + b_q, h W_kᵀ + b_k, h W_vᵀ + b_v)), W_q/W_k/W_v the
//           row blocks [0, D), [D, 2D), [2D, 3D) of in_proj_weight
//   ff(h) = linear2(activation(linear1(h))), activation relu or gelu (exact, erf)
//
// Weights bind under PyTorch's own state_dict() names: <prefix>self_attn.in_proj_weight,
// .in_proj_bias, .out_proj.weight/.bias, linear1, linear2, norm1, norm2. Without biases
// (PyTorch's bias=False) none of the biases exists. The language model (models/
// language_model.h) stacks this layer with a causal mask; the Vision Transformer without one.
//
// Legend: B batch, Tn new positions, D d_model, NH heads, F dim_feedforward.
#pragma once
#include <string>

#include "attnlite/arena.h"
#include "attnlite/models/transformer.h"  // KVCache
#include "attnlite/ops/ops.h"
#include "attnlite/weights.h"

namespace attnlite::models {

using attention::MultiHeadAttentionWeights;
using ops::AttnOut;

struct EncoderLayerConfig {
  int d_model = 0, num_heads = 1, dim_feedforward = 0;
  ops::Act activation = ops::Act::Relu;  // Relu or Gelu
  bool norm_first = false;
  float layer_norm_eps = 1e-5f;
  bool bias = true;
};

// nn.LayerNorm(n, eps); beta points at zeros when the norm has no bias.
struct LayerNormWeights {
  const float* gamma = nullptr;
  const float* beta = nullptr;
  int n = 0;
  float eps = 1e-5f;
};

struct EncoderLayerWeights {
  Linear W_q, W_k, W_v;  // views of self_attn.in_proj_weight / in_proj_bias rows
  Linear out_proj, linear1, linear2;
  LayerNormWeights norm1, norm2;
  int num_heads = 1;
  bool norm_first = false;
  ops::Act activation = ops::Act::Relu;
};
// prefix e.g. "layers.0."; zeros (d_model floats) stand in for absent norm biases.
EncoderLayerWeights bind_encoder_layer(WeightStore& ws, const std::string& prefix,
                                 const EncoderLayerConfig& c, const float* zeros);

// The layer over X (B, Tn, D), in place, at positions t0 .. t0 + Tn - 1.
//   cache given: this call's keys and values are appended to the cache rows [t0, t0 + Tn) and
//     attention runs over cache rows [0, t0 + Tn);
//   no cache: attention runs over the Tn rows themselves (t0 must be 0).
// causal: query t0 + i sees keys up to t0 + i (PyTorch's float mask of -inf above the
// diagonal, added to the scores); else every key. attn receives (B, NH, Tn, t0 + Tn) weights
// through its strides, or is empty.
void encoder_layer(float* X, const AttnOut& attn, const EncoderLayerWeights& w, int B, int Tn, int t0,
                   KVCache* cache, bool causal, const ops::Ctx& cx);

}  // namespace attnlite::models
