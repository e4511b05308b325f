// The layout and text of a translation's attention map, from the map's weights and labels
// alone (no model): figures::translation_map draws its figures with it, and so does the web
// page's download through the renderer module (al_render_translation_map), so that the two
// come out the same.
#pragma once
#include <string>
#include <vector>

#include "attnlite/render/heatmap.h"

namespace attnlite::render {

// The three attention kinds of a translation (the Bahdanau model has Cross alone).
enum class MapKind { Encoder, DecoderSelf, Cross };

// What one translation map shows: rows are layers, columns heads.
struct TranslationFigure {
  MapKind kind = MapKind::Cross;
  bool transformer = true;          // layers and heads are named only for Transformers
  std::string model_name;           // in the title, e.g. "transformer-fra"
  std::string sentence, translation;
  std::vector<int> layers, heads;   // the rows' layers and the columns' heads, 0-based
  int queries = 0, keys = 0;
  std::vector<std::string> xticks, yticks;  // the keys' and queries' tokens (empty: positions)
  Colormap cmap = Colormap::Reds;
  bool annotate = false;
  int dpi = 100;
};

// "encoder self-attention", "decoder self-attention" or "encoder-decoder attention".
const char* translation_attention_name(MapKind kind);

// The title of a figure of one translation: "model, what: sentence → translation".
std::string translation_title(const std::string& model, const std::string& what, const std::string& sentence,
                              const std::string& translation);

// The heatmap options of the figure: axis labels, the heads above the columns and the
// layers left of the rows of a grid (or "Layer l, head h" over a single panel), the title
// "model, kind: sentence → translation", and a size from the number of cells, widened for the
// title up to 10 inches. Throws attnlite::Error when the lists do not match the sizes.
HeatmapOptions translation_figure_options(const TranslationFigure& t);

}  // namespace attnlite::render
