// d2l 10.5: multi-head attention. Heads are column blocks of the projected (B, T, H) rows,
// so transpose_qkv / transpose_output are strides here, not copies. Attention weights come
// out in the book's (B * NH, Tq, Tk) order (batch-major, then head).
//
// Legend: B batch, Tq queries, Tk keys, H num_hiddens, NH heads, D = H / NH.
#pragma once
#include <string>

#include "attnlite/arena.h"
#include "attnlite/attention/masked_softmax.h"
#include "attnlite/weights.h"

namespace attnlite {

struct MultiHeadAttentionW {
  Linear W_q, W_k, W_v, W_o;  // (H, query_size), (H, key_size), (H, value_size), (H, H)
  int num_heads = 1;
};
MultiHeadAttentionW bind_multi_head_attention(WeightStore& ws, const std::string& prefix,
                                              int key_size, int query_size, int value_size,
                                              int num_hiddens, int num_heads, bool bias);

// Where attention weights go: element (b, h, q, k) at
// data[b * b_stride + h * h_stride + q * ld + k]. Empty (data == nullptr) = not wanted.
struct AttnOut {
  float* data = nullptr;
  long b_stride = 0, h_stride = 0;
  int ld = 0;
  // The book's dense (B * NH, Tq, Tk) layout.
  static AttnOut dense(float* p, int NH, int Tq, int Tk) {
    return {p, (long)NH * Tq * Tk, (long)Tq * Tk, Tk};
  }
};

// The scaled dot-product core over already projected rows:
// ctx (B, Tq, H) from q (B, Tq, H), k and v (B, *, H) with batch stride kv_stride rows.
// attn receives the weights; scratch holds one (Tq, Tk) score block when attn is empty.
void attend_heads(float* ctx, const AttnOut& attn, const float* q, const float* k,
                  const float* v, int kv_stride, int B, int Tq, int Tk, int H, int NH,
                  const ValidLens& vl, Arena& scratch);

// Full module: out (B, Tq, H); attn (B * NH, Tq, Tk) or {nullptr}.
void multi_head_attention(float* out, const AttnOut& attn, const MultiHeadAttentionW& w,
                          const float* queries, const float* keys, const float* values,
                          int B, int Tq, int Tk, const ValidLens& vl, Arena& scratch);

}  // namespace attnlite
