// attnlite — the scratch each op takes, declared once (private to the op tier and the op
// sets: src/ops, src/cpu, src/cuda): X_scratch carves op X's from the caller's arena. The op
// sets take their scratch with these and the dry-run set (src/ops/counting.cpp) takes the
// same from a counting arena, so the scratch a forward pass needs is measured by the requests
// that later hand it out. Where the sets take different scratch for one op, each carve is
// here and the dry run takes every one of them (the largest counts).
#pragma once
#include <cstddef>

#include "attnlite/arena.h"
#include "attnlite/ops/ops.h"

namespace attnlite::ops {

// add_layer_norm, CPU, when there is a y: the sum x + y (R, n). The dry run takes it whether
// or not there is a y (at most what the CPU takes).
inline float* add_layer_norm_scratch(Arena& a, int R, int n) {
  return a.floats((size_t)R * n);
}

// attend, CPU: one (b, h) block of scores (Tq, Tk) when the weights go nowhere (else the
// scores are computed in the weights' place).
inline float* attend_scratch(Arena& a, const AttnOut& attn, int Tq, int Tk) {
  return attn.data ? nullptr : a.floats((size_t)Tq * Tk);
}

// linear_n, CPU: the product of the layers made one (M, Σ out), before its split.
inline float* linear_n_scratch(Arena& a, int M, long outs) { return a.floats((size_t)M * outs); }

// additive_attend, CPU: the features of one batch row's keys (Tk, Hh).
inline float* additive_attend_scratch(Arena& a, int Tk, int Hh) {
  return a.floats((size_t)Tk * Hh);
}

// gru_step, the interface's default (Ops::gru_step): the input products gi (B, 3Hh) unless
// the caller gives them, and the hidden products gh (B, 3Hh).
struct GruStepScratch {
  float* gi;
  float* gh;
};
inline GruStepScratch gru_step_scratch(Arena& a, float* gi, int B, int Hh) {
  const size_t n = (size_t)B * 3 * Hh;
  float* in = gi ? gi : a.floats(n);
  return {in, a.floats(n)};
}
// gru_step, the CPU's fused kernel: its row of Hh floats.
inline float* gru_step_fused_scratch(Arena& a, int Hh) { return a.floats((size_t)Hh); }

// argmax_rows, CUDA: the results of R rows on the device, before their download, and the
// partial results of each row's chunks (a row of V logits is cut into argmax_chunks(V)
// chunks of about kArgmaxChunk, one block each): maxima, their ids, sums.
constexpr int kArgmaxChunk = 1024, kArgmaxMaxChunks = 128;
inline int argmax_chunks(int V) {
  const long c = ((long)V + kArgmaxChunk - 1) / kArgmaxChunk;
  return c < 1 ? 1 : c > kArgmaxMaxChunks ? kArgmaxMaxChunks : (int)c;
}
struct ArgmaxRowsScratch {
  int* ids;
  float* probs;
  double* logp;
  float* part_v;
  int* part_i;
  double* part_s;
  int chunks;
};
inline ArgmaxRowsScratch argmax_rows_scratch(Arena& a, int R, int V) {
  const int C = argmax_chunks(V);
  const size_t parts = (size_t)R * C;
  int* ids = a.take<int>((size_t)R);
  float* probs = a.floats((size_t)R);
  double* logp = a.take<double>((size_t)R);
  float* part_v = a.floats(parts);
  int* part_i = a.take<int>(parts);
  double* part_s = a.take<double>(parts);
  return {ids, probs, logp, part_v, part_i, part_s, C};
}

// top_rows, CUDA: the results of R rows on the device before their download (ids and values
// (R, n), max and sum (R)), and the partial results of each row's
// argmax_chunks(V) chunks: each chunk's n best (values, ids) and its sum.
struct TopRowsScratch {
  int* ids;
  float* vals;
  float* max;
  double* sum;
  float* part_v;
  int* part_i;
  double* part_s;
  int chunks;
};
inline TopRowsScratch top_rows_scratch(Arena& a, int R, int V, int n) {
  const int C = argmax_chunks(V);
  const size_t rn = (size_t)R * n, parts = (size_t)R * C;
  double* sum = a.take<double>((size_t)R);
  int* ids = a.take<int>(rn);
  float* vals = a.floats(rn);
  float* max = a.floats((size_t)R);
  float* part_v = a.floats(parts * n);
  int* part_i = a.take<int>(parts * n);
  double* part_s = a.take<double>(parts);
  return {ids, vals, max, sum, part_v, part_i, part_s, C};
}

}  // namespace attnlite::ops
