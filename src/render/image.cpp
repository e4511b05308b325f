// Images, drawing primitives and PNG output.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "attnlite/error.h"
#include "render/draw.h"

// The only stb_image_write implementation in the library; its functions stay
// private to this file.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb_image_write.h>

namespace attnlite::render {

Image::Image(int w, int h, Rgb fill) : width(w), height(h) {
  if (w < 0 || h < 0) throw Error("Image: negative size");
  rgba.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * 4);
  for (size_t i = 0; i < rgba.size(); i += 4) {
    rgba[i] = fill[0];
    rgba[i + 1] = fill[1];
    rgba[i + 2] = fill[2];
    rgba[i + 3] = 255;
  }
}

namespace {

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  const auto* bytes = static_cast<const uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

}  // namespace

std::vector<uint8_t> encode_png(const Image& image) {
  if (image.width <= 0 || image.height <= 0)
    throw Error("encode_png: the image is empty");
  if (image.rgba.size() != static_cast<size_t>(image.width) * image.height * 4)
    throw Error("encode_png: pixel buffer does not match width x height x 4");
  std::vector<uint8_t> out;
  const int ok = stbi_write_png_to_func(append_bytes, &out, image.width, image.height, 4,
                                        image.rgba.data(), image.width * 4);
  if (!ok || out.empty()) throw Error("encode_png: PNG encoding failed");
  return out;
}

void write_png(const std::string& path, const Image& image) {
  const std::vector<uint8_t> png = encode_png(image);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f)
    throw Error("cannot write PNG '" + path + "': " + std::strerror(errno));
  const size_t written = std::fwrite(png.data(), 1, png.size(), f);
  const int write_errno = errno;
  const int closed = std::fclose(f);
  if (written != png.size() || closed != 0)
    throw Error("cannot write PNG '" + path + "': " +
                std::strerror(written != png.size() ? write_errno : errno));
}

namespace detail {

int pixel_scale(int dpi) { return std::max(1, static_cast<int>(std::lround(dpi / 100.0))); }

FigureMetrics figure_metrics(int dpi) {
  FigureMetrics m;
  m.s = pixel_scale(dpi);
  m.font_px = points_to_px(10.f, dpi);
  m.lh = text_line_height(m.font_px);
  m.pad = 4 * m.s;
  m.tick = std::max(2, static_cast<int>(std::lround(3.5 * dpi / 72.0)));
  m.frame = std::max(1, static_cast<int>(std::lround(0.8 * dpi / 72.0)));
  m.tgap = std::max(2, static_cast<int>(std::lround(2.5 * dpi / 72.0)));
  m.lgap = 4 * m.s;
  return m;
}

float title_width_in(const std::string& title, int dpi) {
  const FigureMetrics m = figure_metrics(dpi);
  return std::min((float)(text_size(title, m.font_px).w + 2 * m.pad + 4) / (float)dpi, 10.f);
}

Rect intersect(Rect a, Rect b) {
  const int x0 = std::max(a.x, b.x), y0 = std::max(a.y, b.y);
  const int x1 = std::min(a.right(), b.right()), y1 = std::min(a.bottom(), b.bottom());
  if (x1 <= x0 || y1 <= y0) return {x0, y0, 0, 0};
  return {x0, y0, x1 - x0, y1 - y0};
}

void fill_rect(Image& image, Rect r, Rgb color) {
  r = intersect(r, {0, 0, image.width, image.height});
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x) {
      uint8_t* p = image.px(x, y);
      p[0] = color[0];
      p[1] = color[1];
      p[2] = color[2];
      p[3] = 255;
    }
}

void blend_pixel(Image& image, int x, int y, Rgb color, float alpha) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height || !(alpha > 0.f)) return;
  alpha = std::min(alpha, 1.f);
  uint8_t* p = image.px(x, y);
  for (int c = 0; c < 3; ++c) {
    const float v = p[c] + (color[c] - p[c]) * alpha;
    p[c] = static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
  }
  p[3] = 255;
}

void frame_around(Image& image, Rect inner, int t, Rgb color) {
  fill_rect(image, {inner.x - t, inner.y - t, inner.w + 2 * t, t}, color);
  fill_rect(image, {inner.x - t, inner.bottom(), inner.w + 2 * t, t}, color);
  fill_rect(image, {inner.x - t, inner.y, t, inner.h}, color);
  fill_rect(image, {inner.right(), inner.y, t, inner.h}, color);
}

