// Int8 weights: the linear_i8 kernels (scalar, SIMD) against fp32 on the dequantized
// weights, and the loader's checks of int8 files (tools/quantize.py's layout).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/translate.h"
#include "fixture.h"
#include "families/transformer/transformer.h"  // the bound weights
#include "model/model_impl.h"
#include "st_writer.h"

using namespace attnlite;
using attnlite::test::StFile;
using Catch::Matchers::Contains;

namespace {

struct Case {
  std::vector<float> x, scale, b, w;  // w: the dequantized weights
  std::vector<int8_t> q;
};

Case make_case(int M, int N, int K, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::uniform_int_distribution<int> qi(-127, 127);
  Case c;
  c.x.resize((size_t)M * K);
  for (auto& v : c.x) v = u(rng);
  c.q.resize((size_t)N * K);
  for (auto& v : c.q) v = (int8_t)qi(rng);
  c.scale.resize(N);
  for (auto& v : c.scale) v = 0.001f + 0.02f * std::fabs(u(rng));
  c.b.resize(N);
  for (auto& v : c.b) v = u(rng);
  c.w.resize((size_t)N * K);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) c.w[(size_t)n * K + k] = c.scale[n] * (float)c.q[(size_t)n * K + k];
  return c;
}

void require_close_rel(const std::vector<float>& a, const std::vector<float>& e, float tol) {
  REQUIRE(a.size() == e.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("index " << i << ": " << a[i] << " vs " << e[i]);
    REQUIRE(std::fabs(a[i] - e[i]) <= tol * (1.f + std::fabs(e[i])));
  }
}

}  // namespace

TEST_CASE("linear_i8 equals fp32 linear on the dequantized weights", "[int8][kernels]") {
  const auto& S = ops::scalar_kernels();
  // every SIMD table this CPU runs: the 256-bit one, AVX-512 (its tiles of 4 x 4 outputs, a
  // pair and a single column: N mod 4 = 0..3) and the one in use (WASM's own)
  for (const ops::Kernels* V : {ops::simd256_kernels(), ops::avx512_kernels(), ops::simd_kernels()}) {
    INFO("table " << (V ? V->name : "none"));
    unsigned seed = 1;
    for (int M : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 20})
      for (int N : {1, 2, 3, 5, 6, 7, 16, 17, 33})
        for (int K : {1, 7, 8, 9, 16, 24, 64, 128, 130, 136}) {
          INFO("M " << M << " N " << N << " K " << K);
          Case c = make_case(M, N, K, seed++);
          std::vector<float> ref((size_t)M * N), got((size_t)M * N, NAN);
          S.linear(ref.data(), c.x.data(), c.w.data(), c.b.data(), M, N, K);
          S.linear_i8(got.data(), c.x.data(), c.q.data(), c.scale.data(), c.b.data(), M, N, K);
          require_close_rel(got, ref, 1e-5f);
          if (V) {
            std::vector<float> simd((size_t)M * N, NAN);
            V->linear_i8(simd.data(), c.x.data(), c.q.data(), c.scale.data(), c.b.data(), M, N, K);
            require_close_rel(simd, ref, 1e-5f);
            std::fill(simd.begin(), simd.end(), NAN);
            V->linear_i8(simd.data(), c.x.data(), c.q.data(), c.scale.data(), nullptr, M, N, K);
            for (int m = 0; m < M; ++m)
              for (int n = 0; n < N; ++n) ref[(size_t)m * N + n] -= c.b[n];
            require_close_rel(simd, ref, 1e-5f);
          }
        }
  }
}

TEST_CASE("int8 model files: the weights stay int8 in memory", "[int8][loader]") {
  auto f32 = Model::load(test::model_path("transformer-d2l"));
  auto i8 = Model::load(test::fixture_path("transformer-d2l-int8"));
  // every linear weight and both embedding tables: 1 byte instead of 4 per weight
  REQUIRE(i8->weight_bytes() < f32->weight_bytes() / 2);
  REQUIRE(static_cast<const families::TransformerModel&>(*i8->impl().model).weights.dec[0].ffn.dense1.int8());
  REQUIRE(static_cast<const families::TransformerModel&>(*i8->impl().model).weights.dec[0].ffn.dense1.w == nullptr);
  REQUIRE_FALSE(static_cast<const families::TransformerModel&>(*f32->impl().model).weights.dec[0].ffn.dense1.int8());
}

TEST_CASE("int8 model files: damaged quantization is rejected by name", "[int8][loader]") {
  StFile f = StFile::from(SafeTensors::load(test::fixture_path("transformer-d2l-int8")));
  const std::string w = "decoder.dense.weight";
  auto load = [&] {
    const auto b = f.bytes();
    return Model::from_bytes(b.data(), b.size());
  };
  REQUIRE_NOTHROW(load());
  SECTION("scale missing") {
    f.erase(w + "_scale");
    REQUIRE_THROWS_WITH(load(), Contains("missing tensor '" + w + "_scale'"));
  }
  SECTION("scale of the wrong shape") {
    auto* t = f.find(w + "_scale");
    t->shape = {t->shape[0] - 1};
    t->bytes.resize(t->bytes.size() - 4);
    REQUIRE_THROWS_WITH(load(), Contains(w + "_scale' has shape"));
  }
  SECTION("scale stored as I8") {
    auto* t = f.find(w + "_scale");
    t->dtype = "I8";
    t->bytes.resize(t->bytes.size() / 4);
    REQUIRE_THROWS_WITH(load(), Contains(w + "_scale' has dtype I8, expected F32"));
  }
  SECTION("NaN scale") {
    auto* t = f.find(w + "_scale");
    const float nan = NAN;
    std::memcpy(t->bytes.data() + 4, &nan, 4);
    REQUIRE_THROWS_WITH(load(), Contains(w + "_scale' contains NaN"));
  }
  SECTION("a scale beside an fp32 weight is an unexpected tensor") {
    StFile g = StFile::from(SafeTensors::load(test::model_path("transformer-d2l")));
    g.tensors.emplace_back(w + "_scale", attnlite::test::f32_tensor({g.find(w)->shape[0]}));
    const auto b = g.bytes();
    REQUIRE_THROWS_WITH(Model::from_bytes(b.data(), b.size()), Contains("unexpected tensor '" + w + "_scale'"));
  }
  SECTION("int8 where only fp32 is accepted (LayerNorm)") {
    auto* t = f.find("decoder.blks.block0.addnorm1.ln.weight");
    REQUIRE(t != nullptr);
    t->dtype = "I8";
    t->bytes.resize(t->bytes.size() / 4);
    REQUIRE_THROWS_WITH(load(), Contains("has dtype I8, expected F32"));
  }
}

TEST_CASE("int8 and fp32 models agree on the book's sentences", "[int8][translate]") {
  auto f32 = Model::load(test::model_path("transformer-d2l"));
  auto i8 = Model::load(test::fixture_path("transformer-d2l-int8"));
  Translator a(f32), b(i8);
  for (const char* s : {"go .", "i lost .", "he's calm .", "i'm home ."}) {
    INFO(s);
    REQUIRE(std::string(a.translate(s).text) == std::string(b.translate(s).text));
  }
}
