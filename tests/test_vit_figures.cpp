// Vision Transformer attention figures: decoded PNG pixels checked against the classifier's
// own weights and rollout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "attnlite/classify.h"
#include "attnlite/error.h"
#include "attnlite/image_input.h"
#include "attnlite/figures/figures.h"
#include "fixture.h"

using namespace attnlite;
using namespace attnlite::render;
using figures::kVitRollout;

Image png_roundtrip(const Image& image);  // tests/test_image.cpp

namespace {

std::shared_ptr<const Model> vit() {
  static auto m = Model::load(test::model_path("vit-digits"));
  return m;
}

struct Digit {
  std::vector<float> px = std::vector<float>(64);
  explicit Digit(const std::string& file) {
    digit_8x8(load_image(std::string(ATTNLITE_FIXTURES_DIR) + "/digits/" + file), px.data());
  }
};

int ink_px(const Image& im, const Rect& r) {
  int n = 0;
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x) n += im.rgb(x, y) != kWhite;
  return n;
}

// Checks every pixel cell of an overlay panel (r, c) of `lay`, whose (S, S) weights are d: the
// cell shows the colour of its patch's weight around a grey disc for its ink, and the patch
// grid runs along the patch boundaries only.
void check_overlay_panel(const Image& im, const HeatmapLayout& lay, int r, int c, const float* d, const float* input,
                         Colormap cmap) {
  const int S = 8, P = 2;
  float in_max = 0.f;
  for (int i = 0; i < S * S; ++i) in_max = std::max(in_max, input[i]);
  for (int y = 0; y < S; ++y)
    for (int x = 0; x < S; ++x) {
      INFO("panel " << r << "," << c << " pixel " << x << "," << y);
      REQUIRE(std::isfinite(d[y * S + x]));  // nothing masked
      REQUIRE(d[y * S + x] == d[(y / P * P) * S + x / P * P]);  // one weight per patch
      const Rect cell = lay.cell(r, c, y, x);
      const Rgb colour = colormap_rgb(cmap, d[y * S + x] / lay.vmax);
      const float ink = input[y * S + x] / in_max, rad = figures::vit_ink_radius(ink, cell);
      // Near the corner: the weight's colour (outside the disc and the grid lines).
      REQUIRE(std::hypot(2.5f - cell.w / 2.f, 2.5f - cell.h / 2.f) > rad + 0.5f);
      REQUIRE(im.rgb(cell.x + 2, cell.y + 2) == colour);
      // The centre: the colour without ink, the ink's grey with (a disc wider than its ring).
      if (ink == 0.f) REQUIRE(im.rgb(cell.cx(), cell.cy()) == colour);
      if (rad > 3.f) REQUIRE(im.rgb(cell.cx(), cell.cy()) == figures::kVitInk);
    }
  const Rect& pan = lay.panels[(size_t)r * lay.cols + c];
  for (int j = 1; j < S; ++j) {
    const Rect cx = lay.cell(r, c, 0, j), cy = lay.cell(r, c, j, 0);
    int vline = 0, hline = 0;
    for (int y = pan.y; y < pan.bottom(); ++y) vline += im.rgb(cx.x, y) == figures::kVitGrid;
    for (int x = pan.x; x < pan.right(); ++x) hline += im.rgb(x, cy.y) == figures::kVitGrid;
    INFO("boundary before pixel " << j);
    if (j % P == 0) {  // a patch boundary: a full line
      REQUIRE(vline == pan.h);
      REQUIRE(hline == pan.w);
    } else {  // inside a patch: no line, only where the other lines (1 pixel at 100 dpi) cross
      REQUIRE(vline <= S / P - 1);
      REQUIRE(hline <= S / P - 1);
    }
  }
}

const float* panel(const figures::Figure& f, int r, int c) { return f.matrices.data() + ((size_t)r * f.cols + c) * 64; }

}  // namespace

