// Attention heatmaps: a grid of panels sharing axes and one colorbar, laid out
// like d2l's show_heatmaps (matplotlib subplots with sharex/sharey + colorbar).
#include "attnlite/render/heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnlite/error.h"
#include "attnlite/render/canvas.h"
#include "text/utf8.h"
#include "render/draw.h"
#include "render/ticks.h"

namespace attnlite::render {

namespace {

using detail::kFrameColor;
using detail::kTextColor;
constexpr int kDefaultColorbarTicks = 8;

using Metrics = detail::FigureMetrics;

struct Tick {
  int index = 0;     // cell index (axes) or unused (colorbar)
  double value = 0;  // colorbar value
  std::string text;
  Rgb color = kTextColor;
};

// Everything render_heatmaps needs beyond the public layout.
struct Plan {
  HeatmapLayout layout;
  Metrics m;
  bool xrot = false;  // x tick labels written vertically
  int xlab_h = 0;     // height of the x tick label band
  int ylab_w = 0;     // width of the y tick label band
  std::vector<Tick> xticks, yticks, cticks;
};

// First pixel of cell i of n cells spread over `len` pixels (pixel p shows cell p * n / len).
int cell_start(int i, int n, int len) {
  return static_cast<int>((static_cast<long long>(i) * len + n - 1) / n);
}

int cell_centre(int i, int n, int len) { return (cell_start(i, n, len) + cell_start(i + 1, n, len)) / 2; }

std::vector<Tick> index_ticks(int n, int len, int min_spacing_px, const std::vector<std::string>& tokens,
                              const std::vector<Rgb>& colors) {
  std::vector<Tick> out;
  const double cell = static_cast<double>(len) / n;
  int step;
  if (tokens.empty()) {
    step = static_cast<int>(detail::nice_step(min_spacing_px / std::max(cell, 1e-9), true));
  } else {
    step = std::max(1, static_cast<int>(std::ceil(min_spacing_px / std::max(cell, 1e-9) - 1e-9)));
  }
  for (int i = 0; i < n; i += step)
    out.push_back({i, 0.0, tokens.empty() ? std::to_string(i) : tokens[static_cast<size_t>(i)],
                   colors.empty() ? kTextColor : colors[static_cast<size_t>(i)]});
  return out;
}

std::vector<Tick> value_ticks(float vmin, float vmax, int len_px, int min_spacing_px, int max_ticks) {
  std::vector<Tick> out;
  if (!(vmax > vmin) || len_px < 2) {
    const double step = std::fabs(vmin) > 0 ? std::pow(10.0, std::floor(std::log10(std::fabs(vmin)))) : 1.0;
    out.push_back({0, vmin, detail::format_tick(vmin, detail::decimals_for_step(step / 10.0))});
    return out;
  }
  const double range = static_cast<double>(vmax) - vmin;
  if (max_ticks <= 0) max_ticks = kDefaultColorbarTicks;
  double step = detail::nice_step(range * min_spacing_px / (len_px - 1), false);
  // Coarser nice steps until at most max_ticks (the first coarser one can still give one too
  // many when the range is not a multiple of it).
  for (int guard = 0; max_ticks > 1 && guard < 8 &&
                      detail::ticks_in(vmin, vmax, step).size() > static_cast<size_t>(max_ticks); ++guard)
    step = detail::nice_step(std::max(range / (max_ticks - 1), step * 1.0001), false);
  const int decimals = detail::decimals_for_step(step);
  for (double v : detail::ticks_in(vmin, vmax, step)) out.push_back({0, v, detail::format_tick(v, decimals)});
  if (out.empty()) {  // a short bar: one tick at a finer step rather than none
    const double fine = detail::nice_step(range / 2, false);
    const int d = detail::decimals_for_step(fine);
    for (double v : detail::ticks_in(vmin, vmax, fine)) {
      out.push_back({0, v, detail::format_tick(v, d)});
      break;
    }
  }
  return out;
}

int max_text_width(const std::vector<Tick>& ticks, float px) {
  int w = 0;
  for (const Tick& t : ticks) w = std::max(w, text_size(t.text, px).w);
  return w;
}

int max_text_width(const std::vector<std::string>& texts, float px) {
  int w = 0;
  for (const auto& t : texts) w = std::max(w, text_size(t, px).w);
  return w;
}

// Row labels and a y label both given: each row is named in a band of its own, left of the
// shared y label.
bool row_band(const HeatmapOptions& o) { return !o.row_labels.empty() && !o.ylabel.empty(); }

// The y label beside row r: the shared one, or the row's label when there is no shared one.
const std::string& row_ylabel(const HeatmapOptions& o, int r) {
  return o.row_labels.empty() || row_band(o) ? o.ylabel : o.row_labels[static_cast<size_t>(r)];
}

bool any_ylabel(const HeatmapOptions& o) {
  if (o.row_labels.empty()) return !o.ylabel.empty();
  for (const auto& l : o.row_labels)
    if (!l.empty()) return true;
  return false;
}


// A panel side of `len` pixels for n cells: snapped down to a multiple of n when that
// costs little, so that all cells get the same size.
int snap_to_cells(int len, int n) {
  const int per = len / n;
  if (per >= 3 && per * n >= len * 0.85) return per * n;
  return len;
}

std::string fit_text(const std::string& text, int max_w, float px);

Plan make_plan(int rows, int cols, int queries, int keys, const HeatmapOptions& o, const float* data) {
  if (rows <= 0 || cols <= 0 || queries <= 0 || keys <= 0)
    throw Error("heatmap: rows, cols, queries and keys must be positive");
  if (!o.xticks.empty() && static_cast<int>(o.xticks.size()) != keys)
    throw Error("heatmap: xticks needs one label per key");
  if (!o.yticks.empty() && static_cast<int>(o.yticks.size()) != queries)
    throw Error("heatmap: yticks needs one label per query");
  if (!o.xtick_colors.empty() && o.xtick_colors.size() != o.xticks.size())
    throw Error("heatmap: xtick_colors needs one colour per key label");
  if (!o.ytick_colors.empty() && o.ytick_colors.size() != o.yticks.size())
    throw Error("heatmap: ytick_colors needs one colour per query label");
  if (!o.row_labels.empty() && static_cast<int>(o.row_labels.size()) != rows)
    throw Error("heatmap: row_labels needs one label per row");
  if (o.dpi <= 0 || !(o.fig_width_in > 0.f) || !(o.fig_height_in > 0.f))
    throw Error("heatmap: figure size and dpi must be positive");
  const double wpx = std::round(static_cast<double>(o.fig_width_in) * o.dpi);
  const double hpx = std::round(static_cast<double>(o.fig_height_in) * o.dpi);
  if (wpx < 16 || hpx < 16 || wpx * hpx > 64e6)
    throw Error("heatmap: figure must be between 16x16 and 64 megapixels");

  Plan p;
  HeatmapLayout& L = p.layout;
  L.width = static_cast<int>(wpx);
  L.height = static_cast<int>(hpx);
  L.rows = rows;
  L.cols = cols;
  L.queries = queries;
  L.keys = keys;

  // One colour scale for every panel.
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  if (data) {
    const size_t n = static_cast<size_t>(rows) * cols * queries * keys;
    for (size_t i = 0; i < n; ++i)
      if (std::isfinite(data[i])) {
        lo = std::min(lo, data[i]);
        hi = std::max(hi, data[i]);
      }
  }
  if (!(lo <= hi)) lo = 0.f, hi = 1.f;
  L.vmin = o.vmin.value_or(lo);
  L.vmax = o.vmax.value_or(hi);
  if (!std::isfinite(L.vmin) || !std::isfinite(L.vmax))
    throw Error("heatmap: vmin and vmax must be finite");
  if (L.vmax < L.vmin) std::swap(L.vmin, L.vmax);

  const Metrics m = detail::figure_metrics(o.dpi);
  p.m = m;
  const bool has_titles = !o.titles.empty();
  const int title_h = has_titles ? m.lh + m.tgap : 0;

  // Tick label bands.
  p.xrot = !o.xticks.empty();
  p.xlab_h = !o.ticks ? 0 : p.xrot ? max_text_width(o.xticks, m.font_px) : m.lh;
  p.ylab_w = !o.ticks ? 0
             : o.yticks.empty() ? text_size(std::to_string(queries - 1), m.font_px).w
                                : max_text_width(o.yticks, m.font_px);
  const int last_label_half = !o.ticks ? 0
                              : o.xticks.empty() ? text_size(std::to_string(keys - 1), m.font_px).w / 2
                                                 : m.lh / 2;

  const int band = row_band(o) ? m.lh + m.lgap : 0;  // the row labels' band
  const int left = m.pad + band + (any_ylabel(o) ? m.lh + m.lgap : 0) + p.ylab_w + m.tgap + m.tick + m.frame;
  const int fig_title_h = o.title.empty() ? 0 : m.lh + 2 * m.tgap;
  const int top = m.pad + fig_title_h + std::max(title_h, m.lh / 2) + m.frame;
  const int bottom = m.frame + m.tick + m.tgap + p.xlab_h + (o.xlabel.empty() ? 0 : m.lgap + m.lh) + m.pad;
  int hgap = 2 * m.frame + m.tick + 6 * m.s;
  // Titles and x labels are centred on their panels: neighbours must not touch.
  int centred_w = o.xlabel.empty() ? 0 : text_size(o.xlabel, m.font_px).w;
  for (const auto& t : o.titles) centred_w = std::max(centred_w, text_size(t, m.font_px).w);
  // Titles (one per column) stand above the top row only.
  const int vgap = 2 * m.frame + m.tick + 6 * m.s;

  // The colorbar's size and tick labels depend on the panel size and the other way
  // round: settle them in a few rounds.
  const bool key = o.colorbar && !o.masked_label.empty();
  const int key_w = key ? text_size(o.masked_label, m.font_px).w : 0;
  const int key_gap = m.lh, key_h = m.lh;  // the masked swatch: its gap below the bar, its height
  int cbar_w = 8 * m.s, cbar_lab_w = std::max(text_size("0.00", m.font_px).w, key_w);
  int pw = 1, ph = 1, cbar_h = 0;
  for (int round = 0; round < 4; ++round) {
    if (round > 0 && cols > 1 && centred_w + 6 * m.s > pw + hgap) hgap = centred_w + 6 * m.s - pw;
    const int right = o.colorbar ? m.frame + 10 * m.s + 2 * m.frame + cbar_w + m.tick + m.tgap + cbar_lab_w + m.pad
                                 : std::max(m.frame + m.pad, last_label_half + m.pad);
    const int aw = L.width - left - right - (cols - 1) * hgap;
    const int ah = L.height - top - bottom - (rows - 1) * vgap;
    const int pw0 = std::max(1, aw / cols), ph0 = std::max(1, ah / rows);
    // Square cells like imshow's aspect='equal', within 1:4 .. 4:1 panels.
    const double aspect = std::clamp(static_cast<double>(keys) / queries, 0.25, 4.0);
    if (pw0 >= ph0 * aspect) {
      ph = ph0;
      pw = std::max(1, static_cast<int>(std::floor(ph0 * aspect)));
    } else {
      pw = pw0;
      ph = std::max(1, static_cast<int>(std::floor(pw0 / aspect)));
    }
    pw = snap_to_cells(pw, keys);
    ph = snap_to_cells(ph, queries);
    if (std::fabs(static_cast<double>(keys) / queries - aspect) < 1e-9 && pw % keys == 0 && ph % queries == 0) {
      const int cell = std::min(pw / keys, ph / queries);  // keep cells square
      pw = cell * keys;
      ph = cell * queries;
    }
    if (!o.colorbar) continue;
    const int grid_h = rows * ph + (rows - 1) * vgap;
    cbar_h = std::max(std::min(grid_h, 3 * m.lh), static_cast<int>(std::lround(0.6 * grid_h)));
    if (key) cbar_h = std::max(std::min(cbar_h, grid_h - key_gap - key_h - 2 * m.frame), 3 * m.lh);
    cbar_w = std::clamp(static_cast<int>(std::lround(cbar_h / 16.0)), 8 * m.s, 20 * m.s);
    p.cticks = value_ticks(L.vmin, L.vmax, cbar_h, m.lh + 2 * m.s, o.colorbar_max_ticks);
    cbar_lab_w = std::max(max_text_width(p.cticks, m.font_px), key_w);
  }
  const int right_used = o.colorbar ? m.frame + 10 * m.s + 2 * m.frame + cbar_w + m.tick + m.tgap + cbar_lab_w + m.pad
                                    : std::max(m.frame + m.pad, last_label_half + m.pad);
  const int content_w = left + cols * pw + (cols - 1) * hgap + right_used;
  const int content_h = top + rows * ph + (rows - 1) * vgap + bottom;
  const int ox = std::max(0, (L.width - content_w) / 2), oy = std::max(0, (L.height - content_h) / 2);

  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) L.panels.push_back({ox + left + c * (pw + hgap), oy + top + r * (ph + vgap), pw, ph});
  const Rect& first = L.panels.front();
  const Rect& last = L.panels.back();
  if (o.colorbar) {
    const int grid_h = last.bottom() - first.y;
    // The bar (and the masked swatch under it) centred on the grid.
    const int group_h = cbar_h + (key ? 2 * m.frame + key_gap + key_h : 0);
    L.colorbar = {last.right() + m.frame + 10 * m.s + m.frame, first.y + std::max(0, (grid_h - group_h) / 2), cbar_w,
                  cbar_h};
    if (key) {
      L.masked_swatch = {L.colorbar.x, L.colorbar.bottom() + 2 * m.frame + key_gap, cbar_w, key_h};
      const TextSize t = text_size(o.masked_label, m.font_px);
      L.masked_text = {L.colorbar.right() + m.frame + m.tick + m.tgap, L.masked_swatch.cy() - t.h / 2, t.w, t.h};
    }
  }

