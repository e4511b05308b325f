// attnlite — the CPU op set's linear layer (private to src/cpu; the tests reach it through
// the src/ include path): y (M, l.out) = x (M, l.in) · Wᵀ + b over the active kernel table,
// fp32 or int8 weights (Linear, attnlite/weights.h). ops::cpu().linear() is this, then the
// activation.
#pragma once
#include "attnlite/weights.h"

namespace attnlite::ops {

// Threaded over the pool when it pays (attnlite/threads.h); linear_serial never is.
void linear(float* y, const Linear& l, const float* x, int M);
void linear_serial(float* y, const Linear& l, const float* x, int M);

}  // namespace attnlite::ops
