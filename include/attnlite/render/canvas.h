// Drawing surfaces. Every figure is laid out once and drawn through a Canvas: onto pixels
// (RasterCanvas, what the PNG holds) or into SVG (SvgCanvas: vector cells, lines and discs,
// real <text> elements), so that both formats share one layout.
#pragma once

#include <string>
#include <vector>

#include "attnlite/render/heatmap.h"
#include "attnlite/render/image.h"

namespace attnlite::render {

struct PointF {
  float x = 0.f, y = 0.f;
};

class Canvas {
 public:
  virtual ~Canvas() = default;
  int width() const { return width_; }
  int height() const { return height_; }

  // A rectangle of pixels [x, x + w) x [y, y + h) in `color` at opacity alpha (1: opaque).
  virtual void fill(Rect r, Rgb color, float alpha = 1.f) = 0;
  // Masked cells: `r` filled with `color`, crossed by diagonal bands of `line` (the pixels
  // where ((x - ox) + (y - oy)) mod period < line_w), so that neighbouring cells drawn with
  // the same origin continue one pattern.
  virtual void hatch(Rect r, Rgb color, Rgb line, int period, int line_w, int ox, int oy) = 0;
  // A colorbar's gradient: the colormap's 1 at the top row, 0 at the bottom row.
  virtual void gradient(Rect r, Colormap cmap) = 0;
  // An antialiased polyline of the given width, dashed by `dash` (on / off lengths; empty:
  // solid), at opacity alpha, clipped to `clip`.
  virtual void polyline(const std::vector<PointF>& points, float width, Rgb color, float alpha,
                        const std::vector<float>& dash, Rect clip) = 0;
  // A disc of radius r filled with `fill` (opacity fill_alpha) and ringed by an edge of width
  // edge_w (opacity edge_alpha), clipped to `clip`.
  virtual void disc(PointF centre, float r, Rgb fill, float fill_alpha, Rgb edge, float edge_alpha,
                    float edge_w, Rect clip) = 0;
  // Text with its box's top-left corner at (x, y), as draw_text (image.h).
  virtual void text(int x, int y, const std::string& utf8, Rgb color, float size_px,
                    TextDirection direction = TextDirection::Horizontal) = 0;
  // What follows is drawn moved by (dx, dy), until the matching pop_offset.
  virtual void push_offset(int dx, int dy) = 0;
  virtual void pop_offset() = 0;
  // What follows, until end_group, is one named part of the figure (SVG: <g class="name">,
  // e.g. "cells" of a panel, "colorbar"; pixels: nothing).
  virtual void group(const std::string& name) { (void)name; }
  virtual void end_group() {}

  // A frame of the given thickness just outside `inner`.
  void frame(Rect inner, int thickness, Rgb color);

 protected:
  Canvas(int w, int h) : width_(w), height_(h) {}
  int width_ = 0, height_ = 0;
};

// Draws into an Image (not owned; it must outlive the canvas).
class RasterCanvas final : public Canvas {
 public:
  explicit RasterCanvas(Image& image);
  void fill(Rect r, Rgb color, float alpha = 1.f) override;
  void hatch(Rect r, Rgb color, Rgb line, int period, int line_w, int ox, int oy) override;
  void gradient(Rect r, Colormap cmap) override;
  void polyline(const std::vector<PointF>& points, float width, Rgb color, float alpha,
                const std::vector<float>& dash, Rect clip) override;
  void disc(PointF centre, float r, Rgb fill, float fill_alpha, Rgb edge, float edge_alpha, float edge_w,
            Rect clip) override;
  void text(int x, int y, const std::string& utf8, Rgb color, float size_px,
            TextDirection direction = TextDirection::Horizontal) override;
  void push_offset(int dx, int dy) override;
  void pop_offset() override;

 private:
  Rect moved(Rect r) const { return {r.x + dx_, r.y + dy_, r.w, r.h}; }
  Image& image_;
  int dx_ = 0, dy_ = 0;
  std::vector<std::pair<int, int>> stack_;
};

// Writes an SVG 1.1 document of width x height pixels (user units), white background.
// Text is set in DejaVu Sans (falling back to the viewer's sans-serif) at the sizes the layout
// measured; characters that are not allowed in XML draw as the font's box (□).
class SvgCanvas final : public Canvas {
 public:
  SvgCanvas(int width, int height);
  void fill(Rect r, Rgb color, float alpha = 1.f) override;
  void hatch(Rect r, Rgb color, Rgb line, int period, int line_w, int ox, int oy) override;
  void gradient(Rect r, Colormap cmap) override;
  void polyline(const std::vector<PointF>& points, float width, Rgb color, float alpha,
                const std::vector<float>& dash, Rect clip) override;
  void disc(PointF centre, float r, Rgb fill, float fill_alpha, Rgb edge, float edge_alpha, float edge_w,
            Rect clip) override;
  void text(int x, int y, const std::string& utf8, Rgb color, float size_px,
            TextDirection direction = TextDirection::Horizontal) override;
  void push_offset(int dx, int dy) override;
  void pop_offset() override;
  void group(const std::string& name) override;
  void end_group() override;
  // The document so far (closing whatever offsets are still open).
  std::string str() const;

 private:
  std::string clip_id(Rect clip);
  std::string defs_, body_;
  std::vector<std::string> clips_;  // "x y w h" of each clipPath, id = index
  std::vector<std::string> patterns_, gradients_;
  int open_groups_ = 0;
};

// XML text with &, <, >, " and ' escaped; characters XML 1.0 does not allow (controls, and
// malformed UTF-8 decoded as in decode_utf8) become U+25A1 □.
std::string xml_escape(const std::string& utf8);

// The heatmaps of render_heatmaps as an SVG document: the same layout, one <rect> per cell
// (masked NaN cells: the masked colour and, with a hatch, a pattern over it), <text> labels.
std::string render_heatmaps_svg(const float* matrices, int rows, int cols, int queries, int keys,
                                const HeatmapOptions& opts);
// Draws the heatmaps onto any canvas at its origin (the layout's size: heatmap_layout).
void draw_heatmaps(Canvas& canvas, const float* matrices, int rows, int cols, int queries, int keys,
                   const HeatmapOptions& opts);

}  // namespace attnlite::render
