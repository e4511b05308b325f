#include "attnlite/attention/positional_encoding.h"

#include <cmath>

namespace attnlite::attention {

void positional_encoding_table(float* P, int max_len, int H) {
  // The book: X = arange(max_len) / pow(10000, arange(0, H, 2) / H), all in float32.
  for (int j = 0; j < H; j += 2) {
    const float div = std::pow(10000.f, (float)j / (float)H);
    for (int i = 0; i < max_len; ++i) {
      const float x = (float)i / div;
      P[(long)i * H + j] = std::sin(x);
      if (j + 1 < H) P[(long)i * H + j + 1] = std::cos(x);
    }
  }
}

void add_positional_encoding(float* x, const float* P, int B, int T, int H, const int* positions) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* p = P + (long)(positions ? positions[t] : t) * H;
      float* xr = x + ((long)b * T + t) * H;
      for (int i = 0; i < H; ++i) xr[i] += p[i];
    }
}

void add_positional_embedding(float* x, const float* pos_embedding, int B, int T, int H) {
  add_positional_encoding(x, pos_embedding, B, T, H, nullptr);
}

}  // namespace attnlite::attention
