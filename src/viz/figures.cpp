// The chapter's figures, with the book's captions, labels and figure sizes.
#include "attnlite/viz/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "attnlite/attention/additive.h"
#include "attnlite/attention/dot_product.h"
#include "attnlite/attention/multi_head.h"
#include "attnlite/attention/nadaraya_watson.h"
#include "attnlite/attention/positional_encoding.h"
#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/translate.h"
#include "viz/draw.h"

namespace attnlite::viz::figures {

namespace {

// std::mt19937 is specified bit for bit; the float conversions below are ours, so every
// platform draws the same data.
struct Rng {
  std::mt19937 g;
  explicit Rng(uint32_t seed) : g(seed) {}
  float uniform() { return (float)(g() >> 8) * (1.0f / 16777216.0f); }
  float normal(float mean, float sd) {
    const float u1 = std::max(uniform(), 1e-7f), u2 = uniform();
    return mean + sd * std::sqrt(-2.f * std::log(u1)) * std::cos(6.28318530718f * u2);
  }
};

Figure heatmap(const std::string& name, const std::string& caption, std::vector<float> data, int rows,
               int cols, int q, int k, const viz::HeatmapOptions& o) {
  Figure f;
  f.name = name;
  f.caption = caption;
  f.is_heatmap = true;
  f.rows = rows; f.cols = cols; f.queries = q; f.keys = k;
  f.matrices = std::move(data);
  f.layout = viz::heatmap_layout(rows, cols, q, k, o, f.matrices.data());
  f.image = viz::render_heatmaps(f.matrices.data(), rows, cols, q, k, o);
  return f;
}

Figure plot(const std::string& name, const std::string& caption, const std::vector<viz::Series>& s,
            const viz::PlotOptions& o) {
  Figure f;
  f.name = name;
  f.caption = caption;
  f.image = viz::render_plot(s, o);
  return f;
}

viz::HeatmapOptions hopts(const Context& c, const char* xl = "Keys", const char* yl = "Queries",
                          float w = 2.5f, float h = 2.5f) {
  viz::HeatmapOptions o;
  o.xlabel = xl;
  o.ylabel = yl;
  o.fig_width_in = w;
  o.fig_height_in = h;
  o.dpi = c.dpi;
  return o;
}

std::vector<std::string> heads_titles(int n) {
  std::vector<std::string> t;
  for (int i = 1; i <= n; ++i) t.push_back("Head " + std::to_string(i));
  return t;
}

// ---- 10.2 Nadaraya-Watson --------------------------------------------------
struct NWData {
  std::vector<float> x_train, y_train, x_test, y_truth;
};
float nw_f(float x) { return 2.f * std::sin(x) + std::pow(x, 0.8f); }
NWData nw_data(uint32_t seed) {
  Rng r(seed + 1);
  NWData d;
  for (int i = 0; i < 50; ++i) d.x_train.push_back(r.uniform() * 5.f);
  std::sort(d.x_train.begin(), d.x_train.end());
  for (float x : d.x_train) d.y_train.push_back(nw_f(x) + r.normal(0.f, 0.5f));
  for (int i = 0; i < 50; ++i) d.x_test.push_back(0.1f * (float)i);
  for (float x : d.x_test) d.y_truth.push_back(nw_f(x));
  return d;
}
Figure nw_plot(const std::string& name, const std::string& caption, const NWData& d,
               const std::vector<float>& y_hat, const Context& c) {
  // plot_kernel_reg: Truth '-', Pred 'm--', training points 'o' with alpha 0.5
  std::vector<viz::Series> s(3);
  s[0] = {d.x_test, d.y_truth, "Truth", viz::Series::Line, std::nullopt};
  s[1] = {d.x_test, y_hat, "Pred", viz::Series::Dashed, std::nullopt};
  s[2] = {d.x_train, d.y_train, "", viz::Series::Points, std::nullopt};
  viz::PlotOptions o;
  o.xlabel = "x"; o.ylabel = "y";
  o.xmin = 0.f; o.xmax = 5.f; o.ymin = -1.f; o.ymax = 5.f;
  o.dpi = c.dpi;
  return plot(name, caption, s, o);
}
// The parametric model's w, trained the book's way: 5 epochs of SGD, lr 0.5, on
// leave-one-out keys and values; returns the loss per epoch too.
float nw_train(const NWData& d, uint32_t seed, std::vector<float>* losses) {
  std::vector<float> keys(50 * 49), vals(50 * 49), scratch(50 * 49);
  for (int i = 0; i < 50; ++i)
    for (int j = 0, n = 0; j < 50; ++j)
      if (j != i) { keys[i * 49 + n] = d.x_train[j]; vals[i * 49 + n] = d.y_train[j]; ++n; }
  Rng r(seed + 2);
  float w = r.uniform();  // torch.rand((1,))
  for (int e = 0; e < 5; ++e) {
    float g = 0.f;
    losses->push_back(nadaraya_watson_loss_grad(&g, scratch.data(), d.x_train.data(), 50, keys.data(),
                                                vals.data(), 49, 49, w, d.y_train.data()));
    w -= 0.5f * g;
  }
  return w;
}

// ---- 10.3 scoring functions ------------------------------------------------
// nn.Linear's default init: U(-1/sqrt(in), 1/sqrt(in)).
std::vector<float> linear_init(Rng& r, int out, int in, float gain = 1.f) {
  std::vector<float> w((size_t)out * in);
  const float a = gain / std::sqrt((float)in);
  for (auto& v : w) v = (2.f * r.uniform() - 1.f) * a;
  return w;
}

Figure scoring(const std::string& name, bool additive, const Context& c) {
  Rng r(c.seed + 3);
  const int qd = additive ? 20 : 2;
  std::vector<float> q(2 * qd), k(2 * 10 * 2, 1.f), v(2 * 10 * 4), out(8), attn(20);
  for (auto& x : q) x = r.normal(0.f, 1.f);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 40; ++i) v[b * 40 + i] = (float)i;  // arange(40).reshape(1, 10, 4).repeat(2, 1, 1)
  const int vl[2] = {2, 6};
  if (additive) {
    auto wk = linear_init(r, 8, 2), wq = linear_init(r, 8, 20), wv = linear_init(r, 1, 8);
    AdditiveAttentionW w{{wk.data(), nullptr, 8, 2}, {wq.data(), nullptr, 8, 20}, {wv.data(), nullptr, 1, 8}};
    std::vector<float> scratch(4096);
    Arena a(scratch.data(), scratch.size() * sizeof(float));
    additive_attention(out.data(), attn.data(), w, q.data(), k.data(), v.data(), 2, 1, 10, 4,
                       ValidLens::per_batch(vl), {ops::cpu(), a});
  } else {
    dot_product_attention(out.data(), attn.data(), q.data(), k.data(), v.data(), 2, 1, 10, 2, 4,
                          ValidLens::per_batch(vl));
  }
  return heatmap(name,
                 std::string(additive ? "AdditiveAttention" : "DotProductAttention") +
                     " weights for 2 queries over 10 identical keys, valid lengths 2 and 6",
                 attn, 1, 1, 2, 10, hopts(c));
}

// ---- 10.5 multi-head attention ---------------------------------------------
Figure multi_head(const Context& c) {
  Rng r(c.seed + 4);
  const int T = 8, H = 24, NH = 4;
  std::vector<float> X(T * H), P(T * H);
  positional_encoding_table(P.data(), T, H);
  for (int i = 0; i < T * H; ++i) X[i] = 2.f * P[i] + r.normal(0.f, 0.5f);
  auto wq = linear_init(r, H, H, 3.f), wk = linear_init(r, H, H, 3.f), wv = linear_init(r, H, H),
       wo = linear_init(r, H, H);
  MultiHeadAttentionW w{{wq.data(), nullptr, H, H}, {wk.data(), nullptr, H, H},
                        {wv.data(), nullptr, H, H}, {wo.data(), nullptr, H, H}, NH};
  std::vector<float> out(T * H), attn(NH * T * T), scratch(1 << 14);
  Arena a(scratch.data(), scratch.size() * sizeof(float));
  multi_head_attention(out.data(), AttnOut::dense(attn.data(), NH, T, T), w, X.data(), X.data(),
                       X.data(), 1, T, T, ValidLens::none(), {ops::cpu(), a});
  auto o = hopts(c, "Key positions", "Query positions", 7.f, 2.2f);
  o.titles = heads_titles(NH);
  return heatmap("05-multi-head-attention",
                 "Self-attention of MultiHeadAttention(24, 24, 24, 24, 4) on 8 positions: each head "
                 "attends differently",
                 attn, 1, NH, T, T, o);
}

// ---- 10.6 positional encoding ----------------------------------------------
Figure pe(const Context& c, bool as_heatmap) {
  const int T = 60, H = 32;
  std::vector<float> P(T * H);
  positional_encoding_table(P.data(), T, H);
  if (as_heatmap) {
    auto o = hopts(c, "Column (encoding dimension)", "Row (position)", 3.5f, 4.f);
    o.cmap = viz::Colormap::Blues;
    return heatmap("06-positional-encoding-heatmap",
                   "The sinusoidal positional encoding P (60 positions x 32 dimensions)", P, 1, 1, T, H, o);
  }
  std::vector<viz::Series> s;
  const viz::Series::Style styles[4] = {viz::Series::Line, viz::Series::Dashed, viz::Series::DashDot,
                                        viz::Series::Dotted};
  for (int col = 6; col < 10; ++col) {
    viz::Series x;
    for (int t = 0; t < T; ++t) {
      x.x.push_back((float)t);
      x.y.push_back(P[t * H + col]);
    }
    x.label = "Col " + std::to_string(col);
    x.style = styles[col - 6];
    s.push_back(x);
  }
  viz::PlotOptions o;
  o.xlabel = "Row (position)";
  o.fig_width_in = 6.f;
  o.fig_height_in = 2.5f;
  o.dpi = c.dpi;
  return plot("06-positional-encoding-columns", "Columns 6 to 9 of the positional encoding", s, o);
}

std::vector<std::string> src_labels(const Model& m, const Translation& r) {
  std::vector<std::string> l;
  for (int k = 0; k < r.S; ++k) l.push_back(m.src_vocab().token(r.src_ids[k]));
  return l;
}
// Query row t is the step that produced token t (or <eos>).
std::vector<std::string> out_labels(const Model& m, const Translation& r) {
  std::vector<std::string> l;
  for (int t = 0; t < r.steps; ++t)
    l.push_back(t < r.num_tokens ? m.tgt_vocab().token(r.tokens[t]) : "<eos>");
  return l;
}
// Key k of decoder self-attention is the decoder input at step k: <bos>, then the outputs.
std::vector<std::string> in_labels(const Model& m, const Translation& r) {
  std::vector<std::string> l{"<bos>"};
  for (int t = 1; t < r.steps; ++t) l.push_back(m.tgt_vocab().token(r.tokens[t - 1]));
  return l;
}

}  // namespace

