// d2l 10.3.1: masked softmax. Positions at or beyond a valid length are set to -1e6 before
// the softmax, so their weights come out exactly 0 (and a row of valid length 0 comes out
// uniform, as in the book).
//
// Legend: BH batch (times heads), Tq queries, Tk keys.
#pragma once
#include "attnlite/ops/valid_lens.h"

namespace attnlite::attention {

// The valid lengths and the mask value belong to the op interface (ops/valid_lens.h).
using ops::kMaskValue;
using ops::ValidLens;

// d2l.sequence_mask: x (rows, cols); entries at col >= valid_len[row] become `value`.
void sequence_mask(float* x, int rows, int cols, const int* valid_len, float value);

// x (BH, Tq, Tk) in place, rows of stride ld (>= Tk). Batch row b of x uses valid lengths
// of batch b / heads, which is the book's repeat_interleave(valid_lens, num_heads).
void masked_softmax(float* x, int BH, int Tq, int Tk, const ValidLens& vl, int heads = 1,
                    int ld = 0);

}  // namespace attnlite::attention
