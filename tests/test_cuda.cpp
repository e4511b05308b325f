// The CUDA backend (Limits::device = Device::CUDA). Compiled in every build:
//   - CPU builds: Device::CUDA is a clear error naming the configure option;
//   - CUDA builds without a device: the error names the missing device, and every GPU case
//     says why it is skipped (WARN) and returns;
//   - with a device: each kernel against the scalar CPU reference. Whole models on the GPU
//     (translations, beam search, the language model, the ViT): test_cuda_models.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attnlite/attention/multi_head.h"
#include "attnlite/attention/positional_encoding.h"
#include "attnlite/model.h"
#include "attnlite/models/layers.h"
#include "attnlite/classify.h"
#include "attnlite/generate.h"
#include "attnlite/translate.h"
#include "cuda_checks.h"
#include "fixture.h"
#if ATTNLITE_HAVE_CUDA
#include "cuda/device.h"
#include "ops/scratch.h"

using namespace attnlite::attention;
#endif

using namespace attnlite;
using Catch::Matchers::Contains;
using attnlite::test::have_gpu;
using attnlite::test::random_bahdanau;
using attnlite::test::random_transformer;
using attnlite::test::random_vec;

TEST_CASE("Device::CUDA without a CUDA build or device is a clear error", "[cuda]") {
  auto tr = random_transformer();
  auto bd = random_bahdanau();
  Limits lim;
  lim.device = Device::CUDA;
  INFO("cuda_device_name: " << cuda_device_name());
  // CUDA's start-up on a thread of its own, as the CLI runs it beside the model's reading:
  // nothing in a CPU build, nothing thrown without a device; the sessions below then answer
  // as they would without it
  std::thread start_up(cuda_start_up);
  start_up.join();
#if !ATTNLITE_HAVE_CUDA
  const char* msg = "attnlite was built without CUDA (configure with -DATTNLITE_CUDA=ON)";
  REQUIRE_FALSE(cuda_available());
  REQUIRE_THAT(cuda_device_name(), Contains("without CUDA"));
  REQUIRE_THROWS_WITH(Translator(tr, lim), msg);
  REQUIRE_THROWS_WITH(Translator::required_bytes(*tr, lim), msg);
  REQUIRE_THROWS_WITH(Translator(bd, lim), msg);
  GenerateLimits glim;
  glim.device = Device::CUDA;
  REQUIRE_THROWS_WITH(Generator(Model::load(attnlite::test::fixture_path("lm_post_relu")), glim), msg);
  ClassifyLimits clim;
  clim.device = Device::CUDA;
  REQUIRE_THROWS_WITH(Classifier(Model::load(attnlite::test::fixture_path("vit_post_gelu")), clim), msg);
#else
  if (!cuda_available()) {
    WARN("no CUDA device: checking the error only (" << cuda_device_name() << ")");
    const char* msg = "CUDA was requested but no CUDA device is available (";
    REQUIRE_THROWS_WITH(Translator(tr, lim), Contains(msg));
    REQUIRE_THROWS_WITH(Translator(bd, lim), Contains(msg));
    Limits beam = lim;
    beam.max_beam = 4;
    REQUIRE_THROWS_WITH(Translator(tr, beam), Contains(msg));
    REQUIRE_THAT(cuda_device_name(), Contains("none ("));
    GenerateLimits glim;
    glim.device = Device::CUDA;
    REQUIRE_THROWS_WITH(Generator(Model::load(attnlite::test::fixture_path("lm_post_relu")), glim),
                        Contains(msg));
    ClassifyLimits clim;
    clim.device = Device::CUDA;
    REQUIRE_THROWS_WITH(Classifier(Model::load(attnlite::test::fixture_path("vit_post_gelu")), clim),
                        Contains(msg));
  } else {
    REQUIRE_NOTHROW(Translator(tr, lim));
    REQUIRE_NOTHROW(Translator(bd, lim));  // every family and search runs on every device
  }
#endif
  // The CPU device is untouched by all this.
  lim.device = Device::CPU;
  REQUIRE_NOTHROW(Translator(tr, lim));
}