MapKind map_kind_from_name(const std::string& n) {
  if (n == "enc" || n == "encoder") return MapKind::Encoder;
  if (n == "dec-self" || n == "decoder-self") return MapKind::DecoderSelf;
  if (n == "cross") return MapKind::Cross;
  throw Error("unknown attention kind '" + n + "' (expected enc, dec-self or cross)");
}

Figure translation_map(const std::shared_ptr<const Model>& model, const std::string& sentence,
                       const MapOptions& o) {
  const Model& m = *model;
  const bool tr = m.kind() == ModelKind::Transformer;
  if (!tr && o.kind != MapKind::Cross)
    throw Error("the Bahdanau model has only encoder-decoder (cross) attention");
  const int L = tr ? m.num_layers() : 1, NH = tr ? m.num_heads() : 1;
  if (o.layer < -1 || o.layer >= L)
    throw Error("layer " + std::to_string(o.layer + 1) + " is out of range: the model has " + std::to_string(L));
  if (o.head < -1 || o.head >= NH)
    throw Error("head " + std::to_string(o.head + 1) + " is out of range: the model has " + std::to_string(NH));
  Translator t(model);
  DecodeOptions d;
  d.d2l_compat = o.d2l_compat;
  const Translation& r = t.translate(sentence, d);
  std::vector<int> layers, heads;
  for (int l = 0; l < L; ++l)
    if (o.layer < 0 || o.layer == l) layers.push_back(l);
  for (int h = 0; h < NH; ++h)
    if (o.head < 0 || o.head == h) heads.push_back(h);
  int Q = 0, K = 0;
  std::vector<std::string> xt, yt;
  const char* what = "";
  switch (o.kind) {
    case MapKind::Encoder: Q = K = r.S; xt = yt = src_labels(m, r); what = "encoder self-attention"; break;
    case MapKind::DecoderSelf: Q = K = r.steps; xt = in_labels(m, r); yt = out_labels(m, r); what = "decoder self-attention"; break;
    case MapKind::Cross: Q = r.steps; K = r.S; xt = src_labels(m, r); yt = out_labels(m, r); what = "encoder-decoder attention"; break;
  }
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
  viz::HeatmapOptions ho;
  ho.xlabel = "Key positions";
  ho.ylabel = "Query positions";
  if (o.tokens) { ho.xticks = xt; ho.yticks = yt; }
  if (tr && cols > 1) {
    for (int h : heads) ho.titles.push_back("Head " + std::to_string(h + 1));
  } else if (tr) {
    ho.titles.push_back("Layer " + std::to_string(layers[0] + 1) + ", head " + std::to_string(heads[0] + 1));
  }
  const float cell = o.tokens ? 0.22f : 0.16f;
  ho.fig_width_in = std::max(2.6f, 1.4f + cols * (0.4f + K * cell));
  ho.fig_height_in = std::max(2.4f, 1.2f + rows * (0.5f + Q * cell));
  ho.cmap = o.cmap;
  ho.annotate = o.annotate;
  ho.dpi = o.dpi;
  ho.vmin = 0.f;  // masked positions are exactly the zero colour
  const std::string caption = std::string(model_kind_name(m.kind())) + " " + what + " for '" + sentence +
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
  if (model->kind() != ModelKind::LM)
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

  viz::HeatmapOptions ho;
  // Generated tokens (fed back) are labelled in blue, the prompt and <bos> in black.
  const Rgb kGenerated{31, 119, 180};
  const bool fed_back = P - 1 > g.num_prompt;  // some generated token was read
  ho.xlabel = fed_back ? "Keys (blue: generated)" : "Keys";
  ho.ylabel = "Queries";
  if (o.tokens) {
    ho.xticks = ho.yticks = labels;
    for (int i = 0; i < P; ++i) ho.xtick_colors.push_back(i > g.num_prompt ? kGenerated : viz::kBlack);
    ho.ytick_colors = ho.xtick_colors;
  } else {
    ho.xlabel = "Key positions";
    ho.ylabel = "Query positions";
  }
  const bool grid = rows * cols > 1;
  if (grid) {
    for (int h : heads) ho.titles.push_back("Head " + std::to_string(h + 1));
    for (int l : layers) ho.row_labels.push_back("Layer " + std::to_string(l + 1) + " " + (o.tokens ? "queries" : "query positions"));
  } else {
    ho.titles.push_back("Layer " + std::to_string(layers[0] + 1) + ", head " + std::to_string(heads[0] + 1));
  }
  // Cells a little smaller in grids, so that 4 heads of 32 tokens stay a readable size; panels
  // at least as wide as the x label and as tall as the y label centred on them.
  // With annotations, room for "0.00" and a margin in every cell.
  const float cell = o.annotate ? 0.34f : o.tokens ? (grid ? 0.17f : 0.22f) : (grid ? 0.12f : 0.16f);
  const int s = viz::detail::text_scale(o.dpi);
  const float dpi = (float)o.dpi;
  float ylabel_w = 0.f;
  for (const auto& l : ho.row_labels) ylabel_w = std::max(ylabel_w, (float)viz::text_size(l, s).w);
  if (ho.row_labels.empty()) ylabel_w = (float)viz::text_size(ho.ylabel, s).w;
  const float panel_w = std::max(P * cell, (viz::text_size(ho.xlabel, s).w + 8.f * s) / dpi);
  const float panel_h = std::max(P * cell, (ylabel_w + 8.f * s) / dpi);
  const float side = std::max(panel_w, panel_h);  // square panels: P x P cells
  ho.fig_width_in = std::max(2.6f, 1.6f + cols * (0.4f + side));
  ho.fig_height_in = std::max(2.4f, 1.2f + rows * (0.5f + side));
  ho.colorbar_max_ticks = 11;
  ho.cmap = o.cmap;
  ho.annotate = o.annotate;
  ho.dpi = o.dpi;
  ho.vmin = 0.f;
  ho.vmax = 1.f;
  ho.masked_color = o.masked_color;
  ho.masked_hatch = o.masked_hatch;
  ho.masked_label = "masked";

  const std::string read = std::string(g.text);
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

Figure vit_map(const Classifier& cls, int i, const float* input, const VitMapOptions& o) {
  const Model& m = cls.model();
  if (m.kind() != ModelKind::ViT)
    throw Error(std::string("this is a ") + m.kind_name() + " model: image attention needs a vision transformer (kind vit)");
  if (!input) throw Error("vit_map needs the input image");
  const Classification& r = cls.result(i);
  if (!r.attn) throw Error("vit_map: the classification recorded no attention (classify(..., attention = true))");
  const int L = r.layers, NH = r.heads, T = r.tokens, N = T - 1;
  const int S = cls.image_size(), g = (int)std::lround(std::sqrt((double)N));
  if (g * g != N || g <= 0 || S % g != 0) throw Error("vit_map: the patches do not tile the image");
  const int P = S / g;  // patch side in pixels
  if (o.layer < -1 || o.layer >= L)
    throw Error("layer " + std::to_string(o.layer + 1) + " is out of range: the model has " + std::to_string(L));
  if (o.head != kVitRollout && (o.head < -1 || o.head >= NH))
    throw Error("head " + std::to_string(o.head + 1) + " is out of range: the model has " + std::to_string(NH));

  // Rollout through each layer: R_l = Â_l · R_(l-1), Â = rows of (mean of the heads + I)
  // normalised (float64, as Classifier::rollout).
  std::vector<double> R((size_t)T * T, 0.0), A((size_t)T * T), tmp((size_t)T * T);
  std::vector<std::vector<float>> rollouts;
  for (int q = 0; q < T; ++q) R[(size_t)q * T + q] = 1.0;
  for (int l = 0; l < L; ++l) {
    for (int q = 0; q < T; ++q) {
      double sum = 0.0;
      for (int k = 0; k < T; ++k) {
        double a = q == k ? 1.0 : 0.0;
        for (int h = 0; h < NH; ++h) a += (double)r.attn_at(l, h, q, k) / NH;
        A[(size_t)q * T + k] = a;
        sum += a;
      }
      for (int k = 0; k < T; ++k) A[(size_t)q * T + k] /= sum;
    }
    for (int q = 0; q < T; ++q)
      for (int k = 0; k < T; ++k) {
        double v = 0.0;
        for (int j = 0; j < T; ++j) v += A[(size_t)q * T + j] * R[(size_t)j * T + k];
        tmp[(size_t)q * T + k] = v;
      }
    R.swap(tmp);
    rollouts.emplace_back(R.begin(), R.end());
  }

  std::vector<int> layers, heads;  // head -1 in `heads`: the rollout column
  for (int l = 0; l < L; ++l)
    if (o.layer < 0 || o.layer == l) layers.push_back(l);
  if (o.head == kVitRollout) {
    heads.push_back(-1);
  } else {
    for (int h = 0; h < NH; ++h)
      if (o.head < 0 || o.head == h) heads.push_back(h);
    if (o.head < 0 && o.rollout) heads.push_back(-1);
  }
  const bool overlay = o.view == VitView::Overlay;
  const int rows = (int)layers.size(), cols = (int)heads.size();
  const int Q = overlay ? S : T, K = Q;
  std::vector<float> data((size_t)rows * cols * Q * K);
  for (int a = 0; a < rows; ++a)
    for (int b = 0; b < cols; ++b) {
      const int l = layers[(size_t)a], h = heads[(size_t)b];
      float* d = data.data() + ((size_t)a * cols + b) * Q * K;
      const std::vector<float>& ro = rollouts[(size_t)l];
      if (!overlay) {
        for (int q = 0; q < T; ++q)
          for (int k = 0; k < T; ++k) d[q * T + k] = h < 0 ? ro[(size_t)q * T + k] : r.attn_at(l, h, q, k);
        continue;
      }
      // Row 0 over the patches; the rollout's renormalised over them.
      std::vector<float> w((size_t)N);
      double sum = 0.0;
      for (int n = 0; n < N; ++n) sum += w[(size_t)n] = h < 0 ? ro[(size_t)n + 1] : r.attn_at(l, h, 0, n + 1);
      if (h < 0 && sum > 0.0)
        for (auto& v : w) v = (float)(v / sum);
      for (int y = 0; y < S; ++y)
        for (int x = 0; x < S; ++x) d[y * S + x] = w[(size_t)((y / P) * g + x / P)];
    }

  std::vector<std::string> labels;
  if (!overlay) {
    labels.push_back("CLS");
    for (int n = 1; n <= N; ++n) labels.push_back(std::to_string(n));
  }
  const int s = viz::detail::text_scale(o.dpi);
  const float dpi = (float)o.dpi;
  const bool grid = rows * cols > 1;
  const float cell = overlay ? (grid ? 0.15f : 0.24f) : (grid ? 0.13f : 0.2f);
  const auto col_title = [&](int h) { return h < 0 ? std::string("Rollout") : "Head " + std::to_string(h + 1); };
  // The options of a figure of columns [c0, c1) of `heads`; with_ylabel: the axis / row labels.
  const auto options = [&](int c0, int c1, bool with_ylabel) {
    viz::HeatmapOptions ho;
    ho.xlabel = overlay ? "Pixel columns" : "Keys";
    ho.ylabel = !with_ylabel ? "" : overlay ? "Pixel rows" : "Queries";
    ho.xticks = ho.yticks = labels;
    if (grid) {
      for (int c = c0; c < c1; ++c) ho.titles.push_back(col_title(heads[(size_t)c]));
      if (with_ylabel)
        for (int l : layers) ho.row_labels.push_back("Layer " + std::to_string(l + 1));
    } else if (heads[0] < 0) {
      ho.titles.push_back("Rollout, layers 1-" + std::to_string(layers[0] + 1));
    } else {
      ho.titles.push_back("Layer " + std::to_string(layers[0] + 1) + ", head " + std::to_string(heads[0] + 1));
    }
    float ylabel_w = 0.f;
    for (const auto& l : ho.row_labels) ylabel_w = std::max(ylabel_w, (float)viz::text_size(l, s).w);
    if (ho.row_labels.empty()) ylabel_w = (float)viz::text_size(ho.ylabel, s).w;
    float title_w = 0.f;
    for (const auto& t : ho.titles) title_w = std::max(title_w, (float)viz::text_size(t, s).w);
    const float side = std::max({Q * cell, (viz::text_size(ho.xlabel, s).w + 8.f * s) / dpi,
                                 (ylabel_w + 8.f * s) / dpi, (title_w + 8.f * s) / dpi});
    const int n = c1 - c0;
    ho.fig_width_in = std::max(2.6f, (with_ylabel ? 1.6f : 1.3f) + n * (0.4f + side));
    ho.fig_height_in = std::max(2.4f, 1.2f + rows * (0.5f + side));
    ho.colorbar_max_ticks = 11;
    ho.cmap = o.cmap;
    ho.dpi = o.dpi;
    ho.vmin = 0.f;
    ho.vmax = 1.f;
    return ho;
  };
  // Columns [c0, c1) of the data.
  const auto columns = [&](int c0, int c1) {
    std::vector<float> d;
    for (int a = 0; a < rows; ++a)
      d.insert(d.end(), data.begin() + ((size_t)a * cols + c0) * Q * K, data.begin() + ((size_t)a * cols + c1) * Q * K);
    return d;
  };

  const std::string& label = m.labels()[(size_t)r.label];
  char prob[32];
  std::snprintf(prob, sizeof prob, "%.4f", (double)r.prob);
  const std::string pred = "predicted '" + label + "' (probability " + prob + ")";
  const std::string grid_text = std::to_string(g) + "x" + std::to_string(g) + " patches of " + std::to_string(P) + "x" +
                                std::to_string(P) + " pixels";
  const bool with_rollout = std::find(heads.begin(), heads.end(), -1) != heads.end();
  const bool split = overlay && with_rollout && cols > 1;  // heads and rollout on their own scales
  std::string caption;
  if (overlay) {
    caption = "Vision Transformer, " + pred + ": the CLS token's attention over the " + grid_text +
              ", coloured over the " + std::to_string(S) + "x" + std::to_string(S) +
              " input (a grey disc per pixel, its area the pixel's ink; the patch grid in grey); colours from 0 to "
              "the largest weight drawn" + (split ? ", the rollout on a scale of its own." : ".");
    if (with_rollout)
      caption += " Rollout (Abnar & Zuidema, 2020: heads averaged, identity added, rows normalised, multiplied "
                 "through the layers up to the row's): the CLS row over the patches, renormalised to sum to 1 over "
                 "the patches for display (the CLS token's share of itself left out).";
  } else {
    caption = "Vision Transformer, " + pred + ": full self-attention over the " + std::to_string(T) +
              " tokens, CLS then the " + grid_text + " numbered 1-" + std::to_string(N) +
              " row-major from the top left; colours from 0 to the largest weight drawn.";
    if (with_rollout)
      caption += " Rollout (Abnar & Zuidema, 2020: heads averaged, identity added, rows normalised, multiplied "
                 "through the layers up to the row's), drawn as is.";
  }
  const std::string name = overlay ? "vit-overlay" : "vit-maps";
  if (!overlay) {
    viz::HeatmapOptions ho = options(0, cols, true);
    float hi = 0.f;
    for (float v : data) hi = std::max(hi, v);
    ho.vmax = hi > 0.f ? hi : 1.f;
    Figure f = heatmap(name, caption, std::move(data), rows, cols, Q, K, ho);
    f.xticks = f.yticks = labels;
    f.text = label;
    return f;
  }

  // Overlays: the colours, then the input's ink as discs and the patch grid.
  float in_max = 0.f;
  for (int p = 0; p < S * S; ++p) in_max = std::max(in_max, input[p]);
  const int lw = std::max(1, s);
  const auto draw = [&](int c0, int c1, bool with_ylabel, float extra_width_in) {
    viz::HeatmapOptions ho = options(c0, c1, with_ylabel);
    ho.fig_width_in += extra_width_in;
    std::vector<float> d = columns(c0, c1);
    float hi = 0.f;
    for (float v : d) hi = std::max(hi, v);
    ho.vmax = hi > 0.f ? hi : 1.f;
    const int n = c1 - c0;
    Figure f = heatmap(name, caption, std::move(d), rows, n, Q, K, ho);
    const HeatmapLayout& lay = f.layout;
    for (int a = 0; a < rows; ++a)
      for (int b = 0; b < n; ++b) {
        for (int y = 0; y < S; ++y)
          for (int x = 0; x < S; ++x) {
            const float ink = in_max > 0.f ? std::clamp(input[y * S + x] / in_max, 0.f, 1.f) : 0.f;
            const float rad = vit_ink_radius(ink, lay.cell(a, b, y, x));
            if (rad <= 0.f) continue;
            const Rect c = lay.cell(a, b, y, x);
            viz::detail::draw_disc(f.image, {c.x + c.w / 2.f, c.y + c.h / 2.f}, rad, kVitInk, 1.f, kWhite, 0.9f,
                                   std::min((float)lw, rad / 3.f), c);
          }
        const Rect& pan = lay.panels[(size_t)a * n + b];
        for (int j = 1; j < g; ++j) {
          const Rect cx = lay.cell(a, b, 0, j * P), cy = lay.cell(a, b, j * P, 0);
          viz::detail::fill_rect(f.image, {cx.x - lw / 2, pan.y, lw, pan.h}, kVitGrid);
          viz::detail::fill_rect(f.image, {pan.x, cy.y - lw / 2, pan.w, lw}, kVitGrid);
        }
      }
    return f;
  };
  if (!split) {
    Figure f = draw(0, cols, true, 0.f);
    f.text = label;
    return f;
  }
  // Both parts as tall as the whole and wider than they need, so that the height sets their
  // panels (the same size, on the same rows); then each is cropped to its ink and the two are
  // put side by side.
  Figure f = draw(0, cols - 1, true, 1.f + 0.6f * cols);
  Figure ro = draw(cols - 1, cols, false, 1.6f);
  const int pad = viz::detail::figure_metrics(o.dpi).pad;
  const auto ink_columns = [&](const viz::Image& im, int* x0, int* x1) {
    *x0 = im.width;
    *x1 = 0;
    for (int y = 0; y < im.height; ++y)
      for (int x = 0; x < im.width; ++x)
        if (im.rgb(x, y) != viz::kWhite) *x0 = std::min(*x0, x), *x1 = std::max(*x1, x + 1);
  };
  int a0, a1, b0, b1;
  ink_columns(f.image, &a0, &a1);
  ink_columns(ro.image, &b0, &b1);
  a0 = std::max(0, a0 - pad), a1 = std::min(f.image.width, a1 + pad);
  b0 = std::max(0, b0 - pad), b1 = std::min(ro.image.width, b1 + pad);
  viz::Image both((a1 - a0) + (b1 - b0), f.image.height);
  for (int y = 0; y < both.height; ++y) {
    std::copy(f.image.px(a0, y), f.image.px(a1, y), both.px(0, y));
    std::copy(ro.image.px(b0, y), ro.image.px(b1, y), both.px(a1 - a0, y));
  }
  const auto shift = [](viz::HeatmapLayout& lay, int dx, int width) {
    lay.width = width;
    for (auto* boxes : {&lay.panels, &lay.titles, &lay.xlabels, &lay.ylabels})
      for (auto& box : *boxes)
        if (!box.empty()) box.x += dx;
    lay.colorbar.x += dx;
  };
  f.image = std::move(both);
  f.cols = cols;
  f.matrices = std::move(data);
  f.rollout_layout = ro.layout;
  shift(f.layout, -a0, a1 - a0);
  shift(f.rollout_layout, (a1 - a0) - b0, b1 - b0);
  f.text = label;
  return f;
}

float vit_ink_radius(float ink, const Rect& cell) {
  if (!(ink > 0.f)) return 0.f;
  return 0.42f * std::min(cell.w, cell.h) * std::sqrt(std::min(ink, 1.f));
}

std::vector<std::string> names() {
  return {"01-eye",
          "02-nw-average",
          "02-nw-nonparametric",
          "02-nw-nonparametric-attention",
          "02-nw-parametric-loss",
          "02-nw-parametric",
          "02-nw-parametric-attention",
          "03-additive-attention",
          "03-dot-product-attention",
          "04-bahdanau-attention",
          "05-multi-head-attention",
          "06-positional-encoding-heatmap",
          "06-positional-encoding-columns",
          "07-transformer-encoder",
          "07-transformer-decoder-self",
          "07-transformer-cross"};
}

Figure make(const std::string& name, const Context& c) {
  if (name == "01-eye") {
    std::vector<float> eye(100, 0.f);
    for (int i = 0; i < 10; ++i) eye[i * 11] = 1.f;
    return heatmap(name, "torch.eye(10): each query attends only to its own key", eye, 1, 1, 10, 10, hopts(c));
  }
  if (name.rfind("02-nw-", 0) == 0) {
    const NWData d = nw_data(c.seed);
    std::vector<float> y(50), a(50 * 50);
    if (name == "02-nw-average") {
      float mean = 0.f;
      for (float v : d.y_train) mean += v / 50.f;
      return nw_plot(name, "Average pooling: every prediction is the mean of the training outputs", d,
                     std::vector<float>(50, mean), c);
    }
    float w = 1.f;
    std::vector<float> losses;
    const bool param = name.find("-parametric") != std::string::npos;
    if (param) w = nw_train(d, c.seed, &losses);
    if (name == "02-nw-parametric-loss") {
      viz::Series s{{1, 2, 3, 4, 5}, losses, "", viz::Series::Line, std::nullopt};
      viz::PlotOptions o;
      o.xlabel = "epoch"; o.ylabel = "loss"; o.xmin = 1.f; o.xmax = 5.f; o.dpi = c.dpi;
      return plot(name, "Training loss of the parametric model's w (SGD, lr 0.5)", {s}, o);
    }
    nadaraya_watson(y.data(), a.data(), d.x_test.data(), 50, d.x_train.data(), d.y_train.data(), 50, 0, w);
    const std::string kind = param ? "Parametric (learned w = " + std::to_string(w).substr(0, 5) + ")"
                                   : "Non-parametric";
    if (name.find("-attention") != std::string::npos)
      return heatmap(name, kind + " Nadaraya-Watson attention weights", a, 1, 1, 50, 50,
                     hopts(c, "Sorted training inputs", "Sorted testing inputs"));
    return nw_plot(name, kind + " Nadaraya-Watson kernel regression", d, y, c);
  }
  if (name == "03-additive-attention") return scoring(name, true, c);
  if (name == "03-dot-product-attention") return scoring(name, false, c);
  if (name == "05-multi-head-attention") return multi_head(c);
  if (name == "06-positional-encoding-heatmap") return pe(c, true);
  if (name == "06-positional-encoding-columns") return pe(c, false);
  if (name == "04-bahdanau-attention" || name.rfind("07-transformer-", 0) == 0) {
    const bool bahdanau = name[1] == '4';
    const auto& model = bahdanau ? c.bahdanau : c.transformer;
    if (!model) throw Error(std::string("figure '") + name + "' needs the " + (bahdanau ? "Bahdanau" : "Transformer") + " model");
    MapOptions o;
    o.kind = bahdanau ? MapKind::Cross
             : name == "07-transformer-encoder" ? MapKind::Encoder
             : name == "07-transformer-decoder-self" ? MapKind::DecoderSelf
                                                     : MapKind::Cross;
    o.d2l_compat = c.d2l_compat;
    o.dpi = c.dpi;
    Figure f = translation_map(model, c.sentence, o);
    f.name = name;
    return f;
  }
  throw Error("unknown figure '" + name + "'");
}

}  // namespace attnlite::viz::figures
