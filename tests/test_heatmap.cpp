// Attention heatmaps: colormaps, cell layout, colorbar, panels and figure size, checked on
// decoded PNG pixels. Labels, annotations and masked cells: test_heatmap_labels.cpp.
#include <catch2/catch.hpp>

#include <attnlite/error.h>
#include <attnlite/render/heatmap.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "heatmap_checks.h"

using namespace attnlite::render;
using namespace attnlite::test;

Image png_roundtrip(const Image& image);  // test_image.cpp

TEST_CASE("colormap endpoints match matplotlib", "[viz][colormap]") {
  CHECK(colormap_rgb(Colormap::Reds, 0.f) == Rgb{255, 245, 240});
  CHECK(colormap_rgb(Colormap::Reds, 1.f) == Rgb{103, 0, 13});
  CHECK(colormap_rgb(Colormap::Blues, 0.f) == Rgb{247, 251, 255});
  CHECK(colormap_rgb(Colormap::Blues, 1.f) == Rgb{8, 48, 107});
  CHECK(colormap_rgb(Colormap::Viridis, 0.f) == Rgb{68, 1, 84});
  CHECK(colormap_rgb(Colormap::Viridis, 1.f) == Rgb{253, 231, 37});
  // matplotlib's Reds(0.5) and viridis(0.5), rounded.
  CHECK(colormap_rgb(Colormap::Reds, 0.5f) == Rgb{251, 105, 74});
  CHECK(colormap_rgb(Colormap::Viridis, 0.5f) == Rgb{33, 145, 140});
  // Clamped, NaN as 0.
  CHECK(colormap_rgb(Colormap::Reds, -3.f) == colormap_rgb(Colormap::Reds, 0.f));
  CHECK(colormap_rgb(Colormap::Reds, 7.f) == colormap_rgb(Colormap::Reds, 1.f));
  CHECK(colormap_rgb(Colormap::Blues, std::numeric_limits<float>::quiet_NaN()) == colormap_rgb(Colormap::Blues, 0.f));
  // Reds and Blues darken monotonically.
  for (Colormap c : {Colormap::Reds, Colormap::Blues})
    for (int i = 1; i < 256; ++i) CHECK(lum(colormap_rgb(c, i / 255.f)) <= lum(colormap_rgb(c, (i - 1) / 255.f)));
}

TEST_CASE("colormap_from_name", "[viz][colormap]") {
  CHECK(colormap_from_name("Reds") == Colormap::Reds);
  CHECK(colormap_from_name("reds") == Colormap::Reds);
  CHECK(colormap_from_name("BLUES") == Colormap::Blues);
  CHECK(colormap_from_name("viridis") == Colormap::Viridis);
  CHECK(colormap_from_name("Viridis") == Colormap::Viridis);
  CHECK_THROWS_AS(colormap_from_name("jet"), attnlite::Error);
  CHECK_THROWS_AS(colormap_from_name(""), attnlite::Error);
  CHECK_THROWS_AS(colormap_from_name("Reds "), attnlite::Error);
  CHECK(std::string(colormap_name(Colormap::Viridis)) == "viridis");
}

TEST_CASE("eye(10) in Reds: darkest diagonal, zero colour elsewhere", "[viz][heatmap]") {
  const auto m = eye(10);
  HeatmapOptions o;
  const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, 10, 10, o));
  const HeatmapLayout L = heatmap_layout(1, 1, 10, 10, o, m.data());
  REQUIRE(img.width == 250);
  REQUIRE(img.height == 250);
  REQUIRE(L.width == 250);
  REQUIRE(L.panels.size() == 1);
  REQUIRE(inside(img, L.panels[0]));
  for (int q = 0; q < 10; ++q)
    for (int k = 0; k < 10; ++k) {
      const Rect cell = L.cell(0, 0, q, k);
      REQUIRE(!cell.empty());
      const Rgb want = q == k ? Rgb{103, 0, 13} : colormap_rgb(Colormap::Reds, 0.f);
      CHECK(img.rgb(cell.cx(), cell.cy()) == want);
      CHECK(uniform(img, cell, want));  // filled rectangles, no interpolation
    }
}