// cuBLAS is opened at run time, not linked: this needs the libraries, not a GPU. (The emulated
// device, tests/cuda_emu, has its cuBLAS built in: nothing to open.)
#if ATTNLITE_HAVE_CUDA && !ATTNLITE_CUDA_EMULATED
TEST_CASE("cuBLAS loads at run time with every function the backend calls", "[cuda]") {
  const auto r = cuda::check::cublas_load();
  INFO("error: " << r.error);
  REQUIRE(r.loaded);
  REQUIRE(r.error.empty());
  // the libraries of the headers' major version, the files named for it
  REQUIRE(r.header_major >= 11);
  CHECK(r.blas_major == r.header_major);
  CHECK(r.lt_version / 10000 == r.header_major);
  CHECK_THAT(r.blas_path, Contains("libcublas.so." + std::to_string(r.header_major)));
  CHECK_THAT(r.lt_path, Contains("libcublasLt.so." + std::to_string(r.header_major)));
  // a second call is the same load
  const auto again = cuda::check::cublas_load();
  CHECK(again.blas_path == r.blas_path);

  // A library that is not there: a clear error naming it, nothing else touched.
  const auto no_blas = cuda::check::cublas_load("libcublas.so.999", "");
  CHECK_FALSE(no_blas.loaded);
  CHECK_THAT(no_blas.error, Contains("cannot load libcublas.so.999 ("));
  const auto no_lt = cuda::check::cublas_load("", "libcublasLt.so.999");
  CHECK_FALSE(no_lt.loaded);
  CHECK_THAT(no_lt.error, Contains("cannot load libcublasLt.so.999 ("));
  // A library without the functions (the CUDA runtime): the first one missing is named.
  const auto wrong = cuda::check::cublas_load("", "libcudart.so." + std::to_string(r.header_major));
  CHECK_FALSE(wrong.loaded);
  CHECK_THAT(wrong.error, Contains("has no function cublasLtGetVersion"));
}
#endif

#if ATTNLITE_HAVE_CUDA

