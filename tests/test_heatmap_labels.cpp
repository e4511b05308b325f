// Attention heatmaps: titles, axis and tick labels, annotations, masked (NaN) cells, row
// labels, tick colours and bad labels, checked on decoded PNG pixels. Colormaps, layout and
// the colorbar: test_heatmap.cpp.
#include <catch2/catch.hpp>

#include <attnlite/error.h>
#include <attnlite/render/heatmap.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "heatmap_checks.h"

using namespace attnlite::render;
using namespace attnlite::test;

Image png_roundtrip(const Image& image);  // test_image.cpp

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
      // A title above each column's top panel ("Head 3" once, not once per layer).
      CHECK(L.titles[i].empty() == (r != 0));
      if (r == 0) {
        REQUIRE(inside(img, L.titles[i]));
        CHECK(ink_in(img, L.titles[i]) > 10);
        CHECK(L.titles[i].bottom() <= L.panels[i].y);
        boxes.push_back(L.titles[i]);
      }
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
        CHECK(ink_in(img, {P.x, below, P.w, L.panels[i + cols].y - 1 - below}) == 0);
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
  // Below the panel, the ink under each key is as high as its word is long (rotated text)
  // and no wider than a line.
  const float px = points_to_px(10.f, o.dpi);
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
    CHECK(std::abs((y1 - y0 + 1) - text_width(src[static_cast<size_t>(k)], px)) <= 3.f);
    CHECK(x1 - x0 + 1 <= text_line_height(px));
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
  // Dark text on the lightest cell, light text on the darkest: the text pixel that differs
  // most from the cell (anti-aliased edges lie between the two).
  const auto text_lum = [&](Rect c, Rgb bg) {
    float extreme = lum(bg);
    for (int y = c.y; y < c.bottom(); ++y)
      for (int x = c.x; x < c.right(); ++x)
        if (std::fabs(lum(img.rgb(x, y)) - lum(bg)) > std::fabs(extreme - lum(bg))) extreme = lum(img.rgb(x, y));
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

TEST_CASE("row labels: beside the y label, or in its place", "[viz][heatmap]") {
  const int rows = 3, cols = 2, n = 5;
  std::vector<float> m(static_cast<size_t>(rows * cols * n * n), 0.5f);
  HeatmapOptions o;
  o.row_labels = {"Layer 1", "Layer 2 is longer", ""};
  o.titles = {"Head 1", "Head 2"};
  {  // With a y label: "Layer r" in a band of its own left of each row's "Queries".
    const Image img = png_roundtrip(render_heatmaps(m.data(), rows, cols, n, n, o));
    const HeatmapLayout L = heatmap_layout(rows, cols, n, n, o, m.data());
    REQUIRE(L.row_labels.size() == static_cast<size_t>(rows));
    CHECK(L.row_labels[2].empty());  // an empty label draws nothing
    for (int r = 0; r < 2; ++r) {
      INFO("row " << r);
      const Rect& rl = L.row_labels[static_cast<size_t>(r)];
      const Rect& y = L.ylabels[static_cast<size_t>(r * cols)];
      REQUIRE(inside(img, rl));
      CHECK(rl.h == text_size(o.row_labels[static_cast<size_t>(r)], points_to_px(10.f, 100)).w);  // vertical
      CHECK(ink_in(img, rl) > 10);
      CHECK(ink_in(img, y) > 10);  // "Queries" still there
      CHECK(y.h == text_size("Queries", points_to_px(10.f, 100)).w);
      CHECK(rl.right() <= y.x);
      CHECK(rl.cy() == Approx(L.panels[static_cast<size_t>(r * cols)].cy()).margin(1));
    }
    CHECK(ink_in(img, {0, 0, L.row_labels[1].x, img.height}) == 0);
  }
  o.ylabel = "";  // without one, the row labels take its place
  o.fig_width_in = 4.f;
  o.fig_height_in = 6.f;
  const Image img = png_roundtrip(render_heatmaps(m.data(), rows, cols, n, n, o));
  const HeatmapLayout L = heatmap_layout(rows, cols, n, n, o, m.data());
  CHECK(L.ylabels[0].h == text_size("Layer 1", points_to_px(10.f, 100)).w);  // written vertically
  CHECK(L.ylabels[2].h == text_size("Layer 2 is longer", points_to_px(10.f, 100)).w);
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
  const auto dark = [&](Rect r) {  // near-black pixels (anti-aliased text has few exact ones)
    int k = 0;
    for (int y = r.y; y < r.bottom(); ++y)
      for (int x = r.x; x < r.right(); ++x) {
        const Rgb p = img.rgb(x, y);
        k += p[0] < 60 && p[1] < 60 && p[2] < 60;
      }
    return k;
  };
  for (int i = 0; i < 3; ++i) {
    INFO("label " << i);
    const Rect kc = L.cell(0, 0, 0, i), qc = L.cell(0, 0, i, 0);
    const Rect below{kc.x, P.bottom() + 8, kc.w, L.xlabels[0].y - P.bottom() - 8};
    const Rect left{0, qc.y, P.x - 8, qc.h};
    CHECK((count(below, blue) > 0) == (i == 2));
    CHECK((count(left, blue) > 0) == (i == 2));
    CHECK((dark(below) > 0) == (i != 2));  // black text: its fully covered pixels
  }
  o.xtick_colors = {blue};
  CHECK_THROWS_AS(heatmap_layout(1, 1, 3, 3, o), attnlite::Error);
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