TEST_CASE("cells tile each panel exactly, also for 50x50 and 100x100", "[viz][heatmap]") {
  for (int n : {10, 50, 100}) {
    INFO(n);
    const HeatmapLayout L = heatmap_layout(1, 1, n, n, HeatmapOptions{});
    const Rect& P = L.panels[0];
    CHECK(P.w >= n);  // every cell keeps at least one pixel in the default figure
    CHECK(P.h >= n);
    int x = P.x;
    for (int k = 0; k < n; ++k) {
      const Rect c = L.cell(0, 0, 0, k);
      CHECK(c.x == x);
      CHECK(c.w >= 1);
      x += c.w;
    }
    CHECK(x == P.right());
    CHECK(L.cell(0, 0, n - 1, 0).bottom() == P.bottom());
  }
  CHECK_THROWS_AS(heatmap_layout(1, 1, 4, 4, HeatmapOptions{}).cell(0, 0, 4, 0), attnlite::Error);
}

TEST_CASE("the colorbar runs from light (vmin, bottom) to dark (vmax, top)", "[viz][heatmap]") {
  const auto m = eye(10);
  HeatmapOptions o;
  const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, 10, 10, o));
  const Rect cb = heatmap_layout(1, 1, 10, 10, o, m.data()).colorbar;
  REQUIRE(inside(img, cb));
  REQUIRE(cb.h > 20);
  // Right of the panel, not overlapping it.
  const Rect P = heatmap_layout(1, 1, 10, 10, o).panels[0];
  CHECK(cb.x > P.right());
  for (int x = cb.x; x < cb.right(); ++x) {
    float prev = 1e9f;
    for (int y = cb.bottom() - 1; y >= cb.y; --y) {
      const float l = lum(img.rgb(x, y));
      CHECK(l <= prev);
      prev = l;
    }
  }
  CHECK(img.rgb(cb.cx(), cb.bottom() - 1) == colormap_rgb(Colormap::Reds, 0.f));
  CHECK(img.rgb(cb.cx(), cb.y) == colormap_rgb(Colormap::Reds, 1.f));
  CHECK(lum(img.rgb(cb.cx(), cb.y)) < lum(img.rgb(cb.cx(), cb.bottom() - 1)));
  // Tick labels right of the bar.
  CHECK(ink_in(img, {cb.right() + 2, cb.y - 6, img.width - cb.right() - 2, cb.h + 12}) > 0);
}

TEST_CASE("zero weights get exactly the zero colour with vmin = 0", "[viz][heatmap]") {
  // Causally masked attention: weights above the diagonal are 0.
  const int n = 6;
  std::vector<float> m(static_cast<size_t>(n) * n, 0.f);
  for (int q = 0; q < n; ++q)
    for (int k = 0; k <= q; ++k) m[static_cast<size_t>(q) * n + k] = 1.f / (q + 1);
  for (Colormap cmap : {Colormap::Reds, Colormap::Blues, Colormap::Viridis}) {
    HeatmapOptions o;
    o.cmap = cmap;
    o.vmin = 0.f;
    const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, n, n, o));
    const HeatmapLayout L = heatmap_layout(1, 1, n, n, o, m.data());
    CHECK(L.vmin == 0.f);
    CHECK(L.vmax == 1.f);
    for (int q = 0; q < n; ++q)
      for (int k = 0; k < n; ++k) {
        const Rect c = L.cell(0, 0, q, k);
        if (k > q)
          CHECK(uniform(img, c, colormap_rgb(cmap, 0.f)));
        else
          CHECK(img.rgb(c.cx(), c.cy()) == colormap_rgb(cmap, 1.f / (q + 1)));
      }
  }
}

