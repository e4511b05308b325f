// The CPU op set: every op over the active kernel table (ops::kernels(): the scalar reference
// or the SIMD kernels), in host memory. The scratch each op takes: ops/scratch.h.
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "attnlite/error.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/ops/ops.h"
#include "attnlite/weights.h"
#include "cpu/linear.h"
#include "ops/scratch.h"

namespace attnlite::ops {

namespace {

// Beam candidates' order (Ops::top_rows): whether (a, ia) comes before (b, ib).
bool ahead(float a, int ia, float b, int ib) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na != nb) return nb;
  if (!na && a != b) return a > b;
  return ia < ib;
}

// The n best of x (n <= V) in that order, by one scan: ids ascend, so once n are held only a
// value above the last one enters (or, while a NaN is last, a number); blocks of 16 that hold
// nothing above a number there are passed with one vectorised test.
void top_of_row(int* id, float* val, const float* x, int V, int n) {
  int held = 0;
  auto enter = [&](int v) {
    int at = held < n ? held++ : n - 1;
    for (; at > 0 && ahead(x[v], v, val[at - 1], id[at - 1]); --at) {
      val[at] = val[at - 1];
      id[at] = id[at - 1];
    }
    val[at] = x[v];
    id[at] = v;
  };
  int v = 0;
  for (; v < V && held < n; ++v) enter(v);
  while (v < V) {
    const float last = val[n - 1];
    if (!std::isnan(last) && v + 16 <= V) {
      bool above = false;
      for (int u = 0; u < 16; ++u) above |= x[v + u] > last;
      if (!above) {
        v += 16;
        continue;
      }
    }
    for (const int end = std::min(V, v + 16); v < end; ++v)
      if (ahead(x[v], v, val[n - 1], id[n - 1])) enter(v);
  }
}

class CpuOps final : public Ops {
 public:
  const char* name() const override { return "cpu"; }
  bool host_memory() const override { return true; }

  void linear(float* y, const float* x, const Linear& w, int M, Act act) const override {
    static_assert((int)Act::None == kActNone && (int)Act::Relu == kActRelu &&
                      (int)Act::Gelu == kActGelu, "the kernels' act codes");
    ops::linear(y, w, x, M, (int)act);
  }

#if !defined(ATTNLITE_PACKED_WEIGHTS) || ATTNLITE_PACKED_WEIGHTS  // the small core packs nothing
  void linear_n(float* const* ys, const Linear* const* ws, int n, const float* x, int M,
                Arena& scratch) const override {
    // One product when the layers' packed panels and biases continue one another: the
    // first layer's view widened to all of them.
    Linear all = *ws[0];
    bool one = n > 1 && all.wp && kernels().linear_packed && all.out % kLinearPanel == 0;
    for (int i = 1; one && i < n; ++i) {
      const Linear& l = *ws[i];
      one = l.wp == all.wp + (long)all.out * all.in && l.in == all.in && l.out % kLinearPanel == 0 &&
            (all.b ? l.b == all.b + all.out : !l.b);
      all.out += l.out;
    }
    if (!one) return Ops::linear_n(ys, ws, n, x, M, scratch);
    ArenaScope scope(scratch);
    float* y = linear_n_scratch(scratch, M, all.out);
    all.w = nullptr;  // the packed panels alone (the kernels above read them)
    ops::linear(y, all, x, M, kActNone);
    for (int i = 0, c = 0; i < n; c += ws[i++]->out)
      for (int m = 0; m < M; ++m)
        std::memcpy(ys[i] + (long)m * ws[i]->out, y + (long)m * all.out + c,
                    sizeof(float) * ws[i]->out);
  }
#endif

  void add_layer_norm(float* out, const float* x, const float* y, const float* gamma,
                      const float* beta, int R, int n, float eps, Arena& scratch) const override {
    ArenaScope scope(scratch);
    const auto& K = kernels();
    if (!y) return K.layer_norm(out, x, gamma, beta, R, n, eps);
    float* sum = add_layer_norm_scratch(scratch, R, n);
    K.add(sum, y, x, R * n);  // dropout(Y) + X, dropout being identity at inference
    K.layer_norm(out, sum, gamma, beta, R, n, eps);
  }

