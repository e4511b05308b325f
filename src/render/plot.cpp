// Line and scatter plots in the style of d2l.plot (matplotlib axes with a grid).
#include "attnlite/render/plot.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "attnlite/error.h"
#include "attnlite/render/canvas.h"
#include "render/draw.h"
#include "render/ticks.h"

namespace attnlite::render {

namespace {

using detail::kFrameColor;
using detail::kTextColor;
constexpr Rgb kGridColor{218, 218, 218};
constexpr Rgb kLegendEdge{204, 204, 204};

struct PlotTick {
  double value;
  std::string text;
};

struct PlotPlan {
  PlotLayout layout;
  detail::FigureMetrics m;
  std::vector<PlotTick> xticks, yticks;
  float line_w = 2.f, marker_r = 4.f;
  std::vector<size_t> legend_entries;  // series listed in the legend
  int legend_handle = 20;
};

void data_range(const std::vector<Series>& series, bool want_x, float& lo, float& hi) {
  lo = std::numeric_limits<float>::infinity();
  hi = -lo;
  for (const Series& s : series) {
    const size_t n = std::min(s.x.size(), s.y.size());
    for (size_t i = 0; i < n; ++i) {
      const float v = want_x ? s.x[i] : s.y[i];
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
}

// The axis limits: explicit ones, else the data range with matplotlib's 5% margins.
void limits(std::optional<float> omin, std::optional<float> omax, float dlo, float dhi, float& lo, float& hi) {
  if (!(dlo <= dhi)) dlo = 0.f, dhi = 1.f;
  if (dlo == dhi) {
    const float d = std::max(0.5f, std::fabs(dlo) * 0.05f);
    dlo -= d;
    dhi += d;
  }
  const float margin = 0.05f * (dhi - dlo);
  lo = omin.value_or(dlo - margin);
  hi = omax.value_or(dhi + margin);
  if (!std::isfinite(lo) || !std::isfinite(hi)) throw Error("plot: axis limits must be finite");
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) hi = lo + 1.f;
}

std::vector<PlotTick> make_ticks(double lo, double hi, double step) {
  std::vector<PlotTick> out;
  const int decimals = detail::decimals_for_step(step);
  for (double v : detail::ticks_in(lo, hi, step)) out.push_back({v, detail::format_tick(v, decimals)});
  return out;
}

int widest(const std::vector<PlotTick>& ticks, float px) {
  int w = 0;
  for (const PlotTick& t : ticks) w = std::max(w, text_size(t.text, px).w);
  return w;
}

// Ticks at a nice step whose labels keep at least `gap` pixels apart (`along_w`:
// labels are laid side by side, so their widths count).
std::vector<PlotTick> axis_ticks(double lo, double hi, int len_px, int min_px, bool along_w, int gap, float px) {
  if (len_px < 2) return {};
  double step = detail::nice_step((hi - lo) * min_px / len_px, false);
  std::vector<PlotTick> ticks = make_ticks(lo, hi, step);
  for (int round = 0; round < 8 && along_w; ++round) {
    const double spacing_px = step / (hi - lo) * len_px;
    if (spacing_px >= widest(ticks, px) + gap) break;
    step = detail::nice_step(step * 1.01, false);
    ticks = make_ticks(lo, hi, step);
  }
  return ticks;
}

std::vector<float> dash_pattern(Series::Style style, float lw) {
  switch (style) {
    case Series::Dashed: return {3.7f * lw, 1.6f * lw};
    case Series::DashDot: return {6.4f * lw, 1.6f * lw, 1.f * lw, 1.6f * lw};
    case Series::Dotted: return {1.f * lw, 1.65f * lw};
    default: return {};
  }
}

PlotPlan make_plan(const std::vector<Series>& series, const PlotOptions& o) {
  if (o.dpi <= 0 || !(o.fig_width_in > 0.f) || !(o.fig_height_in > 0.f))
    throw Error("plot: figure size and dpi must be positive");
  const double wpx = std::round(static_cast<double>(o.fig_width_in) * o.dpi);
  const double hpx = std::round(static_cast<double>(o.fig_height_in) * o.dpi);
  if (wpx < 32 || hpx < 32 || wpx * hpx > 64e6)
    throw Error("plot: figure must be between 32x32 and 64 megapixels");
  for (const Series& s : series)
    if (s.x.size() != s.y.size()) throw Error("plot: series '" + s.label + "' has x and y of different lengths");

  PlotPlan p;
  PlotLayout& L = p.layout;
  L.width = static_cast<int>(wpx);
  L.height = static_cast<int>(hpx);
  const detail::FigureMetrics m = detail::figure_metrics(o.dpi);
  p.m = m;
  p.line_w = 1.5f * o.dpi / 72.f;
  p.marker_r = 3.f * o.dpi / 72.f;

  float dlo, dhi;
  data_range(series, true, dlo, dhi);
  limits(o.xmin, o.xmax, dlo, dhi, L.xmin, L.xmax);
  data_range(series, false, dlo, dhi);
  limits(o.ymin, o.ymax, dlo, dhi, L.ymin, L.ymax);

  const int top = m.pad + m.lh / 2 + m.frame;
  const int bottom = m.frame + m.tick + m.tgap + m.lh + (o.xlabel.empty() ? 0 : m.lgap + m.lh) + m.pad;
  const int ah = std::max(2, L.height - top - bottom);
  p.yticks = axis_ticks(L.ymin, L.ymax, ah, m.lh + 10 * m.s, false, 0, m.font_px);
  const int left = m.pad + (o.ylabel.empty() ? 0 : m.lh + m.lgap) + widest(p.yticks, m.font_px) + m.tgap + m.tick + m.frame;
  int right = m.pad + m.frame;
  for (int round = 0; round < 2; ++round) {
    const int aw = std::max(2, L.width - left - right);
    p.xticks = axis_ticks(L.xmin, L.xmax, aw, 40 * m.s, true, 10 * m.s, m.font_px);
    // The last x label is centred on its tick and may stick out past the frame.
    int overhang = 0;
    if (!p.xticks.empty()) {
      const double frac = (p.xticks.back().value - L.xmin) / (L.xmax - L.xmin);
      overhang = static_cast<int>(text_size(p.xticks.back().text, m.font_px).w / 2 - (1.0 - frac) * aw);
    }
    right = m.pad + std::max(m.frame, overhang);
  }
  L.axes = {left, top, std::max(2, L.width - left - right), ah};

  // Legend: 'best' of a few spots, i.e. the one covering the fewest data pixels.
  for (size_t i = 0; i < series.size(); ++i)
    if (!series[i].label.empty()) p.legend_entries.push_back(i);
  if (o.legend && !p.legend_entries.empty()) {
    p.legend_handle = 22 * m.s;
    int label_w = 0;
    for (size_t i : p.legend_entries) label_w = std::max(label_w, text_size(series[i].label, m.font_px).w);
    const int n = static_cast<int>(p.legend_entries.size());
    const int w = 4 * m.s + p.legend_handle + 6 * m.s + label_w + 5 * m.s;
    const int h = 4 * m.s + n * m.lh + (n - 1) * m.s + 4 * m.s;
    const int inset = 5 * m.s;
    const Rect& A = L.axes;
    const Rect spots[] = {
        {A.right() - inset - w, A.y + inset, w, h},            // upper right
        {A.x + inset, A.y + inset, w, h},                      // upper left
        {A.x + inset, A.bottom() - inset - h, w, h},           // lower left
        {A.right() - inset - w, A.bottom() - inset - h, w, h}, // lower right
        {A.cx() - w / 2, A.y + inset, w, h},                   // upper center
        {A.cx() - w / 2, A.bottom() - inset - h, w, h},        // lower center
    };
    std::vector<long> hits(std::size(spots), 0);
    for (const Series& s : series) {
      float px0 = 0, py0 = 0;
      bool have_prev = false;
      for (size_t i = 0; i < s.x.size(); ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
          have_prev = false;
          continue;
        }
        const float px = L.x_to_px(s.x[i]), py = L.y_to_px(s.y[i]);
        // Sample the segment from the previous point about every pixel.
        const int steps = have_prev && s.style != Series::Points
                              ? std::min(4096, static_cast<int>(std::hypot(px - px0, py - py0)) + 1)
                              : 1;
        for (int k = 1; k <= steps; ++k) {
          const float t = static_cast<float>(k) / steps;
          const float sx = have_prev && steps > 1 ? px0 + (px - px0) * t : px;
          const float sy = have_prev && steps > 1 ? py0 + (py - py0) * t : py;
          for (size_t j = 0; j < hits.size(); ++j)
            if (spots[j].contains(static_cast<int>(sx), static_cast<int>(sy))) ++hits[j];
        }
        px0 = px;
        py0 = py;
        have_prev = true;
      }
    }
    const size_t best = static_cast<size_t>(std::min_element(hits.begin(), hits.end()) - hits.begin());
    L.legend = spots[best];
  }
  return p;
}

}  // namespace

float PlotLayout::x_to_px(float x) const {
  return static_cast<float>(axes.x) + (x - xmin) / (xmax - xmin) * static_cast<float>(axes.w);
}

float PlotLayout::y_to_px(float y) const {
  return static_cast<float>(axes.y) + (ymax - y) / (ymax - ymin) * static_cast<float>(axes.h);
}

Rgb series_color(int i) {
  static constexpr Rgb kCycle[] = {
      {31, 119, 180},  {191, 0, 191},   {0, 128, 0},     {255, 0, 0},     {255, 127, 14}, {148, 103, 189},
      {140, 86, 75},   {227, 119, 194}, {127, 127, 127}, {188, 189, 34},  {23, 190, 207},
  };
  constexpr int n = static_cast<int>(std::size(kCycle));
  return kCycle[((i % n) + n) % n];
}

PlotLayout plot_layout(const std::vector<Series>& series, const PlotOptions& opts) {
  return make_plan(series, opts).layout;
}

namespace {

void draw_plan(Canvas& cv, const PlotPlan& p, const std::vector<Series>& series, const PlotOptions& o) {
  const PlotLayout& L = p.layout;
  const detail::FigureMetrics& m = p.m;
  const Rect& A = L.axes;

  // Grid, then the data, then the frame on top.
  const int half = m.frame / 2;
  if (o.grid) {
    for (const PlotTick& t : p.xticks) {
      const int x = static_cast<int>(std::floor(L.x_to_px(static_cast<float>(t.value)))) - half;
      cv.fill(detail::intersect({x, A.y, m.frame, A.h}, A), kGridColor);
    }
    for (const PlotTick& t : p.yticks) {
      const int y = static_cast<int>(std::floor(L.y_to_px(static_cast<float>(t.value)))) - half;
      cv.fill(detail::intersect({A.x, y, A.w, m.frame}, A), kGridColor);
    }
  }

  for (size_t si = 0; si < series.size(); ++si) {
    const Series& s = series[si];
    const Rgb color = s.color.value_or(series_color(static_cast<int>(si)));
    if (s.style == Series::Points) {
      for (size_t i = 0; i < s.x.size(); ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
        cv.disc({L.x_to_px(s.x[i]), L.y_to_px(s.y[i])}, p.marker_r, color, 0.5f, color, 0.5f,
                          std::max(1.f, o.dpi / 72.f), A);
      }
      continue;
    }
    const std::vector<float> dash = dash_pattern(s.style, p.line_w);
    std::vector<detail::PointF> run;
    const auto flush = [&] {
      if (run.size() >= 2) cv.polyline(run, p.line_w, color, 1.f, dash, A);
      run.clear();
    };
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
        flush();
        continue;
      }
      run.push_back({L.x_to_px(s.x[i]), L.y_to_px(s.y[i])});
    }
    flush();
  }