TEST_CASE("one panel per (row, col) with its own data and one shared scale", "[viz][heatmap]") {
  const int rows = 2, cols = 3, q = 4, k = 5;
  std::vector<float> m;
  for (int p = 0; p < rows * cols; ++p)
    for (int i = 0; i < q * k; ++i) m.push_back(static_cast<float>(p) / (rows * cols - 1));
  HeatmapOptions o;
  o.titles = {"Head 1", "Head 2", "Head 3"};
  o.fig_width_in = 6.f;
  o.fig_height_in = 3.f;
  const Image img = png_roundtrip(render_heatmaps(m.data(), rows, cols, q, k, o));
  const HeatmapLayout L = heatmap_layout(rows, cols, q, k, o, m.data());
  REQUIRE(L.panels.size() == static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < L.panels.size(); ++i) {
    INFO("panel " << i);
    REQUIRE(inside(img, L.panels[i]));
    CHECK(uniform(img, L.panels[i], colormap_rgb(Colormap::Reds, static_cast<float>(i) / 5.f)));
    for (size_t j = i + 1; j < L.panels.size(); ++j) CHECK(!overlap(L.panels[i], L.panels[j]));
    CHECK(!overlap(L.panels[i], L.colorbar));
  }
  // Row-major, sharing rows and columns.
  CHECK(L.panels[1].y == L.panels[0].y);
  CHECK(L.panels[3].x == L.panels[0].x);
  CHECK(L.panels[3].y > L.panels[0].bottom());
}

TEST_CASE("colorbar_max_ticks thins the ticks of a tall colorbar", "[viz][heatmap]") {
  const auto m = eye(10);
  HeatmapOptions o;
  o.fig_width_in = 8.f;
  o.fig_height_in = 8.f;
  // Tick marks: black pixels just right of the bar's frame, one run per tick.
  const auto ticks = [&](const HeatmapOptions& opts) {
    const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, 10, 10, opts));
    const Rect cb = heatmap_layout(1, 1, 10, 10, opts, m.data()).colorbar;
    int runs = 0;
    bool prev = false;
    for (int y = cb.y - 2; y < cb.bottom() + 2; ++y) {
      const bool on = img.rgb(cb.right() + 2, y) == kBlack;
      runs += on && !prev;
      prev = on;
    }
    return runs;
  };
  CHECK(ticks(o) == 6);  // by default 5-8 ticks: 0, 0.2, ..., 1 (0.1 would give 11)
  o.colorbar_max_ticks = 6;
  CHECK(ticks(o) == 6);  // 0, 0.2, ..., 1
  o.colorbar_max_ticks = 11;
  CHECK(ticks(o) == 11);
}

TEST_CASE("figure size follows figsize and dpi; text scales with dpi", "[viz][heatmap]") {
  const auto m = eye(10);
  HeatmapOptions o;
  o.titles = {"Head 1"};
  o.dpi = 200;
  const Image img = render_heatmaps(m.data(), 1, 1, 10, 10, o);
  CHECK(img.width == 500);
  CHECK(img.height == 500);
  const HeatmapLayout big = heatmap_layout(1, 1, 10, 10, o);
  o.dpi = 100;
  const HeatmapLayout small = heatmap_layout(1, 1, 10, 10, o);
  CHECK(std::abs(big.titles[0].h - 2 * small.titles[0].h) <= 1);  // line heights rounded up
  CHECK(big.panels[0].w > small.panels[0].w * 3 / 2);
  o.fig_width_in = 5.f;
  CHECK(heatmap_layout(1, 1, 10, 10, o).width == 500);
}