  void add(float* y, const float* a, const float* b, long n) const override {
    const auto& K = kernels();
    for (long i = 0; i < n; i += 1 << 30) K.add(y + i, a + i, b + i, (int)std::min(n - i, 1l << 30));
  }

  void patches(float* out, const float* img, int B, int C, int H, int W, int p,
               float scale) const override {
    const int Hp = H / p, Wp = W / p;
    for (int b = 0; b < B; ++b)
      for (int py = 0; py < Hp; ++py)
        for (int px = 0; px < Wp; ++px)
          for (int c = 0; c < C; ++c)
            for (int i = 0; i < p; ++i) {
              const float* row = img + (((long)b * C + c) * H + py * p + i) * W + px * p;
              for (int j = 0; j < p; ++j) *out++ = row[j] * scale;
            }
  }

  void embed(float* x, int ldx, const Embedding& table, const int* ids, int R,
             float scale) const override {
    if (ldx == table.dim) return embedding_rows(x, table, ids, R, scale);
    for (int r = 0; r < R; ++r) embedding_rows(x + (long)r * ldx, table, ids + r, 1, scale);
  }

  void add_positions(float* x, const float* P, int B, int Tn, int H,
                     const int* positions) const override {
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < Tn; ++t) {
        const float* p = P + (long)(positions ? positions[t] : t) * H;
        float* xr = x + ((long)b * Tn + t) * H;
        for (int i = 0; i < H; ++i) xr[i] += p[i];
      }
  }

  void attend(float* ctx, const AttnOut& attn, const float* q, const float* k, const float* v,
              int kv_stride, int B, int Tq, int Tk, int H, int NH, const ValidLens& vl,
              Arena& scratch) const override {
    ArenaScope scope(scratch);
    const auto& K = kernels();
    const int D = H / NH;
    const float scale = 1.f / std::sqrt((float)D);
    float* tmp = attend_scratch(scratch, attn, Tq, Tk);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < NH; ++h) {
        float* s = attn.data ? attn.data + b * attn.b_stride + h * attn.h_stride : tmp;
        const int ld = attn.data ? attn.ld : Tk;
        const float* qb = q + (long)b * Tq * H + h * D;
        const float* kb = k + (long)b * kv_stride * H + h * D;
        const float* vb = v + (long)b * kv_stride * H + h * D;
        K.gemm_nt(s, ld, qb, H, kb, H, Tq, Tk, D, scale);
        // One (b, h) block: its valid lengths are batch b's (repeat_interleave by heads).
        masked_softmax(s, 1, Tq, Tk, vl.for_batch(b, Tq), 1, ld);
        K.gemm_nn(ctx + (long)b * Tq * H + h * D, H, s, ld, vb, H, Tq, D, Tk);
      }
  }

  void additive_attend(float* ctx, int ldc, float* attn, const float* qp, const float* kp,
                       const float* v, const Linear& w_v, int B, int Tk, int Hh, int Dv,
                       const ValidLens& vl, Arena& scratch) const override {
    ArenaScope scope(scratch);
    const auto& K = kernels();
    float* feat = additive_attend_scratch(scratch, Tk, Hh);
    // scores[b, j] = w_v · tanh(qp[b] + kp[b, j]), one batch row's features at a time (the
    // book's (B, 1, Tk, Hh) tensor is never materialised), for the keys below the valid
    // length only: masked_softmax replaces the others' scores by kMaskValue whatever they
    // were, so their weights are exactly 0 either way.
    for (int b = 0; b < B; ++b) {
      const int len = std::max(0, std::min(Tk, vl.get(b, 0, 1)));
      if (len == 0) continue;
      for (int j = 0; j < len; ++j)
        K.add(feat + (long)j * Hh, qp + (long)b * Hh, kp + ((long)b * Tk + j) * Hh, Hh);
      K.tanh(feat, len * Hh);
      if (w_v.w && !w_v.b && w_v.out == 1)  // the book's w_v: one dot product per key
        K.gemm_nt(attn + (long)b * Tk, Tk, w_v.w, Hh, feat, Hh, 1, len, Hh, 1.f);
      else
        ops::linear_serial(attn + (long)b * Tk, w_v, feat, len);
    }
    masked_softmax(attn, B, 1, Tk, vl, 1, Tk);
    for (int b = 0; b < B; ++b)
      K.gemm_nn(ctx + (long)b * ldc, Dv, attn + (long)b * Tk, Tk, v + (long)b * Tk * Dv, Dv, 1,
                Dv, Tk);
  }

  void gru_step(float* h, const float* x, float* gi, const Linear& ih, const Linear& hh,
                const float* packed, int B, Arena& scratch) const override {
    const auto& K = kernels();
    if (!packed || !K.gru_step) return Ops::gru_step(h, x, gi, ih, hh, packed, B, scratch);
    ArenaScope scope(scratch);
    K.gru_step(h, gru_step_fused_scratch(scratch, hh.in), x, gi, packed, B, ih.in, hh.in);
  }

  void rnn_cell(float* h, float* c, float* gi, float* gh, Cell cell, int B,
                int Hh) const override {
    const auto& K = kernels();
    const int G = (cell == Cell::GRU ? 3 : 4) * Hh;
    for (int b = 0; b < B; ++b) {
      float* i = gi + (long)b * G;
      float* g = gh + (long)b * G;
      float* hb = h + (long)b * Hh;
      if (cell == Cell::GRU) {
        // r, z = sigmoid(i + g); n = tanh(i_n + r * g_n); h = (h - n) * z + n
        K.add(g, g, i, 2 * Hh);
        K.sigmoid(g, 2 * Hh);
        for (int k = 0; k < Hh; ++k) i[2 * Hh + k] += g[k] * g[2 * Hh + k];
        K.tanh(i + 2 * Hh, Hh);
        for (int k = 0; k < Hh; ++k) {
          const float n = i[2 * Hh + k];
          hb[k] = (hb[k] - n) * g[Hh + k] + n;
        }
      } else {
        // i, f, g, o; c = f * c + i * g; h = o * tanh(c)
        float* cb = c + (long)b * Hh;
        K.add(g, g, i, G);
        K.sigmoid(g, 2 * Hh);
        K.tanh(g + 2 * Hh, Hh);
        K.sigmoid(g + 3 * Hh, Hh);
        for (int k = 0; k < Hh; ++k) cb[k] = g[Hh + k] * cb[k] + g[k] * g[2 * Hh + k];
        for (int k = 0; k < Hh; ++k) hb[k] = std::tanh(cb[k]);
        for (int k = 0; k < Hh; ++k) hb[k] *= g[3 * Hh + k];
      }
    }
  }

  void argmax_rows(int* ids, float* probs, double* logp, const float* logits, int R, int V,
                   Arena&) const override {
    for (int r = 0; r < R; ++r) {
      const float* lg = logits + (long)r * V;
      float mx = 0.f;
      double s = 0.0;
      kernels().exp_sum(lg, V, &mx, &s);
      // The first index of the largest value, as a plain scan finds it (a NaN never replaces
      // the best). With every logit finite (the sum is then finite), that is the first one
      // equal to the max exp_sum found; otherwise a scan: blocks of 16 that hold nothing above
      // the best so far are passed with one vectorised test.
      int best = 0;
      if (std::isfinite(s)) {
        while (best < V - 1 && lg[best] != mx) ++best;
      } else {
        float bv = lg[0];
        int v = 1;
        for (; v + 16 <= V; v += 16) {
          bool above = false;
          for (int u = 0; u < 16; ++u) above |= lg[v + u] > bv;
          if (above)
            for (int u = 0; u < 16; ++u)
              if (lg[v + u] > bv) bv = lg[best = v + u];
        }
        for (; v < V; ++v)
          if (lg[v] > bv) bv = lg[best = v];
      }
      ids[r] = best;
      probs[r] = (float)(1.0 / s);
      logp[r] = -std::log(s);
    }
  }

  void top_rows(int* ids, float* vals, float* max, double* sum, const float* logits, long ld,
                int R, int V, int n, Arena&) const override {
    for (int r = 0; r < R; ++r) {
      const float* lg = logits + r * ld;
      kernels().exp_sum(lg, V, max + r, sum + r);
      top_of_row(ids + (long)r * n, vals + (long)r * n, lg, V, n);
    }
  }

  void permute_blocks(float* rows, long stride, long len, const int* from, int nb, int K,
                      float* tmp) const override {
    const size_t bytes = sizeof(float) * (size_t)len;
    for (int b = 0; b < nb; ++b) {
      const int* f = from + (long)b * K;
      int j = 0;
      while (j < K && f[j] == j) ++j;
      if (j == K) continue;  // the block's rows stay where they are
      float* blk = rows + (long)b * K * stride;
      for (int i = 0; i < K; ++i) std::memcpy(tmp + i * len, blk + i * stride, bytes);
      for (int i = 0; i < K; ++i) std::memcpy(blk + i * stride, tmp + f[i] * len, bytes);
    }
  }

  void keep_rows(float* rows, long stride, long len, const int* keep, int n) const override {
    const size_t bytes = sizeof(float) * (size_t)len;  // rows apart by stride >= len
    for (int i = 0; i < n; ++i)
      if (keep[i] != i) std::memcpy(rows + (long)i * stride, rows + (long)keep[i] * stride, bytes);
  }

  void gemm_nt(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
               int K, float alpha) const override {
    kernels().gemm_nt(c, ldc, a, lda, b, ldb, M, N, K, alpha);
  }
  void gemm_nn(float* c, int ldc, const float* a, int lda, const float* b, int ldb, int M, int N,
               int K) const override {
    kernels().gemm_nn(c, ldc, a, lda, b, ldb, M, N, K);
  }
  void masked_softmax(float* x, int BH, int Tq, int Tk, const ValidLens& vl, int heads,
                      int ld) const override {
    if (vl.kind != ValidLens::None) {
      for (int bh = 0; bh < BH; ++bh)
        for (int q = 0; q < Tq; ++q) {
          int len = vl.get(bh / heads, q, Tq);
          float* row = x + ((long)bh * Tq + q) * ld;
          for (int k = len < 0 ? 0 : len; k < Tk; ++k) row[k] = kMaskValue;
        }
    }
    kernels().softmax_rows(x, ld, BH * Tq, Tk);
  }
  void softmax_rows(float* x, int ld, int rows, int n) const override {
    kernels().softmax_rows(x, ld, rows, n);
  }
  void exp_sum(const float* x, int n, float* max, double* sum) const override {
    kernels().exp_sum(x, n, max, sum);
  }
  size_t gru_packed_floats(int in, int Hh) const override {
    return (size_t)ops::gru_packed_floats(in, Hh);
  }
  void gru_pack(float* packed, const Linear& ih, const Linear& hh) const override {
    ops::gru_pack(packed, ih.w, ih.b, hh.w, hh.b, ih.in, hh.in);
  }
  size_t linear_packed_floats(int out, int in) const override {
    if (!kernels().linear_pack || out <= 0 || in <= 0) return 0;
    // Panels pad `out` to a multiple of 16: a layer of few outputs and many inputs (a hostile
    // file's 1 x 100M) would take up to 16x its size, so it is packed only when the layout is
    // at most twice the weights or small; else it is read as stored.
    const int64_t n = ops::linear_packed_floats(out, in), w = (int64_t)out * in;
    if ((uint64_t)n > SIZE_MAX / sizeof(float)) return 0;  // a 32-bit size_t
    return n <= 2 * w || n <= (int64_t(1) << 18) ? (size_t)n : 0;
  }
  void linear_pack(float* wp, const Linear& l) const override {
    kernels().linear_pack(wp, l.w, l.out, l.in);
  }

  void copy(void* dst, const void* src, size_t bytes) const override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copy_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t bytes,
               int rows) const override {
    for (int r = 0; r < rows && bytes; ++r)
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                  static_cast<const char*>(src) + r * src_pitch, bytes);
  }
  void zero(void* dst, size_t bytes) const override {
    if (bytes) std::memset(dst, 0, bytes);
  }
  void upload(void* dst, const void* host, size_t bytes) const override { copy(dst, host, bytes); }
  void download(void* host, const void* src, size_t bytes) const override {
    if (host != src) copy(host, src, bytes);
  }
  void* alloc(size_t bytes) const override {
    void* p = ::operator new(bytes ? bytes : 1, std::align_val_t(256), std::nothrow);
    if (!p) throw Error("cannot allocate " + std::to_string(bytes) + " bytes");
    return p;
  }
  void release(void* p) const override { ::operator delete(p, std::align_val_t(256)); }
};

}  // namespace

const Ops& cpu() {
  static const CpuOps ops;
  return ops;
}

}  // namespace attnlite::ops
