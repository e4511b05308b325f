// Line and scatter plots, checked on decoded PNG pixels.
#include <catch2/catch.hpp>

#include <attnlite/error.h>
#include <attnlite/render/plot.h>

#include <cmath>
#include <vector>

using namespace attnlite::render;

Image png_roundtrip(const Image& image);  // test_image.cpp

namespace {

int count_color(const Image& img, Rect r, Rgb c) {
  int n = 0;
  for (int y = std::max(0, r.y); y < std::min(img.height, r.bottom()); ++y)
    for (int x = std::max(0, r.x); x < std::min(img.width, r.right()); ++x) n += img.rgb(x, y) == c;
  return n;
}

bool near(Rgb a, Rgb b, int tol) {
  for (int i = 0; i < 3; ++i)
    if (std::abs(a[i] - b[i]) > tol) return false;
  return true;
}

Series diagonal(int n = 101) {
  Series s;
  s.label = "y = x";
  for (int i = 0; i < n; ++i) {
    s.x.push_back(i / float(n - 1));
    s.y.push_back(i / float(n - 1));
  }
  return s;
}

PlotOptions unit_box() {
  PlotOptions o;
  o.xmin = 0.f;
  o.xmax = 1.f;
  o.ymin = 0.f;
  o.ymax = 1.f;
  o.legend = false;
  o.grid = false;
  return o;
}

}  // namespace

TEST_CASE("a y = x line passes through the pixels the data maps to", "[viz][plot]") {
  const std::vector<Series> series = {diagonal()};
  const PlotOptions o = unit_box();
  const Image img = png_roundtrip(render_plot(series, o));
  const PlotLayout L = plot_layout(series, o);
  CHECK(img.width == 350);
  CHECK(img.height == 250);
  REQUIRE(L.axes.w > 100);
  REQUIRE(L.axes.h > 100);
  CHECK(L.x_to_px(0.f) == Approx(L.axes.x));
  CHECK(L.x_to_px(1.f) == Approx(L.axes.right()));
  CHECK(L.y_to_px(0.f) == Approx(L.axes.bottom()));
  CHECK(L.y_to_px(1.f) == Approx(L.axes.y));
  const Rgb blue = series_color(0);
  for (int i = 1; i < 20; ++i) {
    const float t = i / 20.f;
    const int px = static_cast<int>(L.x_to_px(t)), py = static_cast<int>(L.y_to_px(t));
    INFO("t = " << t);
    // The line's full colour within a pixel of the mapped point...
    CHECK(count_color(img, {px - 1, py - 1, 3, 3}, blue) > 0);
    // ...and nothing but background a few pixels away from the line.
    CHECK(count_color(img, {px + 6, py - 1, 3, 3}, kWhite) == 9);
    CHECK(count_color(img, {px - 8, py - 1, 3, 3}, kWhite) == 9);
  }
}

TEST_CASE("dashed and dotted lines have gaps, solid lines none", "[viz][plot]") {
  for (auto style : {Series::Line, Series::Dashed, Series::DashDot, Series::Dotted}) {
    Series s;
    s.x = {0.f, 1.f};
    s.y = {0.5f, 0.5f};
    s.style = style;
    const PlotOptions o = unit_box();
    const Image img = png_roundtrip(render_plot({s}, o));
    const PlotLayout L = plot_layout({s}, o);
    const int y = static_cast<int>(L.y_to_px(0.5f));
    int gaps = 0;
    for (int x = L.axes.x + 2; x < L.axes.right() - 2; ++x) gaps += img.rgb(x, y) == kWhite;
    INFO("style " << style);
    if (style == Series::Line)
      CHECK(gaps == 0);
    else
      CHECK(gaps > 10);
  }
}

TEST_CASE("points are drawn as translucent circles", "[viz][plot]") {
  Series s;
  s.x = {0.5f};
  s.y = {0.5f};
  s.style = Series::Points;
  s.color = Rgb{255, 0, 0};
  const PlotOptions o = unit_box();
  const Image img = png_roundtrip(render_plot({s}, o));
  const PlotLayout L = plot_layout({s}, o);
  const int cx = static_cast<int>(L.x_to_px(0.5f)), cy = static_cast<int>(L.y_to_px(0.5f));
  // Half-transparent red over white in the middle.
  CHECK(near(img.rgb(cx, cy), Rgb{255, 128, 128}, 2));
  // Round: symmetric, with nothing at the corners of its bounding box.
  const int r = 4;  // 6 pt marker at 100 dpi: radius about 4.2 px
  CHECK(img.rgb(cx + r - 1, cy) != kWhite);
  CHECK(img.rgb(cx - r + 1, cy) != kWhite);
  CHECK(img.rgb(cx, cy + r - 1) != kWhite);
  CHECK(img.rgb(cx, cy - r + 1) != kWhite);
  CHECK(img.rgb(cx + r, cy + r) == kWhite);
  CHECK(img.rgb(cx - r - 1, cy - r - 1) == kWhite);
  CHECK(img.rgb(cx + r + 2, cy) == kWhite);
  int tinted = 0;
  for (int y = cy - 8; y <= cy + 8; ++y)
    for (int x = cx - 8; x <= cx + 8; ++x) tinted += img.rgb(x, y) != kWhite;
  CHECK(tinted > 40);  // about pi * 4.2^2 = 55 pixels
  CHECK(tinted < 90);
}

