// Two views of a Transformer's translation beyond the per-kind maps: the attention rollout of
// its encoder, and thumbnails of every layer and head of its three attention kinds.
#include <algorithm>

#include "attnlite/error.h"
#include "attnlite/translate.h"
#include "attnlite/render/canvas.h"
#include "attnlite/figures/figures.h"
#include "render/draw.h"
#include "figures/figure_parts.h"

namespace attnlite::figures {
using namespace attnlite::render;  // figures are drawn with the renderer

namespace {

void need_transformer(const Model& m, const char* what) {
  if (!m.has_self_attention())
    throw Error(std::string(what) + " needs a Transformer (this model, " + m.description() +
                ", has only encoder-decoder attention)");
}

std::string title_of(const Model& m, const TranslationViewOptions& o, const std::string& what,
                     const std::string& sentence, const std::string& translation) {
  return translation_title(o.model_name.empty() ? std::string(m.kind_name()) : o.model_name, what,
                           sentence, translation);
}

}  // namespace

Figure encoder_rollout(const std::shared_ptr<const Model>& model, const std::string& sentence,
                       const TranslationViewOptions& o) {
  const Model& m = *model;
  need_transformer(m, "the encoder rollout");
  Translator t(model);
  DecodeOptions d;
  d.d2l_compat = o.d2l_compat;
  const Translation& r = t.translate(sentence, d);
  const int L = m.num_layers(), NH = m.num_heads();
  const int S = o.padding ? r.S : std::max(1, std::min(r.S, r.src_valid));
  const auto R = detail::rollouts(L, NH, S, [&](int l, int h, int q, int k) { return r.enc_self_at(l, h, q, k); });
  std::vector<float> data;
  for (const auto& x : R) data.insert(data.end(), x.begin(), x.end());

  render::HeatmapOptions ho;
  ho.xlabel = "Keys";
  ho.ylabel = "Queries";
  ho.xticks = ho.yticks = detail::src_labels(m, r, S);
  for (int l = 0; l < L; ++l) ho.titles.push_back(l == 0 ? "Layer 1" : "Layers 1-" + std::to_string(l + 1));
  ho.title = title_of(m, o, "encoder attention rollout", sentence, std::string(r.text));
  ho.cmap = o.cmap;
  ho.dpi = o.dpi;
  ho.vmin = 0.f;
  ho.fig_width_in = std::max(render::detail::title_width_in(ho.title, o.dpi), 1.4f + L * (0.4f + S * 0.22f));
  ho.fig_height_in = std::max(2.6f, 1.6f + S * 0.22f);
  Figure f = detail::heatmap("encoder-rollout",
                             std::string(m.kind_name()) + " encoder attention rollout for '" + sentence +
                                 "' => '" + std::string(r.text) +
                                 "': per layer the heads' mean plus the identity, rows normalised, multiplied "
                                 "through the layers (column l: layers 1..l)",
                             std::move(data), 1, L, S, S, ho);
  f.xticks = f.yticks = ho.xticks;
  f.text = std::string(r.text);
  return f;
}

Figure overview(const std::shared_ptr<const Model>& model, const std::string& sentence,
                const TranslationViewOptions& o) {
  const Model& m = *model;
  need_transformer(m, "the overview");
  const int L = m.num_layers(), NH = m.num_heads();
  const render::detail::FigureMetrics fm = render::detail::figure_metrics(o.dpi);
  struct Part {
    MapKind kind;
    const char* name;
  };
  const Part parts[3] = {{MapKind::Encoder, "Encoder self-attention"},
                         {MapKind::DecoderSelf, "Decoder self-attention"},
                         {MapKind::Cross, "Encoder-decoder attention"}};
  std::vector<Figure> blocks;
  Figure f;
  f.name = "overview";
  f.rows = 3 * L;
  f.cols = NH;
  std::string translation;
  for (const Part& p : parts) {
    MapOptions mo;
    mo.kind = p.kind;
    mo.padding = o.padding;
    mo.d2l_compat = o.d2l_compat;
    mo.dpi = o.dpi;
    const Figure maps = translation_map(model, sentence, mo);
    translation = maps.text;
    render::HeatmapOptions ho;
    ho.title = p.name;
    ho.xlabel = ho.ylabel = "";
    ho.ticks = false;
    for (int h = 0; h < NH; ++h) ho.titles.push_back("Head " + std::to_string(h + 1));
    for (int l = 0; l < L; ++l) ho.row_labels.push_back("Layer " + std::to_string(l + 1));
    ho.cmap = o.cmap;
    ho.dpi = o.dpi;
    ho.vmin = 0.f;
    ho.vmax = 1.f;
    const float cell = 0.11f;  // thumbnails: about 11 px a cell at 100 dpi
    ho.fig_width_in = 1.6f + NH * (0.25f + std::max(maps.keys * cell, 0.6f));
    ho.fig_height_in = 0.9f + L * (0.2f + std::max(maps.queries * cell, 0.6f));
    blocks.push_back(detail::heatmap(p.name, p.name, maps.matrices, L, NH, maps.queries, maps.keys, ho));
    f.matrices.insert(f.matrices.end(), maps.matrices.begin(), maps.matrices.end());
  }
  const std::string title = title_of(m, o, "every layer and head", sentence, translation);
  const int title_h = fm.pad + fm.lh + fm.tgap;
  int width = std::min(text_size(title, fm.font_px).w + 2 * fm.pad, 10 * o.dpi), height = title_h;
  std::vector<int> ys;
  for (const Figure& b : blocks) {
    ys.push_back(height);
    width = std::max(width, b.image.width);
    height += b.image.height;
  }
  f.image = Image(width, height);
  f.layout.width = width;
  f.layout.height = height;
  f.layout.title_text = title;
  f.caption = std::string(m.kind_name()) + " attention for '" + sentence + "' => '" + translation +
              "': every layer (rows) and head (columns) of the encoder's self-attention, the decoder's "
              "self-attention and the encoder-decoder attention, each on the scale 0 to 1";
  f.text = translation;
  std::vector<std::function<void(Canvas&)>> paints;
  for (const Figure& b : blocks) paints.push_back(b.paint);
  f.paint = [paints, ys, title, width, fm](Canvas& cv) {
    const TextSize ts = text_size(title, fm.font_px);
    cv.text(std::max(fm.pad, (width - ts.w) / 2), fm.pad, title, kBlack, fm.font_px);
    for (size_t i = 0; i < paints.size(); ++i) {
      cv.push_offset(0, ys[i]);
      paints[i](cv);
      cv.pop_offset();
    }
  };
  RasterCanvas rc(f.image);
  f.paint(rc);
  return f;
}

}  // namespace attnlite::figures
