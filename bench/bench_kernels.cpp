// attnlite kernel benchmarks: scalar reference vs SIMD, side by side.
//   GEMM  y (512,2048) = x (512,512) · wᵀ, w (2048,512)  — counter GFLOP/s = 2·M·N·K / time
//   GEMV  y (1,2048)   = x (1,512)   · wᵀ, w (2048,512)  — plus GB/s of weights streamed
//         (4 MiB: stays in L3 between iterations), and 1x16384x2048 (128 MiB: from DRAM)
// and the attention-sized products and row kernels the models call.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/generate.h"
#include "attnlite/ops/kernels.h"
#include "search/sample.h"  // the language model's next-token choice (internal)

namespace {

using attnlite::ops::Kernels;

// 0: the scalar reference, 1: the 256-bit SIMD table, 2: the AVX-512 one (x86-64 CPUs with it).
const Kernels* table(int simd) {
  if (simd == 2) return attnlite::ops::avx512_kernels();
  return simd ? attnlite::ops::simd256_kernels() : &attnlite::ops::scalar_kernels();
}

std::vector<float> random_vec(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

bool skip_if_missing(benchmark::State& state, const Kernels* k) {
  if (k) return false;
  state.SkipWithError("SIMD kernels not available on this CPU/build");
  for (auto _ : state) {
  }
  return true;
}

// GFLOP/s (2·M·N·K per call) and GB/s of an fp32 linear layer y (M,N) = x (M,K) · wᵀ + b,
// counting the bytes every call must read or write at least once: w, x, b and y.
void linear_counters(benchmark::State& state, int M, int N, int K) {
  const double flop = 2.0 * M * N * K;
  state.counters["GFLOP/s"] = benchmark::Counter(flop * 1e-9 * (double)state.iterations(),
                                                 benchmark::Counter::kIsRate);
  const double bytes = 4.0 * ((double)N * K + (double)M * K + N + (double)M * N);
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9 * (double)state.iterations(),
                                              benchmark::Counter::kIsRate);
}

// Args: simd (0/1), M, N, K.
void BM_linear(benchmark::State& state) {
  const Kernels* k = table((int)state.range(0));
  if (skip_if_missing(state, k)) return;
  const int M = (int)state.range(1), N = (int)state.range(2), K = (int)state.range(3);
  const auto x = random_vec((size_t)M * K, 1), w = random_vec((size_t)N * K, 2),
             b = random_vec((size_t)N, 3);
  std::vector<float> y((size_t)M * N);
  for (auto _ : state) {
    k->linear(y.data(), x.data(), w.data(), b.data(), M, N, K);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  linear_counters(state, M, N, K);
  state.SetLabel(k->name);
}
BENCHMARK(BM_linear)
    ->ArgNames({"simd", "M", "N", "K"})
    ->Args({0, 512, 2048, 512})
    ->Args({1, 512, 2048, 512})
    ->Args({0, 1, 2048, 512})
    ->Args({1, 1, 2048, 512})
    ->Args({0, 1, 16384, 2048})  // 128 MiB of weights: streamed from DRAM, not L3
    ->Args({1, 1, 16384, 2048})
    ->Args({0, 10, 256, 256})  // a Transformer layer on a 10-token sentence
    ->Args({1, 10, 256, 256})
    ->Unit(benchmark::kMicrosecond);

// fp32 weights as stored (linear) against packed once (linear_packed), the SIMD table, on
// the base Transformer's shapes: decoding (M = 1, 16), a 20-token source (M = 20), the
// output layer (32000 x 512: from DRAM) and an FFN layer (2048 x 512: from L3). Args:
// packed (0 as stored, 1 packed, 2 packed through the AVX-512 table), M, N, K. Counters as
// BM_linear; compare them with attnlite_peak's roofs.
void BM_linear_packed(benchmark::State& state) {
  // packed 2: the same packed panels through the AVX-512 table's linear_packed
  const Kernels* k = state.range(0) == 2 ? attnlite::ops::avx512_kernels() : attnlite::ops::simd256_kernels();
  if (skip_if_missing(state, k)) return;
  const bool packed = state.range(0) != 0;
  const int M = (int)state.range(1), N = (int)state.range(2), K = (int)state.range(3);
  const auto x = random_vec((size_t)M * K, 1), w = random_vec((size_t)N * K, 2),
             b = random_vec((size_t)N, 3);
  // huge pages where the kernel gives them, as the weight store packs them (WeightStore::derived)
  auto wp = attnlite::AlignedBuffer::huge((size_t)attnlite::ops::linear_packed_floats(N, K) * sizeof(float));
  k->linear_pack(static_cast<float*>(wp.data()), w.data(), N, K);
  std::vector<float> y((size_t)M * N);
  for (auto _ : state) {
    if (packed)
      k->linear_packed(y.data(), x.data(), static_cast<const float*>(wp.data()), b.data(), M, N, K,
                       attnlite::ops::kActNone);
    else
      k->linear(y.data(), x.data(), w.data(), b.data(), M, N, K);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  linear_counters(state, M, N, K);
  state.SetLabel(std::string(packed ? "packed " : "as stored ") + k->name);
}
BENCHMARK(BM_linear_packed)
    ->ArgNames({"packed", "M", "N", "K"})
    ->ArgsProduct({{0, 1, 2}, {1, 16, 20}, {32000, 2048}, {512}})
    ->ArgsProduct({{0, 1, 2}, {1, 16, 20}, {512}, {2048}})
    // the book's 32-wide models, one decoding step: the Bahdanau output layer (201 words),
    // a GRU's gates, the query projection
    ->ArgsProduct({{1, 2}, {1}, {32, 96, 201}, {32, 64}})
    ->Unit(benchmark::kMicrosecond);

// fp32 against int8 weights with the same SIMD table, side by side. Args: int8 (0/1), M, N, K.
// Shapes of the whole-corpus Transformer (H 128, FFN 512, 9479 French tokens): the output
// layer and an FFN layer at one decoding step (M 1) and at beam 4 (M 4), and an encoder
// layer on a 20-token source. GB/s counts the weight bytes as stored (1 or 4 per weight).
void BM_linear_int8(benchmark::State& state) {
  const Kernels* k = attnlite::ops::simd_kernels();
  if (skip_if_missing(state, k)) return;
  const bool i8 = state.range(0) != 0;
  const int M = (int)state.range(1), N = (int)state.range(2), K = (int)state.range(3);
  const auto x = random_vec((size_t)M * K, 1), w = random_vec((size_t)N * K, 2),
             b = random_vec((size_t)N, 3), scale = random_vec((size_t)N, 4);
  std::vector<int8_t> q((size_t)N * K);
  for (size_t i = 0; i < q.size(); ++i) q[i] = (int8_t)(w[i] * 127.f);
  std::vector<float> y((size_t)M * N);
  for (auto _ : state) {
    if (i8)
      k->linear_i8(y.data(), x.data(), q.data(), scale.data(), b.data(), M, N, K);
    else
      k->linear(y.data(), x.data(), w.data(), b.data(), M, N, K);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * M * N * K * 1e-9 * (double)state.iterations(),
                                                 benchmark::Counter::kIsRate);
  state.counters["GB/s"] = benchmark::Counter((i8 ? 1.0 : 4.0) * N * K * 1e-9 * (double)state.iterations(),
                                              benchmark::Counter::kIsRate);
  state.SetLabel(i8 ? "int8" : "fp32");
}
BENCHMARK(BM_linear_int8)
    ->ArgNames({"int8", "M", "N", "K"})
    ->Args({0, 1, 9479, 128})
    ->Args({1, 1, 9479, 128})
    ->Args({0, 4, 9479, 128})
    ->Args({1, 4, 9479, 128})
    ->Args({0, 1, 512, 128})
    ->Args({1, 1, 512, 128})
    ->Args({0, 20, 512, 128})
    ->Args({1, 20, 512, 128})
    ->Args({0, 1, 16384, 2048})  // 128 MiB of fp32 weights: from DRAM
    ->Args({1, 1, 16384, 2048})
    // the language model lm-fra at one generation step (bench/lm.sh): its head, a layer's
    // packed in_proj (q, k, v: attnlite runs them as three 128 x 128 products), out_proj,
    // linear1 and linear2
    ->Args({0, 1, 9308, 128})
    ->Args({1, 1, 9308, 128})
    ->Args({0, 1, 128, 128})
    ->Args({1, 1, 128, 128})
    ->Args({0, 1, 128, 512})
    ->Args({1, 1, 128, 512})
    ->Unit(benchmark::kMicrosecond);

// Small M (beam hypotheses, batches, short sources) on the whole-corpus Transformer's
// shapes: its output layer (9479 x 128), an FFN layer in (512 x 128) and out (128 x 512), fp32
// and int8 side by side. Args: int8 (0/1), M, N, K.
BENCHMARK(BM_linear_int8)
    ->Name("BM_linear_small_m")
    ->ArgNames({"int8", "M", "N", "K"})
    ->ArgsProduct({{0, 1}, {4, 8, 16, 32}, {9479, 512}, {128}})
    ->Args({0, 4, 128, 512})
    ->Args({1, 4, 128, 512})
    ->Args({0, 16, 128, 512})
    ->Args({1, 16, 128, 512})
    // beam 4 on the default model (transformer-fra-bpe, int8: 256 wide, FFN 1024, 8106 French
    // sub-words): its output layer, a projection, an FFN layer in and out
    ->ArgsProduct({{1}, {4}, {8106, 256, 1024}, {256}})
    ->Args({1, 4, 256, 1024})
    // the book's models (K = 32: the d2l Transformer's encoder over 10 source tokens, the
    // Bahdanau encoder's GRU input products) and K = 64
    ->ArgsProduct({{0}, {4, 10}, {32, 96}, {32, 64}})
    ->Unit(benchmark::kMicrosecond);

// The next-token choice of a language model at one greedy step, over V = 9308 logits (lm-fra):
// Generator's (search::Sampler::choose: the arg max, then softmax(z)[token] in float64 for
// Generation::probs) against the arg max alone. Args: which (0 choose, 1 arg max).
void BM_lm_pick(benchmark::State& state) {
  const int V = 9308;
  const auto z = random_vec((size_t)V, 11);
  std::vector<char> block(1 << 20);
  attnlite::Arena host(block.data(), block.size());
  attnlite::search::Sampler sampler;
  sampler.carve(host, V);
  attnlite::GenerateOptions o;
  attnlite::SplitMix64 rng(0);
  const bool full = state.range(0) == 0;
  for (auto _ : state) {
    int id = 0;
    float p = 0;
    if (full) {
      id = sampler.choose(z.data(), o, rng, &p);
    } else {
      for (int v = 1; v < V; ++v)
        if (z[v] > z[id]) id = v;
    }
    benchmark::DoNotOptimize(id);
    benchmark::DoNotOptimize(p);
  }
  state.SetLabel(full ? "Sampler::choose (greedy + prob)" : "arg max only");
}
BENCHMARK(BM_lm_pick)->ArgName("which")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Attention scores per head: (T,d)·(T,d)ᵀ and weights·V. Args: simd, T, d.
void BM_attention_head(benchmark::State& state) {
  const Kernels* k = table((int)state.range(0));
  if (skip_if_missing(state, k)) return;
  const int T = (int)state.range(1), d = (int)state.range(2);
  const auto q = random_vec((size_t)T * d, 4), kk = random_vec((size_t)T * d, 5),
             v = random_vec((size_t)T * d, 6);
  std::vector<float> s((size_t)T * T), o((size_t)T * d);
  for (auto _ : state) {
    k->gemm_nt(s.data(), T, q.data(), d, kk.data(), d, T, T, d, 0.125f);
    k->softmax_rows(s.data(), T, T, T);
    k->gemm_nn(o.data(), d, s.data(), T, v.data(), d, T, d, T);
    benchmark::DoNotOptimize(o.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      4.0 * T * T * d * 1e-9 * (double)state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(k->name);
}
BENCHMARK(BM_attention_head)
    ->ArgNames({"simd", "T", "d"})
    ->Args({0, 10, 8})
    ->Args({1, 10, 8})
    ->Args({0, 100, 64})
    ->Args({1, 100, 64})
    ->Unit(benchmark::kMicrosecond);

// Row kernels on a (rows, n) block. Args: simd, which (0 softmax, 1 layer_norm, 2 tanh,
// 3 sigmoid), rows, n.
void BM_rows(benchmark::State& state) {
  const Kernels* k = table((int)state.range(0));
  if (skip_if_missing(state, k)) return;
  const int which = (int)state.range(1), rows = (int)state.range(2), n = (int)state.range(3);
  const auto x0 = random_vec((size_t)rows * n, 7), g = random_vec((size_t)n, 8),
             b = random_vec((size_t)n, 9);
  std::vector<float> x = x0, y((size_t)rows * n);
  static const char* names[] = {"softmax", "layer_norm", "tanh", "sigmoid"};
  for (auto _ : state) {
    switch (which) {
      case 0: k->softmax_rows(x.data(), n, rows, n); break;
      case 1: k->layer_norm(y.data(), x0.data(), g.data(), b.data(), rows, n, 1e-5f); break;
      case 2: k->tanh(x.data(), rows * n); break;
      default: k->sigmoid(x.data(), rows * n); break;
    }
    benchmark::DoNotOptimize(x.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed((int64_t)state.iterations() * rows * n);
  state.SetLabel(std::string(k->name) + " " + names[which]);
}
BENCHMARK(BM_rows)
    ->ArgNames({"simd", "op", "rows", "n"})
    ->ArgsProduct({{0, 1, 2}, {0, 1, 2, 3}, {100}, {256}});

// One fused GRU step (B = 1) on weights packed by gru_pack: the book's Bahdanau model's
// encoder (its input products given: in = 0 here), its decoder's layers (in = 32: the
// context, its embedding's products looked up; the second layer) and the first decoder layer
// over the embedding and the context multiplied (in = 64), at 32 hidden units. Args: simd,
// in, H; the time is one step's.
void BM_gru_step(benchmark::State& state) {
  const Kernels* k = table((int)state.range(0));
  if (skip_if_missing(state, k)) return;
  const int in = (int)state.range(1), H = (int)state.range(2), ins = in ? in : 1;
  const auto w_ih = random_vec((size_t)3 * H * ins, 1), w_hh = random_vec((size_t)3 * H * H, 2),
             b_ih = random_vec((size_t)3 * H, 3), b_hh = random_vec((size_t)3 * H, 4),
             x = random_vec((size_t)ins, 5), gi = random_vec((size_t)3 * H, 6);
  std::vector<float> packed((size_t)attnlite::ops::gru_packed_floats(ins, H)), h((size_t)H, 0.1f),
      tmp((size_t)H);
  attnlite::ops::gru_pack(packed.data(), w_ih.data(), b_ih.data(), w_hh.data(), b_hh.data(), ins, H);
  for (auto _ : state) {
    k->gru_step(h.data(), tmp.data(), in ? x.data() : nullptr, in ? nullptr : gi.data(),
                packed.data(), 1, ins, H);
    benchmark::DoNotOptimize(h.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(k->name);
}
BENCHMARK(BM_gru_step)->ArgNames({"simd", "in", "H"})->ArgsProduct({{0, 1, 2}, {0, 32, 64}, {32}});

}  // namespace

BENCHMARK_MAIN();
