// The chapter's figures: decoded PNG pixels checked against what each figure must show.
#include <catch2/catch.hpp>
#include <attnlite/render/plot.h>

#include <cmath>

#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/translate.h"
#include "attnlite/figures/figures.h"
#include "fixture.h"

using namespace attnlite;
using namespace attnlite::render;

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

  // By default the source's positions end at its <eos>: i'm home . <eos>.
  const auto cross = figures::make("07-transformer-cross", c);
  REQUIRE(cross.keys == 4);
  REQUIRE(cross.xticks == std::vector<std::string>{"i'm", "home", ".", "<eos>"});
  REQUIRE(enc.keys == 4);
  REQUIRE(enc.queries == 4);
  REQUIRE(!cross.layout.title.empty());  // model, kind, sentence and translation
  REQUIRE(cross.layout.title_text ==
          "transformer-d2l, encoder-decoder attention: i'm home . \u2192 je suis chez moi .");
  REQUIRE(ink(png_roundtrip(cross.image), cross.layout.title) > 50);
  // With padding, as the book draws them: num_steps keys, the padding ones with no weight.
  auto cp = c;
  cp.padding = true;
  const auto padded = figures::make("07-transformer-cross", cp);
  REQUIRE(padded.keys == c.transformer->num_steps());
  REQUIRE(padded.xticks.back() == "<pad>");
  const Image ci = png_roundtrip(padded.image);
  REQUIRE(cell_rgb(ci, padded.layout, 0, 0, 0, padded.keys - 1) == zero);
  for (int q = 0; q < cross.queries; ++q)  // the kept keys carry the same weights
    for (int k = 0; k < cross.keys; ++k)
      REQUIRE(cross.matrices[(size_t)q * cross.keys + k] == padded.matrices[(size_t)q * padded.keys + k]);
  const auto penc = figures::make("07-transformer-encoder", cp);
  REQUIRE(penc.keys == c.transformer->num_steps());
  REQUIRE(penc.queries == c.transformer->num_steps());
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
    // The same figure as SVG: its size, balanced groups, heatmaps one cells group per panel
    // with a rect per cell, text elements.
    const std::string svg = figures::to_svg(f);
    const auto count = [&](const std::string& what) {
      size_t k = 0;
      for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++k;
      return k;
    };
    REQUIRE(svg.find("width=\"" + std::to_string(f.image.width) + "\" height=\"" +
                     std::to_string(f.image.height) + "\"") != std::string::npos);
    REQUIRE(svg.substr(svg.size() - 7) == "</svg>\n");
    REQUIRE(count("<g") == count("</g>"));
    REQUIRE(count("<text ") >= 5);
    if (f.is_heatmap) {
      REQUIRE(count("<g class=\"cells\">") == (size_t)(f.rows * f.cols));
      REQUIRE(count("<rect ") >= (size_t)(f.rows * f.cols * f.queries * f.keys));
    } else {
      REQUIRE(count("<polyline ") + count("<circle ") > 0);
    }
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
  o.kind = render::MapKind::Encoder;
  o.layer = 1;
  o.head = 2;
  const auto f = figures::translation_map(c.transformer, "he's calm .", o);
  REQUIRE((f.rows == 1 && f.cols == 1 && f.queries == 4));  // he's calm . <eos>
  o.padding = true;
  REQUIRE(figures::translation_map(c.transformer, "he's calm .", o).queries == 10);  // num_steps
  o.padding = false;
  o.kind = render::MapKind::Cross;
  o.layer = o.head = -1;
  const auto b = figures::translation_map(c.bahdanau, "i'm home .", o);
  REQUIRE((b.rows == 1 && b.cols == 1));
  o.kind = render::MapKind::Encoder;
  REQUIRE_THROWS_WITH(figures::translation_map(c.bahdanau, "go .", o), Catch::Matchers::Contains("only encoder-decoder"));
  o.layer = 7;
  REQUIRE_THROWS_WITH(figures::translation_map(c.transformer, "go .", o), Catch::Matchers::Contains("out of range"));
  REQUIRE_THROWS_AS(figures::map_kind_from_name("sideways"), Error);
}