  cv.frame(A, m.frame, kFrameColor);
  for (const PlotTick& t : p.xticks) {
    const int x = static_cast<int>(std::floor(L.x_to_px(static_cast<float>(t.value)))) - half;
    cv.fill({x, A.bottom() + m.frame, m.frame, m.tick}, kFrameColor);
    const TextSize ts = text_size(t.text, m.font_px);
    cv.text(x + half - ts.w / 2, A.bottom() + m.frame + m.tick + m.tgap, t.text, kTextColor, m.font_px);
  }
  for (const PlotTick& t : p.yticks) {
    const int y = static_cast<int>(std::floor(L.y_to_px(static_cast<float>(t.value)))) - half;
    cv.fill({A.x - m.frame - m.tick, y, m.tick, m.frame}, kFrameColor);
    const TextSize ts = text_size(t.text, m.font_px);
    cv.text(A.x - m.frame - m.tick - m.tgap - ts.w, y + half - ts.h / 2, t.text, kTextColor, m.font_px);
  }
  if (!o.xlabel.empty()) {
    const TextSize ts = text_size(o.xlabel, m.font_px);
    cv.text(A.cx() - ts.w / 2, A.bottom() + m.frame + m.tick + m.tgap + m.lh + m.lgap, o.xlabel, kTextColor, m.font_px);
  }
  if (!o.ylabel.empty()) {
    const TextSize ts = text_size(o.ylabel, m.font_px);
    cv.text(m.pad, A.cy() - ts.w / 2, o.ylabel, kTextColor, m.font_px, TextDirection::Up);
  }