TEST_CASE("vit overlay: the rollout's hottest patch is the colormap's top colour", "[figures][vit]") {
  const Digit dg("idx0022_label2_32x32.png");
  Classifier cls(vit());
  cls.classify(dg.px.data(), 1);
  const int T = cls.tokens(), L = vit()->num_layers();
  std::vector<float> ro((size_t)T * T);
  cls.rollout(0, ro.data());

  figures::VitMapOptions o;
  o.layer = L - 1;
  o.head = kVitRollout;
  const auto f = figures::vit_map(cls, 0, dg.px.data(), o);
  REQUIRE((f.rows == 1 && f.cols == 1 && f.queries == 8 && f.keys == 8));
  REQUIRE(f.text == "2");
  REQUIRE(f.caption.find("predicted '2'") != std::string::npos);
  REQUIRE(f.caption.find("renormalised") != std::string::npos);
  // The panel's weights: row 0 of Classifier::rollout over the patches, renormalised.
  double sum = 0.0;
  for (int n = 1; n < T; ++n) sum += ro[(size_t)n];
  int hot = 0;
  for (int n = 0; n < T - 1; ++n) {
    const float w = (float)(ro[(size_t)n + 1] / sum);
    REQUIRE(f.matrices[(size_t)((n / 4) * 2) * 8 + (n % 4) * 2] == Approx(w).margin(1e-6));
    if (ro[(size_t)n + 1] > ro[(size_t)hot + 1]) hot = n;
  }
  REQUIRE(f.layout.vmin == 0.f);
  REQUIRE(f.layout.vmax == Approx(ro[(size_t)hot + 1] / sum).margin(1e-6));

  const Image im = png_roundtrip(f.image);
  check_overlay_panel(im, f.layout, 0, 0, panel(f, 0, 0), dg.px.data(), Colormap::Reds);
  // The hottest patch's four cells: the colormap's top colour (outside their ink discs); every
  // other patch lighter.
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) {
      const Rect cell = f.layout.cell(0, 0, y, x);
      const bool in_hot = y / 2 * 4 + x / 2 == hot;
      INFO("pixel " << x << "," << y << ", hottest patch " << hot);
      REQUIRE((im.rgb(cell.x + 2, cell.y + 2) == colormap_rgb(Colormap::Reds, 1.f)) == in_hot);
    }
  REQUIRE(ink_px(im, f.layout.titles[0]) > 10);
  REQUIRE(!f.layout.colorbar.empty());
}