TEST_CASE("translation maps of a beam search: the best hypothesis's tokens and weights", "[figures]") {
  const auto c = context();
  const std::string sentence = "he's calm .";
  Limits lim;
  lim.max_beam = 4;
  Translator t(c.transformer, lim);
  DecodeOptions d;
  d.beam_size = 4;
  d.length_penalty = 0.75f;
  const Translation& r = t.translate(sentence, d);
  figures::MapOptions o;
  o.kind = render::MapKind::Cross;
  o.layer = 1;
  o.beam_size = 4;
  o.length_penalty = 0.75f;
  const auto f = figures::translation_map(c.transformer, sentence, o);
  REQUIRE(f.text == std::string(r.text));
  REQUIRE((f.rows == 1 && f.cols == 4 && f.queries == r.steps && f.keys == r.src_valid));
  for (int h = 0; h < 4; ++h)
    for (int q = 0; q < f.queries; ++q)
      for (int k = 0; k < f.keys; ++k)
        REQUIRE(f.matrices[((size_t)h * f.queries + q) * f.keys + k] == r.cross_at(1, q, h, k));
  REQUIRE(f.layout.title_text == "transformer, encoder-decoder attention: he's calm . \u2192 " + std::string(r.text));
  o.beam_size = 0;
  REQUIRE_THROWS_AS(figures::translation_map(c.transformer, sentence, o), Error);
}

TEST_CASE("alignment view: heads averaged, a line per weight with that opacity, PNG and SVG", "[figures]") {
  const auto c = context();
  const int L = c.transformer->num_layers(), NH = c.transformer->num_heads();
  figures::AlignmentOptions a;  // cross-attention, last layer, heads averaged
  a.model_name = "transformer-d2l";
  const auto f = figures::alignment_view(c.transformer, "i'm home .", a);
  REQUIRE((f.queries == 6 && f.keys == 4));  // je suis chez moi . <eos>  x  i'm home . <eos>
  REQUIRE(f.xticks == std::vector<std::string>{"i'm", "home", ".", "<eos>"});
  REQUIRE(f.yticks.back() == "<eos>");
  // The weights: translation_map's heads of the last layer, averaged.
  figures::MapOptions mo;
  mo.layer = L - 1;
  const auto maps = figures::translation_map(c.transformer, "i'm home .", mo);
  REQUIRE(maps.cols == NH);
  for (int q = 0; q < f.queries; ++q) {
    float row = 0.f;
    for (int k = 0; k < f.keys; ++k) {
      float mean = 0.f;
      for (int h = 0; h < NH; ++h) mean += maps.matrices[((size_t)h * f.queries + q) * f.keys + k];
      REQUIRE(f.matrices[(size_t)q * f.keys + k] == Approx(mean / NH).margin(1e-6));
      row += f.matrices[(size_t)q * f.keys + k];
    }
    REQUIRE(row == Approx(1.f).margin(1e-5));
  }
  // SVG: one line per weight of at least 1%, lightest first, its opacity the weight.
  const std::string svg = figures::to_svg(f);
  std::vector<float> drawn;
  for (size_t at = svg.find("stroke-opacity=\""); at != std::string::npos; at = svg.find("stroke-opacity=\"", at + 1))
    drawn.push_back(std::stof(svg.substr(at + 16)));
  std::vector<float> want;
  for (float v : f.matrices)
    if (v >= figures::kAlignmentMinWeight) want.push_back(v);
  std::sort(want.begin(), want.end());
  REQUIRE(drawn.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) REQUIRE(drawn[i] == Approx(want[i]).margin(0.006));  // 2 decimals
  size_t texts = 0;
  for (size_t at = svg.find("<text "); at != std::string::npos; at = svg.find("<text ", at + 1)) ++texts;
  REQUIRE(texts == 1 + 2 + 4 + 6);  // title, headings, keys, queries
  REQUIRE(svg.find(">Source (keys)</text>") != std::string::npos);
  REQUIRE(svg.find("transformer-d2l, encoder-decoder attention, layer 2, heads averaged: i&apos;m home . \u2192 je suis chez moi .") !=
          std::string::npos);
  // PNG: the lines in blue, anti-aliased, the labels in black.
  const Image im = png_roundtrip(f.image);
  int blue = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const Rgb p = im.rgb(x, y);
      blue += p[2] > p[0] + 20;
    }
  REQUIRE(blue > 300);
  REQUIRE(ink(im, Rect{0, 0, im.width, im.height}) > blue);
  // One head: its weights, in its colour.
  a.head = 1;
  a.layer = 0;
  const auto one = figures::alignment_view(c.transformer, "i'm home .", a);
  mo.layer = 0;
  mo.head = 1;
  const auto map1 = figures::translation_map(c.transformer, "i'm home .", mo);
  REQUIRE(one.matrices == map1.matrices);
  char hex[8];
  const Rgb hc = series_color(1);
  std::snprintf(hex, sizeof hex, "#%02x%02x%02x", hc[0], hc[1], hc[2]);
  REQUIRE(figures::to_svg(one).find(std::string("stroke=\"") + hex + "\"") != std::string::npos);
  // Self-attention; the Bahdanau model's only kind; bad layers and heads.
  a.kind = render::MapKind::Encoder;
  REQUIRE(figures::alignment_view(c.transformer, "i'm home .", a).keys == 4);
  REQUIRE_THROWS_WITH(figures::alignment_view(c.bahdanau, "go .", a), Catch::Matchers::Contains("only encoder-decoder"));
  a.kind = render::MapKind::Cross;
  a.head = -1;
  a.layer = -1;
  REQUIRE(figures::alignment_view(c.bahdanau, "i'm home .", a).keys == 4);
  a.layer = 9;
  REQUIRE_THROWS_WITH(figures::alignment_view(c.transformer, "go .", a), Catch::Matchers::Contains("out of range"));
  a.layer = -1;
  a.head = 4;
  REQUIRE_THROWS_WITH(figures::alignment_view(c.transformer, "go .", a), Catch::Matchers::Contains("head 5 is out of range"));
}

