#include "attnlite/attention/masked_softmax.h"

#include "attnlite/ops/kernels.h"

namespace attnlite::attention {

void sequence_mask(float* x, int rows, int cols, const int* valid_len, float value) {
  for (int r = 0; r < rows; ++r)
    for (int c = valid_len[r] < 0 ? 0 : valid_len[r]; c < cols; ++c) x[(long)r * cols + c] = value;
}

void masked_softmax(float* x, int BH, int Tq, int Tk, const ValidLens& vl, int heads, int ld) {
  if (ld == 0) ld = Tk;
  if (vl.kind != ValidLens::None) {
    for (int bh = 0; bh < BH; ++bh)
      for (int q = 0; q < Tq; ++q) {
        int len = vl.get(bh / heads, q, Tq);
        float* row = x + ((long)bh * Tq + q) * ld;
        for (int k = len < 0 ? 0 : len; k < Tk; ++k) row[k] = kMaskValue;
      }
  }
  ops::kernels().softmax_rows(x, ld, BH * Tq, Tk);
}

}  // namespace attnlite::attention