  // Ticks along the shared axes.
  // Numeric ticks about as far apart as matplotlib's MaxNLocator puts them.
  const int xnum_spacing = std::max(text_size(std::to_string(keys - 1), m.font_px).w + 6 * m.s, 2 * m.lh);
  if (o.ticks) {
    p.xticks = index_ticks(keys, pw, p.xrot ? m.lh : xnum_spacing, o.xticks, o.xtick_colors);
    p.yticks = index_ticks(queries, ph, o.yticks.empty() ? m.lh + 4 * m.s : m.lh, o.yticks, o.ytick_colors);
  }

  // Text boxes.
  if (!o.title.empty()) {
    L.title_text = fit_text(o.title, L.width - 2 * m.pad, m.font_px);
    const TextSize t = text_size(L.title_text, m.font_px);
    const int mid = (first.x + last.right()) / 2;
    L.title = {std::clamp(mid - t.w / 2, m.pad, std::max(m.pad, L.width - m.pad - t.w)), oy + m.pad, t.w, t.h};
  }
  L.titles.assign(L.panels.size(), Rect{});
  L.xlabels.assign(L.panels.size(), Rect{});
  L.ylabels.assign(L.panels.size(), Rect{});
  L.row_labels.assign(static_cast<size_t>(rows), Rect{});
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r) * cols + c;
      const Rect& P = L.panels[i];
      if (r == 0 && static_cast<size_t>(c) < o.titles.size() && !o.titles[static_cast<size_t>(c)].empty()) {
        const TextSize t = text_size(o.titles[static_cast<size_t>(c)], m.font_px);
        L.titles[i] = {P.cx() - t.w / 2, P.y - m.frame - m.tgap - t.h, t.w, t.h};
      }
      if (r == rows - 1 && !o.xlabel.empty()) {
        const TextSize t = text_size(o.xlabel, m.font_px);
        L.xlabels[i] = {P.cx() - t.w / 2, P.bottom() + m.frame + m.tick + m.tgap + p.xlab_h + m.lgap, t.w, t.h};
      }
      if (c == 0 && !row_ylabel(o, r).empty()) {
        const TextSize t = text_size(row_ylabel(o, r), m.font_px);  // drawn rotated: t.h wide, t.w high
        L.ylabels[i] = {P.x - m.frame - m.tick - m.tgap - p.ylab_w - m.lgap - t.h, P.cy() - t.w / 2, t.h, t.w};
      }
      if (c == 0 && row_band(o) && !o.row_labels[static_cast<size_t>(r)].empty()) {
        const TextSize t = text_size(o.row_labels[static_cast<size_t>(r)], m.font_px);  // rotated too
        L.row_labels[static_cast<size_t>(r)] = {P.x - m.frame - m.tick - m.tgap - p.ylab_w - 2 * m.lgap - m.lh - t.h,
                                                P.cy() - t.w / 2, t.h, t.w};
      }
    }
  return p;
}

