// attnlite — moving decoder rows in op memory (internal): the searches' dropping of finished
// rows and the replication of each sentence's state to its hypotheses, shared by the drivers
// (beam search's reorder is one op, ops::Ops::permute_blocks).
#pragma once
#include "attnlite/ops/ops.h"

namespace attnlite::drivers {

// rows[i] <- old rows[keep[i]] for i < n (keep: host, ascending, keep[i] >= i); each row `len`
// floats at `stride`, in place: row i is written after every read of it (a later keep[j] >= j
// > i), and a row is never copied onto itself.
inline void keep_rows(const ops::Ops& op, float* rows, long stride, long len, const int* keep,
                      int n) {
  const size_t bytes = sizeof(float) * (size_t)len;
  for (int i = 0; i < n; ++i)
    if (keep[i] != i) op.copy(rows + (long)i * stride, rows + (long)keep[i] * stride, bytes);
}

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
