// attnlite — the figures of d2l chapter 10, reproducibly (fixed seeds), as images:
// show_heatmaps panels and d2l.plot line plots, plus attention maps of any translation and
// the causal self-attention of a language model's generation.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/generate.h"
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
  std::vector<std::string> xticks, yticks;  // the key and query labels (token maps)
  std::string text;                         // the translation or the generated text
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

// Causal self-attention of one generation by a language model (kind lm, generate.h).
// The prompt is continued (greedily, or sampled by `generate`'s options; its `attention` is
// forced on) and the attention of the tokens the model read is drawn: keys on x, queries on y,
// both labelled with those tokens (<bos>, the prompt's words, the generated tokens fed back;
// the last generated token, often <eos>, was chosen but never read, so it has no row). The
// future (k > q) is masked: drawn in masked_color with masked_hatch lines and named in a
// swatch under the colorbar, so that it does not read as a weight of 0; in Figure::matrices
// those cells are NaN. Colours run from 0 to 1; <bos> attends only to itself (weight 1).
struct GenerationMapOptions {
  int layer = -1;           // -1: every layer (one row per layer)
  int head = -1;            // -1: every head (one column per head)
  GenerateOptions generate; // greedy by default; sample, temperature, top_k, top_p, seed,
                            // max_tokens as in generate.h
  bool tokens = true;       // token tick labels instead of positions
  bool annotate = false;
  viz::Colormap cmap = viz::Colormap::Reds;
  int dpi = 100;
  Rgb masked_color = viz::kMaskedGrey;
  std::optional<Rgb> masked_hatch = viz::kMaskedHatch;
};
Figure generation_map(const std::shared_ptr<const Model>& model, const std::string& prompt,
                      const GenerationMapOptions& opts);

}  // namespace attnlite::viz::figures
