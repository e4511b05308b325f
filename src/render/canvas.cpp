// The two drawing surfaces: pixels (RasterCanvas) and SVG text (SvgCanvas).
#include "attnlite/render/canvas.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnlite/error.h"
#include "text/utf8.h"
#include "render/draw.h"

namespace attnlite::render {

void Canvas::frame(Rect inner, int t, Rgb color) {
  fill({inner.x - t, inner.y - t, inner.w + 2 * t, t}, color);
  fill({inner.x - t, inner.bottom(), inner.w + 2 * t, t}, color);
  fill({inner.x - t, inner.y, t, inner.h}, color);
  fill({inner.right(), inner.y, t, inner.h}, color);
}

// ---- pixels -------------------------------------------------------------------

RasterCanvas::RasterCanvas(Image& image) : Canvas(image.width, image.height), image_(image) {}

void RasterCanvas::fill(Rect r, Rgb color, float alpha) {
  r = moved(r);
  if (alpha >= 1.f) {
    detail::fill_rect(image_, r, color);
    return;
  }
  r = detail::intersect(r, {0, 0, image_.width, image_.height});
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x) detail::blend_pixel(image_, x, y, color, alpha);
}

void RasterCanvas::hatch(Rect r, Rgb color, Rgb line, int period, int line_w, int ox, int oy) {
  period = std::max(1, period);
  const Rect c = detail::intersect(moved(r), {0, 0, image_.width, image_.height});
  ox += dx_, oy += dy_;
  for (int y = c.y; y < c.bottom(); ++y)
    for (int x = c.x; x < c.right(); ++x) {
      const int d = ((x - ox) + (y - oy)) % period;
      detail::fill_rect(image_, {x, y, 1, 1}, (d + period) % period < line_w ? line : color);
    }
}

void RasterCanvas::gradient(Rect r, Colormap cmap) {
  r = moved(r);
  for (int y = 0; y < r.h; ++y) {
    const float t = r.h > 1 ? static_cast<float>(r.h - 1 - y) / (r.h - 1) : 0.f;
    detail::fill_rect(image_, {r.x, r.y + y, r.w, 1}, colormap_rgb(cmap, t));
  }
}

void RasterCanvas::polyline(const std::vector<PointF>& points, float width, Rgb color, float alpha,
                            const std::vector<float>& dash, Rect clip) {
  std::vector<PointF> p(points);
  for (auto& q : p) q.x += static_cast<float>(dx_), q.y += static_cast<float>(dy_);
  detail::draw_polyline(image_, p, width, color, dash, moved(clip), alpha);
}

void RasterCanvas::disc(PointF centre, float r, Rgb fill, float fill_alpha, Rgb edge, float edge_alpha,
                        float edge_w, Rect clip) {
  detail::draw_disc(image_, {centre.x + static_cast<float>(dx_), centre.y + static_cast<float>(dy_)}, r, fill,
                    fill_alpha, edge, edge_alpha, edge_w, moved(clip));
}

void RasterCanvas::text(int x, int y, const std::string& utf8, Rgb color, float size_px, TextDirection dir) {
  draw_text(image_, x + dx_, y + dy_, utf8, color, size_px, dir);
}

void RasterCanvas::push_offset(int dx, int dy) {
  stack_.push_back({dx_, dy_});
  dx_ += dx, dy_ += dy;
}

void RasterCanvas::pop_offset() {
  if (stack_.empty()) throw Error("Canvas::pop_offset without push_offset");
  dx_ = stack_.back().first, dy_ = stack_.back().second;
  stack_.pop_back();
}

// ---- SVG ----------------------------------------------------------------------