// The products (the GEMV, cuBLAS's SGEMM and cuBLASLt, the expansion of int8 and bfloat16
// weights) apart from the other kernels: tools/gpu-check.sh's racecheck, which looks for
// shared-memory races, goes over the other kernels only (these use no shared memory of their
// own, and cuBLAS's large products under it outran its time limit).
TEST_CASE("CUDA products match the scalar CPU reference", "[cuda]") {
  if (!have_gpu("the kernel tests")) return;
  const auto& K = ops::scalar_kernels();
  std::mt19937 rng(1);
  auto rnd = [&](size_t n) { return random_vec(rng, n); };

  SECTION("linear: y = x·Wᵀ + b (+ ReLU), sizes below, at and past the warp and tile sizes") {
    for (auto [M, N, K_] : std::vector<std::array<int, 3>>{
             {1, 1, 1}, {1, 32, 32}, {3, 7, 5}, {17, 33, 65}, {64, 128, 256}, {5, 1000, 32},
             {130, 64, 512},
             // the GEMV of up to 8 rows (float4 steps when K % 4 == 0), and 9 rows past it
             {1, 512, 512}, {1, 97, 2048}, {4, 300, 36}, {8, 65, 130}, {8, 33, 4}, {9, 40, 64},
             // batches of a base model's decoding steps through cuBLAS
             {16, 512, 512}, {32, 1536, 512}, {32, 4096, 1024}, {24, 100, 130},
             // from 65 rows cuBLASLt's epilogue by default, odd sizes too
             {65, 512, 512}, {70, 33, 65}, {256, 2048, 512}}) {
      for (bool bias : {false, true})
        for (bool relu : {false, true})
          for (int mode : {0, 1, 2, 3}) {  // SGEMM + bias kernel; cuBLASLt past 64; timed; GEMV
            if (mode == 3 && (M <= 8 || M > 64)) continue;  // there as mode 1
            INFO("M " << M << " N " << N << " K " << K_ << " bias " << bias << " relu " << relu
                      << " mode " << mode);
            auto x = rnd((size_t)M * K_), w = rnd((size_t)N * K_), b = rnd((size_t)N);
            std::vector<float> ref((size_t)M * N), got(ref.size());
            K.linear(ref.data(), x.data(), w.data(), bias ? b.data() : nullptr, M, N, K_);
            if (relu) K.relu(ref.data(), M * N);
            cuda::check::linear(got.data(), x.data(), w.data(), bias ? b.data() : nullptr, M, N,
                                K_, relu, mode);
            REQUIRE_CLOSE(got, ref, 1e-5 * std::sqrt((double)K_) * 4);
          }
    }
  }
  SECTION("linear_strided: layers of one shape over one input as one strided product") {
    // Q, K, V (3 layers) and the cross-attention's K, V (2) at a batch's rows, odd sizes too
    for (auto [n, M, N, K_] : std::vector<std::array<int, 4>>{
             {3, 32, 512, 512}, {2, 9, 64, 64}, {3, 20, 40, 24}, {2, 600, 512, 512}, {3, 13, 7, 5},
             {3, 70, 7, 5}, {2, 65, 40, 24}}) {
      for (bool bias : {false, true})
        for (int mode : {0, 1, 2, 3}) {
          if (mode == 3 && M > 64) continue;  // as mode 1
          INFO("layers " << n << " M " << M << " N " << N << " K " << K_ << " bias " << bias
                         << " mode " << mode);
          auto x = rnd((size_t)M * K_), w = rnd((size_t)n * N * K_), b = rnd((size_t)n * N);
          std::vector<float> ref((size_t)n * M * N), got(ref.size());
          for (int i = 0; i < n; ++i)
            K.linear(ref.data() + (long)i * M * N, x.data(), w.data() + (long)i * N * K_,
                     bias ? b.data() + (long)i * N : nullptr, M, N, K_);
          REQUIRE(cuda::check::linear_strided(got.data(), x.data(), w.data(),
                                              bias ? b.data() : nullptr, n, M, N, K_, mode));
          REQUIRE_CLOSE(got, ref, 1e-5 * std::sqrt((double)K_) * 4);
        }
    }
  }
  SECTION("int8 linear: y = x·(scale ⊙ q)ᵀ + b (+ ReLU): the GEMV on q for few rows, expanded past it") {
    std::uniform_int_distribution<int> Q(-127, 127);
    for (auto [M, N, K_, layers] : std::vector<std::array<int, 4>>{
             // 16-byte rows (K % 16 == 0) and one weight at a time (K = 5, 36, 130), one layer
             // and attention's Q, K, V as three layers of one launch; 40 rows expanded
             {1, 1, 16, 1}, {1, 512, 512, 1}, {1, 97, 2048, 1}, {3, 300, 48, 1}, {8, 65, 1024, 1},
             {2, 7, 5, 1}, {4, 33, 36, 1}, {8, 65, 130, 1}, {1, 96, 64, 3}, {5, 768, 256, 3},
             {2, 40, 36, 3}, {9, 40, 64, 1}, {40, 130, 48, 1}, {17, 33, 65, 1},
             // past Linear::kExpandFloats: expanded and multiplied 2,048 features at a time
             {9, 2100, 512, 1}, {33, 2100, 512, 1},
             // batches of a base model's decoding steps, expanded then through cuBLAS
             {32, 512, 512, 1}, {20, 300, 1024, 1}, {24, 70, 36, 1}, {32, 100, 1040, 1}}) {
      for (bool bias : {false, true})
        for (bool relu : {false, true})
          for (int mode : {1, 3}) {  // past 8 rows: expanded; the GEMV up to 64 rows
            if (mode == 3 && (M <= 8 || M > 64)) continue;  // there as mode 1
            INFO("M " << M << " N " << N << " K " << K_ << " layers " << layers << " bias " << bias
                      << " relu " << relu << " mode " << mode);
            auto x = rnd((size_t)M * K_), b = rnd((size_t)N), sc = rnd((size_t)N);
            std::vector<signed char> q((size_t)N * K_);
            for (auto& v : q) v = (signed char)Q(rng);
            for (auto& v : sc) v = std::fabs(v) / 127.f + 1e-3f;
            std::vector<float> ref((size_t)M * N), got(ref.size());
            K.linear_i8(ref.data(), x.data(), reinterpret_cast<const int8_t*>(q.data()), sc.data(),
                        bias ? b.data() : nullptr, M, N, K_);
            if (relu) K.relu(ref.data(), M * N);
            cuda::check::linear_i8(got.data(), x.data(), q.data(), sc.data(), bias ? b.data() : nullptr,
                                   M, N, K_, relu, layers, mode);
            // |q| <= 127 and scale <= 1 / 127 + 1e-3: the same bound on each product's size as
            // the fp32 case above
            REQUIRE_CLOSE(got, ref, 1e-5 * std::sqrt((double)K_) * 4);
          }
    }
  }
  SECTION("bfloat16 linear: y = x·widen(h)ᵀ + b (+ ReLU): the GEMV on h up to 64 rows, widened past it") {
    for (auto [M, N, K_, layers] : std::vector<std::array<int, 4>>{
             // 16-byte rows (K % 8 == 0) and one weight at a time (K = 5, 36, 130), one layer
             // and attention's Q, K, V as three layers of one launch
             {1, 1, 8, 1}, {1, 512, 512, 1}, {1, 97, 2048, 1}, {3, 300, 40, 1}, {8, 65, 1024, 1},
             {2, 7, 5, 1}, {4, 33, 36, 1}, {8, 65, 130, 1}, {1, 96, 64, 3}, {5, 768, 256, 3},
             {2, 40, 36, 3}, {1, 24, 1032, 1},
             // 9 to 64 rows: the GEMV in chunks of 8 rows (the last one short), one and three
             // layers; batches of a base model's decoding steps
             {9, 40, 64, 1}, {40, 130, 48, 1}, {17, 33, 65, 1}, {32, 512, 512, 1}, {20, 300, 1024, 1},
             {24, 70, 36, 1}, {64, 96, 520, 1}, {24, 96, 64, 3}, {33, 40, 36, 3}, {64, 1536, 512, 3},
             // more rows widened, past Linear::kExpandFloats too (2,048 features at a time)
             {65, 130, 48, 1}, {70, 33, 65, 1}, {65, 2100, 512, 1}, {130, 64, 512, 1}}) {
      for (bool bias : {false, true})
        for (bool relu : {false, true})
          for (int mode : {1, 3}) {  // 9 to 64 rows: in chunks of 8; the GEMV of many rows
            if (mode == 3 && (M <= 8 || M > 64)) continue;  // there as mode 1
            INFO("M " << M << " N " << N << " K " << K_ << " layers " << layers << " bias " << bias
                      << " relu " << relu << " mode " << mode);
            auto x = rnd((size_t)M * K_), w = rnd((size_t)N * K_), b = rnd((size_t)N);
            std::vector<uint16_t> h(w.size());
            for (size_t i = 0; i < w.size(); ++i) w[i] = bf16_value(h[i] = bf16_bits(w[i]));
            std::vector<float> ref((size_t)M * N), got(ref.size());
            K.linear(ref.data(), x.data(), w.data(), bias ? b.data() : nullptr, M, N, K_);
            if (relu) K.relu(ref.data(), M * N);
            cuda::check::linear_bf16(got.data(), x.data(), h.data(), bias ? b.data() : nullptr, M, N,
                                     K_, relu, layers, mode);
            // the CPU multiplies the same widened values: the fp32 case's bound
            REQUIRE_CLOSE(got, ref, 1e-5 * std::sqrt((double)K_) * 4);
          }
    }
  }
}

