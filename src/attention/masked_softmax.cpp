#include "attnlite/attention/masked_softmax.h"

#include "attnlite/ops/ops.h"

namespace attnlite::attention {

void sequence_mask(float* x, int rows, int cols, const int* valid_len, float value) {
  for (int r = 0; r < rows; ++r)
    for (int c = valid_len[r] < 0 ? 0 : valid_len[r]; c < cols; ++c) x[(long)r * cols + c] = value;
}

void masked_softmax(float* x, int BH, int Tq, int Tk, const ValidLens& vl, int heads, int ld) {
  ops::cpu().masked_softmax(x, BH, Tq, Tk, vl, heads, ld == 0 ? Tk : ld);
}

}  // namespace attnlite::attention
