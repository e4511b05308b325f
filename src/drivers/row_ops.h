// attnlite — moving decoder rows in op memory (internal): the replication of each sentence's
// state to its hypotheses, shared by the drivers (beam search's reorder and the searches'
// dropping of finished rows are ops: ops::Ops::permute_blocks, ops::Ops::keep_rows).
#pragma once
#include "attnlite/ops/ops.h"

namespace attnlite::drivers {

// Rows 0..n-1 (each `len` floats, packed) copied to rows b*K .. b*K+K-1 in place. Backwards:
// row b is read before anything at index <= b is written; source and target never overlap.
inline void expand_rows(const ops::Ops& op, float* rows, long len, int n, int K) {
  if (K == 1) return;
  for (int b = n - 1; b >= 0; --b)
    for (int j = K - 1; j >= 0; --j)
      if ((long)b * K + j != b)
        op.copy(rows + ((long)b * K + j) * len, rows + (long)b * len, sizeof(float) * (size_t)len);
}

}  // namespace attnlite::drivers
