// Line and scatter plots: the equivalent of the book's d2l.plot figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnlite/render/image.h"

namespace attnlite::render {

struct Series {
  std::vector<float> x, y;  // same length; NaN points break a line
  std::string label;        // legend text (series with an empty label are not listed)
  enum Style { Line, Dashed, DashDot, Dotted, Points } style = Line;
  // Default colour: d2l's cycle (blue, magenta, green, red, then matplotlib's tab10).
  std::optional<Rgb> color;
};

struct PlotOptions {
  std::string xlabel, ylabel;
  std::optional<float> xmin, xmax, ymin, ymax;  // default: the data range plus 5% margins
  float fig_width_in = 3.5f, fig_height_in = 2.5f;
  int dpi = 100;
  bool legend = true;
  bool grid = true;  // light grid lines at the ticks, like d2l's set_axes
};

// Where render_plot puts things, in image pixels.
struct PlotLayout {
  int width = 0, height = 0;
  Rect axes;  // the data area inside the frame
  float xmin = 0.f, xmax = 1.f, ymin = 0.f, ymax = 1.f;
  Rect legend;  // empty when no legend is drawn

  // Continuous pixel coordinates of a data point (pixel (i, j) covers [i, i+1) x [j, j+1)).
  float x_to_px(float x) const;
  float y_to_px(float y) const;
};

// Line widths and marker sizes follow matplotlib's defaults at opts.dpi
// (1.5 pt lines, 6 pt markers).
PlotLayout plot_layout(const std::vector<Series>& series, const PlotOptions& opts);
Image render_plot(const std::vector<Series>& series, const PlotOptions& opts);
// The same plot as an SVG document (canvas.h): polylines, circles and <text> labels.
std::string render_plot_svg(const std::vector<Series>& series, const PlotOptions& opts);
class Canvas;
// Draws the plot onto any canvas at its origin (the layout's size: plot_layout).
void draw_plot(Canvas& canvas, const std::vector<Series>& series, const PlotOptions& opts);

// The colour render_plot gives series i when it has none of its own.
Rgb series_color(int i);

}  // namespace attnlite::render
