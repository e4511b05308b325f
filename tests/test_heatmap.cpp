// Attention heatmaps: colours, layout and labels, checked on decoded PNG pixels.
#include <catch2/catch.hpp>

#include <attnlite/error.h>
#include <attnlite/viz/heatmap.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace attnlite::viz;

Image png_roundtrip(const Image& image);  // test_image.cpp

namespace {

float lum(Rgb c) { return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2]; }

std::vector<float> eye(int n) {
  std::vector<float> m(static_cast<size_t>(n) * n, 0.f);
  for (int i = 0; i < n; ++i) m[static_cast<size_t>(i) * n + i] = 1.f;
  return m;
}

// Every pixel of the rectangle has colour c.
bool uniform(const Image& img, Rect r, Rgb c) {
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x)
      if (img.rgb(x, y) != c) return false;
  return true;
}

int ink_in(const Image& img, Rect r) {
  int n = 0;
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x) n += img.rgb(x, y) != kWhite;
  return n;
}

bool inside(const Image& img, Rect r) {
  return !r.empty() && r.x >= 0 && r.y >= 0 && r.right() <= img.width && r.bottom() <= img.height;
}

bool overlap(Rect a, Rect b) {
  return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}

}  // namespace

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

TEST_CASE("titles, axis labels and tick labels are drawn where the layout says", "[viz][heatmap]") {
  const int rows = 2, cols = 4, q = 5, k = 7;
  std::vector<float> m(static_cast<size_t>(rows * cols * q * k));
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i % 13) / 12.f;
  HeatmapOptions o;
  o.titles = {"Head 1", "Head 2", "Head 3", "Head 4"};
  o.fig_width_in = 7.f;
  o.fig_height_in = 3.5f;
  const Image img = png_roundtrip(render_heatmaps(m.data(), rows, cols, q, k, o));
  const HeatmapLayout L = heatmap_layout(rows, cols, q, k, o, m.data());
  std::vector<Rect> boxes;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      INFO("panel " << r << "," << c);
      // A title above every panel, like ax.set_title(titles[j]) in the book.
      REQUIRE(inside(img, L.titles[i]));
      CHECK(ink_in(img, L.titles[i]) > 10);
      CHECK(L.titles[i].bottom() <= L.panels[i].y);
      boxes.push_back(L.titles[i]);
      // x label under the last row only, y label beside the first column only.
      CHECK(L.xlabels[i].empty() == (r != rows - 1));
      CHECK(L.ylabels[i].empty() == (c != 0));
      if (!L.xlabels[i].empty()) {
        REQUIRE(inside(img, L.xlabels[i]));
        CHECK(ink_in(img, L.xlabels[i]) > 10);
        CHECK(L.xlabels[i].y > L.panels[i].bottom());
        boxes.push_back(L.xlabels[i]);
      }
      if (!L.ylabels[i].empty()) {
        REQUIRE(inside(img, L.ylabels[i]));
        CHECK(ink_in(img, L.ylabels[i]) > 10);
        CHECK(L.ylabels[i].right() < L.panels[i].x);
        CHECK(L.ylabels[i].h > L.ylabels[i].w);  // written vertically
        boxes.push_back(L.ylabels[i]);
      }
      // Tick labels: numbers under the bottom row and left of the first column only.
      const Rect& P = L.panels[i];
      const int below = P.bottom() + 7;  // past the frame and the tick marks
      if (r == rows - 1)
        CHECK(ink_in(img, {P.x, below, P.w, 14}) > 0);
      else
        CHECK(ink_in(img, {P.x, below, P.w, L.titles[i + cols].y - below}) == 0);
      if (c == 0) {
        CHECK(ink_in(img, {P.x - 20, P.y, 13, P.h}) > 0);
      } else {
        const Rect& prev = L.panels[i - 1];
        CHECK(ink_in(img, {prev.right() + 1, P.y, P.x - 7 - prev.right() - 1, P.h}) == 0);
      }
    }
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = i + 1; j < boxes.size(); ++j) CHECK(!overlap(boxes[i], boxes[j]));
    for (const Rect& P : L.panels) CHECK(!overlap(boxes[i], P));
  }
  // Background elsewhere in the margins: above the titles and left of the y labels.
  int top_of_titles = img.height;
  for (int c = 0; c < cols; ++c) top_of_titles = std::min(top_of_titles, L.titles[static_cast<size_t>(c)].y);
  CHECK(ink_in(img, {0, 0, img.width, top_of_titles}) == 0);
  CHECK(ink_in(img, {0, 0, L.ylabels[0].x, img.height}) == 0);
  CHECK(ink_in(img, {L.titles[0].right() + 1, L.titles[0].y, L.titles[1].x - L.titles[0].right() - 2, L.titles[0].h}) == 0);
}

