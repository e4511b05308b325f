// Drawing primitives shared by the heatmap and plot renderers (internal).
#pragma once

#include <string>
#include <vector>

#include "attnlite/render/canvas.h"
#include "attnlite/render/image.h"

namespace attnlite::render::detail {

// matplotlib's default ink: axes frames and ticks, and text, both black.
constexpr Rgb kFrameColor{0, 0, 0};
constexpr Rgb kTextColor{0, 0, 0};

// Integer scale of small gaps and marks for a resolution: 1 at 100 dpi, 2 at 150-249 dpi, ...
int pixel_scale(int dpi);

// Sizes in pixels shared by every figure at a resolution (matplotlib's defaults
// converted from points: 10 pt text, 3.5 pt ticks, 0.8 pt frames).
struct FigureMetrics {
  int s = 1;      // pixel_scale
  float font_px = 13.9f;  // the text size: 10 pt (matplotlib's font.size)
  int lh = 17;    // line height of that text
  int pad = 4;    // outer margin
  int tick = 5;   // tick length
  int frame = 1;  // frame and tick thickness
  int tgap = 3;   // between a tick and its label
  int lgap = 4;   // between tick labels and the axis label
};
FigureMetrics figure_metrics(int dpi);
// The width in inches a figure needs for its title on one line with the margins, at most
// 10 inches (a longer title ends in "…"; figures are widened to this, never narrowed).
float title_width_in(const std::string& title, int dpi);

Rect intersect(Rect a, Rect b);
void fill_rect(Image& image, Rect r, Rgb color);
// Mixes `color` into one pixel with opacity alpha in [0, 1] (clipped to the image).
void blend_pixel(Image& image, int x, int y, Rgb color, float alpha);
// A frame of the given thickness just outside `inner` (inner itself is untouched).
void frame_around(Image& image, Rect inner, int thickness, Rgb color);

using PointF = render::PointF;

// An antialiased polyline of the given width (pixels), clipped to `clip`. `dash`
// alternates on / off lengths in pixels along the line (empty: solid).
void draw_polyline(Image& image, const std::vector<PointF>& points, float width, Rgb color,
                   const std::vector<float>& dash, Rect clip, float alpha = 1.f);

// An antialiased disc of radius r filled with `fill` at opacity fill_alpha and
// ringed by an edge of width edge_w at opacity edge_alpha, clipped to `clip`.
void draw_disc(Image& image, PointF centre, float r, Rgb fill, float fill_alpha, Rgb edge,
               float edge_alpha, float edge_w, Rect clip);

// Relative luminance in [0, 1] of an sRGB colour (Rec. 709 weights, no linearisation).
float luminance(Rgb c);

}  // namespace attnlite::render::detail
