// The dry-run op set (ops::counting()): every op does nothing but take the scratch the op sets
// take for it (ops/scratch.h), so a forward pass run with it on a counting Arena measures the
// scratch that pass needs on any set.
#include "attnlite/ops/ops.h"
#include "ops/scratch.h"

namespace attnlite::ops {

namespace {

class CountingOps final : public Ops {
 public:
  const char* name() const override { return "counting"; }
  bool host_memory() const override { return true; }
  bool counting() const override { return true; }
  void linear(float*, const float*, const Linear&, int, Act) const override {}
  void linear_n(float* const*, const Linear* const* ws, int n, const float*, int M,
                Arena& a) const override {
    ArenaScope scope(a);
    long outs = 0;
    for (int i = 0; i < n; ++i) outs += ws[i]->out;
    linear_n_scratch(a, M, outs);  // as if the CPU set made them one
  }
  void add_layer_norm(float*, const float*, const float*, const float*, const float*, int R,
                      int n, float, Arena& a) const override {
    ArenaScope scope(a);
    add_layer_norm_scratch(a, R, n);
  }
  // the default's linear, add and add_layer_norm of one input: none takes scratch
  void linear_add_layer_norm(float*, float*, const float*, const Linear&, const float*, const float*,
                             const float*, int, float, Arena&) const override {}
  void add(float*, const float*, const float*, long) const override {}
  void embed(float*, int, const Embedding&, const int*, int, float) const override {}
  void patches(float*, const float*, int, int, int, int, int, float) const override {}
  void add_positions(float*, const float*, int, int, int, const int*) const override {}
  void attend(float*, const AttnOut& attn, const float*, const float*, const float*, int, int,
              int Tq, int Tk, int, int, const ValidLens&, Arena& a) const override {
    ArenaScope scope(a);
    attend_scratch(a, attn, Tq, Tk);
  }
  void additive_attend(float*, int, float*, const float*, const float*, const float*,
                       const Linear&, int, int Tk, int Hh, int, const ValidLens&,
                       Arena& a) const override {
    ArenaScope scope(a);
    additive_attend_scratch(a, Tk, Hh);
  }
  void rnn_cell(float*, float*, float*, float*, Cell, int, int) const override {}
  void gru_step(float*, const float*, float* gi, const Linear&, const Linear& hh, const float*,
                int B, Arena& a) const override {
    {
      ArenaScope scope(a);
      gru_step_scratch(a, gi, B, hh.in);  // the default: its input and hidden products
    }
    ArenaScope scope(a);
    gru_step_fused_scratch(a, hh.in);  // the CPU's fused kernel
  }
  void argmax_rows(int*, float*, double*, const float*, int R, int V, Arena& a) const override {
    ArenaScope scope(a);
    argmax_rows_scratch(a, R, V);  // a device set's results and partial results
  }
  void top_rows(int*, float*, float*, double*, const float*, long, int R, int V, int n,
                Arena& a) const override {
    ArenaScope scope(a);
    top_rows_scratch(a, R, V, n);  // a device set's results and partial results
  }
  void permute_blocks(float*, long, long, const int*, int, int, float*) const override {}
  void keep_rows(float*, long, long, const int*, int) const override {}
  void gemm_nt(float*, int, const float*, int, const float*, int, int, int, int,
               float) const override {}
  void gemm_nn(float*, int, const float*, int, const float*, int, int, int, int) const override {}
  void masked_softmax(float*, int, int, int, const ValidLens&, int, int) const override {}
  void softmax_rows(float*, int, int, int) const override {}
  void exp_sum(const float*, int, float*, double*) const override {}
  size_t gru_packed_floats(int, int) const override { return 0; }
  void gru_pack(float*, const Linear&, const Linear&) const override {}
  size_t linear_packed_floats(int, int) const override { return 0; }
  void linear_pack(float*, const Linear&) const override {}
  void copy(void*, const void*, size_t) const override {}
  void copy_2d(void*, size_t, const void*, size_t, size_t, int) const override {}
  void zero(void*, size_t) const override {}
  void upload(void*, const void*, size_t) const override {}
  void download(void*, const void*, size_t) const override {}
  void* alloc(size_t) const override { return nullptr; }
  void release(void*) const override {}
};

}  // namespace

const Ops& counting() {
  static const CountingOps ops;
  return ops;
}

}  // namespace attnlite::ops