// BlasMode::Gemv's GEMV of 9 to 64 rows (x staged in shared memory, so a case of its own that
// racecheck and the emulated device's reverse order go over) against the GEMV of up to 8 rows,
// itself held against the CPU above.
TEST_CASE("CUDA: the GEMV of many rows gives each row the bits that launches of 8 rows give", "[cuda]") {
  if (!have_gpu("the kernel tests")) return;
  std::mt19937 rng(2);
  auto rnd = [&](size_t n) { return random_vec(rng, n); };
  // kind 0 fp32 (float4 steps, and one weight at a time: K = 5, 130, 36), 1 int8 (16-byte
  // rows: chunks of 16 rows), 2 bfloat16; one layer and three of one launch; from 4,096
  // features four a warp (few rows: the case is one racecheck goes over on a GPU); 9 to 64
  // rows in chunks of 16 (fewer than 128 blocks: most shapes here) or of 32 (1,024 features
  // and more, or a single chunk), the last one short
  std::uniform_int_distribution<int> Q(-127, 127);
  for (auto [kind, M, N, K_, layers] : std::vector<std::array<int, 5>>{
           {0, 9, 40, 64, 1}, {0, 32, 512, 512, 1}, {0, 33, 100, 130, 1}, {0, 20, 33, 5, 1},
           {0, 64, 96, 36, 1}, {0, 20, 4100, 36, 1}, {0, 17, 96, 64, 3}, {0, 40, 1024, 36, 1},
           {1, 32, 512, 512, 1}, {1, 17, 40, 36, 1}, {1, 17, 4100, 64, 1}, {1, 64, 96, 48, 3},
           {1, 40, 1024, 36, 1}, {2, 32, 512, 512, 1}, {2, 13, 7, 5, 1}, {2, 24, 4100, 64, 1},
           {2, 64, 40, 36, 3}, {2, 40, 1024, 64, 1}}) {
    for (bool both : {false, true}) {
      const bool bias = both, relu = both;
      const int kd = kind, rows = M, n_out = N, k_in = K_, nl = layers;
      INFO("kind " << kd << " M " << rows << " N " << n_out << " K " << k_in << " layers " << nl
                   << " bias " << bias << " relu " << relu);
      // fp32: nl layers of N features, (nl, M, N) out; int8 and bfloat16: N features split
      // into nl layers of one launch where the GEMV takes them, (M, N) out
      const int outs = kd == 0 ? nl : 1;
      auto x = rnd((size_t)rows * k_in), w = rnd((size_t)outs * n_out * k_in), b = rnd((size_t)outs * n_out);
      std::vector<signed char> q(w.size());
      std::vector<uint16_t> h(w.size());
      std::vector<float> sc = rnd((size_t)n_out);
      for (auto& v : q) v = (signed char)Q(rng);
      for (auto& v : sc) v = std::fabs(v) / 127.f + 1e-3f;
      for (size_t i = 0; i < w.size(); ++i) h[i] = bf16_bits(w[i]);
      // rows r0 .. r0 + m - 1 of x through the op set's path in `mode`
      const auto run = [&](int r0, int m, int mode) {
        std::vector<float> y((size_t)outs * m * n_out);
        const float* xr = x.data() + (long)r0 * k_in;
        const float* br = bias ? b.data() : nullptr;
        const int split = mode == 3 ? nl : 1;
        if (kd == 1)
          cuda::check::linear_i8(y.data(), xr, q.data(), sc.data(), br, m, n_out, k_in, relu, split, mode);
        else if (kd == 2)
          cuda::check::linear_bf16(y.data(), xr, h.data(), br, m, n_out, k_in, relu, split, mode);
        else if (split > 1)  // no ReLU on this path (attention's Q, K and V)
          REQUIRE(cuda::check::linear_strided(y.data(), xr, w.data(), br, nl, m, n_out, k_in, mode));
        else
          for (int i = 0; i < outs; ++i)
            cuda::check::linear(y.data() + (long)i * m * n_out, xr, w.data() + (long)i * n_out * k_in,
                                br ? br + (long)i * n_out : nullptr, m, n_out, k_in,
                                relu && nl == 1, mode);
        return y;
      };
      const std::vector<float> all = run(0, rows, 3);
      constexpr int kWarpRows = 8;  // the GEMV of few rows (cuda::kGemvMaxRows)
      for (int r0 = 0; r0 < rows; r0 += kWarpRows) {
        const int m = std::min(kWarpRows, rows - r0);
        const std::vector<float> part = run(r0, m, 1);
        long differ = 0;  // outputs whose bits differ; the first one's place
        std::string first;
        for (int i = 0; i < outs; ++i)
          for (int r = 0; r < m; ++r)
            for (int n = 0; n < n_out; ++n) {
              const float a = all[((size_t)i * rows + r0 + r) * n_out + n];
              const float p8 = part[((size_t)i * m + r) * n_out + n];
              if (std::memcmp(&a, &p8, sizeof a) != 0 && differ++ == 0)
                first = "layer " + std::to_string(i) + " row " + std::to_string(r0 + r) + " feature " +
                        std::to_string(n) + ": " + std::to_string(a) + " against " + std::to_string(p8);
            }
        INFO("rows " << r0 << " to " << r0 + m - 1 << "; first difference: " << first);
        REQUIRE(differ == 0);
      }
    }
  }
}

