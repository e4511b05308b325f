// attnlite's figure renderer for the web: the second WASM module, attnlite-figures.wasm,
// built by wasm/CMakeLists.txt from src/render/ (the renderer, colormaps, text, PNG encoding)
// and this file alone, so that the runtime module (wasm/bindings.cpp) stays within its size
// budget and the translation worker, which never draws, does not load the renderer.
// web/api/figures.mjs wraps it (Attnlite's renderHeatmap, renderPlot, colormap); nothing here
// is meant to be called by hand.
//
// Conventions are the C API's (include/attnlite/c_api.h) and the same names as when these
// functions lived in the runtime module: functions that can fail return 0, -1 or a null
// pointer and, when `err` is not null, store an al_error in *err (al_error_message,
// al_error_free: the C API's src/c_api/errors.cpp, exported from this module too); C++
// exceptions never cross into JavaScript.
// Rendered figures are al_image handles that the caller frees. No state lives here.
// Strings going in are UTF-8, NUL-terminated; lists of strings are joined with '\n'.
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/c_api.h"
#include "attnlite/error.h"
#include "attnlite/render/heatmap.h"
#include "attnlite/render/plot.h"
#include "attnlite/render/translation_figure.h"

#include "module_common.h"

using namespace attnlite;

// A rendered figure: its pixels and, for heatmaps, where the panels are.
struct al_image {
  render::Image image;
  std::vector<int32_t> layout;
  float vmin = 0.f, vmax = 1.f;
};