TEST_CASE("encoder rollout: a panel per depth, the heads' mean plus identity multiplied through", "[figures]") {
  const auto c = context();
  const int L = c.transformer->num_layers(), NH = c.transformer->num_heads();
  figures::TranslationViewOptions o;
  o.model_name = "transformer-d2l";
  const auto f = figures::encoder_rollout(c.transformer, "i'm home .", o);
  REQUIRE((f.rows == 1 && f.cols == L && f.queries == 4 && f.keys == 4));
  REQUIRE(f.xticks == std::vector<std::string>{"i'm", "home", ".", "<eos>"});
  // From the encoder's own maps: Â_l = rows of (heads' mean + I) normalised; R_1 = Â_1,
  // R_2 = Â_2 R_1.
  figures::MapOptions mo;
  mo.kind = render::MapKind::Encoder;
  const auto maps = figures::translation_map(c.transformer, "i'm home .", mo);  // L x NH panels
  const int T = 4;
  std::vector<double> R(T * T, 0.0);
  for (int q = 0; q < T; ++q) R[q * T + q] = 1.0;
  for (int l = 0; l < L; ++l) {
    std::vector<double> A(T * T), next(T * T, 0.0);
    for (int q = 0; q < T; ++q) {
      double sum = 0.0;
      for (int k = 0; k < T; ++k) {
        double a = q == k;
        for (int h = 0; h < NH; ++h) a += maps.matrices[(((size_t)l * NH + h) * T + q) * T + k] / (double)NH;
        A[q * T + k] = a;
        sum += a;
      }
      for (int k = 0; k < T; ++k) A[q * T + k] /= sum;
    }
    for (int q = 0; q < T; ++q)
      for (int k = 0; k < T; ++k)
        for (int j = 0; j < T; ++j) next[q * T + k] += A[q * T + j] * R[j * T + k];
    R = next;
    for (int q = 0; q < T; ++q) {
      double row = 0.0;
      for (int k = 0; k < T; ++k) {
        REQUIRE(f.matrices[((size_t)l * T + q) * T + k] == Approx(R[q * T + k]).margin(1e-6));
        row += f.matrices[((size_t)l * T + q) * T + k];
      }
      REQUIRE(row == Approx(1.0).margin(1e-5));
    }
  }
  REQUIRE(f.layout.title_text == "transformer-d2l, encoder attention rollout: i'm home . \u2192 je suis chez moi .");
  const std::string svg = figures::to_svg(f);
  REQUIRE(svg.find(">Layers 1-2</text>") != std::string::npos);
  REQUIRE(ink(png_roundtrip(f.image), f.layout.titles[1]) > 10);
  REQUIRE_THROWS_WITH(figures::encoder_rollout(c.bahdanau, "go .", o), Catch::Matchers::Contains("needs a Transformer"));
}