// bench_cuda --products times each product through this: the graph of its calls replays.
TEST_CASE("CUDA: a product's time per call comes from a replayed graph of its calls", "[cuda]") {
  if (!have_gpu("the product timing")) return;
  for (int mode : {0, 1, 2, 3})
    for (auto [M, layers, relu] : std::vector<std::array<int, 3>>{{4, 1, 1}, {20, 1, 0}, {20, 3, 0}, {70, 1, 1}}) {
      INFO("mode " << mode << " M " << M << " layers " << layers);
      const double us = cuda::check::linear_us(M, 40, 24, layers, relu != 0, mode, 3, 2);
      CHECK(std::isfinite(us));
      CHECK(us > 0.0);
    }
  CHECK_THROWS_WITH(cuda::check::linear_us(0, 40, 24, 1, false, 1, 3, 2), Catch::Contains("bad sizes"));
  // more layers than one launch of the GEMV takes
  CHECK_THROWS_WITH(cuda::check::linear_us(4, 40, 24, 5, false, 1, 3, 2), Catch::Contains("bad sizes"));
}

TEST_CASE("CUDA kernels match the scalar CPU reference", "[cuda]") {
  if (!have_gpu("the kernel tests")) return;
  const auto& K = ops::scalar_kernels();
  std::mt19937 rng(1);
  auto rnd = [&](size_t n) { return random_vec(rng, n); };

  SECTION("add + layer norm") {
    // a warp per row up to 1,024 values (4, 8, 16 or 32 a lane), a block per row past it
    for (int n : {1, 7, 32, 33, 128, 129, 256, 257, 512, 1000, 1024, 1025, 2000}) {
      INFO("n " << n);
      const int R = 5;
      auto x = rnd((size_t)R * n), y = rnd((size_t)R * n), g = rnd((size_t)n), b = rnd((size_t)n);
      auto yb = rnd((size_t)n);
      std::vector<float> sum((size_t)R * n), ref(sum.size()), got(sum.size());
      K.add(sum.data(), y.data(), x.data(), R * n);
      K.layer_norm(ref.data(), sum.data(), g.data(), b.data(), R, n, 1e-5f);
      cuda::check::add_layer_norm(got.data(), x.data(), y.data(), nullptr, g.data(), b.data(), R, n);
      REQUIRE_CLOSE(got, ref, n == 1 ? 1e-3 : 1e-5);  // n == 1: (0 / sqrt(eps)) rounding
      // y's bias added in the same pass: the sum of y + yb (the product's bias, as bias_act
      // adds it), then + x
      std::vector<float> yy((size_t)R * n);
      for (int r = 0; r < R; ++r)
        for (int i = 0; i < n; ++i) yy[(size_t)r * n + i] = y[(size_t)r * n + i] + yb[i];
      K.add(sum.data(), yy.data(), x.data(), R * n);
      K.layer_norm(ref.data(), sum.data(), g.data(), b.data(), R, n, 1e-5f);
      cuda::check::add_layer_norm(got.data(), x.data(), y.data(), yb.data(), g.data(), b.data(), R, n);
      REQUIRE_CLOSE(got, ref, n == 1 ? 1e-3 : 1e-5);
    }
  }
  SECTION("embedding · sqrt(H) + positional encoding") {
    const int V = 11, H = 6, T = 4, R = 8, rows = 20;
    auto table = rnd((size_t)V * H);
    std::vector<float> P((size_t)rows * H);
    positional_encoding_table(P.data(), rows, H);
    std::vector<int> ids = {0, 3, 10, 2, 2, 5, 9, 1};
    for (int pos : {-1, 0, 13}) {
      INFO("pos " << pos);
      std::vector<float> ref((size_t)R * H), got(ref.size());
      const Embedding e{table.data(), nullptr, nullptr, V, H};
      embedding_rows(ref.data(), e, ids.data(), R, std::sqrt((float)H));
      if (pos < 0) {
        add_positional_encoding(ref.data(), P.data(), R / T, T, H);
      } else {
        std::vector<int> p(R, pos);
        add_positional_encoding(ref.data(), P.data(), R, 1, H, p.data());
      }
      cuda::check::embed_positions(got.data(), table.data(), V, P.data(), rows, ids.data(), R, T,
                                   H, pos, std::sqrt((float)H));
      REQUIRE_CLOSE(got, ref, 1e-6);
    }
  }
  SECTION("multi-head attention core with valid lengths (-1e6 mask, per batch, all heads)") {
    for (auto [B, Tq, Tk, H, NH] : std::vector<std::array<int, 5>>{
             {1, 1, 1, 4, 1}, {2, 1, 7, 32, 4}, {3, 10, 10, 32, 4}, {2, 5, 130, 64, 8},
             {1, 3, 300, 512, 8},
             // decoding steps of the base model (D 64), more keys than a block has threads,
             // heads of 16, 32, 128, 256 and 9 values
             {1, 1, 20, 512, 8}, {4, 1, 33, 512, 8}, {2, 1, 1025, 64, 1}, {1, 2, 5, 512, 2},
             {2, 2, 17, 64, 4}, {2, 3, 40, 128, 4}, {1, 1, 50, 256, 2}, {1, 4, 9, 36, 4},
             // a score per key in shared memory past the 48 KiB a kernel has without opting
             // in (50,096 and 50,304 bytes): the kernel's opt-in (cuda::attend_shared_limit)
             {1, 1, 12300, 64, 1}, {2, 2, 12400, 64, 4}}) {
      for (bool masked : {false, true}) {
        INFO("B " << B << " Tq " << Tq << " Tk " << Tk << " H " << H << " NH " << NH
                  << " masked " << masked);
        auto q = rnd((size_t)B * Tq * H), k = rnd((size_t)B * Tk * H), v = rnd((size_t)B * Tk * H);
        std::vector<int> valid((size_t)B);
        for (int b = 0; b < B; ++b) valid[(size_t)b] = b == 0 ? Tk : (b == 1 ? 0 : Tk / 2 + 1);
        const ValidLens vl = masked ? ValidLens::per_batch(valid.data()) : ValidLens::none();
        std::vector<float> ctx_ref((size_t)B * Tq * H), att_ref((size_t)B * NH * Tq * Tk);
        std::vector<float> ctx_got(ctx_ref.size()), att_got(att_ref.size());
        attnlite::test::Scratch s;
        ops::use_kernels(ops::KernelTable::Scalar);
        attend_heads(ctx_ref.data(), AttnOut::dense(att_ref.data(), NH, Tq, Tk), q.data(), k.data(),
                     v.data(), Tk, B, Tq, Tk, H, NH, vl, s.cx);
        cuda::check::attend(ctx_got.data(), att_got.data(), q.data(), k.data(), v.data(), B, Tq,
                            Tk, H, NH, masked ? valid.data() : nullptr);
        REQUIRE_CLOSE(att_got, att_ref, 1e-5);
        REQUIRE_CLOSE(ctx_got, ctx_ref, 1e-5);
      }
    }
  }
  SECTION("attention up to the device's shared memory limit, and an error past it") {
    // D 4 (H 4, one head): G 32 groups, so the query, scores, reduction and sums take
    // 4 + Tk + 32 + 128 floats; Tk at the limit runs, one key more is refused unlaunched
    const size_t limit = cuda::attend_shared_limit();
    INFO("limit " << limit << " bytes");
    REQUIRE(limit >= 48 * 1024);
    const int H = 4, at_limit = (int)(limit / sizeof(float)) - (4 + 32 + 128);
    auto q = rnd((size_t)H), k = rnd((size_t)(at_limit + 1) * H), v = rnd((size_t)(at_limit + 1) * H);
    for (int Tk : {at_limit, at_limit + 1}) {
      INFO("Tk " << Tk);
      std::vector<float> ctx_ref((size_t)H), att_ref((size_t)Tk), ctx_got((size_t)H), att_got((size_t)Tk);
      if (Tk > at_limit) {
        CHECK_THROWS_WITH(cuda::check::attend(ctx_got.data(), att_got.data(), q.data(), k.data(),
                                              v.data(), 1, 1, Tk, H, 1, nullptr),
                          Catch::Contains("bytes of shared memory a block (this GPU: " +
                                          std::to_string(limit) + ")") &&
                              Catch::Contains("run this model on the CPU"));
        continue;
      }
      attnlite::test::Scratch s;
      ops::use_kernels(ops::KernelTable::Scalar);
      attend_heads(ctx_ref.data(), AttnOut::dense(att_ref.data(), 1, 1, Tk), q.data(), k.data(),
                   v.data(), Tk, 1, 1, Tk, H, 1, ValidLens::none(), s.cx);
      cuda::check::attend(ctx_got.data(), att_got.data(), q.data(), k.data(), v.data(), 1, 1, Tk,
                          H, 1, nullptr);
      REQUIRE_CLOSE(att_got, att_ref, 1e-5);
      REQUIRE_CLOSE(ctx_got, ctx_ref, 1e-5);
    }
  }
  SECTION("greedy argmax and its probability, ties to the lowest id") {
    // chunks of 1024 logits: one chunk up to V 1024, several past it (ops::argmax_chunks)
    for (int V : {1, 4, 60, 255, 256, 257, 1024, 1025, 5000, 32000, 200000}) {
      const int R = 6;
      auto lg = rnd((size_t)R * V);
      if (V > 3) {
        lg[(size_t)V + 1] = lg[(size_t)V + 3] = 5.f;  // row 1: a tie between ids 1 and 3
        lg[2 * (size_t)V + V - 1] = 9.f;              // row 2: the maximum at the end
      }
      if (V > 1024) {  // ties in different chunks: the lower id wins wherever it lies
        lg[3 * (size_t)V + 5] = lg[3 * (size_t)V + V - 2] = 7.f;          // row 3: 5
        lg[4 * (size_t)V + V - 1] = lg[4 * (size_t)V + V / 2] = 7.f;      // row 4: V / 2
        const int C = ops::argmax_chunks(V), L = (V + C - 1) / C;  // row 5: either side of
        lg[5 * (size_t)V + L] = lg[5 * (size_t)V + L - 1] = 7.f;   // the first chunk's end: L - 1
      }
      std::vector<int> ids((size_t)R);
      std::vector<float> probs((size_t)R);
      std::vector<double> logp((size_t)R);
      cuda::check::argmax_rows(ids.data(), probs.data(), logp.data(), lg.data(), R, V);
      for (int r = 0; r < R; ++r) {
        const float* row = &lg[(size_t)r * V];
        int best = 0;
        for (int i = 1; i < V; ++i)
          if (row[i] > row[best]) best = i;
        double sum = 0;
        for (int i = 0; i < V; ++i) sum += std::exp((double)row[i] - row[best]);
        INFO("V " << V << " row " << r);
        REQUIRE(ids[(size_t)r] == best);
        REQUIRE(std::fabs(probs[(size_t)r] - (float)(1.0 / sum)) <= 1e-6);
        // the sums differ only in their order of addition: ~V·2^-53 relative in double
        REQUIRE(std::fabs(logp[(size_t)r] + std::log(sum)) <= 1e-12 * (1.0 + std::log(sum)));
      }
    }
  }
  ops::use_kernels(ops::simd_kernels() ? ops::KernelTable::Simd : ops::KernelTable::Scalar);
}

