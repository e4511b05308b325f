// A translation map's layout and text (translation_figure.h): shared by the native figures
// and the page's download, which reach it through the renderer module.
#include "attnlite/render/translation_figure.h"

#include <algorithm>

#include "attnlite/error.h"
#include "render/draw.h"

namespace attnlite::render {

const char* translation_attention_name(MapKind kind) {
  switch (kind) {
    case MapKind::Encoder: return "encoder self-attention";
    case MapKind::DecoderSelf: return "decoder self-attention";
    case MapKind::Cross: break;
  }
  return "encoder-decoder attention";
}

std::string translation_title(const std::string& model, const std::string& what, const std::string& sentence,
                              const std::string& translation) {
  return model + ", " + what + ": " + sentence + " \u2192 " + translation;
}

HeatmapOptions translation_figure_options(const TranslationFigure& t) {
  const int rows = (int)t.layers.size(), cols = (int)t.heads.size();
  if (rows < 1 || cols < 1) throw Error("translation map: no layer or no head to draw");
  if (!t.transformer && rows * cols != 1) throw Error("translation map: a Bahdanau model has one map");
  for (int v : t.layers)
    if (v < 0 || v > 9999) throw Error("translation map: layer " + std::to_string(v) + " out of range");
  for (int v : t.heads)
    if (v < 0 || v > 9999) throw Error("translation map: head " + std::to_string(v) + " out of range");
  if (t.queries < 1 || t.keys < 1) throw Error("translation map: no queries or no keys");
  const bool tokens = !t.xticks.empty() || !t.yticks.empty();
  if (tokens && ((int)t.xticks.size() != t.keys || (int)t.yticks.size() != t.queries))
    throw Error("translation map: give one token per key and one per query");

  HeatmapOptions ho;
  ho.xlabel = "Key positions";
  ho.ylabel = "Query positions";
  if (tokens) {
    ho.xticks = t.xticks;
    ho.yticks = t.yticks;
  }
  if (t.transformer && rows * cols > 1) {
    for (int h : t.heads) ho.titles.push_back("Head " + std::to_string(h + 1));
    for (int l : t.layers) ho.row_labels.push_back("Layer " + std::to_string(l + 1));
  } else if (t.transformer) {
    ho.titles.push_back("Layer " + std::to_string(t.layers[0] + 1) + ", head " + std::to_string(t.heads[0] + 1));
  }
  const float cell = tokens ? 0.22f : 0.16f;
  ho.fig_width_in = std::max(2.6f, 1.4f + cols * (0.4f + t.keys * cell));
  ho.fig_height_in = std::max(2.4f, 1.2f + rows * (0.5f + t.queries * cell));
  ho.cmap = t.cmap;
  ho.annotate = t.annotate;
  ho.dpi = t.dpi;
  ho.vmin = 0.f;  // masked positions are exactly the zero colour
  ho.title = translation_title(t.model_name, translation_attention_name(t.kind), t.sentence, t.translation);
  ho.fig_width_in = std::max(ho.fig_width_in, detail::title_width_in(ho.title, t.dpi));
  return ho;
}

}  // namespace attnlite::render