TEST_CASE("overview: every layer and head of the three kinds as thumbnails", "[figures]") {
  const auto c = context();
  const int L = c.transformer->num_layers(), NH = c.transformer->num_heads();
  figures::TranslationViewOptions o;
  const auto f = figures::overview(c.transformer, "i'm home .", o);
  REQUIRE((f.rows == 3 * L && f.cols == NH));
  // The three kinds' weights, one block after the other.
  std::vector<float> want;
  for (auto kind : {render::MapKind::Encoder, render::MapKind::DecoderSelf, render::MapKind::Cross}) {
    figures::MapOptions mo;
    mo.kind = kind;
    const auto m = figures::translation_map(c.transformer, "i'm home .", mo);
    want.insert(want.end(), m.matrices.begin(), m.matrices.end());
  }
  REQUIRE(f.matrices == want);
  const std::string svg = figures::to_svg(f);
  const auto count = [&](const std::string& what) {
    size_t k = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++k;
    return k;
  };
  REQUIRE(count("<g class=\"cells\">") == (size_t)(3 * L * NH));
  REQUIRE(count("<g transform=\"translate(0 ") == 3);
  for (const char* t : {">Encoder self-attention</text>", ">Decoder self-attention</text>", ">Encoder-decoder attention</text>"})
    REQUIRE(count(t) == 1);
  REQUIRE(count(">Head 4</text>") == 3);
  REQUIRE(count(">Layer 2</text>") == 3);
  REQUIRE(count(">i&apos;m</text>") == 0);  // thumbnails: no tick labels
  REQUIRE(svg.find("transformer, every layer and head: i&apos;m home . \u2192 je suis chez moi .") != std::string::npos);
  const Image im = png_roundtrip(f.image);
  REQUIRE((im.width == f.layout.width && im.height == f.layout.height));
  REQUIRE(ink(im, Rect{0, 0, im.width, im.height}) > 5000);
  REQUIRE_THROWS_WITH(figures::overview(c.bahdanau, "go .", o), Catch::Matchers::Contains("needs a Transformer"));
}

namespace {

using attnlite::test::lm_fra;
bool masked_px(Rgb c) { return c == kMaskedGrey || c == kMaskedHatch; }

// Checks one panel of a generation map against the generation's own weights, on decoded
// pixels: the future in the masked colours only, the past in the colormap's colour of its
// weight, <bos> -> <bos> (weight 1) in the top colour; and counts the positions from the
// pixels alone (the distinct columns where the masked area starts, row by row).
void check_causal_panel(const Image& im, const figures::Figure& f, int r, int c, const Generation& g, int layer,
                        int head, Colormap cmap) {
  const int P = f.queries;
  for (int q = 0; q < P; ++q)
    for (int k = 0; k < P; ++k) {
      INFO("panel " << r << "," << c << " query " << q << " key " << k);
      const float v = f.matrices[(((size_t)r * f.cols + c) * P + q) * P + k];
      const Rect cell = f.layout.cell(r, c, q, k);
      if (k > q) {
        REQUIRE(std::isnan(v));
        REQUIRE(g.attn_at(layer, head, q, k) == 0.f);  // the model's own zero, drawn as masked
        for (int y = cell.y; y < cell.bottom(); ++y)
          for (int x = cell.x; x < cell.right(); ++x) REQUIRE(masked_px(im.rgb(x, y)));
      } else {
        REQUIRE(v == g.attn_at(layer, head, q, k));
        REQUIRE(cell_rgb(im, f.layout, r, c, q, k) == colormap_rgb(cmap, v));
      }
    }
  REQUIRE(cell_rgb(im, f.layout, r, c, 0, 0) == colormap_rgb(cmap, 1.f));
  const Rect& P0 = f.layout.panels[(size_t)r * f.cols + c];
  std::vector<int> starts;
  for (int y = P0.y; y < P0.bottom(); ++y) {
    int x = P0.x;
    while (x < P0.right() && !masked_px(im.rgb(x, y))) ++x;
    if (starts.empty() || starts.back() != x) starts.push_back(x);
  }
  REQUIRE(starts.size() == (size_t)P);  // one step of the staircase per position
  REQUIRE(starts.back() == P0.right());  // the last query sees every key
}

}  // namespace