TEST_CASE("vit overlay: one panel per head, layers x heads, the rollout column", "[figures][vit]") {
  const Digit dg("idx0045_label3_32x32.png");
  Classifier cls(vit());
  cls.classify(dg.px.data(), 1);
  const Classification& r = cls.result(0);
  const int L = vit()->num_layers(), NH = vit()->num_heads();
  REQUIRE((L == 3 && NH == 4));

  figures::VitMapOptions o;
  o.layer = 1;
  o.rollout = false;
  const auto one = figures::vit_map(cls, 0, dg.px.data(), o);
  REQUIRE((one.rows == 1 && one.cols == NH));
  REQUIRE(one.layout.panels.size() == (size_t)NH);
  const Image im1 = png_roundtrip(one.image);
  for (int h = 0; h < NH; ++h) {
    for (int n = 0; n < 16; ++n)  // the CLS row over the patches, as the model gave it
      REQUIRE(one.matrices[((size_t)h * 64) + (n / 4) * 16 + (n % 4) * 2] == r.attn_at(1, h, 0, n + 1));
    check_overlay_panel(im1, one.layout, 0, h, panel(one, 0, h), dg.px.data(), Colormap::Reds);
    REQUIRE(ink_px(im1, one.layout.titles[(size_t)h]) > 10);  // Head 1..4
  }

  o.layer = -1;
  const auto grid = figures::vit_map(cls, 0, dg.px.data(), o);
  REQUIRE((grid.rows == L && grid.cols == NH));
  REQUIRE(grid.layout.panels.size() == (size_t)(L * NH));

  o.rollout = true;
  o.cmap = Colormap::Viridis;
  const auto full = figures::vit_map(cls, 0, dg.px.data(), o);
  REQUIRE((full.rows == L && full.cols == NH + 1));
  // The heads and the rollout side by side, each on its own scale with its own colorbar.
  REQUIRE(full.layout.cols == NH);
  REQUIRE((full.rollout_layout.rows == L && full.rollout_layout.cols == 1));
  REQUIRE(full.rollout_layout.panels[0].x > full.layout.colorbar.right());
  REQUIRE(full.rollout_layout.colorbar.x > full.rollout_layout.panels[0].right());
  REQUIRE(full.image.width == full.layout.width + full.rollout_layout.width);
  for (int l = 0; l < L; ++l) {  // the rows line up, the panels the same size
    const Rect& a = full.rollout_layout.panels[(size_t)l];
    const Rect& b = full.layout.panels[(size_t)l * NH];
    REQUIRE((a.y == b.y && a.w == b.w && a.h == b.h));
  }
  // As SVG: both parts, moved where the PNG puts them, each with its cells and colorbar, a
  // disc (and its ring) per inked pixel of every panel.
  const std::string svg = figures::to_svg(full);
  const auto count = [&](const std::string& what) {
    size_t k = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++k;
    return k;
  };
  REQUIRE(count("<g class=\"cells\">") == (size_t)(L * (NH + 1)));
  REQUIRE(count("<g class=\"colorbar\">") == 2);
  REQUIRE(count("<g transform=\"translate(") == 2);
  int inked = 0;
  for (int p = 0; p < 64; ++p) inked += dg.px[(size_t)p] > 0.f;
  REQUIRE(count("<circle ") == (size_t)(2 * inked * L * (NH + 1)));
  REQUIRE(count(">Rollout</text>") == 1);
  const Image im = png_roundtrip(full.image);
  for (int l = 0; l < L; ++l) {
    REQUIRE(ink_px(im, full.layout.ylabels[(size_t)l * NH]) > 10);  // Layer 1..3
    for (int h = 0; h < NH; ++h) check_overlay_panel(im, full.layout, l, h, panel(full, l, h), dg.px.data(), Colormap::Viridis);
    check_overlay_panel(im, full.rollout_layout, l, 0, panel(full, l, NH), dg.px.data(), Colormap::Viridis);
  }
  REQUIRE(ink_px(im, full.rollout_layout.titles[0]) > 10);  // Rollout
  REQUIRE(ink_px(im, full.rollout_layout.colorbar) > 10);
  o.layer = 2;  // one row: the same
  const auto row = figures::vit_map(cls, 0, dg.px.data(), o);
  REQUIRE((row.rows == 1 && row.cols == NH + 1));
  const Rect& ra = row.rollout_layout.panels[0];
  const Rect& rb = row.layout.panels[0];
  REQUIRE((ra.y == rb.y && ra.w == rb.w && ra.h == rb.h));
  o.layer = -1;
  // The last row's rollout column is the model's rollout (renormalised over the patches).
  std::vector<float> ro(17 * 17);
  cls.rollout(0, ro.data());
  double sum = 0.0;
  for (int n = 1; n < 17; ++n) sum += ro[(size_t)n];
  const float* last = full.matrices.data() + ((size_t)(L - 1) * full.cols + NH) * 64;
  for (int n = 0; n < 16; ++n) REQUIRE(last[(n / 4) * 16 + (n % 4) * 2] == Approx(ro[(size_t)n + 1] / sum).margin(1e-6));
  // Same inputs, same figure.
  REQUIRE(figures::vit_map(cls, 0, dg.px.data(), o).image.rgba == full.image.rgba);
}