TEST_CASE("the legend lists labelled series with their colour", "[viz][plot]") {
  Series a = diagonal(), b = diagonal();
  a.label = "Truth";
  b.label = "Pred";
  b.style = Series::Dashed;
  for (auto& y : b.y) y = 1.f - y;
  PlotOptions o = unit_box();
  o.legend = true;
  const Image img = png_roundtrip(render_plot({a, b}, o));
  const PlotLayout L = plot_layout({a, b}, o);
  REQUIRE(!L.legend.empty());
  CHECK(L.legend.x >= L.axes.x);
  CHECK(L.legend.right() <= L.axes.right());
  CHECK(count_color(img, L.legend, series_color(0)) > 5);
  CHECK(count_color(img, L.legend, series_color(1)) > 5);
  int dark = 0;  // the labels: near-black pixels (anti-aliased)
  for (int y = L.legend.y; y < L.legend.bottom(); ++y)
    for (int x = L.legend.x; x < L.legend.right(); ++x) {
      const Rgb p = img.rgb(x, y);
      dark += p[0] < 60 && p[1] < 60 && p[2] < 60;
    }
  CHECK(dark > 20);
  // Without labels, or with legend = false, there is none.
  o.legend = false;
  CHECK(plot_layout({a, b}, o).legend.empty());
  a.label.clear();
  b.label.clear();
  o.legend = true;
  CHECK(plot_layout({a, b}, o).legend.empty());
}

TEST_CASE("plot axes: labels, automatic limits and sizes", "[viz][plot]") {
  Series s;
  s.x = {-2.f, 0.f, 3.f};
  s.y = {10.f, -5.f, 20.f};
  PlotOptions o;
  o.xlabel = "Row (position)";
  o.ylabel = "y";
  o.fig_width_in = 6.f;
  o.dpi = 150;
  const PlotLayout L = plot_layout({s}, o);
  CHECK(L.width == 900);
  CHECK(L.height == 375);
  CHECK(L.xmin < -2.f);
  CHECK(L.xmax > 3.f);
  CHECK(L.ymin < -5.f);
  CHECK(L.ymax > 20.f);
  const Image img = png_roundtrip(render_plot({s}, o));
  // x label under the axes, y label left of them.
  CHECK(count_color(img, {L.axes.x, L.axes.bottom() + 30, L.axes.w, img.height - L.axes.bottom() - 30}, kBlack) > 20);
  CHECK(count_color(img, {0, L.axes.y, 30, L.axes.h}, kBlack) > 5);
  // A NaN breaks the line instead of failing.
  s.y[1] = std::nanf("");
  CHECK_NOTHROW(render_plot({s}, o));
  s.y.pop_back();
  CHECK_THROWS_AS(render_plot({s}, o), attnlite::Error);
  CHECK_THROWS_AS(render_plot({}, PlotOptions{"", "", {}, {}, {}, {}, 0.f}), attnlite::Error);
}

// Not run by default: `attnlite_tests "[.gallery]"` rewrites the sample images in docs/gallery.
TEST_CASE("gallery: plots", "[.gallery]") {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.find_last_of('/') + 1) + "../docs/gallery/";
  {  // d2l 11.2: Nadaraya-Watson regression
    const auto f = [](float x) { return 2.f * std::sin(x) + std::pow(x, 0.8f); };
    Series truth, pred, train;
    truth.label = "Truth";
    pred.label = "Pred";
    pred.style = Series::Dashed;
    train.style = Series::Points;
    train.color = series_color(4);
    unsigned state = 12345u;
    const auto rnd = [&] { return (state = state * 1664525u + 1013904223u) / 4294967296.f; };
    for (int i = 0; i < 50; ++i) {
      const float x = 5.f * rnd();
      train.x.push_back(x);
      train.y.push_back(f(x) + (rnd() + rnd() + rnd() - 1.5f) * 0.8f);
    }
    for (int i = 0; i < 50; ++i) {
      const float x = i * 0.1f;
      truth.x.push_back(x);
      truth.y.push_back(f(x));
      float num = 0.f, den = 0.f;  // Gaussian-kernel Nadaraya-Watson estimate
      for (size_t j = 0; j < train.x.size(); ++j) {
        const float w = std::exp(-(x - train.x[j]) * (x - train.x[j]) / 2.f);
        num += w * train.y[j];
        den += w;
      }
      pred.x.push_back(x);
      pred.y.push_back(num / den);
    }
    PlotOptions o;
    o.xlabel = "x";
    o.ylabel = "y";
    o.xmin = 0.f;
    o.xmax = 5.f;
    o.ymin = -1.f;
    o.ymax = 5.f;
    write_png(dir + "nadaraya_watson_plot.png", render_plot({truth, pred, train}, o));
  }
  {  // d2l 11.6: positional encoding, columns 6 to 9
    std::vector<Series> cols;
    const Series::Style styles[] = {Series::Line, Series::Dashed, Series::DashDot, Series::Dotted};
    for (int j = 6; j < 10; ++j) {
      Series s;
      s.label = "Col " + std::to_string(j);
      s.style = styles[j - 6];
      for (int i = 0; i < 60; ++i) {
        const float angle = i / std::pow(10000.f, static_cast<float>(j / 2 * 2) / 32.f);
        s.x.push_back(static_cast<float>(i));
        s.y.push_back(j % 2 ? std::cos(angle) : std::sin(angle));
      }
      cols.push_back(s);
    }
    PlotOptions o;
    o.xlabel = "Row (position)";
    o.fig_width_in = 6.f;
    write_png(dir + "positional_encoding.png", render_plot(cols, o));
  }
}
