// The attention maps of trained sequence models: a translation's three attention kinds and a
// language model's causal self-attention (the Vision Transformer's maps: vit_maps.cpp).
#include "attnlite/figures/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/translate.h"
#include "render/draw.h"
#include "figures/figure_parts.h"

namespace attnlite::figures {
using namespace attnlite::render;  // figures are drawn with the renderer

using detail::heatmap;

std::vector<std::string> detail::src_labels(const Model& m, const Translation& r, int S) {
  std::vector<std::string> l;
  for (int k = 0; k < S; ++k) l.push_back(m.src_vocab().token(r.src_ids[k]));
  return l;
}
std::vector<std::string> detail::out_labels(const Model& m, const Translation& r) {
  std::vector<std::string> l;
  for (int t = 0; t < r.steps; ++t)
    l.push_back(t < r.num_tokens ? m.tgt_vocab().token(r.tokens[t]) : "<eos>");
  return l;
}
std::vector<std::string> detail::in_labels(const Model& m, const Translation& r) {
  std::vector<std::string> l{"<bos>"};
  for (int t = 1; t < r.steps; ++t) l.push_back(m.tgt_vocab().token(r.tokens[t - 1]));
  return l;
}

using detail::in_labels;
using detail::out_labels;
using detail::src_labels;

MapKind map_kind_from_name(const std::string& n) {
  if (n == "enc" || n == "encoder") return MapKind::Encoder;
  if (n == "dec-self" || n == "decoder-self") return MapKind::DecoderSelf;
  if (n == "cross") return MapKind::Cross;
  throw Error("unknown attention kind '" + n + "' (expected enc, dec-self or cross)");
}

Figure translation_map(const std::shared_ptr<const Model>& model, const std::string& sentence,
                       const MapOptions& o) {
  const Model& m = *model;
  if (!m.has_self_attention() && o.kind != MapKind::Cross)
    throw Error("this model (" + m.description() + ") has only encoder-decoder (cross) attention");
  const bool tr = m.layered_attention();
  const int L = tr ? m.num_layers() : 1, NH = tr ? m.num_heads() : 1;
  if (o.layer < -1 || o.layer >= L)
    throw Error("layer " + std::to_string(o.layer + 1) + " is out of range: the model has " + std::to_string(L));
  if (o.head < -1 || o.head >= NH)
    throw Error("head " + std::to_string(o.head + 1) + " is out of range: the model has " + std::to_string(NH));
  Limits lim;
  lim.max_beam = std::max(1, o.beam_size);
  Translator t(model, lim);
  DecodeOptions d;
  d.d2l_compat = o.d2l_compat;
  d.beam_size = o.beam_size;
  d.length_penalty = o.length_penalty;
  const Translation& r = t.translate(sentence, d);
  std::vector<int> layers, heads;
  for (int l = 0; l < L; ++l)
    if (o.layer < 0 || o.layer == l) layers.push_back(l);
  for (int h = 0; h < NH; ++h)
    if (o.head < 0 || o.head == h) heads.push_back(h);
  // The source's positions drawn: all r.S (the book's padded num_steps), or up to its <eos>.
  const int S = o.padding ? r.S : std::max(1, std::min(r.S, r.src_valid));
  render::TranslationFigure tf;
  tf.kind = o.kind;
  tf.transformer = tr;
  tf.model_name = o.model_name.empty() ? std::string(m.kind_name()) : o.model_name;
  tf.sentence = sentence;
  tf.translation = std::string(r.text);
  tf.layers = layers;
  tf.heads = heads;
  std::vector<std::string> xt, yt;
  switch (o.kind) {
    case MapKind::Encoder: tf.queries = tf.keys = S; xt = yt = src_labels(m, r, S); break;
    case MapKind::DecoderSelf: tf.queries = tf.keys = r.steps; xt = in_labels(m, r); yt = out_labels(m, r); break;
    case MapKind::Cross: tf.queries = r.steps; tf.keys = S; xt = src_labels(m, r, S); yt = out_labels(m, r); break;
  }
  const int Q = tf.queries, K = tf.keys;
  const int rows = (int)layers.size(), cols = (int)heads.size();
  std::vector<float> data((size_t)rows * cols * Q * K);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      for (int q = 0; q < Q; ++q)
        for (int k = 0; k < K; ++k) {
          const int l = layers[i], h = heads[j];
          float v = 0.f;
          if (o.kind == MapKind::Encoder) v = r.enc_self_at(l, h, q, k);
          else if (o.kind == MapKind::DecoderSelf) v = r.dec_self_at(l, q, h, k);
          else v = tr ? r.cross_at(l, q, h, k) : r.cross_at(0, q, 0, k);
          data[(((size_t)i * cols + j) * Q + q) * K + k] = v;
        }
  if (o.tokens) {
    tf.xticks = xt;
    tf.yticks = yt;
  }
  tf.cmap = o.cmap;
  tf.annotate = o.annotate;
  tf.dpi = o.dpi;
  const render::HeatmapOptions ho = render::translation_figure_options(tf);
  const char* what = render::translation_attention_name(o.kind);
  const std::string caption = std::string(m.kind_name()) + " " + what + " for '" + sentence +
                              "' => '" + std::string(r.text) + "'";
  Figure f = heatmap("translation", caption, std::move(data), rows, cols, Q, K, ho);
  f.xticks = std::move(xt);
  f.yticks = std::move(yt);
  f.text = std::string(r.text);
  return f;
}

namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string decoding_text(const GenerateOptions& g) {
  if (!g.sample) return "greedy";
  std::string s = "sampled: temperature " + number_text(g.temperature);
  if (g.top_k > 0) s += ", top-k " + std::to_string(g.top_k);
  if (g.top_p < 1.f) s += ", top-p " + number_text(g.top_p);
  return s + ", seed " + std::to_string(g.seed);
}

}  // namespace

