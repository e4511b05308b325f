// The alignment view of a translation's attention: keys on the left, queries on the right, a
// line between each pair with the pair's weight as its opacity (bertviz's head view, drawn as
// a PNG or SVG figure).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnlite/error.h"
#include "attnlite/translate.h"
#include "attnlite/render/canvas.h"
#include "attnlite/figures/figures.h"
#include "attnlite/render/plot.h"
#include "render/draw.h"
#include "figures/figure_parts.h"

namespace attnlite::figures {
using namespace attnlite::render;  // figures are drawn with the renderer

namespace {

constexpr Rgb kAverageColor{31, 119, 180};
constexpr Rgb kHeadingColor{90, 90, 90};

// Everything the view puts somewhere, from its labels alone (so alignment_geometry can
// recompute it from a Figure).
struct Layout {
  render::detail::FigureMetrics m;
  int row = 0;                  // row pitch
  int top = 0;                  // first row's top
  int left_w = 0, right_w = 0;  // widest key / query label
  int key_x = 0, query_x = 0;   // the lines' ends
  int width = 0, height = 0;
};

// Column headings: what the keys and the queries are.
struct Headings {
  std::string keys = "Keys", queries = "Queries";
};

Layout layout(const std::vector<std::string>& keys, const std::vector<std::string>& queries, const Headings& hd,
              const std::string& title, int dpi) {
  Layout L;
  L.m = render::detail::figure_metrics(dpi);
  const auto& m = L.m;
  for (const auto& k : keys) L.left_w = std::max(L.left_w, text_size(k, m.font_px).w);
  for (const auto& q : queries) L.right_w = std::max(L.right_w, text_size(q, m.font_px).w);
  L.left_w = std::max(L.left_w, text_size(hd.keys, m.font_px).w);
  L.right_w = std::max(L.right_w, text_size(hd.queries, m.font_px).w);
  L.row = static_cast<int>(std::lround(m.lh * 1.35));
  L.top = m.pad + m.lh + 2 * m.tgap + m.lh + 2 * m.tgap;  // the title, then the column headings
  const int gap = 6 * m.s;                                 // between a label and its lines' ends
  L.key_x = m.pad + L.left_w + gap;
  L.query_x = L.key_x + static_cast<int>(std::lround(1.6 * dpi));
  L.width = L.query_x + gap + L.right_w + m.pad;
  // As wide as the title (up to 10 inches), the columns centred.
  const int title_w = std::min(text_size(title, m.font_px).w + 2 * m.pad, 10 * dpi);
  if (title_w > L.width) {
    const int dx = (title_w - L.width) / 2;
    L.key_x += dx, L.query_x += dx, L.width = title_w;
  }
  const int n = static_cast<int>(std::max(keys.size(), queries.size()));
  L.height = L.top + n * L.row + m.pad;
  return L;
}

// Row centres of a column of n labels, centred against the longer column of `most`.
std::vector<float> centres(const Layout& L, int n, int most) {
  std::vector<float> y(static_cast<size_t>(n));
  const float first = static_cast<float>(L.top) + (most - n) * L.row / 2.f + L.row / 2.f;
  for (int i = 0; i < n; ++i) y[static_cast<size_t>(i)] = first + static_cast<float>(i * L.row);
  return y;
}

}  // namespace

Headings headings(MapKind kind) {
  Headings h;
  if (kind == MapKind::Cross) h.keys = "Source (keys)", h.queries = "Target (queries)";
  return h;
}

Figure alignment_view(const std::shared_ptr<const Model>& model, const std::string& sentence,
                      const AlignmentOptions& o) {
  const Model& md = *model;
  if (!md.has_self_attention() && o.kind != MapKind::Cross)
    throw Error("this model (" + md.description() + ") has only encoder-decoder (cross) attention");
  const bool tr = md.layered_attention();
  const int NL = tr ? md.num_layers() : 1, NH = tr ? md.num_heads() : 1;
  if (o.layer < -1 || o.layer >= NL)
    throw Error("layer " + std::to_string(o.layer + 1) + " is out of range: the model has " + std::to_string(NL));
  if (o.head < -1 || o.head >= NH)
    throw Error("head " + std::to_string(o.head + 1) + " is out of range: the model has " + std::to_string(NH));
  if (o.dpi < 20 || o.dpi > 600) throw Error("alignment view: dpi must be in [20, 600]");
  const int layer = o.layer < 0 ? NL - 1 : o.layer;
  Translator translator(model);
  DecodeOptions d;
  d.d2l_compat = o.d2l_compat;
  const Translation& r = translator.translate(sentence, d);
  const int S = o.padding ? r.S : std::max(1, std::min(r.S, r.src_valid));
  int Q = 0, K = 0;
  std::vector<std::string> keys, queries;
  const char* what = translation_attention_name(o.kind);
  switch (o.kind) {
    case MapKind::Encoder: Q = K = S; keys = queries = detail::src_labels(md, r, S); break;
    case MapKind::DecoderSelf: Q = K = r.steps; keys = detail::in_labels(md, r); queries = detail::out_labels(md, r); break;
    case MapKind::Cross: Q = r.steps; K = S; keys = detail::src_labels(md, r, S); queries = detail::out_labels(md, r); break;
  }
  const auto weight = [&](int h, int q, int k) {
    if (!tr) return r.cross_at(0, q, 0, k);
    if (o.kind == MapKind::Encoder) return r.enc_self_at(layer, h, q, k);
    if (o.kind == MapKind::DecoderSelf) return r.dec_self_at(layer, q, h, k);
    return r.cross_at(layer, q, h, k);
  };
  std::vector<float> w(static_cast<size_t>(Q) * K, 0.f);
  for (int q = 0; q < Q; ++q)
    for (int k = 0; k < K; ++k) {
      float v = 0.f;
      if (o.head >= 0) {
        v = weight(o.head, q, k);
      } else {
        for (int h = 0; h < NH; ++h) v += weight(h, q, k);
        v /= static_cast<float>(NH);
      }
      w[static_cast<size_t>(q) * K + k] = v;
    }

  const std::string heads = !tr ? "" : o.head >= 0 ? ", head " + std::to_string(o.head + 1) : ", heads averaged";
  const std::string title =
      translation_title(o.model_name.empty() ? std::string(md.kind_name()) : o.model_name,
                        what + (tr ? ", layer " + std::to_string(layer + 1) : "") + heads, sentence, std::string(r.text));
  const Headings hd = headings(o.kind);
  const Layout L = layout(keys, queries, hd, title, o.dpi);
  const Rgb color = o.head >= 0 ? series_color(o.head) : kAverageColor;

  Figure f;
  f.name = "alignment";
  f.caption = std::string(md.kind_name()) + " " + what + (tr ? ", layer " + std::to_string(layer + 1) : "") +
              heads + " for '" + sentence + "' => '" + std::string(r.text) +
              "': keys on the left, queries on the right, each line's opacity its weight";
  f.rows = f.cols = 1;
  f.queries = Q;
  f.keys = K;
  f.matrices = w;
  f.xticks = keys;
  f.yticks = queries;
  f.text = std::string(r.text);
  f.layout.width = L.width;
  f.layout.height = L.height;
  f.layout.title_text = title;
  f.paint = [L, hd, keys, queries, w, Q, K, color, title](Canvas& cv) {
    const auto& fm = L.m;
    const int most = std::max(Q, K);
    const std::vector<float> ky = centres(L, K, most), qy = centres(L, Q, most);
    const std::string shown = title;  // fits: the figure was widened for it (up to 10 inches)
    const TextSize ts = text_size(shown, fm.font_px);
    cv.text(std::max(fm.pad, (L.width - ts.w) / 2), fm.pad, shown, kBlack, fm.font_px);
    const int head_y = fm.pad + fm.lh + 2 * fm.tgap;
    cv.text(L.key_x - 6 * fm.s - text_size(hd.keys, fm.font_px).w, head_y, hd.keys, kHeadingColor, fm.font_px);
    cv.text(L.query_x + 6 * fm.s, head_y, hd.queries, kHeadingColor, fm.font_px);
    // Lines, lightest first, so that strong ones stay on top.
    std::vector<int> order(static_cast<size_t>(Q) * K);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[(size_t)a] < w[(size_t)b]; });
    const Rect clip{0, 0, L.width, L.height};
    const float lw = std::max(1.f, 2.f * fm.s);
    cv.group("lines");
    for (int i : order) {
      const float v = w[(size_t)i];
      if (!(v >= kAlignmentMinWeight)) continue;
      const int q = i / K, k = i % K;
      cv.polyline({{static_cast<float>(L.key_x), ky[(size_t)k]}, {static_cast<float>(L.query_x), qy[(size_t)q]}}, lw,
                  color, std::min(v, 1.f), {}, clip);
    }
    cv.end_group();
    cv.group("keys");
    for (int k = 0; k < K; ++k) {
      const TextSize kt = text_size(keys[(size_t)k], fm.font_px);
      cv.text(L.key_x - 6 * fm.s - kt.w, static_cast<int>(std::lround(ky[(size_t)k] - kt.h / 2.f)), keys[(size_t)k], kBlack,
              fm.font_px);
    }
    cv.end_group();
    cv.group("queries");
    for (int q = 0; q < Q; ++q) {
      const TextSize qt = text_size(queries[(size_t)q], fm.font_px);
      cv.text(L.query_x + 6 * fm.s, static_cast<int>(std::lround(qy[(size_t)q] - qt.h / 2.f)), queries[(size_t)q],
              kBlack, fm.font_px);
    }
    cv.end_group();
  };
  f.image = Image(L.width, L.height);
  RasterCanvas rc(f.image);
  f.paint(rc);
  return f;
}

}  // namespace attnlite::figures