namespace {

// Distance from p to segment ab, and the position of the closest point along ab (0..len).
void segment_distance(PointF p, PointF a, PointF b, float& dist, float& along) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len2 = dx * dx + dy * dy;
  float t = 0.f;
  if (len2 > 0.f) t = std::clamp(((p.x - a.x) * dx + (p.y - a.y) * dy) / len2, 0.f, 1.f);
  const float cx = a.x + t * dx - p.x, cy = a.y + t * dy - p.y;
  dist = std::sqrt(cx * cx + cy * cy);
  along = t * std::sqrt(len2);
}

bool dash_on(const std::vector<float>& dash, float period, float pos) {
  if (dash.empty() || !(period > 0.f)) return true;
  float phase = std::fmod(pos, period);
  for (size_t i = 0; i < dash.size(); ++i) {
    if (phase < dash[i]) return i % 2 == 0;
    phase -= dash[i];
  }
  return false;
}

}  // namespace

void draw_polyline(Image& image, const std::vector<PointF>& points, float width, Rgb color,
                   const std::vector<float>& dash, Rect clip, float alpha) {
  clip = intersect(clip, {0, 0, image.width, image.height});
  if (clip.empty() || points.size() < 2) return;
  float period = 0.f;
  for (float d : dash) period += d;
  // Coverage of every pixel is the maximum over the segments, so joints are not
  // painted twice.
  std::vector<float> cover(static_cast<size_t>(clip.w) * clip.h, 0.f);
  const float half = width * 0.5f;
  float start = 0.f;  // arc length at the segment's first point
  for (size_t s = 0; s + 1 < points.size(); ++s) {
    const PointF a = points[s], b = points[s + 1];
    const float seg_len = std::hypot(b.x - a.x, b.y - a.y);
    if (!std::isfinite(seg_len)) continue;
    const int x0 = std::max(clip.x, static_cast<int>(std::floor(std::min(a.x, b.x) - half - 1)));
    const int x1 = std::min(clip.right() - 1, static_cast<int>(std::ceil(std::max(a.x, b.x) + half + 1)));
    const int y0 = std::max(clip.y, static_cast<int>(std::floor(std::min(a.y, b.y) - half - 1)));
    const int y1 = std::min(clip.bottom() - 1, static_cast<int>(std::ceil(std::max(a.y, b.y) + half + 1)));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        float dist, along;
        segment_distance({x + 0.5f, y + 0.5f}, a, b, dist, along);
        float c = std::clamp(half + 0.5f - dist, 0.f, 1.f);
        if (c <= 0.f || !dash_on(dash, period, start + along)) continue;
        float& slot = cover[static_cast<size_t>(y - clip.y) * clip.w + (x - clip.x)];
        slot = std::max(slot, c);
      }
    start += seg_len;
  }
  for (int y = 0; y < clip.h; ++y)
    for (int x = 0; x < clip.w; ++x) {
      const float c = cover[static_cast<size_t>(y) * clip.w + x];
      if (c > 0.f) blend_pixel(image, clip.x + x, clip.y + y, color, c * alpha);
    }
}

void draw_disc(Image& image, PointF centre, float r, Rgb fill, float fill_alpha, Rgb edge,
               float edge_alpha, float edge_w, Rect clip) {
  clip = intersect(clip, {0, 0, image.width, image.height});
  const int x0 = std::max(clip.x, static_cast<int>(std::floor(centre.x - r - 1)));
  const int x1 = std::min(clip.right() - 1, static_cast<int>(std::ceil(centre.x + r + 1)));
  const int y0 = std::max(clip.y, static_cast<int>(std::floor(centre.y - r - 1)));
  const int y1 = std::min(clip.bottom() - 1, static_cast<int>(std::ceil(centre.y + r + 1)));
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const float d = std::hypot(x + 0.5f - centre.x, y + 0.5f - centre.y);
      const float inside = std::clamp(r + 0.5f - d, 0.f, 1.f);  // coverage of the disc
      if (inside <= 0.f) continue;
      // The edge ring covers [r - edge_w, r].
      const float ring = std::min(inside, std::clamp(d - (r - edge_w) + 0.5f, 0.f, 1.f));
      blend_pixel(image, x, y, fill, inside * fill_alpha);
      blend_pixel(image, x, y, edge, ring * edge_alpha);
    }
}

float luminance(Rgb c) { return (0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2]) / 255.f; }

}  // namespace detail
}  // namespace attnlite::render
