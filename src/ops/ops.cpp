// attnlite — the op interface's default implementations: ops an op set may leave to the
// others it defines.
#include "attnlite/ops/ops.h"

#include "attnlite/weights.h"

namespace attnlite::ops {

void Ops::gru_step(float* h, const float* x, float* gi, const Linear& ih, const Linear& hh,
                   const float* /*packed*/, int B, Arena& scratch) const {
  ArenaScope scope(scratch);
  const int Hh = hh.in, G = 3 * Hh;
  if (!gi) {
    gi = scratch.floats((size_t)B * G);
    linear(gi, x, ih, B);
  }
  float* gh = scratch.floats((size_t)B * G);
  linear(gh, h, hh, B);
  rnn_cell(h, nullptr, gi, gh, Cell::GRU, B, Hh);
}

}  // namespace attnlite::ops
