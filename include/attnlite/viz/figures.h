// attnlite — the figures of d2l chapter 10, reproducibly (fixed seeds), as images:
// show_heatmaps panels and d2l.plot line plots, plus attention maps of any translation.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/model.h"
#include "attnlite/viz/heatmap.h"
#include "attnlite/viz/plot.h"

namespace attnlite::viz::figures {

struct Figure {
  std::string name;         // file stem, e.g. "07-transformer-encoder"
  std::string caption;      // what it shows
  viz::Image image;
  bool is_heatmap = false;
  viz::HeatmapLayout layout;          // when is_heatmap
  std::vector<float> matrices;        // the (rows, cols, queries, keys) matrices drawn
  int rows = 0, cols = 0, queries = 0, keys = 0;
};

struct Context {
  std::shared_ptr<const Model> transformer;  // needed by the transformer figures
  std::shared_ptr<const Model> bahdanau;     // needed by the Bahdanau figure
  std::string sentence = "i'm home .";       // the book's example
  int dpi = 100;
  bool d2l_compat = false;                   // Transformer decoding positions (see DecodeOptions)
  uint32_t seed = 0;                         // data of the demo figures
};

// Every figure name, in the chapter's order.
std::vector<std::string> names();
// One figure by name (throws attnlite::Error for an unknown name or a missing model).
Figure make(const std::string& name, const Context& ctx);

// Attention maps of one translation.
enum class MapKind { Encoder, DecoderSelf, Cross };
MapKind map_kind_from_name(const std::string& name);  // enc | dec-self | cross
struct MapOptions {
  MapKind kind = MapKind::Cross;
  int layer = -1;           // -1: every layer (one row per layer)
  int head = -1;            // -1: every head (one column per head)
  bool tokens = true;       // token tick labels instead of positions
  bool annotate = false;
  bool d2l_compat = false;
  viz::Colormap cmap = viz::Colormap::Reds;
  int dpi = 100;
};
Figure translation_map(const std::shared_ptr<const Model>& model, const std::string& sentence,
                       const MapOptions& opts);

}  // namespace attnlite::viz::figures
