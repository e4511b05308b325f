// Attention heatmaps as images: the equivalent of d2l's show_heatmaps().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/render/image.h"

namespace attnlite::render {

enum class Colormap { Reds, Blues, Viridis };

// "Reds", "Blues" or "viridis", in any case; throws attnlite::Error otherwise.
Colormap colormap_from_name(std::string_view name);
const char* colormap_name(Colormap cmap);
// The colour at t in [0, 1] (clamped; NaN counts as 0), from 256-entry tables
// sampled from matplotlib's colormaps of the same names.
std::array<uint8_t, 3> colormap_rgb(Colormap cmap, float t);

struct HeatmapOptions {
  std::string title;                        // over the whole figure, centred (matplotlib's
                                            // suptitle); shortened with "…" to the width
  std::string xlabel = "Keys", ylabel = "Queries";
  std::vector<std::string> row_labels;      // one per row (or empty), e.g. "Layer 2" for a layers x
                                            // heads grid: left of the row's y label (in the
                                            // y label's place when ylabel is empty)
  std::vector<std::string> titles;          // one per column (or empty), e.g. "Head 3": drawn
                                            // above the column's top panel
  std::vector<std::string> xticks, yticks;  // token labels for the key / query axes (size == keys /
                                            // queries); empty: numeric ticks at "nice" steps
  std::vector<Rgb> xtick_colors, ytick_colors;  // one colour per token label (or empty: black),
                                                // e.g. to set generated tokens apart
  float fig_width_in = 2.5f, fig_height_in = 2.5f;
  int dpi = 100;  // the image is round(fig_width_in * dpi) x round(fig_height_in * dpi) pixels
  Colormap cmap = Colormap::Reds;
  bool annotate = false;     // print each value in its cell when it fits
  bool ticks = true;         // tick marks and tick labels (false: thumbnails, e.g. an overview)
  bool colorbar = true;      // one colorbar for the whole figure, on the right
  int colorbar_max_ticks = 0;  // at most this many colorbar ticks (0: 8); the finest "nice"
                               // step (1, 2, 2.5, 5 x 10^k) within it whose labels fit the bar:
                               // 5-8 ticks on a bar of usual height, like matplotlib's
  std::optional<float> vmin, vmax;  // default: min / max over all panels (NaN ignored)

  // NaN cells are masked (e.g. the future of a causal attention map): they are filled with
  // masked_color and, when masked_hatch is set, crossed by diagonal lines of that colour, so
  // that they do not read as a weight of 0. The defaults leave them as the background.
  // A non-empty masked_label draws a swatch of that fill under the colorbar, labelled.
  Rgb masked_color = kWhite;
  std::optional<Rgb> masked_hatch;
  std::string masked_label;
};

// A light grey, hatched in a darker grey: distinct from every colormap's 0 (Reds, Blues: near
// white; viridis: dark purple) and from its 1.
inline constexpr Rgb kMaskedGrey{222, 222, 222};
inline constexpr Rgb kMaskedHatch{160, 160, 160};

// Where render_heatmaps puts things, in image pixels.
struct HeatmapLayout {
  int width = 0, height = 0;
  int rows = 0, cols = 0, queries = 0, keys = 0;
  float vmin = 0.f, vmax = 1.f;  // the colour scale actually used
  std::vector<Rect> panels;      // rows * cols, row-major: the data area inside each frame
  Rect colorbar;                 // the gradient inside its frame (empty without a colorbar)
  Rect title;                    // the figure's title (empty without one)
  std::string title_text;        // the title as drawn (shortened to fit)
  std::vector<Rect> titles;      // per panel (empty rect where there is no title)
  std::vector<Rect> xlabels;     // per panel: the x label's box (bottom row only)
  std::vector<Rect> ylabels;     // per panel: the y label's box (first column only)
  std::vector<Rect> row_labels;  // per row: the row label's box when it has a band of its own
                                 // (row_labels and ylabel both given; empty rects otherwise)
  Rect masked_swatch;            // the masked-cell swatch inside its frame (empty without
                                 // masked_label or without a colorbar)
  Rect masked_text;              // its label's box

  // The pixels of cell (query q, key k) of panel (row r, col c). Cells tile the
  // panel exactly; a cell can be empty when the panel has fewer pixels than cells.
  Rect cell(int r, int c, int q, int k) const;
};

// The layout render_heatmaps uses; `matrices` may be null (then the colour scale
// is the options' vmin/vmax, or [0, 1]). Throws attnlite::Error on bad sizes.
HeatmapLayout heatmap_layout(int rows, int cols, int queries, int keys, const HeatmapOptions& opts,
                             const float* matrices = nullptr);

// matrices: (rows, cols, queries, keys) contiguous floats, like the book's 4-D
// tensor. Cells are filled rectangles (no interpolation); NaN cells are masked (see
// HeatmapOptions::masked_color: the background unless set).
Image render_heatmaps(const float* matrices, int rows, int cols, int queries, int keys,
                      const HeatmapOptions& opts);

}  // namespace attnlite::render
