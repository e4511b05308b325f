// SVG output: the same layout as the PNG, vector cells, real <text> labels, valid markup.
// (tests/cli/heatmap.sh parses the CLI's SVG files with an XML parser.)
#include <catch2/catch.hpp>
#include <attnlite/error.h>
#include <attnlite/render/canvas.h>
#include <attnlite/figures/figures.h>
#include <attnlite/render/heatmap.h>
#include <attnlite/render/plot.h>

#include <string>
#include <vector>

using namespace attnlite::render;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// The text between the i-th occurrence of `open` and the next "</g>" (groups of cells hold no
// nested groups).
std::string nth_group(const std::string& s, const std::string& open, size_t i) {
  size_t at = s.find(open);
  for (size_t k = 0; k < i && at != std::string::npos; ++k) at = s.find(open, at + 1);
  REQUIRE(at != std::string::npos);
  const size_t end = s.find("</g>", at);
  return s.substr(at, end - at);
}

std::string rect_xywh(Rect r) {
  return "x=\"" + std::to_string(r.x) + "\" y=\"" + std::to_string(r.y) + "\" width=\"" + std::to_string(r.w) +
         "\" height=\"" + std::to_string(r.h) + "\"";
}

std::string hex(Rgb c) {
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", c[0], c[1], c[2]);
  return b;
}

}  // namespace

TEST_CASE("SVG heatmaps: the PNG's layout, one rect per cell, labels as text", "[viz][svg]") {
  const int rows = 2, cols = 3, q = 4, k = 5;
  std::vector<float> m(rows * cols * q * k);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i % 7) / 6.f;
  HeatmapOptions o;
  o.title = "transformer, cross-attention: il est mouill\xC3\xA9 .";
  o.titles = {"Head 1", "Head 2", "Head 3"};
  o.row_labels = {"Layer 1", "Layer 2"};
  o.xticks = {"il", "est", "mouill\xC3\xA9", ".", "<eos>"};
  o.yticks = {"he's", "wet", ".", "<eos>"};
  o.fig_width_in = 6.f;
  o.fig_height_in = 4.f;
  const HeatmapLayout L = heatmap_layout(rows, cols, q, k, o, m.data());
  const std::string svg = render_heatmaps_svg(m.data(), rows, cols, q, k, o);

  REQUIRE(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  REQUIRE(svg.size() > 7);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(svg.find("width=\"" + std::to_string(L.width) + "\" height=\"" + std::to_string(L.height) + "\"") !=
        std::string::npos);
  CHECK(count(svg, "<g") == count(svg, "</g>"));

  // One group of cells per panel, one rect per cell, at the layout's cell and in its colour.
  REQUIRE(count(svg, "<g class=\"cells\">") == static_cast<size_t>(rows * cols));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const std::string g = nth_group(svg, "<g class=\"cells\">", static_cast<size_t>(r * cols + c));
      CHECK(count(g, "<rect ") == static_cast<size_t>(q * k));
      for (int qq = 0; qq < q; ++qq)
        for (int kk = 0; kk < k; ++kk) {
          const float v = m[((static_cast<size_t>(r) * cols + c) * q + qq) * k + kk];
          const Rgb rgb = colormap_rgb(Colormap::Reds, (v - L.vmin) / (L.vmax - L.vmin));
          CHECK(g.find("<rect " + rect_xywh(L.cell(r, c, qq, kk)) + " fill=\"" + hex(rgb) + "\"/>") !=
                std::string::npos);
        }
    }

  // Text: the title, 3 head titles, 2 layer names, 2 y labels, 3 x labels, the tick labels
  // (5 keys x 3 columns on the bottom row, 4 queries x 2 rows in the first column) and the
  // colorbar's; escaped, UTF-8 kept.
  const size_t texts = count(svg, "<text ");
  const size_t cbar = count(nth_group(svg, "<g class=\"colorbar\">", 0), "<text ");
  CHECK(cbar >= 5);
  CHECK(cbar <= 8);
  CHECK(texts == 1 + 3 + 2 + 2 + 3 + 5 * 3 + 4 * 2 + cbar);
  CHECK(count(svg, ">&lt;eos&gt;</text>") == 3 + 2);
  CHECK(count(svg, ">mouill\xC3\xA9</text>") == 3);
  CHECK(count(svg, ">he&apos;s</text>") == 2);
  CHECK(count(svg, ">Layer 2</text>") == 1);
  CHECK(count(svg, ">Head 3</text>") == 1);
  CHECK(count(svg, " transform=\"rotate(-90 ") == 5 * 3 + 2 + 2);  // vertical: keys, y labels, layers
  CHECK(svg.find("<linearGradient id=\"cmap0\"") != std::string::npos);
}