TEST_CASE("vit maps: (N+1) x (N+1) per layer and head, CLS and patch labels", "[figures][vit]") {
  const Digit dg("idx0006_label6_32x32.png");
  Classifier cls(vit());
  cls.classify(dg.px.data(), 1);
  const Classification& r = cls.result(0);
  figures::VitMapOptions o;
  o.view = figures::VitView::Maps;
  const auto f = figures::vit_map(cls, 0, dg.px.data(), o);
  const int T = 17, L = 3, NH = 4;
  REQUIRE((f.rows == L && f.cols == NH + 1 && f.queries == T && f.keys == T));
  REQUIRE(f.xticks.size() == (size_t)T);
  REQUIRE(f.xticks[0] == "CLS");
  REQUIRE(f.xticks[1] == "1");
  REQUIRE(f.xticks[16] == "16");
  REQUIRE(f.yticks == f.xticks);
  REQUIRE(f.caption.find("row-major") != std::string::npos);
  REQUIRE(f.caption.find("predicted '6'") != std::string::npos);
  REQUIRE(f.layout.vmin == 0.f);
  REQUIRE(f.layout.vmax == *std::max_element(f.matrices.begin(), f.matrices.end()));
  std::vector<float> ro(T * T);
  cls.rollout(0, ro.data());
  const Image im = png_roundtrip(f.image);
  for (int l = 0; l < L; ++l)
    for (int c = 0; c <= NH; ++c)
      for (int q = 0; q < T; ++q) {
        double row = 0.0;
        for (int k = 0; k < T; ++k) {
          const float v = f.matrices[(((size_t)l * f.cols + c) * T + q) * T + k];
          REQUIRE(std::isfinite(v));  // nothing masked
          if (c < NH) REQUIRE(v == r.attn_at(l, c, q, k));
          if (c == NH && l == L - 1) REQUIRE(v == Approx(ro[(size_t)q * T + k]).margin(1e-6));
          const Rect cell = f.layout.cell(l, c, q, k);
          REQUIRE(im.rgb(cell.cx(), cell.cy()) == colormap_rgb(Colormap::Reds, v / f.layout.vmax));
          row += v;
        }
        REQUIRE(row == Approx(1.0).margin(1e-5));
      }

  o.layer = 2;
  o.head = 0;
  const auto one = figures::vit_map(cls, 0, dg.px.data(), o);
  REQUIRE((one.rows == 1 && one.cols == 1));
  REQUIRE(one.layout.cell(0, 0, 0, 0).w >= text_line_height(points_to_px(10.f, 100)));  // a cell per label
}

TEST_CASE("vit maps: bad input", "[figures][vit]") {
  const Digit dg("idx0022_label2_32x32.png");
  Classifier cls(vit());
  figures::VitMapOptions o;
  cls.classify(dg.px.data(), 1, false);
  REQUIRE_THROWS_WITH(figures::vit_map(cls, 0, dg.px.data(), o), Catch::Matchers::Contains("no attention"));
  cls.classify(dg.px.data(), 1);
  o.layer = 3;
  REQUIRE_THROWS_WITH(figures::vit_map(cls, 0, dg.px.data(), o), Catch::Matchers::Contains("layer 4 is out of range"));
  o.layer = 0;
  o.head = 4;
  REQUIRE_THROWS_WITH(figures::vit_map(cls, 0, dg.px.data(), o), Catch::Matchers::Contains("head 5 is out of range"));
  o.head = -1;
  REQUIRE_THROWS_WITH(figures::vit_map(cls, 0, nullptr, o), Catch::Matchers::Contains("input"));
  REQUIRE_THROWS(figures::vit_map(cls, 1, dg.px.data(), o));
}

// Not run by default: `attnlite_tests "[.gallery]"` rewrites the sample images in docs/gallery.
TEST_CASE("gallery: vit attention", "[.gallery]") {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.find_last_of('/') + 1) + "../docs/gallery/";
  const Digit dg("idx0022_label2_32x32.png");
  Classifier cls(vit());
  cls.classify(dg.px.data(), 1);
  figures::VitMapOptions o;  // every layer and head, and the rollout
  write_png(dir + "vit_digit2_overlay.png", figures::vit_map(cls, 0, dg.px.data(), o).image);
  o.view = figures::VitView::Maps;
  o.layer = 2;
  o.head = -1;
  o.rollout = true;
  write_png(dir + "vit_digit2_maps_layer3.png", figures::vit_map(cls, 0, dg.px.data(), o).image);
}