TEST_CASE("token tick labels: keys written vertically, queries horizontally", "[viz][heatmap]") {
  const std::vector<std::string> src = {"il", "est", "mouill\xC3\xA9", "<eos>"};
  const std::vector<std::string> tgt = {"he's", "wet", ".", "<eos>", "\xC3\xA0", "\xC3\xA7" "a"};
  std::vector<float> m(tgt.size() * src.size(), 0.25f);
  HeatmapOptions o;
  o.xticks = src;
  o.yticks = tgt;
  o.xlabel = "";
  o.ylabel = "";
  o.fig_width_in = 3.5f;
  o.fig_height_in = 3.5f;
  const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, static_cast<int>(tgt.size()), static_cast<int>(src.size()), o));
  const HeatmapLayout L = heatmap_layout(1, 1, static_cast<int>(tgt.size()), static_cast<int>(src.size()), o);
  const Rect& P = L.panels[0];
  // Below the panel, the ink under each key is taller than wide (rotated text).
  for (int k = 0; k < static_cast<int>(src.size()); ++k) {
    const Rect c = L.cell(0, 0, 0, k);
    int x0 = img.width, x1 = -1, y0 = img.height, y1 = -1;
    for (int y = P.bottom() + 8; y < img.height; ++y)
      for (int x = c.x; x < c.right(); ++x)
        if (img.rgb(x, y) != kWhite) {
          x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
        }
    INFO("key " << k);
    REQUIRE(x1 >= 0);
    CHECK(y1 - y0 > x1 - x0);
  }
  // Left of the panel, one line of ink per query.
  for (int q = 0; q < static_cast<int>(tgt.size()); ++q) {
    const Rect c = L.cell(0, 0, q, 0);
    CHECK(ink_in(img, {0, c.y, P.x - 8, c.h}) > 0);
  }
  CHECK_THROWS_AS(heatmap_layout(1, 1, 6, 3, o), attnlite::Error);  // 4 key labels for 3 keys
}

TEST_CASE("annotations print values in contrasting colours", "[viz][heatmap]") {
  const std::vector<float> m = {0.f, 1.f, 0.25f, 0.75f};
  HeatmapOptions o;
  o.annotate = true;
  const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, 2, 2, o));
  o.annotate = false;
  const Image plain = png_roundtrip(render_heatmaps(m.data(), 1, 1, 2, 2, o));
  const HeatmapLayout L = heatmap_layout(1, 1, 2, 2, o, m.data());
  for (int q = 0; q < 2; ++q)
    for (int k = 0; k < 2; ++k) {
      const Rect c = L.cell(0, 0, q, k);
      const Rgb bg = plain.rgb(c.cx(), c.cy() - c.h / 3);
      CHECK(uniform(plain, c, bg));
      CHECK(!uniform(img, c, bg));
    }
  // Dark text on the lightest cell, light text on the darkest.
  const auto text_lum = [&](Rect c, Rgb bg) {
    float extreme = lum(bg);
    for (int y = c.y; y < c.bottom(); ++y)
      for (int x = c.x; x < c.right(); ++x)
        if (img.rgb(x, y) != bg) extreme = lum(img.rgb(x, y));
    return extreme;
  };
  CHECK(text_lum(L.cell(0, 0, 0, 0), colormap_rgb(Colormap::Reds, 0.f)) < 50.f);
  CHECK(text_lum(L.cell(0, 0, 0, 1), colormap_rgb(Colormap::Reds, 1.f)) > 200.f);
}

TEST_CASE("NaN cells stay background, explicit vmin/vmax clamp", "[viz][heatmap]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> m = {nan, 2.f, -1.f, 0.5f};
  HeatmapOptions o;
  o.vmin = 0.f;
  o.vmax = 1.f;
  const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, 2, 2, o));
  const HeatmapLayout L = heatmap_layout(1, 1, 2, 2, o, m.data());
  CHECK(uniform(img, L.cell(0, 0, 0, 0), kWhite));
  CHECK(uniform(img, L.cell(0, 0, 0, 1), colormap_rgb(Colormap::Reds, 1.f)));
  CHECK(uniform(img, L.cell(0, 0, 1, 0), colormap_rgb(Colormap::Reds, 0.f)));
  CHECK(uniform(img, L.cell(0, 0, 1, 1), colormap_rgb(Colormap::Reds, 0.5f)));
}

