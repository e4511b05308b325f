// The chapter's figures: decoded PNG pixels checked against what each figure must show.
#include <catch2/catch.hpp>

#include "attnlite/error.h"
#include "attnlite/viz/figures.h"
#include "fixture.h"

using namespace attnlite;
using namespace attnlite::viz;

Image png_roundtrip(const Image& image);  // tests/test_image.cpp: encode, then decode with stb_image

namespace {

Rgb at(const Image& im, int x, int y) { return im.rgb(x, y); }
Rgb cell_rgb(const Image& im, const HeatmapLayout& l, int r, int c, int q, int k) {
  const Rect cell = l.cell(r, c, q, k);
  return at(im, cell.cx(), cell.cy());
}
int ink(const Image& im, const Rect& r) {  // non-white pixels in a box
  int n = 0;
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x)
      if (at(im, x, y) != kWhite) ++n;
  return n;
}
float luminance(Rgb c) { return 0.299f * c[0] + 0.587f * c[1] + 0.114f * c[2]; }

figures::Context context() {
  figures::Context c;
  c.transformer = Model::load(test::model_path("transformer-d2l"));
  c.bahdanau = Model::load(test::model_path("bahdanau-d2l"));
  return c;
}

}  // namespace

TEST_CASE("figure 1: eye(10) diagonal is the darkest Reds colour, the rest white", "[figures]") {
  const auto f = figures::make("01-eye", figures::Context{});
  const Image im = png_roundtrip(f.image);
  REQUIRE(f.layout.panels.size() == 1);
  const Rgb dark = colormap_rgb(Colormap::Reds, 1.f), zero = colormap_rgb(Colormap::Reds, 0.f);
  REQUIRE(dark == Rgb{103, 0, 13});
  for (int q = 0; q < 10; ++q)
    for (int k = 0; k < 10; ++k) REQUIRE(cell_rgb(im, f.layout, 0, 0, q, k) == (q == k ? dark : zero));
  // The colorbar runs light (bottom) to dark (top), monotonically.
  const Rect cb = f.layout.colorbar;
  REQUIRE(!cb.empty());
  float prev = luminance(at(im, cb.cx(), cb.bottom() - 1));
  for (int y = cb.bottom() - 2; y >= cb.y; --y) {
    const float l = luminance(at(im, cb.cx(), y));
    REQUIRE(l <= prev + 1e-3f);
    prev = l;
  }
  REQUIRE(luminance(at(im, cb.cx(), cb.y)) < luminance(at(im, cb.cx(), cb.bottom() - 1)) - 100.f);
  // Labels are drawn: ink in the x and y label boxes.
  REQUIRE(ink(im, f.layout.xlabels[0]) > 10);
  REQUIRE(ink(im, f.layout.ylabels[0]) > 10);
}

TEST_CASE("figure 3: additive and dot-product weights are uniform over valid lengths", "[figures]") {
  for (const char* name : {"03-additive-attention", "03-dot-product-attention"}) {
    const auto f = figures::make(name, figures::Context{});
    REQUIRE(f.queries == 2);
    REQUIRE(f.keys == 10);
    for (int k = 0; k < 10; ++k) {
      CHECK(f.matrices[k] == Approx(k < 2 ? 0.5f : 0.f).margin(1e-6));
      CHECK(f.matrices[10 + k] == Approx(k < 6 ? 1.f / 6 : 0.f).margin(1e-6));
    }
    const Image im = png_roundtrip(f.image);
    REQUIRE(cell_rgb(im, f.layout, 0, 0, 1, 9) == colormap_rgb(Colormap::Reds, 0.f));
  }
}