namespace {

std::string hex(Rgb c) {
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", c[0], c[1], c[2]);
  return b;
}

// A coordinate or length: at most 2 decimals, no trailing zeros.
std::string num(double v) {
  if (!std::isfinite(v)) v = 0.0;
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  std::string s = b;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string rect_attrs(Rect r) {
  return "x=\"" + std::to_string(r.x) + "\" y=\"" + std::to_string(r.y) + "\" width=\"" + std::to_string(r.w) +
         "\" height=\"" + std::to_string(r.h) + "\"";
}

}  // namespace

std::string xml_escape(const std::string& utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (char32_t c : decode_utf8(utf8)) {
    switch (c) {
      case U'&': out += "&amp;"; break;
      case U'<': out += "&lt;"; break;
      case U'>': out += "&gt;"; break;
      case U'"': out += "&quot;"; break;
      case U'\'': out += "&apos;"; break;
      default:
        if ((c < 0x20 && c != U'\t') || c == 0xFFFE || c == 0xFFFF || (c >= 0x7F && c < 0xA0)) c = 0x25A1;
        utf8_append(out, c);
    }
  }
  return out;
}

SvgCanvas::SvgCanvas(int width, int height) : Canvas(width, height) {
  if (width <= 0 || height <= 0) throw Error("SvgCanvas: the size must be positive");
}

void SvgCanvas::fill(Rect r, Rgb color, float alpha) {
  if (r.empty()) return;
  body_ += "<rect " + rect_attrs(r) + " fill=\"" + hex(color) + "\"";
  if (alpha < 1.f) body_ += " fill-opacity=\"" + num(std::max(alpha, 0.f)) + "\"";
  body_ += "/>\n";
}

void SvgCanvas::hatch(Rect r, Rgb color, Rgb line, int period, int line_w, int ox, int oy) {
  if (r.empty()) return;
  period = std::max(1, period);
  // The bands of ((x - ox) + (y - oy)) mod period < line_w over one period x period tile: the
  // triangle x + y < w and the strip period <= x + y < period + w.
  const std::string key = hex(line) + " " + std::to_string(period) + " " + std::to_string(line_w) + " " +
                          std::to_string(((ox % period) + period) % period) + " " +
                          std::to_string(((oy % period) + period) % period);
  size_t id = std::find(patterns_.begin(), patterns_.end(), key) - patterns_.begin();
  if (id == patterns_.size()) {
    patterns_.push_back(key);
    const std::string p = std::to_string(period), w = std::to_string(line_w);
    defs_ += "<pattern id=\"hatch" + std::to_string(id) + "\" patternUnits=\"userSpaceOnUse\" x=\"" +
             std::to_string(ox) + "\" y=\"" + std::to_string(oy) + "\" width=\"" + p + "\" height=\"" + p +
             "\"><path d=\"M0 0H" + w + "L0 " + w + "Z M" + p + " 0V" + w + "L" + w + " " + p + "H0L" + p + " 0Z\" fill=\"" + hex(line) + "\"/></pattern>\n";
  }
  fill(r, color);
  body_ += "<rect " + rect_attrs(r) + " fill=\"url(#hatch" + std::to_string(id) + ")\"/>\n";
}

void SvgCanvas::gradient(Rect r, Colormap cmap) {
  if (r.empty()) return;
  const std::string name = colormap_name(cmap);
  size_t id = std::find(gradients_.begin(), gradients_.end(), name) - gradients_.begin();
  if (id == gradients_.size()) {
    gradients_.push_back(name);
    defs_ += "<linearGradient id=\"cmap" + std::to_string(id) + "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    for (int i = 0; i <= 32; ++i) {
      const float t = static_cast<float>(i) / 32.f;
      defs_ += "<stop offset=\"" + num(t) + "\" stop-color=\"" + hex(colormap_rgb(cmap, t)) + "\"/>";
    }
    defs_ += "</linearGradient>\n";
  }
  body_ += "<rect " + rect_attrs(r) + " fill=\"url(#cmap" + std::to_string(id) + ")\"/>\n";
}

std::string SvgCanvas::clip_id(Rect clip) {
  const std::string key = std::to_string(clip.x) + " " + std::to_string(clip.y) + " " + std::to_string(clip.w) +
                          " " + std::to_string(clip.h);
  size_t id = std::find(clips_.begin(), clips_.end(), key) - clips_.begin();
  if (id == clips_.size()) {
    clips_.push_back(key);
    defs_ += "<clipPath id=\"clip" + std::to_string(id) + "\"><rect " + rect_attrs(clip) + "/></clipPath>\n";
  }
  return "clip" + std::to_string(id);
}