TEST_CASE("masked (NaN) cells: a fill, hatch lines and a labelled swatch under the colorbar", "[viz][heatmap]") {
  // A causal map: the future (k > q) is NaN, the past holds weights.
  const int n = 6;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> m(static_cast<size_t>(n) * n);
  for (int q = 0; q < n; ++q)
    for (int k = 0; k < n; ++k) m[static_cast<size_t>(q) * n + k] = k > q ? nan : 1.f / (q + 1);
  HeatmapOptions o;
  o.vmin = 0.f;
  o.vmax = 1.f;
  o.masked_color = kMaskedGrey;
  o.masked_hatch = kMaskedHatch;
  o.masked_label = "masked";
  o.fig_width_in = 3.5f;
  const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, n, n, o));
  const HeatmapLayout L = heatmap_layout(1, 1, n, n, o, m.data());
  int fill = 0, hatch = 0;
  for (int q = 0; q < n; ++q)
    for (int k = 0; k < n; ++k) {
      const Rect c = L.cell(0, 0, q, k);
      INFO("cell " << q << "," << k);
      if (k <= q) {
        CHECK(uniform(img, c, colormap_rgb(Colormap::Reds, 1.f / (q + 1))));
        continue;
      }
      for (int y = c.y; y < c.bottom(); ++y)
        for (int x = c.x; x < c.right(); ++x) {
          const Rgb px = img.rgb(x, y);
          REQUIRE((px == kMaskedGrey || px == kMaskedHatch));
          (px == kMaskedGrey ? fill : hatch)++;
        }
    }
  CHECK(fill > 4 * hatch);  // mostly the fill, crossed by thin lines
  CHECK(hatch > 20);
  // Neither colour is on the scale: masked cells never read as a weight of 0 (or 1).
  for (Colormap cm : {Colormap::Reds, Colormap::Blues, Colormap::Viridis})
    for (int i = 0; i < 256; ++i) {
      CHECK(colormap_rgb(cm, i / 255.f) != kMaskedGrey);
      CHECK(colormap_rgb(cm, i / 255.f) != kMaskedHatch);
    }
  // The swatch: under the colorbar, the same fill, framed, with its label beside it.
  const Rect sw = L.masked_swatch;
  REQUIRE(inside(img, sw));
  CHECK(sw.x == L.colorbar.x);
  CHECK(sw.y > L.colorbar.bottom());
  CHECK(!overlap(sw, L.panels[0]));
  bool grey = false, lines = false;
  for (int y = sw.y; y < sw.bottom(); ++y)
    for (int x = sw.x; x < sw.right(); ++x) {
      const Rgb px = img.rgb(x, y);
      REQUIRE((px == kMaskedGrey || px == kMaskedHatch));
      grey |= px == kMaskedGrey;
      lines |= px == kMaskedHatch;
    }
  CHECK((grey && lines));
  CHECK(img.rgb(sw.x - 1, sw.cy()) == kBlack);  // the frame
  REQUIRE(inside(img, L.masked_text));
  CHECK(ink_in(img, L.masked_text) > 10);
  CHECK(L.masked_text.x > sw.right());

  // Without hatch lines: the plain fill.
  o.masked_hatch.reset();
  const Image plain = png_roundtrip(render_heatmaps(m.data(), 1, 1, n, n, o));
  CHECK(uniform(plain, L.cell(0, 0, 0, n - 1), kMaskedGrey));
  // The defaults: masked cells stay the background and there is no swatch.
  const HeatmapOptions d;
  const Image bg = png_roundtrip(render_heatmaps(m.data(), 1, 1, n, n, d));
  const HeatmapLayout DL = heatmap_layout(1, 1, n, n, d, m.data());
  CHECK(uniform(bg, DL.cell(0, 0, 0, n - 1), kWhite));
  CHECK(DL.masked_swatch.empty());
  CHECK(DL.masked_text.empty());
}

TEST_CASE("the masked options leave maps without NaN unchanged", "[viz][heatmap]") {
  const auto m = eye(8);
  HeatmapOptions o;
  o.titles = {"Head 1"};
  const Image before = render_heatmaps(m.data(), 1, 1, 8, 8, o);
  o.masked_color = kMaskedGrey;
  o.masked_hatch = kMaskedHatch;
  const Image after = render_heatmaps(m.data(), 1, 1, 8, 8, o);
  CHECK(before.rgba == after.rgba);
}

