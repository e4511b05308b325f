// The int8 linear layer of the web build (src/cpu/wasm/linear_i8_simd128.cpp) alone, in node:
// random int8 weights, the default model's shapes (a greedy step's output layer and FFN, a
// 12-token source, beam 4's output layer), the best of 7 rounds of 100 ms each, in
// multiply-adds per second, and in i32x4.dot_i16x8_s per second (two per 8 multiply-adds:
// the hi and lo parts of x) beside the rate of a loop of six independent dot-and-add chains
// and nothing else, the instruction's roof under V8. Built and run by bench/wasm_linear_i8.sh.
#include <emscripten.h>
#include <wasm_simd128.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "cpu/wasm/linear_i8_simd128.h"

// n iterations of six independent acc += dot(x_i, y) chains, y loaded each iteration.
__attribute__((noinline)) v128_t dot_chains(const int16_t* a, int n) {
  v128_t acc[6], x[6];
  for (int i = 0; i < 6; ++i) {
    acc[i] = wasm_i32x4_splat(i);
    x[i] = wasm_i16x8_splat((int16_t)(i + a[i]));
  }
#pragma clang loop unroll(disable)
  for (int k = 0; k < n; ++k) {
    const v128_t y = wasm_v128_load(a + (k & 7));
    for (int i = 0; i < 6; ++i) acc[i] = wasm_i32x4_add(acc[i], wasm_i32x4_dot_i16x8(x[i], y));
  }
  v128_t s = acc[0];
  for (int i = 1; i < 6; ++i) s = wasm_i32x4_add(s, acc[i]);
  return s;
}

int main() {
  alignas(16) static int16_t a[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  double roof = 0;
  for (int r = 0; r < 7; ++r) {
    const int n = 1 << 22;
    const double t0 = emscripten_get_now();
    const v128_t s = dot_chains(a, n);
    const double t = emscripten_get_now() - t0;
    if (wasm_i32x4_extract_lane(s, 0) == 12345) std::printf(" ");
    roof = std::max(roof, 6.0 * n / (t * 1e-3) / 1e9);
  }
  std::printf("i32x4.dot_i16x8_s + i32x4.add, six chains: %.2f G/s\n", roof);
  std::mt19937 g(1);
  std::normal_distribution<float> nd;
  struct Shape {
    int M, N, K;
    const char* what;
  } shapes[] = {{1, 8106, 256, "output layer, one greedy step"},
                {1, 1024, 256, "FFN up, one step"},
                {1, 256, 1024, "FFN down, one step"},
                {12, 256, 256, "a 12-token source, 256 x 256"},
                {12, 1024, 256, "a 12-token source, FFN up"},
                {4, 8106, 256, "output layer, beam 4"}};
  for (const Shape& s : shapes) {
    std::vector<float> x((size_t)s.M * s.K), y((size_t)s.M * s.N), scale(s.N, 0.01f), b(s.N);
    std::vector<int8_t> q((size_t)s.N * s.K);
    for (float& v : x) v = nd(g);
    for (float& v : b) v = nd(g);
    for (int8_t& v : q) v = (int8_t)((int)(g() % 255) - 127);
    double best = 1e30;
    for (int r = 0; r < 7; ++r) {
      long it = 0;
      const double t0 = emscripten_get_now();
      double t = t0;
      do {
        attnlite::ops::wasm::linear_i8(y.data(), x.data(), q.data(), scale.data(), b.data(), s.M, s.N, s.K);
        ++it;
        t = emscripten_get_now();
      } while (t - t0 < 100);
      best = std::min(best, (t - t0) / (double)it);
    }
    const double gmac = (double)s.M * s.N * s.K / (best * 1e-3) / 1e9;
    std::printf("%2d x %4d x %4d (%s): %8.1f us, %5.2f GMAC/s, %.2f G dot/s (%.0f%% of the roof)\n", s.M,
                s.N, s.K, s.what, best * 1e3, gmac, gmac / 4, 100 * gmac / 4 / roof);
  }
}