// The text, or as much of it as fits max_w pixels followed by "…".
std::string fit_text(const std::string& text, int max_w, float px) {
  if (text_size(text, px).w <= max_w) return text;
  const std::u32string cps = decode_utf8(text);
  std::string best = "\u2026", prefix;  // the first n code points, re-encoded
  for (size_t n = 1; n < cps.size(); ++n) {
    utf8_append(prefix, cps[n - 1]);
    const std::string s = prefix + "\u2026";
    if (text_size(s, px).w > max_w) break;
    best = s;
  }
  return best;
}

bool format_fits(const Rect& cell, const std::string& text, float px, int s) {
  const TextSize t = text_size(text, px);
  return t.w + 2 * s <= cell.w && t.h - 4 * s <= cell.h;
}

}  // namespace

Rect HeatmapLayout::cell(int r, int c, int q, int k) const {
  if (r < 0 || r >= rows || c < 0 || c >= cols || q < 0 || q >= queries || k < 0 || k >= keys)
    throw Error("HeatmapLayout::cell: index out of range");
  const Rect& P = panels[static_cast<size_t>(r) * cols + c];
  const int x0 = cell_start(k, keys, P.w), x1 = cell_start(k + 1, keys, P.w);
  const int y0 = cell_start(q, queries, P.h), y1 = cell_start(q + 1, queries, P.h);
  return {P.x + x0, P.y + y0, x1 - x0, y1 - y0};
}

