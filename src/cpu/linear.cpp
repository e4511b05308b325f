// The CPU op set's linear layer (cpu/linear.h): one kernel call, or shares of it across the
// thread pool.
#include "cpu/linear.h"

#include <algorithm>

#include "attnlite/ops/kernels.h"
#include "attnlite/threads.h"

namespace attnlite::ops {

namespace {
// act on n values of y in place, by the active table's relu or gelu kernel.
void activate(float* y, long n, int act) {
  if (act == kActRelu) kernels().relu(y, (int)n);
  if (act == kActGelu) kernels().gelu(y, (int)n);
}

// Output features [n0, n1) of y (M, l.out) for M rows: the layer's kernel on that block of
// its weights (n0 a multiple of kLinearPanel: whole panels of wp), then act.
void linear_cols(float* y, const Linear& l, const float* x, int M, int n0, int n1, int act) {
  const Kernels& K = kernels();
  const int n = n1 - n0;
  const float* b = l.b ? l.b + n0 : nullptr;
  if (l.q) {
    K.linear_i8(y, x, l.q + (long)n0 * l.in, l.scale + n0, b, M, n, l.in);
  } else if (l.wp && K.linear_packed) {
    K.linear_packed(y, x, l.wp + (long)n0 * l.in, b, M, n, l.in, act);
    return;
  } else {
    K.linear(y, x, l.w + (long)n0 * l.in, b, M, n, l.in);
  }
  activate(y, (long)M * n, act);
}

// One share of a threaded linear layer: a block of rows of x (M > 1), or a block of output
// features (M == 1, the GEMV of step-by-step decoding), so every share writes its own part
// of y contiguously.
struct LinearJob {
  float* y;
  const Linear* l;
  const float* x;
  int M, parts, act;
};
void linear_part(void* p, int i) {
  const LinearJob& j = *static_cast<LinearJob*>(p);
  const Linear& l = *j.l;
  if (j.M > 1) {
    const int m0 = (int)((long)j.M * i / j.parts), m1 = (int)((long)j.M * (i + 1) / j.parts);
    linear_serial(j.y + (long)m0 * l.out, l, j.x + (long)m0 * l.in, m1 - m0, j.act);
  } else {
    // blocks of 16 features keep the SIMD kernels on full vectors and on whole panels of wp
    static_assert(kLinearPanel == 16, "a share starts on a panel");
    const int blocks = (l.out + 15) / 16;
    const int n0 = (int)((long)blocks * i / j.parts) * 16;
    const int n1 = std::min(l.out, (int)((long)blocks * (i + 1) / j.parts) * 16);
    if (n1 > n0) linear_cols(j.y + n0, l, j.x, 1, n0, n1, j.act);
  }
}
}  // namespace

void linear_serial(float* y, const Linear& l, const float* x, int M, int act) {
  linear_cols(y, l, x, M, 0, l.out, act);
}

void linear(float* y, const Linear& l, const float* x, int M, int act) {
  const int threads = num_threads();
  // Below ~64k multiply-adds the wake-up costs more than it saves.
  if (threads <= 1 || (long)M * l.out * l.in < 65536) {
    linear_serial(y, l, x, M, act);
    return;
  }
  LinearJob job{y, &l, x, M, M > 1 ? std::min(M, threads) : threads, act};
  parallel_for(job.parts, linear_part, &job);
}

}  // namespace attnlite::ops
