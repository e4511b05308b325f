// attnlite — the figures of d2l chapter 10, reproducibly (fixed seeds), as images:
// show_heatmaps panels and d2l.plot line plots, plus attention maps of any translation and
// the causal self-attention of a language model's generation.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/render/heatmap.h"
#include "attnlite/render/plot.h"
#include "attnlite/render/translation_figure.h"

namespace attnlite::render {
class Canvas;
}

namespace attnlite::figures {

struct Figure {
  std::string name;         // file stem, e.g. "07-transformer-encoder"
  std::string caption;      // what it shows
  render::Image image;
  bool is_heatmap = false;
  render::HeatmapLayout layout;          // when is_heatmap
  std::vector<float> matrices;        // the (rows, cols, queries, keys) matrices drawn
  int rows = 0, cols = 0, queries = 0, keys = 0;
  std::vector<std::string> xticks, yticks;  // the key and query labels (token maps)
  std::string text;                         // the translation or the generated text
  render::HeatmapLayout rollout_layout;        // vit_map: see there (empty panels otherwise)
  // Draws the figure onto a canvas of the image's size (canvas.h): `image` holds what it
  // draws on pixels; to_svg what it writes as SVG.
  std::function<void(render::Canvas&)> paint;
};

// The figure as an SVG document: the same layout as its PNG (canvas.h).
std::string to_svg(const Figure& f);

struct Context {
  std::shared_ptr<const Model> transformer;  // needed by the transformer figures
  std::shared_ptr<const Model> bahdanau;     // needed by the Bahdanau figure
  std::string transformer_name = "transformer-d2l", bahdanau_name = "bahdanau-d2l";  // in titles
  std::string sentence = "i'm home .";       // the book's example
  int dpi = 100;
  bool d2l_compat = false;                   // Transformer decoding positions (see DecodeOptions)
  bool padding = false;                      // translation figures: keep the source's <pad>
                                             // positions, as the book's figures do
  uint32_t seed = 0;                         // data of the demo figures
};

// Every figure name, in the chapter's order.
std::vector<std::string> names();
// One figure by name (throws attnlite::Error for an unknown name or a missing model).
Figure make(const std::string& name, const Context& ctx);

// Attention maps of one translation (render::MapKind: translation_figure.h).
render::MapKind map_kind_from_name(const std::string& name);  // enc | dec-self | cross
struct MapOptions {
  render::MapKind kind = render::MapKind::Cross;
  int layer = -1;           // -1: every layer (one row per layer)
  int head = -1;            // -1: every head (one column per head)
  bool tokens = true;       // token tick labels instead of positions
  bool annotate = false;
  bool d2l_compat = false;
  int beam_size = 1;        // the translation drawn: greedy, or the best of a beam search
  float length_penalty = 0.f;  // alpha of the beam's ranking (DecodeOptions)
  bool padding = false;     // keep the source's <pad> positions (the book's figures show them);
                            // by default the maps end at the source's <eos>
  std::string model_name;   // named in the figure's title (empty: the model's kind)
  render::Colormap cmap = render::Colormap::Reds;
  int dpi = 100;
};
// The figure's title: model, attention kind, sentence => translation.
Figure translation_map(const std::shared_ptr<const Model>& model, const std::string& sentence,
                       const MapOptions& opts);

// The alignment view of one translation's attention (bertviz's head view, as an image): the
// keys' tokens in a column on the left (the source, for cross-attention), the queries' on the
// right (the target), and a line from each key to each query whose opacity is its weight
// (1: opaque; lines under 1% are left out). One layer; one head (in that head's colour, the
// plots' cycle) or the heads averaged (in blue). Figure::matrices holds the (queries, keys)
// weights drawn, xticks / yticks the key and query tokens; rows = cols = 1; layout: only its
// width, height and title_text.
struct AlignmentOptions {
  render::MapKind kind = render::MapKind::Cross;
  int layer = -1;          // -1: the last layer
  int head = -1;           // -1: the heads averaged
  bool padding = false;    // keep the source's <pad> positions (see MapOptions)
  bool d2l_compat = false;
  std::string model_name;  // in the title (empty: the model's kind)
  int dpi = 100;
};
Figure alignment_view(const std::shared_ptr<const Model>& model, const std::string& sentence,
                      const AlignmentOptions& opts);
inline constexpr float kAlignmentMinWeight = 0.01f;

// Two more views of one translation by a Transformer (translation_views.cpp):
//   encoder_rollout: the attention rollout (Abnar & Zuidema, 2020; as Classifier::rollout) of
//     the encoder's self-attention, one panel per depth: column l is the rollout through
//     layers 1..l (the last: the whole encoder's), keys and queries the source's tokens.
//     Colours run from 0 to the largest value drawn.
//   overview: thumbnails of every layer (rows) and head (columns) of the three attention
//     kinds, encoder self, decoder self and encoder-decoder, one block each under a title
//     naming the model, the sentence and its translation; every block on the scale [0, 1].
//     Figure::matrices holds the three blocks' weights one after the other (each layers x
//     heads x its queries x its keys); rows = 3 * layers, cols = heads.
struct TranslationViewOptions {
  bool padding = false;     // keep the source's <pad> positions (see MapOptions)
  bool d2l_compat = false;
  std::string model_name;   // in the title (empty: the model's kind)
  render::Colormap cmap = render::Colormap::Reds;
  int dpi = 100;
};
Figure encoder_rollout(const std::shared_ptr<const Model>& model, const std::string& sentence,
                       const TranslationViewOptions& opts);
Figure overview(const std::shared_ptr<const Model>& model, const std::string& sentence,
                const TranslationViewOptions& opts);

// Causal self-attention of one generation by a language model (kind lm, generate.h).
// The prompt is continued (greedily, or sampled by `generate`'s options; its `attention` is
// forced on) and the attention of the tokens the model read is drawn: keys on x, queries on y,
// both labelled with those tokens (<bos>, the prompt's words, the generated tokens fed back;
// the last generated token, often <eos>, was chosen but never read, so it has no row). The
// future (k > q) is masked: drawn in masked_color with masked_hatch lines and named in a
// swatch under the colorbar, so that it does not read as a weight of 0; in Figure::matrices
// those cells are NaN. Colours run from 0 to 1; <bos> attends only to itself (weight 1).
struct GenerationMapOptions {
  std::string model_name;   // named in the figure's title (empty: the model's kind)
  int layer = -1;           // -1: every layer (one row per layer)
  int head = -1;            // -1: every head (one column per head)
  GenerateOptions generate; // greedy by default; sample, temperature, top_k, top_p, seed,
                            // max_tokens as in generate.h
  bool tokens = true;       // token tick labels instead of positions
  bool annotate = false;
  render::Colormap cmap = render::Colormap::Reds;
  int dpi = 100;
  render::Rgb masked_color = render::kMaskedGrey;
  std::optional<render::Rgb> masked_hatch = render::kMaskedHatch;
};
Figure generation_map(const std::shared_ptr<const Model>& model, const std::string& prompt,
                      const GenerationMapOptions& opts);


// Self-attention of a Vision Transformer (kind vit, classify.h) on one image: image i of the
// Classifier's last classify() call (attention recorded), whose input pixels (C, S, S), as
// given to classify(), are `input`. Tokens: 0 = CLS, then the N patches row-major.
//   Overlay: the CLS token's attention over the patches, drawn over the input image: each
//     pixel of the (first channel of the) input enlarged, its cell filled with the colour of
//     its patch's weight, a grey disc on it for the pixel's ink (vit_ink_radius), a patch
//     grid on top. Colours run from 0 to the largest weight drawn.
//   Maps: the full (N + 1) x (N + 1) maps, keys on x, queries on y, labelled CLS, 1 .. N
//     (patches numbered row-major from the top left). Colours run from 0 to the largest
//     weight drawn.
// Panels: one row per layer, one column per head; with `rollout`, one more column: the
// attention rollout (Abnar & Zuidema, 2020; Classifier::rollout) through the layers up to
// that row's (the last layer's row: the model's rollout). In the overlay, the rollout's CLS
// row is renormalised over the patches (its CLS -> CLS share left out) so that it reads as
// the share of the patches; in the maps it is drawn as is.
enum class VitView { Overlay, Maps };
struct VitMapOptions {
  VitView view = VitView::Overlay;
  int layer = -1;        // -1: every layer (one row per layer)
  int head = -1;         // -1: every head; kVitRollout: the rollout column alone
  bool rollout = true;   // with head -1: the rollout column after the heads
  render::Colormap cmap = render::Colormap::Reds;
  int dpi = 100;
};
inline constexpr int kVitRollout = -2;
// The overlay's ink: a disc of kVitInk (ringed in white) centred on each pixel's cell, its area
// the pixel's ink (the pixel over the image's largest one, 0 .. 1): this radius (0: none).
float vit_ink_radius(float ink, const render::Rect& cell);
inline constexpr render::Rgb kVitInk{60, 60, 60};
inline constexpr render::Rgb kVitGrid{90, 90, 90};  // the patch grid lines
// Figure::matrices: (rows, cols, queries, keys) as drawn: the overlay's are (S, S) per panel,
// every pixel holding its patch's weight; xticks / yticks: the maps' token labels.
// An overlay of heads and the rollout column is two figures side by side, each with its own
// colour scale and colorbar: Figure::layout is the heads' (cols - 1 columns), and
// Figure::rollout_layout the rollout column's (its rects in the whole image; each layout's
// width is its part's).
// Figure::text: the predicted label. Throws attnlite::Error: not a vit, no attention
// recorded, i or layer / head out of range.
Figure vit_map(const Classifier& cls, int i, const float* input, const VitMapOptions& opts);

}  // namespace attnlite::figures