HeatmapLayout heatmap_layout(int rows, int cols, int queries, int keys, const HeatmapOptions& opts,
                             const float* matrices) {
  return make_plan(rows, cols, queries, keys, opts, matrices).layout;
}

namespace {

void draw_plan(Canvas& cv, const Plan& p, const float* matrices, const HeatmapOptions& o) {
  const HeatmapLayout& L = p.layout;
  const Metrics& m = p.m;
  const int rows = L.rows, cols = L.cols, queries = L.queries, keys = L.keys;
  const float range = L.vmax - L.vmin;
  const auto color_of = [&](float v) { return colormap_rgb(o.cmap, range > 0.f ? (v - L.vmin) / range : 0.f); };
  const int hatch_period = 6 * m.s;
  const auto masked = [&](Rect cell, int ox, int oy) {
    if (o.masked_hatch)
      cv.hatch(cell, o.masked_color, *o.masked_hatch, hatch_period, m.s, ox, oy);
    else
      cv.fill(cell, o.masked_color);
  };

  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const size_t pi = static_cast<size_t>(r) * cols + c;
      const Rect& P = L.panels[pi];
      const float* mat = matrices + pi * static_cast<size_t>(queries) * keys;
      // Cells: filled rectangles (no interpolation); they tile the panel exactly.
      cv.group("panel");
      cv.group("cells");
      for (int q = 0; q < queries; ++q)
        for (int k = 0; k < keys; ++k) {
          const Rect cell = L.cell(r, c, q, k);
          if (cell.empty()) continue;
          const float v = mat[static_cast<size_t>(q) * keys + k];
          if (std::isnan(v))
            masked(cell, P.x, P.y);
          else
            cv.fill(cell, color_of(v));
        }
      cv.end_group();
      if (o.annotate) {
        for (int q = 0; q < queries; ++q)
          for (int k = 0; k < keys; ++k) {
            const float v = mat[static_cast<size_t>(q) * keys + k];
            if (!std::isfinite(v)) continue;
            const Rect cell = L.cell(r, c, q, k);
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
            std::string text = buf;
            if (!format_fits(cell, text, m.font_px, m.s)) {
              std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(v));
              text = buf;
              if (!format_fits(cell, text, m.font_px, m.s)) continue;
            }
            const TextSize t = text_size(text, m.font_px);
            const Rgb fg = detail::luminance(color_of(v)) < 0.5f ? kWhite : kBlack;
            cv.text(cell.x + (cell.w - t.w + 1) / 2, cell.y + (cell.h - t.h + 1) / 2, text, fg, m.font_px);
          }
      }
      cv.frame(P, m.frame, kFrameColor);

