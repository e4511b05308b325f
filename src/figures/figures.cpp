// The chapter's figures, with the book's captions, labels and figure sizes.
#include "attnlite/figures/figures.h"

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
#include "attnlite/render/canvas.h"
#include "render/draw.h"
#include "figures/figure_parts.h"
using namespace attnlite::attention;

namespace attnlite::figures {
using namespace attnlite::render;  // figures are drawn with the renderer

Figure detail::heatmap(const std::string& name, const std::string& caption, std::vector<float> data,
                       int rows, int cols, int q, int k, const render::HeatmapOptions& o) {
  Figure f;
  f.name = name;
  f.caption = caption;
  f.is_heatmap = true;
  f.rows = rows; f.cols = cols; f.queries = q; f.keys = k;
  f.matrices = std::move(data);
  f.layout = render::heatmap_layout(rows, cols, q, k, o, f.matrices.data());
  f.image = render::render_heatmaps(f.matrices.data(), rows, cols, q, k, o);
  f.paint = [data = f.matrices, rows, cols, q, k, o](render::Canvas& c) {
    render::draw_heatmaps(c, data.data(), rows, cols, q, k, o);
  };
  return f;
}

std::string to_svg(const Figure& f) {
  if (!f.paint) throw Error("figure '" + f.name + "' has no drawing");
  render::SvgCanvas c(f.image.width, f.image.height);
  f.paint(c);
  return c.str();
}

using detail::heatmap;

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

Figure plot(const std::string& name, const std::string& caption, const std::vector<render::Series>& s,
            const render::PlotOptions& o) {
  Figure f;
  f.name = name;
  f.caption = caption;
  f.image = render::render_plot(s, o);
  f.paint = [s, o](render::Canvas& c) { render::draw_plot(c, s, o); };
  return f;
}

render::HeatmapOptions hopts(const Context& c, const char* xl = "Keys", const char* yl = "Queries",
                          float w = 2.5f, float h = 2.5f) {
  render::HeatmapOptions o;
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
  std::vector<render::Series> s(3);
  s[0] = {d.x_test, d.y_truth, "Truth", render::Series::Line, std::nullopt};
  s[1] = {d.x_test, y_hat, "Pred", render::Series::Dashed, std::nullopt};
  s[2] = {d.x_train, d.y_train, "", render::Series::Points, std::nullopt};
  render::PlotOptions o;
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
    AdditiveAttentionWeights w{{wk.data(), nullptr, 8, 2}, {wq.data(), nullptr, 8, 20}, {wv.data(), nullptr, 1, 8}};
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
  MultiHeadAttentionWeights w{{wq.data(), nullptr, H, H}, {wk.data(), nullptr, H, H},
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
    o.cmap = render::Colormap::Blues;
    return heatmap("06-positional-encoding-heatmap",
                   "The sinusoidal positional encoding P (60 positions x 32 dimensions)", P, 1, 1, T, H, o);
  }
  std::vector<render::Series> s;
  const render::Series::Style styles[4] = {render::Series::Line, render::Series::Dashed, render::Series::DashDot,
                                        render::Series::Dotted};
  for (int col = 6; col < 10; ++col) {
    render::Series x;
    for (int t = 0; t < T; ++t) {
      x.x.push_back((float)t);
      x.y.push_back(P[t * H + col]);
    }
    x.label = "Col " + std::to_string(col);
    x.style = styles[col - 6];
    s.push_back(x);
  }
  render::PlotOptions o;
  o.xlabel = "Row (position)";
  o.fig_width_in = 6.f;
  o.fig_height_in = 2.5f;
  o.dpi = c.dpi;
  return plot("06-positional-encoding-columns", "Columns 6 to 9 of the positional encoding", s, o);
}

}  // namespace

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
      render::Series s{{1, 2, 3, 4, 5}, losses, "", render::Series::Line, std::nullopt};
      render::PlotOptions o;
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
    o.padding = c.padding;
    o.model_name = bahdanau ? c.bahdanau_name : c.transformer_name;
    o.dpi = c.dpi;
    Figure f = translation_map(model, c.sentence, o);
    f.name = name;
    return f;
  }
  throw Error("unknown figure '" + name + "'");
}

}  // namespace attnlite::figures