// A step whose ops cannot be captured (here it waits for a download, which a capture refuses):
// its capture fails, it runs launch by launch that time and every time after, with the same
// results as when it is captured, and no graph is made or launched for it.
TEST_CASE("CUDA graphs: a step that cannot be captured runs launch by launch", "[cuda]") {
  if (!have_gpu("the capture fallback check")) return;
  const ops::Ops& o = ops::cuda();
  constexpr int n = 64;
  struct Step {
    const ops::Ops* o;
    float* x;
    const float* one;
    float host[n];
    bool wait;  // download inside the step (a wait: no graph) or not
    int runs;
  };
  float* x = static_cast<float*>(o.alloc(2 * n * sizeof(float)));
  std::vector<float> ones(n, 1.f);
  o.upload(x + n, ones.data(), n * sizeof(float));
  for (const bool wait : {true, false}) {
    INFO((wait ? "a step that waits" : "a step that does not wait"));
    o.zero(x, n * sizeof(float));
    Step st{&o, x, x + n, {}, wait, 0};
    const auto fn = [](void* p) {
      auto& s = *static_cast<Step*>(p);
      ++s.runs;
      s.o->add(s.x, s.x, s.one, n);  // x += 1
      if (s.wait) s.o->download(s.host, s.x, sizeof s.host);
    };
    std::unique_ptr<ops::Recording> rec;
    ops::StepKey key;
    key.v[0] = 7;
    const long made = cuda::graphs_made(), launched = cuda::graph_launches();
    for (int call = 1; call <= 4; ++call) {
      INFO("call " << call);
      o.replay(rec, key, 1, ops::Reuse::Step, fn, &st);
      float now[n];
      o.download(now, x, sizeof now);
      // each call adds one, whether it ran, was captured then launched, or was replayed
      for (float v : now) REQUIRE(v == (float)call);
      if (wait)
        for (float v : st.host) REQUIRE(v == (float)call);
    }
    if (wait) {
      // calls 1, 3 and 4 ran it; call 2 also ran it inside the capture that failed
      CHECK(st.runs == 5);
      CHECK(cuda::graphs_made() == made);
      CHECK(cuda::graph_launches() == launched);
    } else {
      // call 1 ran it, call 2 captured it (nothing ran) and launched the graph, 3 and 4 replayed
      CHECK(st.runs == 2);
      CHECK(cuda::graphs_made() == made + 1);
      CHECK(cuda::graph_launches() == launched + 3);
    }
  }
  o.release(x);
}