      // Tick marks on every panel; labels on the bottom row and the first column.
      const int half = m.frame / 2;
      for (const Tick& t : p.xticks) {
        const int x = P.x + cell_centre(t.index, keys, P.w) - half;
        cv.fill({x, P.bottom() + m.frame, m.frame, m.tick}, kFrameColor);
        if (r != rows - 1) continue;
        const int y = P.bottom() + m.frame + m.tick + m.tgap;
        const TextSize ts = text_size(t.text, m.font_px);
        if (p.xrot)
          cv.text(x + half - ts.h / 2, y, t.text, t.color, m.font_px, TextDirection::Up);
        else
          cv.text(x + half - ts.w / 2, y, t.text, t.color, m.font_px);
      }
      for (const Tick& t : p.yticks) {
        const int y = P.y + cell_centre(t.index, queries, P.h) - half;
        cv.fill({P.x - m.frame - m.tick, y, m.tick, m.frame}, kFrameColor);
        if (c != 0) continue;
        const TextSize ts = text_size(t.text, m.font_px);
        cv.text(P.x - m.frame - m.tick - m.tgap - ts.w, y + half - ts.h / 2, t.text, t.color, m.font_px);
      }
      if (!L.titles[pi].empty()) cv.text(L.titles[pi].x, L.titles[pi].y, o.titles[static_cast<size_t>(c)], kTextColor, m.font_px);
      if (pi == 0 && !L.title.empty()) cv.text(L.title.x, L.title.y, L.title_text, kTextColor, m.font_px);
      if (!L.xlabels[pi].empty()) cv.text(L.xlabels[pi].x, L.xlabels[pi].y, o.xlabel, kTextColor, m.font_px);
      if (!L.ylabels[pi].empty())
        cv.text(L.ylabels[pi].x, L.ylabels[pi].y, row_ylabel(o, r), kTextColor, m.font_px, TextDirection::Up);
      if (c == 0 && !L.row_labels[static_cast<size_t>(r)].empty())
        cv.text(L.row_labels[static_cast<size_t>(r)].x, L.row_labels[static_cast<size_t>(r)].y,
                o.row_labels[static_cast<size_t>(r)], kTextColor, m.font_px, TextDirection::Up);
      cv.end_group();
    }

  if (o.colorbar && !L.colorbar.empty()) {
    const Rect& cb = L.colorbar;
    cv.group("colorbar");
    cv.gradient(cb, o.cmap);
    cv.frame(cb, m.frame, kFrameColor);
    for (const Tick& t : p.cticks) {
      const double frac = range > 0.f ? (t.value - L.vmin) / range : 0.0;
      const int y = cb.y + (cb.h - 1) - static_cast<int>(std::lround(frac * (cb.h - 1))) - m.frame / 2;
      cv.fill({cb.right() + m.frame, y, m.tick, m.frame}, kFrameColor);
      const TextSize ts = text_size(t.text, m.font_px);
      cv.text(cb.right() + m.frame + m.tick + m.tgap, y + m.frame / 2 - ts.h / 2, t.text, kTextColor, m.font_px);
    }
    if (!L.masked_swatch.empty()) {
      const Rect& sw = L.masked_swatch;
      masked(sw, sw.x, sw.y);
      cv.frame(sw, m.frame, kFrameColor);
      cv.text(L.masked_text.x, L.masked_text.y, o.masked_label, kTextColor, m.font_px);
    }
    cv.end_group();
  }
}

}  // namespace

void draw_heatmaps(Canvas& canvas, const float* matrices, int rows, int cols, int queries, int keys,
                   const HeatmapOptions& o) {
  if (!matrices) throw Error("draw_heatmaps: matrices is null");
  draw_plan(canvas, make_plan(rows, cols, queries, keys, o, matrices), matrices, o);
}

Image render_heatmaps(const float* matrices, int rows, int cols, int queries, int keys,
                      const HeatmapOptions& o) {
  if (!matrices) throw Error("render_heatmaps: matrices is null");
  const Plan p = make_plan(rows, cols, queries, keys, o, matrices);
  Image img(p.layout.width, p.layout.height);
  RasterCanvas cv(img);
  draw_plan(cv, p, matrices, o);
  return img;
}

std::string render_heatmaps_svg(const float* matrices, int rows, int cols, int queries, int keys,
                                const HeatmapOptions& o) {
  if (!matrices) throw Error("render_heatmaps_svg: matrices is null");
  const Plan p = make_plan(rows, cols, queries, keys, o, matrices);
  SvgCanvas cv(p.layout.width, p.layout.height);
  draw_plan(cv, p, matrices, o);
  return cv.str();
}

}  // namespace attnlite::render
