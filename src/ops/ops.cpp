// attnlite — the op interface's default implementations: ops an op set may leave to the
// others it defines, and the ops on host arrays, which every set runs as the CPU set does.
#include "attnlite/ops/ops.h"

#include <limits>

#include "ops/scratch.h"

namespace attnlite::ops {

void Ops::linear_n(float* const* ys, const Linear* const* ws, int n, const float* x, int M,
                   Arena&) const {
  for (int i = 0; i < n; ++i) linear(ys[i], x, *ws[i], M);
}

void Ops::linear_add_layer_norm(float* out, float* y, const float* x, const Linear& w,
                                const float* res, const float* gamma, const float* beta, int R,
                                float eps, Arena& scratch) const {
  linear(y, x, w, R);
  add(y, y, res, (long)R * w.out);  // dropout(Y) + X, as add_layer_norm adds them
  add_layer_norm(out, y, nullptr, gamma, beta, R, w.out, eps, scratch);
}

void Ops::append_attend(float* ctx, const AttnOut& attn, const float* q, const float* k_new,
                        const float* v_new, float* kc, float* vc, int kv_stride, int t0, int B,
                        int Tq, int H, int NH, const ValidLens& vl, Arena& scratch) const {
  const size_t row = sizeof(float) * H;
  copy_2d(kc + (long)t0 * H, row * kv_stride, k_new, row * Tq, row * Tq, B);
  copy_2d(vc + (long)t0 * H, row * kv_stride, v_new, row * Tq, row * Tq, B);
  attend(ctx, attn, q, kc, vc, kv_stride, B, Tq, t0 + Tq, H, NH, vl, scratch);
}

int Ops::drop_floor() const { return host_memory() ? 0 : std::numeric_limits<int>::max(); }

void Ops::gru_step(float* h, const float* x, float* gi, const Linear& ih, const Linear& hh,
                   const float* /*packed*/, int B, Arena& scratch) const {
  ArenaScope scope(scratch);
  const int Hh = hh.in;
  const GruStepScratch p = gru_step_scratch(scratch, gi, B, Hh);
  if (!gi) {
    linear(p.gi, x, ih, B);
  } else if (x) {  // gi += x·ih.wᵀ (+ ih.b)
    linear(p.gh, x, ih, B);
    add(gi, gi, p.gh, (long)B * 3 * Hh);
  }
  linear(p.gh, h, hh, B);
  rnn_cell(h, nullptr, p.gi, p.gh, Cell::GRU, B, Hh);
}

// Ops on host arrays: the CPU set's (which defines every one of them).
void Ops::gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M,
                  int N, int K, float alpha) const {
  cpu().gemm_nt(c, ldc, a, lda, b, ldb, M, N, K, alpha);
}
void Ops::gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M,
                  int N, int K) const {
  cpu().gemm_nn(c, ldc, a, lda, b, ldb, M, N, K);
}
void Ops::masked_softmax(float* x, int BH, int Tq, int Tk, const ValidLens& vl, int heads,
                         int ld) const {
  cpu().masked_softmax(x, BH, Tq, Tk, vl, heads, ld);
}
void Ops::softmax_rows(float* x, int ld, int rows, int n) const {
  cpu().softmax_rows(x, ld, rows, n);
}
void Ops::exp_sum(const float* x, int n, float* max, double* sum) const {
  cpu().exp_sum(x, n, max, sum);
}
size_t Ops::gru_packed_floats(int in, int Hh) const { return cpu().gru_packed_floats(in, Hh); }
void Ops::gru_pack(float* packed, const Linear& ih, const Linear& hh) const {
  cpu().gru_pack(packed, ih, hh);
}
size_t Ops::linear_packed_floats(int out, int in) const { return cpu().linear_packed_floats(out, in); }
void Ops::linear_pack(float* wp, const Linear& l) const { cpu().linear_pack(wp, l); }

}  // namespace attnlite::ops