TEST_CASE("SVG heatmaps: masked cells, annotations", "[viz][svg]") {
  std::vector<float> m = {1.f, NAN, 0.25f, 0.75f};
  HeatmapOptions o;
  o.masked_color = kMaskedGrey;
  o.masked_hatch = kMaskedHatch;
  o.masked_label = "masked";
  o.annotate = true;
  const std::string svg = render_heatmaps_svg(m.data(), 1, 1, 2, 2, o);
  const std::string cells = nth_group(svg, "<g class=\"cells\">", 0);
  CHECK(count(cells, "fill=\"url(#hatch") == 1);  // the masked cell: grey, hatched on top
  CHECK(count(cells, "fill=\"" + hex(kMaskedGrey) + "\"") == 1);
  CHECK(svg.find("<pattern id=\"hatch0\"") != std::string::npos);
  CHECK(svg.find(">masked</text>") != std::string::npos);
  for (const char* v : {">1.00</text>", ">0.25</text>", ">0.75</text>"}) CHECK(svg.find(v) != std::string::npos);
  CHECK(count(svg, "<g") == count(svg, "</g>"));
}

TEST_CASE("xml_escape: markup characters, controls and bad bytes", "[viz][svg]") {
  CHECK(xml_escape("<a & 'b'> \"c\"") == "&lt;a &amp; &apos;b&apos;&gt; &quot;c&quot;");
  CHECK(xml_escape("\xC3\xA0 \xC5\x93") == "\xC3\xA0 \xC5\x93");
  CHECK(xml_escape(std::string("a\x01" "b", 3)) == "a\xE2\x96\xA1" "b");  // U+25A1
  CHECK(xml_escape("a\xFF" "b") == "a?b");
  CHECK(xml_escape("tab\there") == "tab\there");
}

TEST_CASE("SVG plots: one polyline per line, a circle per point, labelled axes", "[viz][svg]") {
  Series line, pts;
  for (int i = 0; i <= 10; ++i) {
    line.x.push_back(static_cast<float>(i));
    line.y.push_back(static_cast<float>(i * i));
  }
  pts.x = {1.f, 2.f, 3.f};
  pts.y = {5.f, 6.f, 7.f};
  pts.style = Series::Points;
  line.label = "Truth";
  pts.label = "Samples";
  PlotOptions o;
  o.xlabel = "x";
  o.ylabel = "y";
  const PlotLayout L = plot_layout({line, pts}, o);
  const std::string svg = render_plot_svg({line, pts}, o);
  CHECK(svg.find("width=\"" + std::to_string(L.width) + "\"") != std::string::npos);
  CHECK(count(svg, "<polyline ") == 2);  // the line and its legend handle
  CHECK(count(svg, "<circle ") == 2 * (3 + 1));  // fill and edge, points and legend marker
  CHECK(svg.find(">Truth</text>") != std::string::npos);
  CHECK(svg.find(">Samples</text>") != std::string::npos);
  CHECK(svg.find(">x</text>") != std::string::npos);
  CHECK(svg.find("<clipPath id=\"clip0\"><rect " + rect_xywh(L.axes) + "/></clipPath>") != std::string::npos);
}

TEST_CASE("SvgCanvas: offsets and groups nest; unbalanced pops are errors", "[viz][svg]") {
  SvgCanvas c(10, 10);
  c.push_offset(3, 4);
  c.group("cells");
  c.fill({0, 0, 2, 2}, kBlack);
  c.end_group();
  c.pop_offset();
  CHECK_THROWS_AS(c.pop_offset(), attnlite::Error);
  CHECK_THROWS_AS(c.end_group(), attnlite::Error);
  const std::string s = c.str();
  CHECK(s.find("<g transform=\"translate(3 4)\">\n<g class=\"cells\">\n<rect x=\"0\" y=\"0\" width=\"2\" height=\"2\" "
               "fill=\"#000000\"/>\n</g>\n</g>\n") != std::string::npos);
  CHECK_THROWS_AS(SvgCanvas(0, 5), attnlite::Error);
  // Pixels: an offset moves what is drawn.
  Image img(6, 6);
  RasterCanvas r(img);
  r.push_offset(2, 3);
  r.fill({0, 0, 1, 1}, kBlack);
  r.pop_offset();
  CHECK(img.rgb(2, 3) == kBlack);
  CHECK(img.rgb(0, 0) == kWhite);
  CHECK_THROWS_AS(r.pop_offset(), attnlite::Error);
}