void SvgCanvas::polyline(const std::vector<PointF>& points, float width, Rgb color, float alpha,
                         const std::vector<float>& dash, Rect clip) {
  if (points.size() < 2) return;
  std::string pts;
  for (const PointF& p : points) {
    if (!pts.empty()) pts += ' ';
    pts += num(p.x) + "," + num(p.y);
  }
  body_ += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + hex(color) + "\" stroke-width=\"" +
           num(width) + "\" stroke-linejoin=\"round\"";
  if (alpha < 1.f) body_ += " stroke-opacity=\"" + num(std::max(alpha, 0.f)) + "\"";
  if (!dash.empty()) {
    std::string d;
    for (float v : dash) d += (d.empty() ? "" : ",") + num(v);
    body_ += " stroke-dasharray=\"" + d + "\"";
  }
  body_ += " clip-path=\"url(#" + clip_id(clip) + ")\"/>\n";
}

void SvgCanvas::disc(PointF c, float r, Rgb fill, float fill_alpha, Rgb edge, float edge_alpha, float edge_w,
                     Rect clip) {
  if (!(r > 0.f)) return;
  // The edge ring covers [r - edge_w, r] as in the raster: a stroke centred at r - edge_w / 2.
  body_ += "<circle cx=\"" + num(c.x) + "\" cy=\"" + num(c.y) + "\" r=\"" + num(r) + "\" fill=\"" + hex(fill) +
           "\" fill-opacity=\"" + num(fill_alpha) + "\" clip-path=\"url(#" + clip_id(clip) + ")\"/>\n";
  if (edge_w > 0.f && edge_alpha > 0.f)
    body_ += "<circle cx=\"" + num(c.x) + "\" cy=\"" + num(c.y) + "\" r=\"" + num(std::max(0.f, r - edge_w / 2)) +
             "\" fill=\"none\" stroke=\"" + hex(edge) + "\" stroke-opacity=\"" + num(edge_alpha) +
             "\" stroke-width=\"" + num(std::min(edge_w, r)) + "\" clip-path=\"url(#" + clip_id(clip) + ")\"/>\n";
}

void SvgCanvas::text(int x, int y, const std::string& utf8, Rgb color, float size_px, TextDirection dir) {
  if (utf8.empty()) return;
  const FontMetrics fm = font_metrics(size_px);
  const float asc = std::round(fm.ascent);
  // The horizontal baseline origin (x, y + ascent); rotated text: the box is line-height wide
  // and text-width high, read upwards from its bottom-left corner.
  const float w = static_cast<float>(text_size(utf8, size_px).w);
  const float bx = dir == TextDirection::Horizontal ? static_cast<float>(x) : static_cast<float>(x) + asc;
  const float by = dir == TextDirection::Horizontal ? static_cast<float>(y) + asc : static_cast<float>(y) + w;
  body_ += "<text x=\"" + num(bx) + "\" y=\"" + num(by) + "\" font-size=\"" + num(size_px) + "\" fill=\"" +
           hex(color) + "\"";
  if (dir == TextDirection::Up) body_ += " transform=\"rotate(-90 " + num(bx) + " " + num(by) + ")\"";
  body_ += ">" + xml_escape(utf8) + "</text>\n";
}

void SvgCanvas::push_offset(int dx, int dy) {
  body_ += "<g transform=\"translate(" + std::to_string(dx) + " " + std::to_string(dy) + ")\">\n";
  ++open_groups_;
}

void SvgCanvas::pop_offset() {
  if (open_groups_ == 0) throw Error("Canvas::pop_offset without push_offset");
  body_ += "</g>\n";
  --open_groups_;
}

void SvgCanvas::group(const std::string& name) {
  body_ += "<g class=\"" + xml_escape(name) + "\">\n";
  ++open_groups_;
}

void SvgCanvas::end_group() {
  if (open_groups_ == 0) throw Error("Canvas::end_group without group");
  body_ += "</g>\n";
  --open_groups_;
}

std::string SvgCanvas::str() const {
  const std::string w = std::to_string(width_), h = std::to_string(height_);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
                    w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
                    "\" font-family=\"DejaVu Sans, Bitstream Vera Sans, sans-serif\" xml:space=\"preserve\">\n";
  if (!defs_.empty()) out += "<defs>\n" + defs_ + "</defs>\n";
  out += "<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";
  out += body_;
  for (int i = 0; i < open_groups_; ++i) out += "</g>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace attnlite::render