// A session's graph keys are bounded (1,024), and a session may meet many keys once (the steps
// of large batches that shrank): past the bound a new key replaces the oldest one without a
// graph, so that a key that comes back later still becomes a graph, and keys with graphs stay.
TEST_CASE("CUDA graphs: past the bound on keys a new key replaces the oldest without a graph", "[cuda]") {
  if (!have_gpu("the graph keys' bound")) return;
  test::ScopedEnv graphs("ATTNLITE_CUDA_GRAPHS");
  graphs.set("");  // steps of one row: captured at their key's second pass
  const ops::Ops& o = ops::cuda();
  constexpr int n = 32;
  struct Step {
    const ops::Ops* o;
    float *x, *one;
    int runs;
  } st{&o, nullptr, nullptr, 0};
  st.x = static_cast<float*>(o.alloc(2 * n * sizeof(float)));
  st.one = st.x + n;
  std::vector<float> ones(n, 1.f);
  o.upload(st.one, ones.data(), n * sizeof(float));
  o.zero(st.x, n * sizeof(float));
  const auto fn = [](void* p) {
    auto& s = *static_cast<Step*>(p);
    ++s.runs;
    s.o->add(s.x, s.x, s.one, n);  // x += 1
  };
  std::unique_ptr<ops::Recording> rec;
  auto key = [](long v) {
    ops::StepKey k;
    k.v[0] = v;
    return k;
  };
  int calls = 0;
  auto step = [&](long v) {
    o.replay(rec, key(v), 1, ops::Reuse::Step, fn, &st);
    ++calls;
  };
  const long made = cuda::graphs_made(), launched = cuda::graph_launches();
  // fn's calls: a step run launch by launch, and a capture (which records, runs nothing)
  step(1);
  step(1);  // key 1: run, then captured and launched
  REQUIRE(cuda::graphs_made() == made + 1);
  REQUIRE(st.runs == 2);
  for (long v = 100; v < 100 + 1500; ++v) step(v);  // 1,500 keys met once: each runs
  REQUIRE(st.runs == 2 + 1500);
  REQUIRE(cuda::graphs_made() == made + 1);
  step(1);  // key 1 kept its graph: replayed, fn not called
  REQUIRE(st.runs == 2 + 1500);
  REQUIRE(cuda::graph_launches() == launched + 2);
  step(5000);
  step(5000);  // a new key after the bound still becomes a graph at its second pass
  REQUIRE(cuda::graphs_made() == made + 2);
  REQUIRE(cuda::graph_launches() == launched + 3);
  REQUIRE(st.runs == 2 + 1500 + 2);
  step(100);  // the oldest of the 1,500 was replaced: it is new again, and runs
  REQUIRE(st.runs == 2 + 1500 + 3);
  REQUIRE(cuda::graph_launches() == launched + 3);
  std::vector<float> x(n);
  o.download(x.data(), st.x, n * sizeof(float));
  for (float v : x) REQUIRE(v == (float)calls);  // every step added one, run or replayed
  o.release(st.x);
}

#endif  // ATTNLITE_HAVE_CUDA