TEST_CASE("figure 7: transformer maps have layers x heads panels and zero masked cells", "[figures]") {
  const auto c = context();
  const int L = c.transformer->num_layers(), NH = c.transformer->num_heads();
  const auto enc = figures::make("07-transformer-encoder", c);
  REQUIRE(enc.layout.panels.size() == size_t(L * NH));
  REQUIRE((enc.rows == L && enc.cols == NH));
  const Image ei = png_roundtrip(enc.image);
  for (int h = 0; h < NH; ++h) REQUIRE(ink(ei, enc.layout.titles[h]) > 10);  // "Head 1".."Head 4"

  const auto dec = figures::make("07-transformer-decoder-self", c);
  REQUIRE(dec.queries == dec.keys);
  const Image di = png_roundtrip(dec.image);
  const Rgb zero = colormap_rgb(Colormap::Reds, 0.f);
  int masked = 0;
  for (int r = 0; r < L; ++r)
    for (int h = 0; h < NH; ++h)
      for (int q = 0; q < dec.queries; ++q) {
        float row = 0.f;
        for (int k = 0; k < dec.keys; ++k) {
          const float v = dec.matrices[(((size_t)r * NH + h) * dec.queries + q) * dec.keys + k];
          row += v;
          if (k > q) {  // the future: masked, exactly zero, drawn in the zero colour
            REQUIRE(v == 0.f);
            REQUIRE(cell_rgb(di, dec.layout, r, h, q, k) == zero);
            ++masked;
          }
        }
        REQUIRE(row == Approx(1.f).margin(1e-5));
      }
  REQUIRE(masked > 0);

  const auto cross = figures::make("07-transformer-cross", c);
  REQUIRE(cross.keys == c.transformer->num_steps());
  // Padding keys beyond the source's valid length get no weight.
  const Image ci = png_roundtrip(cross.image);
  REQUIRE(cell_rgb(ci, cross.layout, 0, 0, 0, cross.keys - 1) == zero);
}

TEST_CASE("every figure of the chapter renders", "[figures]") {
  const auto c = context();
  const auto names = figures::names();
  REQUIRE(names.size() == 16);
  for (const auto& n : names) {
    INFO(n);
    const auto f = figures::make(n, c);
    REQUIRE(f.image.width > 100);
    REQUIRE(f.image.height > 100);
    const Image im = png_roundtrip(f.image);
    REQUIRE(ink(im, Rect{0, 0, im.width, im.height}) > 500);
  }
  REQUIRE_THROWS_WITH(figures::make("99-nothing", c), Catch::Matchers::Contains("unknown figure"));
}

TEST_CASE("figure 6: the positional encoding heatmap is Blues", "[figures]") {
  const auto f = figures::make("06-positional-encoding-heatmap", figures::Context{});
  REQUIRE((f.queries == 60 && f.keys == 32));
  const Image im = png_roundtrip(f.image);
  // Row 0: sin(0) = 0 on even columns, cos(0) = 1 on odd ones; the scale is [-1, 1].
  const float span = f.layout.vmax - f.layout.vmin;
  REQUIRE(cell_rgb(im, f.layout, 0, 0, 0, 1) == colormap_rgb(Colormap::Blues, (1.f - f.layout.vmin) / span));
  REQUIRE(cell_rgb(im, f.layout, 0, 0, 0, 0) == colormap_rgb(Colormap::Blues, (0.f - f.layout.vmin) / span));
}

TEST_CASE("translation maps: any sentence, kind, layer and head", "[figures]") {
  const auto c = context();
  figures::MapOptions o;
  o.kind = figures::MapKind::Encoder;
  o.layer = 1;
  o.head = 2;
  const auto f = figures::translation_map(c.transformer, "he's calm .", o);
  REQUIRE((f.rows == 1 && f.cols == 1 && f.queries == 10));
  o.kind = figures::MapKind::Cross;
  o.layer = o.head = -1;
  const auto b = figures::translation_map(c.bahdanau, "i'm home .", o);
  REQUIRE((b.rows == 1 && b.cols == 1));
  o.kind = figures::MapKind::Encoder;
  REQUIRE_THROWS_WITH(figures::translation_map(c.bahdanau, "go .", o), Catch::Matchers::Contains("only encoder-decoder"));
  o.layer = 7;
  REQUIRE_THROWS_WITH(figures::translation_map(c.transformer, "go .", o), Catch::Matchers::Contains("out of range"));
  REQUIRE_THROWS_AS(figures::map_kind_from_name("sideways"), Error);
}
