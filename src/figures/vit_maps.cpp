// The Vision Transformer's attention maps over its input image: one layer and head, every
// head, or the attention rollout, drawn over the image.
#include "attnlite/figures/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnlite/error.h"
#include "render/draw.h"
#include "figures/figure_parts.h"

namespace attnlite::figures {
using namespace attnlite::render;  // figures are drawn with the renderer

using detail::heatmap;

Figure vit_map(const Classifier& cls, int i, const float* input, const VitMapOptions& o) {
  const Model& m = cls.model();
  if (m.task() != Task::Classify)
    throw Error(std::string("this is a ") + m.kind_name() + " model: image attention needs a vision transformer (kind vit)");
  if (!input) throw Error("vit_map needs the input image");
  const Classification& r = cls.result(i);
  if (!r.attn) throw Error("vit_map: the classification recorded no attention (classify(..., attention = true))");
  const int L = r.layers, NH = r.heads, T = r.tokens, N = T - 1;
  const int S = cls.image_size(), g = (int)std::lround(std::sqrt((double)N));
  if (g * g != N || g <= 0 || S % g != 0) throw Error("vit_map: the patches do not tile the image");
  const int P = S / g;  // patch side in pixels
  if (o.layer < -1 || o.layer >= L)
    throw Error("layer " + std::to_string(o.layer + 1) + " is out of range: the model has " + std::to_string(L));
  if (o.head != kVitRollout && (o.head < -1 || o.head >= NH))
    throw Error("head " + std::to_string(o.head + 1) + " is out of range: the model has " + std::to_string(NH));

  // Rollout through each layer (layer_rollouts.cpp).
  const std::vector<std::vector<float>> rollouts =
      detail::rollouts(L, NH, T, [&](int l, int h, int q, int k) { return r.attn_at(l, h, q, k); });

  std::vector<int> layers, heads;  // head -1 in `heads`: the rollout column
  for (int l = 0; l < L; ++l)
    if (o.layer < 0 || o.layer == l) layers.push_back(l);
  if (o.head == kVitRollout) {
    heads.push_back(-1);
  } else {
    for (int h = 0; h < NH; ++h)
      if (o.head < 0 || o.head == h) heads.push_back(h);
    if (o.head < 0 && o.rollout) heads.push_back(-1);
  }
  const bool overlay = o.view == VitView::Overlay;
  const int rows = (int)layers.size(), cols = (int)heads.size();
  const int Q = overlay ? S : T, K = Q;
  std::vector<float> data((size_t)rows * cols * Q * K);
  for (int a = 0; a < rows; ++a)
    for (int b = 0; b < cols; ++b) {
      const int l = layers[(size_t)a], h = heads[(size_t)b];
      float* d = data.data() + ((size_t)a * cols + b) * Q * K;
      const std::vector<float>& ro = rollouts[(size_t)l];
      if (!overlay) {
        for (int q = 0; q < T; ++q)
          for (int k = 0; k < T; ++k) d[q * T + k] = h < 0 ? ro[(size_t)q * T + k] : r.attn_at(l, h, q, k);
        continue;
      }
      // Row 0 over the patches; the rollout's renormalised over them.
      std::vector<float> w((size_t)N);
      double sum = 0.0;
      for (int n = 0; n < N; ++n) sum += w[(size_t)n] = h < 0 ? ro[(size_t)n + 1] : r.attn_at(l, h, 0, n + 1);
      if (h < 0 && sum > 0.0)
        for (auto& v : w) v = (float)(v / sum);
      for (int y = 0; y < S; ++y)
        for (int x = 0; x < S; ++x) d[y * S + x] = w[(size_t)((y / P) * g + x / P)];
    }

  std::vector<std::string> labels;
  if (!overlay) {
    labels.push_back("CLS");
    for (int n = 1; n <= N; ++n) labels.push_back(std::to_string(n));
  }
  const render::detail::FigureMetrics fm = render::detail::figure_metrics(o.dpi);
  const int s = fm.s;
  const float fpx = fm.font_px;
  const float dpi = (float)o.dpi;
  const bool grid = rows * cols > 1;
  const float cell = overlay ? (grid ? 0.15f : 0.24f) : (grid ? 0.13f : 0.2f);
  const auto col_title = [&](int h) { return h < 0 ? std::string("Rollout") : "Head " + std::to_string(h + 1); };
  // The options of a figure of columns [c0, c1) of `heads`; with_ylabel: the axis / row labels.
  const auto options = [&](int c0, int c1, bool with_ylabel) {
    render::HeatmapOptions ho;
    ho.xlabel = overlay ? "Pixel columns" : "Keys";
    ho.ylabel = !with_ylabel ? "" : overlay ? "Pixel rows" : "Queries";
    ho.xticks = ho.yticks = labels;
    if (grid) {
      for (int c = c0; c < c1; ++c) ho.titles.push_back(col_title(heads[(size_t)c]));
      if (with_ylabel)
        for (int l : layers) ho.row_labels.push_back("Layer " + std::to_string(l + 1));
    } else if (heads[0] < 0) {
      ho.titles.push_back("Rollout, layers 1-" + std::to_string(layers[0] + 1));
    } else {
      ho.titles.push_back("Layer " + std::to_string(layers[0] + 1) + ", head " + std::to_string(heads[0] + 1));
    }
    float ylabel_w = 0.f;
    for (const auto& l : ho.row_labels) ylabel_w = std::max(ylabel_w, (float)render::text_size(l, fpx).w);
    if (ho.row_labels.empty()) ylabel_w = (float)render::text_size(ho.ylabel, fpx).w;
    float title_w = 0.f;
    for (const auto& t : ho.titles) title_w = std::max(title_w, (float)render::text_size(t, fpx).w);
    const float side = std::max({Q * cell, (render::text_size(ho.xlabel, fpx).w + 8.f * s) / dpi,
                                 (ylabel_w + 8.f * s) / dpi, (title_w + 8.f * s) / dpi});
    const int n = c1 - c0;
    ho.fig_width_in = std::max(2.6f, (with_ylabel ? 1.6f : 1.3f) + n * (0.4f + side));
    ho.fig_height_in = std::max(2.4f, 1.2f + rows * (0.5f + side));
    ho.cmap = o.cmap;
    ho.dpi = o.dpi;
    ho.vmin = 0.f;
    ho.vmax = 1.f;
    return ho;
  };
  // Columns [c0, c1) of the data.
  const auto columns = [&](int c0, int c1) {
    std::vector<float> d;
    for (int a = 0; a < rows; ++a)
      d.insert(d.end(), data.begin() + ((size_t)a * cols + c0) * Q * K, data.begin() + ((size_t)a * cols + c1) * Q * K);
    return d;
  };

  const std::string& label = m.labels()[(size_t)r.label];
  char prob[32];
  std::snprintf(prob, sizeof prob, "%.4f", (double)r.prob);
  const std::string pred = "predicted '" + label + "' (probability " + prob + ")";
  const std::string grid_text = std::to_string(g) + "x" + std::to_string(g) + " patches of " + std::to_string(P) + "x" +
                                std::to_string(P) + " pixels";
  const bool with_rollout = std::find(heads.begin(), heads.end(), -1) != heads.end();
  const bool split = overlay && with_rollout && cols > 1;  // heads and rollout on their own scales
  std::string caption;
  if (overlay) {
    caption = "Vision Transformer, " + pred + ": the CLS token's attention over the " + grid_text +
              ", coloured over the " + std::to_string(S) + "x" + std::to_string(S) +
              " input (a grey disc per pixel, its area the pixel's ink; the patch grid in grey); colours from 0 to "
              "the largest weight drawn" + (split ? ", the rollout on a scale of its own." : ".");
    if (with_rollout)
      caption += " Rollout (Abnar & Zuidema, 2020: heads averaged, identity added, rows normalised, multiplied "
                 "through the layers up to the row's): the CLS row over the patches, renormalised to sum to 1 over "
                 "the patches for display (the CLS token's share of itself left out).";
  } else {
    caption = "Vision Transformer, " + pred + ": full self-attention over the " + std::to_string(T) +
              " tokens, CLS then the " + grid_text + " numbered 1-" + std::to_string(N) +
              " row-major from the top left; colours from 0 to the largest weight drawn.";
    if (with_rollout)
      caption += " Rollout (Abnar & Zuidema, 2020: heads averaged, identity added, rows normalised, multiplied "
                 "through the layers up to the row's), drawn as is.";
  }
  const std::string name = overlay ? "vit-overlay" : "vit-maps";
  if (!overlay) {
    render::HeatmapOptions ho = options(0, cols, true);
    float hi = 0.f;
    for (float v : data) hi = std::max(hi, v);
    ho.vmax = hi > 0.f ? hi : 1.f;
    Figure f = heatmap(name, caption, std::move(data), rows, cols, Q, K, ho);
    f.xticks = f.yticks = labels;
    f.text = label;
    return f;
  }

  // Overlays: the colours, then the input's ink as discs and the patch grid.
  float in_max = 0.f;
  for (int p = 0; p < S * S; ++p) in_max = std::max(in_max, input[p]);
  const int lw = std::max(1, s);
  const auto draw = [&](int c0, int c1, bool with_ylabel, float extra_width_in) {
    render::HeatmapOptions ho = options(c0, c1, with_ylabel);
    ho.fig_width_in += extra_width_in;
    std::vector<float> d = columns(c0, c1);
    float hi = 0.f;
    for (float v : d) hi = std::max(hi, v);
    ho.vmax = hi > 0.f ? hi : 1.f;
    const int n = c1 - c0;
    Figure f = heatmap(name, caption, std::move(d), rows, n, Q, K, ho);
    std::vector<float> ink((size_t)S * S);
    for (int p = 0; p < S * S; ++p) ink[(size_t)p] = in_max > 0.f ? std::clamp(input[p] / in_max, 0.f, 1.f) : 0.f;
    // The input's ink and the patch grid, over the colours.
    const auto over = [lay = f.layout, ink, rows, n, S, P, g, lw](render::Canvas& cv) {
      for (int a = 0; a < rows; ++a)
        for (int b = 0; b < n; ++b) {
          for (int y = 0; y < S; ++y)
            for (int x = 0; x < S; ++x) {
              const Rect c = lay.cell(a, b, y, x);
              const float rad = vit_ink_radius(ink[(size_t)y * S + x], c);
              if (rad <= 0.f) continue;
              cv.disc({c.x + c.w / 2.f, c.y + c.h / 2.f}, rad, kVitInk, 1.f, kWhite, 0.9f,
                      std::min((float)lw, rad / 3.f), c);
            }
          const Rect& pan = lay.panels[(size_t)a * n + b];
          for (int j = 1; j < g; ++j) {
            const Rect cx = lay.cell(a, b, 0, j * P), cy = lay.cell(a, b, j * P, 0);
            cv.fill({cx.x - lw / 2, pan.y, lw, pan.h}, kVitGrid);
            cv.fill({pan.x, cy.y - lw / 2, pan.w, lw}, kVitGrid);
          }
        }
    };
    render::RasterCanvas rc(f.image);
    over(rc);
    f.paint = [base = f.paint, over](render::Canvas& cv) {
      base(cv);
      over(cv);
    };
    return f;
  };
  if (!split) {
    Figure f = draw(0, cols, true, 0.f);
    f.text = label;
    return f;
  }
  // Both parts as tall as the whole and wider than they need, so that the height sets their
  // panels (the same size, on the same rows); then each is cropped to its ink and the two are
  // put side by side.
  Figure f = draw(0, cols - 1, true, 1.f + 0.6f * cols);
  Figure ro = draw(cols - 1, cols, false, 1.6f);
  const int pad = render::detail::figure_metrics(o.dpi).pad;
  const auto ink_columns = [&](const render::Image& im, int* x0, int* x1) {
    *x0 = im.width;
    *x1 = 0;
    for (int y = 0; y < im.height; ++y)
      for (int x = 0; x < im.width; ++x)
        if (im.rgb(x, y) != render::kWhite) *x0 = std::min(*x0, x), *x1 = std::max(*x1, x + 1);
  };
  int a0, a1, b0, b1;
  ink_columns(f.image, &a0, &a1);
  ink_columns(ro.image, &b0, &b1);
  a0 = std::max(0, a0 - pad), a1 = std::min(f.image.width, a1 + pad);
  b0 = std::max(0, b0 - pad), b1 = std::min(ro.image.width, b1 + pad);
  render::Image both((a1 - a0) + (b1 - b0), f.image.height);
  for (int y = 0; y < both.height; ++y) {
    std::copy(f.image.px(a0, y), f.image.px(a1, y), both.px(0, y));
    std::copy(ro.image.px(b0, y), ro.image.px(b1, y), both.px(a1 - a0, y));
  }
  const auto shift = [](render::HeatmapLayout& lay, int dx, int width) {
    lay.width = width;
    for (auto* boxes : {&lay.panels, &lay.titles, &lay.xlabels, &lay.ylabels, &lay.row_labels})
      for (auto& box : *boxes)
        if (!box.empty()) box.x += dx;
    lay.colorbar.x += dx;
  };
  f.image = std::move(both);
  f.paint = [left = f.paint, right = ro.paint, a0, a1, b0](render::Canvas& cv) {
    cv.push_offset(-a0, 0);
    left(cv);
    cv.pop_offset();
    cv.push_offset((a1 - a0) - b0, 0);
    right(cv);
    cv.pop_offset();
  };
  f.cols = cols;
  f.matrices = std::move(data);
  f.rollout_layout = ro.layout;
  shift(f.layout, -a0, a1 - a0);
  shift(f.rollout_layout, (a1 - a0) - b0, b1 - b0);
  f.text = label;
  return f;
}

float vit_ink_radius(float ink, const Rect& cell) {
  if (!(ink > 0.f)) return 0.f;
  return 0.42f * std::min(cell.w, cell.h) * std::sqrt(std::min(ink, 1.f));
}

}  // namespace attnlite::figures
