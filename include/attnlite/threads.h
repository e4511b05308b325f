// attnlite — optional threads. Off by default (1 thread). With n > 1, large linear layers
// (the encoder's and batched decoding's GEMMs, the big GEMVs of wide layers) are split
// across a small pool of persistent workers; nothing is allocated per call.
#pragma once

namespace attnlite {

// Sets the number of threads (1..64); starts or stops the workers. Not thread-safe: call it
// while no translation runs.
void set_num_threads(int n);
int num_threads();

// Runs fn(ctx, i) for i in [0, n) across the pool (the caller takes a share too) and
// returns when all are done. Serial when the pool has one thread.
void parallel_for(int n, void (*fn)(void* ctx, int i), void* ctx);

}  // namespace attnlite
