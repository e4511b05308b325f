// attnlite for the web: a plain C API over the C++ core, exported from the WASM module.
// wasm/attnlite-api.mjs wraps it in a JavaScript class; nothing here is meant to be called
// by hand.
//
// Conventions: functions that can fail return 0 (or a null pointer) and leave a message for
// al_last_error(); C++ exceptions never cross into JavaScript. Pointers returned into WASM
// memory stay valid until the next call that writes the same result (translate, render).
// Strings going in are UTF-8, NUL-terminated; lists of strings are joined with '\n'.
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/attention/nadaraya_watson.h"
#include "attnlite/error.h"
#include "attnlite/viz/heatmap.h"
#include "attnlite/model.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/viz/plot.h"
#include "attnlite/translate.h"
#include "attnlite/vocab.h"

using namespace attnlite;

namespace {

std::string g_error;
viz::Image g_image;                 // the last rendered figure
std::vector<int32_t> g_layout;      // the last heatmap's layout (see al_render_heatmap)
float g_layout_scale[2] = {0.f, 1.f};

// Decoding can go past the model's num_steps when asked (max_steps); this caps the
// workspace at a size that stays small (the dec_self weights grow with its square).
constexpr int kMaxSteps = 64;
// Largest beam size. The Translator's buffers hold this many hypotheses: for the book's
// Transformer 3.1 MB instead of 0.2 MB, for its Bahdanau GRU 0.4 MB instead of 27 KB, for
// a 3-layer, 128-wide Transformer with 24000 French tokens 7.2 MB instead of 0.7 MB.
constexpr int kMaxBeam = 8;
constexpr float kMaxAlpha = 2.f;

struct Handle {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Translator> tr;
  const Translation* r = nullptr;
  NBest nb;  // the n-best list of the last translation (empty after a failed one)
  int limit = 0;
  int max_beam = 1;
  // Result strings, reserved once so that repeated translations reuse the same memory.
  std::string text, src_tokens, src_words, unknown;
};

// Calls f(), turning any exception into a message for al_last_error().
template <class F>
bool guard(F&& f) {
  try {
    f();
    g_error.clear();
    return true;
  } catch (const std::exception& e) {
    g_error = e.what();
  } catch (...) {
    g_error = "unknown error";
  }
  return false;
}

std::vector<std::string> split_lines(const char* s) {
  std::vector<std::string> out;
  if (!s || !*s) return out;
  std::string_view v(s);
  size_t start = 0;
  for (;;) {
    const size_t nl = v.find('\n', start);
    out.emplace_back(v.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

void append_joined(std::string& out, std::string_view tok) {
  if (!out.empty()) out += ' ';
  out += tok;
}

}  // namespace

extern "C" {

// ---- errors and memory -------------------------------------------------------------
EMSCRIPTEN_KEEPALIVE const char* al_last_error() { return g_error.c_str(); }

// Bytes in use by the allocator (dlmalloc's mallinfo), for the heap-stability test.
EMSCRIPTEN_KEEPALIVE size_t al_heap_used() { return (size_t)mallinfo().uordblks; }

// ---- kernels ---------------------------------------------------------------------------
// The kernel table in use: "scalar" or the SIMD table's name (builds with src/cpu/simd).
EMSCRIPTEN_KEEPALIVE const char* al_backend() { return ops::kernels().name; }
// 0 scalar, 1 SIMD. Returns 1, or 0 with al_last_error() set when SIMD is not built in.
EMSCRIPTEN_KEEPALIVE int al_set_backend(int simd) {
  return guard([&] { ops::set_backend(simd ? ops::Backend::Simd : ops::Backend::Scalar); }) ? 1 : 0;
}

// ---- models --------------------------------------------------------------------------
// Validates the whole file (safetensors header, config, vocabularies, every tensor).
// Returns a handle, or 0 with al_last_error() set.
EMSCRIPTEN_KEEPALIVE Handle* al_model_load(const uint8_t* bytes, size_t size) {
  std::unique_ptr<Handle> h;
  const bool ok = guard([&] {
    if (!bytes || size == 0) throw Error("the model file is empty");
    auto hh = std::make_unique<Handle>();
    hh->model = Model::from_bytes(bytes, size);
    Limits lim;
    hh->limit = std::max(hh->model->num_steps(), kMaxSteps);
    lim.max_tgt_steps = hh->limit;
    // The Translator needs two target tokens per hypothesis (tiny test vocabularies).
    hh->max_beam = lim.max_beam = std::max(1, std::min(kMaxBeam, hh->model->tgt_vocab().size() / 2));
    hh->tr = std::make_unique<Translator>(hh->model, lim);
    // Worst cases: every target token joined by spaces, every source token.
    size_t maxtok = 1;
    for (int i = 0; i < hh->model->tgt_vocab().size(); ++i)
      maxtok = std::max(maxtok, hh->model->tgt_vocab().token(i).size());
    hh->text.reserve((size_t)hh->limit * (maxtok + 1) + 1);
    size_t maxsrc = 1;
    for (int i = 0; i < hh->model->src_vocab().size(); ++i)
      maxsrc = std::max(maxsrc, hh->model->src_vocab().token(i).size());
    hh->src_tokens.reserve((size_t)hh->model->num_steps() * (maxsrc + 1) + 1);
    hh->src_words.reserve(4096 * 2 + 16);
    hh->unknown.reserve(4096 * 2 + 16);
    h = std::move(hh);
  });
  return ok ? h.release() : nullptr;
}

EMSCRIPTEN_KEEPALIVE void al_model_free(Handle* h) { delete h; }

// 0 Transformer, 1 Bahdanau.
EMSCRIPTEN_KEEPALIVE int al_model_kind(const Handle* h) { return h->model->kind() == ModelKind::Bahdanau; }
EMSCRIPTEN_KEEPALIVE int al_model_num_steps(const Handle* h) { return h->model->num_steps(); }
// Transformer: encoder/decoder layers; Bahdanau: 0 (its cross attention has no layer axis).
EMSCRIPTEN_KEEPALIVE int al_model_layers(const Handle* h) {
  return h->model->kind() == ModelKind::Transformer ? h->model->num_layers() : 0;
}
EMSCRIPTEN_KEEPALIVE int al_model_heads(const Handle* h) { return h->model->num_heads(); }
EMSCRIPTEN_KEEPALIVE int al_model_max_steps(const Handle* h) { return h->limit; }
EMSCRIPTEN_KEEPALIVE int al_model_src_vocab_size(const Handle* h) { return h->model->src_vocab().size(); }
EMSCRIPTEN_KEEPALIVE int al_model_tgt_vocab_size(const Handle* h) { return h->model->tgt_vocab().size(); }
EMSCRIPTEN_KEEPALIVE size_t al_model_weight_bytes(const Handle* h) { return h->model->weight_bytes(); }
// The largest beam size (8, less for target vocabularies under 16 tokens) and the bytes of
// the Translator's buffers sized for it.
EMSCRIPTEN_KEEPALIVE int al_model_max_beam(const Handle* h) { return h->max_beam; }
EMSCRIPTEN_KEEPALIVE size_t al_model_workspace_bytes(const Handle* h) { return h->tr->workspace_bytes(); }
// Metadata value for a key ("" when absent), e.g. attnlite.config, attnlite.license.
EMSCRIPTEN_KEEPALIVE const char* al_model_metadata(const Handle* h, const char* key) {
  auto it = h->model->metadata().find(key ? key : "");
  return it == h->model->metadata().end() ? "" : it->second.c_str();
}

// ---- translation ---------------------------------------------------------------------
// Greedy decoding as d2l's predict_seq2seq (beam 1), or beam search with beam hypotheses
// (up to al_model_max_beam) ranked by logp / length^alpha (alpha in [0, 2]); the result is
// the best hypothesis. max_steps 0: the model's num_steps; attention 0 skips recording the
// attention weights (al_result_attention then returns null).
// Returns 1, or 0 with al_last_error() set (empty, over-long or invalid UTF-8 input, a beam
// size or alpha out of range).
EMSCRIPTEN_KEEPALIVE int al_translate(Handle* h, const char* sentence, int d2l_compat, int max_steps,
                                      int attention, int beam, float alpha) {
  h->r = nullptr;
  h->nb = {};
  return guard([&] {
    if (max_steps < 0 || max_steps > h->limit)
      throw Error("max steps must be in [0, " + std::to_string(h->limit) + "], got " +
                  std::to_string(max_steps));
    if (beam < 1 || beam > h->max_beam)
      throw Error("beam size must be in [1, " + std::to_string(h->max_beam) + "], got " +
                  std::to_string(beam));
    if (!(alpha >= 0.f && alpha <= kMaxAlpha)) {  // NaN fails too
      char got[32];
      std::snprintf(got, sizeof got, "%g", alpha);
      throw Error(std::string("length penalty alpha must be a number in [0, 2], got ") + got);
    }
    DecodeOptions o;
    o.d2l_compat = d2l_compat != 0;
    o.max_steps = max_steps ? max_steps : h->model->num_steps();
    o.attention = attention != 0;
    o.beam_size = beam;
    o.length_penalty = alpha;
    const Translation& r = h->tr->translate(sentence ? sentence : "", o);
    const Model& m = *h->model;
    h->text.assign(r.text.data(), r.text.size());
    h->src_tokens.clear();
    for (int k = 0; k < r.S; ++k) append_joined(h->src_tokens, m.src_vocab().token(r.src_ids[k]));
    // The words as the book's preprocessing splits them, and those the model lacks.
    h->src_words.clear();
    h->unknown.clear();
    for (const auto& w : tokenize(sentence)) {
      append_joined(h->src_words, w);
      if (m.src_vocab().lookup(w) == m.src_vocab().unk) append_joined(h->unknown, w);
    }
    h->r = &r;
    h->nb = h->tr->nbest(0);
  }) ? 1 : 0;
}

// The n-best list of the last al_translate, best first: its size (0 after a failure), a
// hypothesis's token ids (without <eos>) and its text (UTF-8, not NUL-terminated), and its
// numbers by field: 0 score, 1 logp, 2 length (tokens, with <eos> when it ended so),
// 3 eos, 4 number of token ids, 5 bytes of text.
EMSCRIPTEN_KEEPALIVE int al_nbest_size(const Handle* h) { return h->nb.size; }
EMSCRIPTEN_KEEPALIVE const int* al_nbest_tokens(const Handle* h, int k) { return h->nb[k].tokens; }
EMSCRIPTEN_KEEPALIVE const char* al_nbest_text(const Handle* h, int k) { return h->nb[k].text.data(); }
EMSCRIPTEN_KEEPALIVE double al_nbest_value(const Handle* h, int k, int field) {
  const Hypothesis& y = h->nb[k];
  const double v[] = {y.score, y.logp, (double)y.length, (double)y.eos, (double)y.num_tokens,
                      (double)y.text.size()};
  return field >= 0 && field < (int)(sizeof v / sizeof *v) ? v[field] : NAN;
}

// After a successful al_translate: the French text, its predicted token ids and their
// softmax probabilities, and the padded source as vocabulary tokens (space-joined).
EMSCRIPTEN_KEEPALIVE const char* al_result_text(const Handle* h) { return h->text.c_str(); }
EMSCRIPTEN_KEEPALIVE const char* al_result_src_tokens(const Handle* h) { return h->src_tokens.c_str(); }
EMSCRIPTEN_KEEPALIVE const char* al_result_src_words(const Handle* h) { return h->src_words.c_str(); }
EMSCRIPTEN_KEEPALIVE const char* al_result_unknown(const Handle* h) { return h->unknown.c_str(); }
EMSCRIPTEN_KEEPALIVE const int* al_result_token_ids(const Handle* h) { return h->r->tokens; }
EMSCRIPTEN_KEEPALIVE const float* al_result_scores(const Handle* h) { return h->r->probs; }
EMSCRIPTEN_KEEPALIVE const int* al_result_src_ids(const Handle* h) { return h->r->src_ids; }
// A target token's text (for the ids above).
EMSCRIPTEN_KEEPALIVE const char* al_tgt_token(const Handle* h, int id) {
  return id >= 0 && id < h->model->tgt_vocab().size() ? h->model->tgt_vocab().token(id).c_str() : "";
}

// Integer facts about the result, by index:
// 0 num_tokens, 1 steps, 2 eos, 3 src_len, 4 src_valid, 5 truncated, 6 num_unknown,
// 7 layers (0 for Bahdanau), 8 heads, 9 S, 10 ld (row stride of the decoder arrays).
EMSCRIPTEN_KEEPALIVE int al_result_int(const Handle* h, int field) {
  const Translation& r = *h->r;
  const int v[] = {r.num_tokens, r.steps, r.eos, r.src_len, r.src_valid, r.truncated,
                   r.num_unknown, r.layers, r.heads, r.S, r.ld};
  return field >= 0 && field < (int)(sizeof v / sizeof *v) ? v[field] : -1;
}

// Attention weights, in the layouts of attnlite::Translation:
//   0 encoder self (L, NH, S, S); 1 decoder self (L, ld, NH, ld); 2 cross (L, ld, NH, S)
//   for the Transformer, (ld, S) for Bahdanau. Null when the model has no such weights.
EMSCRIPTEN_KEEPALIVE const float* al_result_attention(const Handle* h, int which) {
  const Translation& r = *h->r;
  return which == 0 ? r.enc_self : which == 1 ? r.dec_self : which == 2 ? r.cross : nullptr;
}

// ---- figures ---------------------------------------------------------------------------
// render_heatmaps over matrices (rows, cols, queries, keys). cmap: "Reds", "Blues" or
// "viridis"; titles/xticks/yticks: '\n'-joined lists ("" for none); vmin/vmax: NaN for the
// data range. Returns the RGBA pixels (al_image_width x al_image_height), or null with
// al_last_error() set. The layout goes to al_layout(): width, height, rows, cols, queries,
// keys, then x, y, w, h of each panel (row-major), then the colorbar's x, y, w, h.
EMSCRIPTEN_KEEPALIVE const uint8_t* al_render_heatmap(const float* matrices, int rows, int cols,
                                                      int queries, int keys, const char* cmap,
                                                      const char* xlabel, const char* ylabel,
                                                      const char* titles, const char* xticks,
                                                      const char* yticks, float width_in,
                                                      float height_in, int dpi, float vmin,
                                                      float vmax, int colorbar, int annotate) {
  const bool ok = guard([&] {
    viz::HeatmapOptions o;
    o.cmap = viz::colormap_from_name(cmap ? cmap : "Reds");
    o.xlabel = xlabel ? xlabel : "";
    o.ylabel = ylabel ? ylabel : "";
    o.titles = split_lines(titles);
    o.xticks = split_lines(xticks);
    o.yticks = split_lines(yticks);
    o.fig_width_in = width_in;
    o.fig_height_in = height_in;
    o.dpi = dpi;
    if (!std::isnan(vmin)) o.vmin = vmin;
    if (!std::isnan(vmax)) o.vmax = vmax;
    o.colorbar = colorbar != 0;
    o.annotate = annotate != 0;
    if (!o.titles.empty() && (int)o.titles.size() != cols)
      throw Error("heatmap: give one title per column");
    viz::HeatmapLayout L = viz::heatmap_layout(rows, cols, queries, keys, o, matrices);
    g_image = viz::render_heatmaps(matrices, rows, cols, queries, keys, o);
    g_layout.assign({L.width, L.height, L.rows, L.cols, L.queries, L.keys});
    for (const viz::Rect& p : L.panels) g_layout.insert(g_layout.end(), {p.x, p.y, p.w, p.h});
    g_layout.insert(g_layout.end(), {L.colorbar.x, L.colorbar.y, L.colorbar.w, L.colorbar.h});
    g_layout_scale[0] = L.vmin;
    g_layout_scale[1] = L.vmax;
  });
  return ok ? g_image.rgba.data() : nullptr;
}

EMSCRIPTEN_KEEPALIVE const int32_t* al_layout() { return g_layout.data(); }
EMSCRIPTEN_KEEPALIVE int al_layout_size() { return (int)g_layout.size(); }
EMSCRIPTEN_KEEPALIVE float al_layout_vmin() { return g_layout_scale[0]; }
EMSCRIPTEN_KEEPALIVE float al_layout_vmax() { return g_layout_scale[1]; }
EMSCRIPTEN_KEEPALIVE int al_image_width() { return g_image.width; }
EMSCRIPTEN_KEEPALIVE int al_image_height() { return g_image.height; }

// The colour of a colormap at t in [0, 1], packed 0xRRGGBB (-1 for an unknown name).
EMSCRIPTEN_KEEPALIVE int al_colormap_rgb(const char* cmap, float t) {
  int out = -1;
  guard([&] {
    const auto c = viz::colormap_rgb(viz::colormap_from_name(cmap ? cmap : ""), t);
    out = c[0] << 16 | c[1] << 8 | c[2];
  });
  return out;
}

// render_plot of n series: series i has lens[i] points taken in order from xs/ys, a style
// (0 line, 1 dashed, 2 dash-dot, 3 dotted, 4 points), a colour 0xRRGGBB or -1 for d2l's
// cycle, and a label from the '\n'-joined labels. limits: xmin, xmax, ymin, ymax (NaN:
// from the data). Returns RGBA pixels as al_render_heatmap does.
EMSCRIPTEN_KEEPALIVE const uint8_t* al_render_plot(int n, const float* xs, const float* ys,
                                                   const int* lens, const int* styles,
                                                   const int* colors, const char* labels,
                                                   const char* xlabel, const char* ylabel,
                                                   const float* limits, float width_in,
                                                   float height_in, int dpi, int legend) {
  const bool ok = guard([&] {
    if (n < 0 || n > 64) throw Error("plot: between 0 and 64 series");
    const std::vector<std::string> names = split_lines(labels);
    std::vector<viz::Series> series((size_t)n);
    size_t at = 0;
    for (int i = 0; i < n; ++i) {
      viz::Series& s = series[(size_t)i];
      if (lens[i] < 0 || lens[i] > 1000000) throw Error("plot: bad series length");
      s.x.assign(xs + at, xs + at + lens[i]);
      s.y.assign(ys + at, ys + at + lens[i]);
      at += (size_t)lens[i];
      if (styles[i] < 0 || styles[i] > 4) throw Error("plot: bad style");
      s.style = (viz::Series::Style)styles[i];
      if (colors[i] >= 0)
        s.color = viz::Rgb{(uint8_t)(colors[i] >> 16), (uint8_t)(colors[i] >> 8), (uint8_t)colors[i]};
      if ((size_t)i < names.size()) s.label = names[(size_t)i];
    }
    viz::PlotOptions o;
    o.xlabel = xlabel ? xlabel : "";
    o.ylabel = ylabel ? ylabel : "";
    if (limits) {
      if (!std::isnan(limits[0])) o.xmin = limits[0];
      if (!std::isnan(limits[1])) o.xmax = limits[1];
      if (!std::isnan(limits[2])) o.ymin = limits[2];
      if (!std::isnan(limits[3])) o.ymax = limits[3];
    }
    o.fig_width_in = width_in;
    o.fig_height_in = height_in;
    o.dpi = dpi;
    o.legend = legend != 0;
    g_image = viz::render_plot(series, o);
  });
  return ok ? g_image.rgba.data() : nullptr;
}

// ---- d2l 10.2: Nadaraya-Watson ---------------------------------------------------------
// y (nq) and weights (nq, nk) for queries (nq) against one shared set of keys/values (nk),
// Gaussian kernel of width w. Returns 1, or 0 with al_last_error() set.
EMSCRIPTEN_KEEPALIVE int al_nadaraya_watson(float* y, float* weights, const float* queries, int nq,
                                            const float* keys, const float* values, int nk, float w) {
  return guard([&] {
    if (nq < 1 || nk < 1) throw Error("nadaraya_watson: needs queries and keys");
    if (!(std::isfinite(w))) throw Error("nadaraya_watson: w must be finite");
    nadaraya_watson(y, weights, queries, nq, keys, values, nk, /*ld=*/0, w);
  }) ? 1 : 0;
}

}  // extern "C"