Figure generation_map(const std::shared_ptr<const Model>& model, const std::string& prompt,
                      const GenerationMapOptions& o) {
  if (!model) throw Error("generation_map needs a model");
  if (model->task() != Task::Generate)
    throw Error(std::string("this is a ") + model->kind_name() +
                " model: generation maps need a language model (kind lm, e.g. lm-fra); a "
                "translation's maps are translation_map (`attnlite heatmap translate`)");
  const Model& m = *model;
  const int L = m.num_layers(), NH = m.num_heads();
  if (o.layer < -1 || o.layer >= L)
    throw Error("layer " + std::to_string(o.layer + 1) + " is out of range: the model has " + std::to_string(L));
  if (o.head < -1 || o.head >= NH)
    throw Error("head " + std::to_string(o.head + 1) + " is out of range: the model has " + std::to_string(NH));
  Generator gen(model);
  GenerateOptions go = o.generate;
  go.attention = true;
  const Generation& g = gen.generate(prompt, go);
  const int P = g.positions;
  const Vocab& v = m.tgt_vocab();
  std::vector<std::string> labels;
  for (int i = 0; i < P; ++i) labels.push_back(v.token(g.tokens[i]));

  std::vector<int> layers, heads;
  for (int l = 0; l < L; ++l)
    if (o.layer < 0 || o.layer == l) layers.push_back(l);
  for (int h = 0; h < NH; ++h)
    if (o.head < 0 || o.head == h) heads.push_back(h);
  const int rows = (int)layers.size(), cols = (int)heads.size();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> data((size_t)rows * cols * P * P);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      for (int q = 0; q < P; ++q)
        for (int k = 0; k < P; ++k)
          data[(((size_t)i * cols + j) * P + q) * P + k] = k > q ? nan : g.attn_at(layers[i], heads[j], q, k);

  render::HeatmapOptions ho;
  // Generated tokens (fed back) are labelled in blue, the prompt and <bos> in black.
  const Rgb kGenerated{31, 119, 180};
  const bool fed_back = P - 1 > g.num_prompt;  // some generated token was read
  ho.xlabel = fed_back ? "Keys (blue: generated)" : "Keys";
  ho.ylabel = "Queries";
  if (o.tokens) {
    ho.xticks = ho.yticks = labels;
    for (int i = 0; i < P; ++i) ho.xtick_colors.push_back(i > g.num_prompt ? kGenerated : render::kBlack);
    ho.ytick_colors = ho.xtick_colors;
  } else {
    ho.xlabel = "Key positions";
    ho.ylabel = "Query positions";
  }
  const bool grid = rows * cols > 1;
  if (grid) {
    for (int h : heads) ho.titles.push_back("Head " + std::to_string(h + 1));
    for (int l : layers) ho.row_labels.push_back("Layer " + std::to_string(l + 1));
  } else {
    ho.titles.push_back("Layer " + std::to_string(layers[0] + 1) + ", head " + std::to_string(heads[0] + 1));
  }
  // Cells a little smaller in grids, so that 4 heads of 32 tokens stay a readable size; panels
  // at least as wide as the x label and as tall as the y label centred on them.
  // With annotations, room for "0.00" and a margin in every cell.
  const float cell = o.annotate ? 0.34f : o.tokens ? (grid ? 0.17f : 0.22f) : (grid ? 0.12f : 0.16f);
  const render::detail::FigureMetrics fm = render::detail::figure_metrics(o.dpi);
  const int s = fm.s;
  const float fpx = fm.font_px;
  const float dpi = (float)o.dpi;
  float ylabel_w = 0.f;
  for (const auto& l : ho.row_labels) ylabel_w = std::max(ylabel_w, (float)render::text_size(l, fpx).w);
  if (ho.row_labels.empty()) ylabel_w = (float)render::text_size(ho.ylabel, fpx).w;
  const float panel_w = std::max(P * cell, (render::text_size(ho.xlabel, fpx).w + 8.f * s) / dpi);
  const float panel_h = std::max(P * cell, (ylabel_w + 8.f * s) / dpi);
  const float side = std::max(panel_w, panel_h);  // square panels: P x P cells
  ho.fig_width_in = std::max(2.6f, 1.6f + cols * (0.4f + side));
  ho.fig_height_in = std::max(2.4f, 1.2f + rows * (0.5f + side));
  ho.cmap = o.cmap;
  ho.annotate = o.annotate;
  ho.dpi = o.dpi;
  ho.vmin = 0.f;
  ho.vmax = 1.f;
  ho.masked_color = o.masked_color;
  ho.masked_hatch = o.masked_hatch;
  ho.masked_label = "masked";

  const std::string read = std::string(g.text);
  ho.title = (o.model_name.empty() ? std::string(m.kind_name()) : o.model_name) + ", causal self-attention (" +
             decoding_text(go) + "): " + prompt + " \u2192 " + read;
  std::string caption = std::string(m.kind_name()) + " causal self-attention for '" + prompt + "' => '" + read +
                        "' (" + decoding_text(go) + "): " + std::to_string(P) + " positions read (<bos>, " +
                        std::to_string(g.num_prompt) + " prompt word" + (g.num_prompt == 1 ? "" : "s") + ", " +
                        std::to_string(P - 1 - g.num_prompt) + " generated token" +
                        (P - 1 - g.num_prompt == 1 ? "" : "s") + " fed back)";
  if (g.num_tokens > P) caption += "; the last token chosen, '" + v.token(g.tokens[g.num_tokens - 1]) + "', was never read";
  caption += ". The cells above the diagonal (the 'masked' swatch under the colorbar) are masked: a "
             "query cannot see later keys, so they hold no weight at all, not a weight of 0.";
  Figure f = heatmap("generation", caption, std::move(data), rows, cols, P, P, ho);
  f.xticks = f.yticks = labels;
  f.text = read;
  return f;
}

}  // namespace attnlite::figures