namespace {

using c_api::guard;

// A new image filled by fill(img), or null with *err set.
template <class F>
al_image* make_image(al_error** err, F&& fill) {
  std::unique_ptr<al_image> img;
  const bool ok = guard(err, [&] {
    img = std::make_unique<al_image>();
    fill(*img);
  }) == AL_OK;
  return ok ? img.release() : nullptr;
}

std::vector<std::string> split_lines(const char* s) {
  std::vector<std::string> out;
  if (!s || !*s) return out;
  std::string_view v(s);
  size_t start = 0;
  for (;;) {
    const size_t nl = v.find('\n', start);
    out.emplace_back(v.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

// Renders a heatmap into img with its layout and colour scale.
void draw_heatmap(al_image& img, const float* matrices, int rows, int cols, int queries, int keys,
                  const render::HeatmapOptions& o) {
  render::HeatmapLayout L = render::heatmap_layout(rows, cols, queries, keys, o, matrices);
  img.image = render::render_heatmaps(matrices, rows, cols, queries, keys, o);
  img.layout.assign({L.width, L.height, L.rows, L.cols, L.queries, L.keys});
  for (const render::Rect& p : L.panels) img.layout.insert(img.layout.end(), {p.x, p.y, p.w, p.h});
  img.layout.insert(img.layout.end(), {L.colorbar.x, L.colorbar.y, L.colorbar.w, L.colorbar.h});
  img.vmin = L.vmin;
  img.vmax = L.vmax;
}

}  // namespace

extern "C" {

// (al_heap_used, al_leak_check: module_common.h)

// ---- figures ---------------------------------------------------------------------------
// render_heatmaps over matrices (rows, cols, queries, keys). cmap: "Reds", "Blues" or
// "viridis"; titles/xticks/yticks: '\n'-joined lists ("" for none); vmin/vmax: NaN for the
// data range. Returns an image (free it with al_image_free), or null with *err set. Its
// layout (al_image_layout): width, height, rows, cols, queries, keys, then x, y, w, h of
// each panel (row-major), then the colorbar's x, y, w, h.
EMSCRIPTEN_KEEPALIVE al_image* al_render_heatmap(const float* matrices, int rows, int cols,
                                                      int queries, int keys, const char* cmap,
                                                      const char* xlabel, const char* ylabel,
                                                      const char* titles, const char* xticks,
                                                      const char* yticks, float width_in,
                                                      float height_in, int dpi, float vmin,
                                                      float vmax, int colorbar, int annotate,
                                                      al_error** err) {
  return make_image(err, [&](al_image& img) {
    render::HeatmapOptions o;
    o.cmap = render::colormap_from_name(cmap ? cmap : "Reds");
    o.xlabel = xlabel ? xlabel : "";
    o.ylabel = ylabel ? ylabel : "";
    o.titles = split_lines(titles);
    o.xticks = split_lines(xticks);
    o.yticks = split_lines(yticks);
    o.fig_width_in = width_in;
    o.fig_height_in = height_in;
    o.dpi = dpi;
    if (!std::isnan(vmin)) o.vmin = vmin;
    if (!std::isnan(vmax)) o.vmax = vmax;
    o.colorbar = colorbar != 0;
    o.annotate = annotate != 0;
    if (!o.titles.empty() && (int)o.titles.size() != cols)
      throw Error("heatmap: give one title per column");
    draw_heatmap(img, matrices, rows, cols, queries, keys, o);
  });
}

// The map of one translation's attention as figures::translation_map lays it out (the CLI's
// `attnlite heatmap translate`; translation_figure.h), over matrices (rows, cols, queries, keys)
// already gathered: layers/heads name the rows and columns (0-based), kind is 0 (encoder
// self-attention), 1 (decoder self-attention) or 2 (encoder-decoder), xticks/yticks the keys'
// and queries' tokens ('\n'-joined; "" for positions). Returns an image as al_render_heatmap
// does. (SVG stays native: the SVG canvas would take 15 KB of this module.)
EMSCRIPTEN_KEEPALIVE al_image* al_render_translation_map(const float* matrices, int rows, int cols,
                                                              int queries, int keys, int transformer,
                                                              int kind, const int* layers, const int* heads,
                                                              const char* model_name, const char* sentence,
                                                              const char* translation, const char* xticks,
                                                              const char* yticks, const char* cmap, int dpi,
                                                              int annotate, al_error** err) {
  return make_image(err, [&](al_image& img) {
    if (rows < 1 || cols < 1 || rows > 256 || cols > 256) throw Error("translation map: between 1 and 256 layers and heads");
    if (kind < 0 || kind > 2) throw Error("translation map: kind must be 0 (encoder), 1 (decoder) or 2 (cross)");
    render::TranslationFigure t;
    t.kind = (render::MapKind)kind;
    t.transformer = transformer != 0;
    t.model_name = model_name ? model_name : "";
    t.sentence = sentence ? sentence : "";
    t.translation = translation ? translation : "";
    t.layers.assign(layers, layers + rows);
    t.heads.assign(heads, heads + cols);
    t.queries = queries;
    t.keys = keys;
    t.xticks = split_lines(xticks);
    t.yticks = split_lines(yticks);
    t.cmap = render::colormap_from_name(cmap ? cmap : "Reds");
    t.annotate = annotate != 0;
    t.dpi = dpi;
    draw_heatmap(img, matrices, rows, cols, queries, keys, render::translation_figure_options(t));
  });
}

// An image's size, its RGBA pixels (width x height x 4) and, for heatmaps, the layout above
// and the colour scale (an empty layout for plots).
EMSCRIPTEN_KEEPALIVE int al_image_width(const al_image* img) { return img->image.width; }
EMSCRIPTEN_KEEPALIVE int al_image_height(const al_image* img) { return img->image.height; }
EMSCRIPTEN_KEEPALIVE const uint8_t* al_image_pixels(const al_image* img) { return img->image.rgba.data(); }
EMSCRIPTEN_KEEPALIVE const int32_t* al_image_layout(const al_image* img) { return img->layout.data(); }
EMSCRIPTEN_KEEPALIVE int al_image_layout_size(const al_image* img) { return (int)img->layout.size(); }
EMSCRIPTEN_KEEPALIVE float al_image_vmin(const al_image* img) { return img->vmin; }
EMSCRIPTEN_KEEPALIVE float al_image_vmax(const al_image* img) { return img->vmax; }
EMSCRIPTEN_KEEPALIVE void al_image_free(al_image* img) { delete img; }

// The colour of a colormap at t in [0, 1], packed 0xRRGGBB (-1 with *err set for an
// unknown name).
EMSCRIPTEN_KEEPALIVE int al_colormap_rgb(const char* cmap, float t, al_error** err) {
  int out = -1;
  guard(err, [&] {
    const auto c = render::colormap_rgb(render::colormap_from_name(cmap ? cmap : ""), t);
    out = c[0] << 16 | c[1] << 8 | c[2];
  });
  return out;
}

// render_plot of n series: series i has lens[i] points taken in order from xs/ys, a style
// (0 line, 1 dashed, 2 dash-dot, 3 dotted, 4 points), a colour 0xRRGGBB or -1 for d2l's
// cycle, and a label from the '\n'-joined labels. limits: xmin, xmax, ymin, ymax (NaN:
// from the data). Returns an image as al_render_heatmap does.
EMSCRIPTEN_KEEPALIVE al_image* al_render_plot(int n, const float* xs, const float* ys,
                                                   const int* lens, const int* styles,
                                                   const int* colors, const char* labels,
                                                   const char* xlabel, const char* ylabel,
                                                   const float* limits, float width_in,
                                                   float height_in, int dpi, int legend,
                                                   al_error** err) {
  return make_image(err, [&](al_image& img) {
    if (n < 0 || n > 64) throw Error("plot: between 0 and 64 series");
    const std::vector<std::string> names = split_lines(labels);
    std::vector<render::Series> series((size_t)n);
    size_t at = 0;
    for (int i = 0; i < n; ++i) {
      render::Series& s = series[(size_t)i];
      if (lens[i] < 0 || lens[i] > 1000000) throw Error("plot: bad series length");
      s.x.assign(xs + at, xs + at + lens[i]);
      s.y.assign(ys + at, ys + at + lens[i]);
      at += (size_t)lens[i];
      if (styles[i] < 0 || styles[i] > 4) throw Error("plot: bad style");
      s.style = (render::Series::Style)styles[i];
      if (colors[i] >= 0)
        s.color = render::Rgb{(uint8_t)(colors[i] >> 16), (uint8_t)(colors[i] >> 8), (uint8_t)colors[i]};
      if ((size_t)i < names.size()) s.label = names[(size_t)i];
    }
    render::PlotOptions o;
    o.xlabel = xlabel ? xlabel : "";
    o.ylabel = ylabel ? ylabel : "";
    if (limits) {
      if (!std::isnan(limits[0])) o.xmin = limits[0];
      if (!std::isnan(limits[1])) o.xmax = limits[1];
      if (!std::isnan(limits[2])) o.ymin = limits[2];
      if (!std::isnan(limits[3])) o.ymax = limits[3];
    }
    o.fig_width_in = width_in;
    o.fig_height_in = height_in;
    o.dpi = dpi;
    o.legend = legend != 0;
    img.image = render::render_plot(series, o);
  });
}

}  // extern "C"