  if (!L.legend.empty()) {
    const Rect& B = L.legend;
    cv.fill(B, kWhite, 0.8f);
    cv.frame({B.x + 1, B.y + 1, B.w - 2, B.h - 2}, 1, kLegendEdge);
    int y = B.y + 4 * m.s;
    for (size_t i : p.legend_entries) {
      const Series& s = series[i];
      const Rgb color = s.color.value_or(series_color(static_cast<int>(i)));
      const float cy = static_cast<float>(y) + m.lh * 0.5f;
      const float hx0 = static_cast<float>(B.x + 4 * m.s), hx1 = hx0 + static_cast<float>(p.legend_handle);
      if (s.style == Series::Points)
        cv.disc({(hx0 + hx1) / 2, cy}, p.marker_r, color, 0.5f, color, 0.5f, std::max(1.f, o.dpi / 72.f), B);
      else
        cv.polyline({{hx0, cy}, {hx1, cy}}, p.line_w, color, 1.f, dash_pattern(s.style, p.line_w), B);
      cv.text(static_cast<int>(hx1) + 6 * m.s, y, s.label, kTextColor, m.font_px);
      y += m.lh + m.s;
    }
  }
}

}  // namespace

void draw_plot(Canvas& canvas, const std::vector<Series>& series, const PlotOptions& o) {
  draw_plan(canvas, make_plan(series, o), series, o);
}

Image render_plot(const std::vector<Series>& series, const PlotOptions& o) {
  const PlotPlan p = make_plan(series, o);
  Image img(p.layout.width, p.layout.height);
  RasterCanvas cv(img);
  draw_plan(cv, p, series, o);
  return img;
}

std::string render_plot_svg(const std::vector<Series>& series, const PlotOptions& o) {
  const PlotPlan p = make_plan(series, o);
  SvgCanvas cv(p.layout.width, p.layout.height);
  draw_plan(cv, p, series, o);
  return cv.str();
}

}  // namespace attnlite::render