// Not run by default: `attnlite_tests "[.gallery]"` rewrites the sample images in docs/gallery.
TEST_CASE("gallery: heatmaps", "[.gallery]") {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.find_last_of('/') + 1) + "../docs/gallery/";
  {  // d2l 11.1: eye(10)
    const auto m = eye(10);
    write_png(dir + "eye10.png", render_heatmaps(m.data(), 1, 1, 10, 10, HeatmapOptions{}));
  }
  {  // d2l 11.2: Nadaraya-Watson weights with a Gaussian kernel, 50 x 50
    const int n = 50;
    std::vector<float> m(static_cast<size_t>(n) * n);
    for (int q = 0; q < n; ++q) {
      float sum = 0.f;
      for (int k = 0; k < n; ++k) {
        const float d = (q - k) * 0.1f;
        sum += m[static_cast<size_t>(q) * n + k] = std::exp(-d * d / 2.f);
      }
      for (int k = 0; k < n; ++k) m[static_cast<size_t>(q) * n + k] /= sum;
    }
    HeatmapOptions o;
    o.xlabel = "Sorted training inputs";
    o.ylabel = "Sorted testing inputs";
    write_png(dir + "nadaraya_watson_50.png", render_heatmaps(m.data(), 1, 1, n, n, o));
  }
  {  // 100 x 100, Blues
    const int n = 100;
    std::vector<float> m(static_cast<size_t>(n) * n);
    for (int q = 0; q < n; ++q)
      for (int k = 0; k < n; ++k) m[static_cast<size_t>(q) * n + k] = std::exp(-std::abs(q - k) / 8.f) * (k <= q);
    HeatmapOptions o;
    o.cmap = Colormap::Blues;
    o.vmin = 0.f;
    write_png(dir + "causal_100_blues.png", render_heatmaps(m.data(), 1, 1, n, n, o));
  }
  {  // d2l 11.5: 2 layers x 4 heads
    const int q = 10, k = 10;
    std::vector<float> m(static_cast<size_t>(2 * 4 * q * k));
    for (int p = 0; p < 8; ++p)
      for (int i = 0; i < q; ++i) {
        float sum = 0.f;
        for (int j = 0; j < k; ++j)
          sum += m[static_cast<size_t>((p * q + i) * k + j)] = std::exp(std::cos(0.7f * (p + 1) * (i - j) + p) * 2.f);
        for (int j = 0; j < k; ++j) m[static_cast<size_t>((p * q + i) * k + j)] /= sum;
      }
    HeatmapOptions o;
    o.titles = {"Head 1", "Head 2", "Head 3", "Head 4"};
    o.fig_width_in = 7.f;
    o.fig_height_in = 3.5f;
    write_png(dir + "heads_2x4.png", render_heatmaps(m.data(), 2, 4, q, k, o));
  }
  {  // d2l 11.4: Bahdanau attention over tokens, annotated, viridis
    const std::vector<std::string> src = {"i", "'m", "home", ".", "<eos>"};
    const std::vector<std::string> tgt = {"je", "suis", "chez", "moi", ".", "<eos>"};
    const float w[6][5] = {{.70f, .15f, .08f, .04f, .03f}, {.10f, .72f, .10f, .05f, .03f},
                           {.05f, .10f, .60f, .20f, .05f}, {.04f, .06f, .70f, .15f, .05f},
                           {.02f, .03f, .10f, .80f, .05f}, {.01f, .02f, .05f, .12f, .80f}};
    std::vector<float> m(&w[0][0], &w[0][0] + 30);
    HeatmapOptions o;
    o.xticks = src;
    o.yticks = tgt;
    o.annotate = true;
    o.cmap = Colormap::Viridis;
    o.fig_width_in = 3.5f;
    o.fig_height_in = 3.5f;
    write_png(dir + "tokens_viridis.png", render_heatmaps(m.data(), 1, 1, 6, 5, o));
  }
  {  // French target tokens with accents, 200 dpi
    const std::vector<std::string> src = {"he", "'s", "wet", ".", "<eos>"};
    const std::vector<std::string> tgt = {"il", "est", "mouill\xC3\xA9", "\xC3\xA0", "\xC3\xA7" "a", "<eos>"};
    std::vector<float> m(30);
    for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>((i * 7) % 11) / 10.f;
    HeatmapOptions o;
    o.xticks = src;
    o.yticks = tgt;
    o.dpi = 200;
    o.fig_width_in = 3.f;
    o.fig_height_in = 3.f;
    write_png(dir + "tokens_french_200dpi.png", render_heatmaps(m.data(), 1, 1, 6, 5, o));
  }
}
