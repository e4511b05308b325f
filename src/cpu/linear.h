// attnlite — the CPU op set's linear layer (private to src/cpu; the tests reach it through
// the src/ include path): y (M, l.out) = x (M, l.in) · Wᵀ + b over the active kernel table,
// fp32 or int8 weights (Linear, attnlite/weights.h), and its activation. ops::cpu().linear()
// is this.
#pragma once
#include "attnlite/weights.h"

namespace attnlite::ops {

// Threaded over the pool when it pays (attnlite/threads.h); linear_serial never is. act
// (kernels.h: kActNone, kActRelu, kActGelu) follows: fused into the kernel on packed weights,
// else the relu or gelu kernel over each share of y.
void linear(float* y, const Linear& l, const float* x, int M, int act = 0);
void linear_serial(float* y, const Linear& l, const float* x, int M, int act = 0);

}  // namespace attnlite::ops
