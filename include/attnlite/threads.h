// attnlite — optional threads. Off by default (1 thread). With n > 1, large linear layers
// (the encoder's and batched decoding's GEMMs, the big GEMVs of wide layers) are split
// across a small pool of persistent workers; nothing is allocated per call.
//
// Threads: the pool is process-wide and serves one parallel_for at a time. Sessions on
// several threads may use it together: a call that finds the pool busy runs all its items on
// its own thread (the same results up to the float rounding of another split:
// the same tokens, probabilities within 1e-5).
// set_num_threads and num_threads may be called from any thread at any time, also while
// sessions run: set_num_threads waits for the parallel_for in flight. Never call
// set_num_threads from inside a parallel_for's fn (it would wait for itself).
#pragma once

namespace attnlite {

// Sets the number of threads (1..64); starts or stops the workers.
void set_num_threads(int n);
int num_threads();

// Runs fn(ctx, i) for i in [0, n) across the pool (the caller takes a share too) and
// returns when all are done. Serial when the pool has one thread, when it is busy with
// another thread's call, or when called from inside fn.
void parallel_for(int n, void (*fn)(void* ctx, int i), void* ctx);

}  // namespace attnlite
