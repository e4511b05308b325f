// Pixel checks shared by the heatmap tests (test_heatmap.cpp, test_heatmap_labels.cpp):
// luminance, identity matrices, uniform rectangles, ink counts and rectangle geometry.
#pragma once

#include <attnlite/render/heatmap.h>

#include <cstddef>
#include <vector>

namespace attnlite::test {

inline float lum(render::Rgb c) { return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2]; }

inline std::vector<float> eye(int n) {
  std::vector<float> m(static_cast<size_t>(n) * n, 0.f);
  for (int i = 0; i < n; ++i) m[static_cast<size_t>(i) * n + i] = 1.f;
  return m;
}

// Every pixel of the rectangle has colour c.
inline bool uniform(const render::Image& img, render::Rect r, render::Rgb c) {
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x)
      if (img.rgb(x, y) != c) return false;
  return true;
}

inline int ink_in(const render::Image& img, render::Rect r) {
  int n = 0;
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x) n += img.rgb(x, y) != render::kWhite;
  return n;
}

inline bool inside(const render::Image& img, render::Rect r) {
  return !r.empty() && r.x >= 0 && r.y >= 0 && r.right() <= img.width && r.bottom() <= img.height;
}

inline bool overlap(render::Rect a, render::Rect b) {
  return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}

}  // namespace attnlite::test