TEST_CASE("row labels replace the y label beside each row", "[viz][heatmap]") {
  const int rows = 3, cols = 2, n = 5;
  std::vector<float> m(static_cast<size_t>(rows * cols * n * n), 0.5f);
  HeatmapOptions o;
  o.row_labels = {"Layer 1", "Layer 2 is longer", ""};
  o.fig_width_in = 4.f;
  o.fig_height_in = 6.f;
  const Image img = png_roundtrip(render_heatmaps(m.data(), rows, cols, n, n, o));
  const HeatmapLayout L = heatmap_layout(rows, cols, n, n, o, m.data());
  CHECK(L.ylabels[0].h == text_size("Layer 1").w);  // written vertically
  CHECK(L.ylabels[2].h == text_size("Layer 2 is longer").w);
  CHECK(L.ylabels[4].empty());  // an empty label draws nothing
  for (int r = 0; r < 2; ++r) {
    const Rect& y = L.ylabels[static_cast<size_t>(r * cols)];
    REQUIRE(inside(img, y));
    CHECK(ink_in(img, y) > 10);
    CHECK(y.right() < L.panels[static_cast<size_t>(r * cols)].x);
  }
  CHECK(!overlap(L.ylabels[0], L.ylabels[2]));
  o.row_labels = {"one"};
  CHECK_THROWS_AS(heatmap_layout(rows, cols, n, n, o), attnlite::Error);
}

TEST_CASE("tick labels in their own colours", "[viz][heatmap]") {
  const std::vector<std::string> t = {"<bos>", "je", "suis"};
  const Rgb blue{31, 119, 180};
  std::vector<float> m(9, 0.5f);
  HeatmapOptions o;
  o.xticks = o.yticks = t;
  o.xtick_colors = o.ytick_colors = {kBlack, kBlack, blue};
  const Image img = png_roundtrip(render_heatmaps(m.data(), 1, 1, 3, 3, o));
  const HeatmapLayout L = heatmap_layout(1, 1, 3, 3, o, m.data());
  const Rect& P = L.panels[0];
  const auto count = [&](Rect r, Rgb c) {
    int k = 0;
    for (int y = r.y; y < r.bottom(); ++y)
      for (int x = r.x; x < r.right(); ++x) k += img.rgb(x, y) == c;
    return k;
  };
  for (int i = 0; i < 3; ++i) {
    INFO("label " << i);
    const Rect kc = L.cell(0, 0, 0, i), qc = L.cell(0, 0, i, 0);
    const Rect below{kc.x, P.bottom() + 8, kc.w, L.xlabels[0].y - P.bottom() - 8};
    const Rect left{0, qc.y, P.x - 8, qc.h};
    CHECK((count(below, blue) > 0) == (i == 2));
    CHECK((count(left, blue) > 0) == (i == 2));
    CHECK((count(below, kBlack) > 0) == (i != 2));
  }
  o.xtick_colors = {blue};
  CHECK_THROWS_AS(heatmap_layout(1, 1, 3, 3, o), attnlite::Error);
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
  const int all = ticks(o);
  CHECK(all > 11);
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
  CHECK(big.titles[0].h == 2 * small.titles[0].h);
  CHECK(big.panels[0].w > small.panels[0].w * 3 / 2);
  o.fig_width_in = 5.f;
  CHECK(heatmap_layout(1, 1, 10, 10, o).width == 500);
}

TEST_CASE("bad arguments and bad UTF-8 labels", "[viz][heatmap]") {
  const auto m = eye(3);
  HeatmapOptions o;
  CHECK_THROWS_AS(render_heatmaps(m.data(), 0, 1, 3, 3, o), attnlite::Error);
  CHECK_THROWS_AS(render_heatmaps(nullptr, 1, 1, 3, 3, o), attnlite::Error);
  o.dpi = 0;
  CHECK_THROWS_AS(heatmap_layout(1, 1, 3, 3, o), attnlite::Error);
  o.dpi = 100;
  o.titles = {"\xFF\xFE\xC3"};
  o.xlabel = "\xE2\x82";
  o.yticks = {"a\x80", "\xF0\x9F", "\xED\xA0\x80"};
  const Image img = render_heatmaps(m.data(), 1, 1, 3, 3, o);
  CHECK(ink_in(img, heatmap_layout(1, 1, 3, 3, o).titles[0]) > 0);  // drawn as "???"
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