TEST_CASE("generation map: one layer and head of a greedy generation", "[figures][lm]") {
  figures::GenerationMapOptions o;
  o.layer = 0;
  o.head = 0;
  const auto f = figures::generation_map(lm_fra(), "je", o);

  Generator gen(lm_fra());
  const Generation& g = gen.generate("je");
  REQUIRE(g.positions >= 3);
  REQUIRE((f.rows == 1 && f.cols == 1));
  REQUIRE(f.queries == g.positions);
  REQUIRE(f.keys == g.positions);
  REQUIRE(f.text == std::string(g.text));
  // The tokens the model read, on both axes: <bos>, the prompt, the generated ones fed back.
  REQUIRE(f.xticks.size() == (size_t)g.positions);
  REQUIRE(f.yticks == f.xticks);
  REQUIRE(f.xticks[0] == "<bos>");
  REQUIRE(f.xticks[1] == "je");
  for (int i = 0; i < g.positions; ++i) REQUIRE(f.xticks[i] == lm_fra()->tgt_vocab().token(g.tokens[i]));
  REQUIRE(f.layout.vmin == 0.f);
  REQUIRE(f.layout.vmax == 1.f);

  const Image im = png_roundtrip(f.image);
  check_causal_panel(im, f, 0, 0, g, 0, 0, Colormap::Reds);
  REQUIRE(cell_rgb(im, f.layout, 0, 0, 0, 0) == Rgb{103, 0, 13});
  // The masked swatch under the colorbar, labelled, and the title.
  REQUIRE(!f.layout.masked_swatch.empty());
  REQUIRE(masked_px(at(im, f.layout.masked_swatch.x + 1, f.layout.masked_swatch.y + 1)));
  REQUIRE(ink(im, f.layout.masked_text) > 10);
  REQUIRE(ink(im, f.layout.titles[0]) > 10);
  REQUIRE(f.caption.find("masked") != std::string::npos);
  REQUIRE(f.caption.find("greedy") != std::string::npos);
  // Generated tokens fed back are labelled in blue, the prompt in black.
  int blue = 0;
  const Rect& P = f.layout.panels[0];
  for (int y = 0; y < P.bottom(); ++y)
    for (int x = 0; x < P.x; ++x) blue += at(im, x, y) == Rgb{31, 119, 180};
  REQUIRE(blue > 10);
}

TEST_CASE("generation map: layers x heads grid of a sampled generation", "[figures][lm]") {
  figures::GenerationMapOptions o;
  o.generate.sample = true;
  o.generate.temperature = 0.8f;
  o.generate.top_p = 0.9f;
  o.generate.seed = 3;
  o.cmap = Colormap::Viridis;
  const auto f = figures::generation_map(lm_fra(), "nous allons", o);
  const int L = lm_fra()->num_layers(), NH = lm_fra()->num_heads();
  REQUIRE((f.rows == L && f.cols == NH));
  REQUIRE(f.layout.panels.size() == (size_t)(L * NH));

  Generator gen(lm_fra());
  GenerateOptions go = o.generate;
  const Generation& g = gen.generate("nous allons", go);
  REQUIRE(f.text == std::string(g.text));
  REQUIRE(f.queries == g.positions);
  REQUIRE(f.caption.find("seed 3") != std::string::npos);
  const Image im = png_roundtrip(f.image);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < NH; ++h) check_causal_panel(im, f, l, h, g, l, h, Colormap::Viridis);
  for (int h = 0; h < NH; ++h) REQUIRE(ink(im, f.layout.titles[h]) > 10);        // Head 1..4
  for (int l = 0; l < L; ++l) REQUIRE(ink(im, f.layout.ylabels[(size_t)l * NH]) > 10);  // Layer 1..3
  // The same options draw the same figure.
  REQUIRE(figures::generation_map(lm_fra(), "nous allons", o).image.rgba == f.image.rgba);
}

TEST_CASE("generation map: the whole context, positions and bad input", "[figures][lm]") {
  figures::GenerationMapOptions o;
  o.layer = 2;
  o.head = -1;
  o.tokens = false;
  o.generate.max_tokens = 2;
  const auto f = figures::generation_map(lm_fra(), "il est", o);
  REQUIRE((f.rows == 1 && f.cols == 4));
  REQUIRE(f.queries == 1 + 2 + 1);  // <bos>, 2 words, 1 of the 2 generated tokens fed back

  // 31 words fill the 32 positions: every label stays readable (one per cell).
  std::string prompt;
  for (int i = 0; i < 31; ++i) prompt += i ? " je" : "je";
  o = figures::GenerationMapOptions{};
  o.layer = 0;
  o.head = 1;
  const auto big = figures::generation_map(lm_fra(), prompt, o);
  REQUIRE(big.queries == 32);
  const Rect c = big.layout.cell(0, 0, 0, 0);
  REQUIRE(c.w >= text_line_height(points_to_px(10.f, 100)));  // a cell per label line: none is thinned away
  REQUIRE(c.h >= text_line_height(points_to_px(10.f, 100)));

  o.layer = 3;
  REQUIRE_THROWS_WITH(figures::generation_map(lm_fra(), "je", o), Catch::Matchers::Contains("out of range"));
  o.layer = 0;
  o.head = 4;
  REQUIRE_THROWS_WITH(figures::generation_map(lm_fra(), "je", o), Catch::Matchers::Contains("out of range"));
  o.head = 0;
  o.generate.temperature = 0.f;
  REQUIRE_THROWS_WITH(figures::generation_map(lm_fra(), "je", o), Catch::Matchers::Contains("temperature"));
  o.generate = GenerateOptions{};
  REQUIRE_THROWS_WITH(figures::generation_map(lm_fra(), "", o), Catch::Matchers::Contains("empty prompt"));
  const auto tr = Model::load(test::model_path("transformer-d2l"));
  REQUIRE_THROWS_WITH(figures::generation_map(tr, "je", o), Catch::Matchers::Contains("language model"));
}

// Not run by default: `attnlite_tests "[.gallery]"` rewrites the sample images in docs/gallery.
TEST_CASE("gallery: generation maps", "[.gallery]") {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.find_last_of('/') + 1) + "../docs/gallery/";
  figures::GenerationMapOptions o;  // greedy "je", layer 2, head 4
  o.layer = 1;
  o.head = 3;
  write_png(dir + "generation_je.png", figures::generation_map(lm_fra(), "je", o).image);
  o.layer = o.head = -1;  // sampled "nous allons", every layer and head
  o.generate.sample = true;
  o.generate.temperature = 0.8f;
  o.generate.seed = 3;
  write_png(dir + "generation_nous_allons_grid.png", figures::generation_map(lm_fra(), "nous allons", o).image);
}

TEST_CASE("gallery: alignment views, rollout, overview and SVG", "[.gallery]") {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.find_last_of('/') + 1) + "../docs/gallery/";
  const auto fra = Model::load(test::model_path("transformer-fra"));
  figures::AlignmentOptions a;  // the shipped translator, last layer, heads averaged
  a.model_name = "transformer-fra";
  const auto f = figures::alignment_view(fra, "i can't find my keys .", a);
  write_png(dir + "alignment_keys.png", f.image);
  std::FILE* out = std::fopen((dir + "alignment_keys.svg").c_str(), "wb");
  REQUIRE(out);
  const std::string svg = figures::to_svg(f);
  std::fwrite(svg.data(), 1, svg.size(), out);
  std::fclose(out);
  a.kind = render::MapKind::Encoder;  // one head of the encoder's first layer
  a.layer = 0;
  a.head = 2;
  write_png(dir + "alignment_encoder_head3.png", figures::alignment_view(fra, "i can't find my keys .", a).image);
  figures::TranslationViewOptions t;
  t.model_name = "transformer-fra";
  write_png(dir + "encoder_rollout_keys.png", figures::encoder_rollout(fra, "i can't find my keys .", t).image);
  write_png(dir + "overview_keys.png", figures::overview(fra, "i can't find my keys .", t).image);
}
