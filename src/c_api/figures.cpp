// attnlite — the C API: figures (native only; wasm/build.sh leaves this file out of the
// runtime module). The attention maps of a translation, drawn by the same figure function as
// `attnlite heatmap translate` (figures::translation_map) and encoded as that command writes
// them (render::encode_png, figures::to_svg), so the bytes are its file's.
#include <memory>
#include <string>

#include "c_api/handles.h"
#include "attnlite/figures/figures.h"

using namespace attnlite;
using namespace attnlite::c_api;

namespace {

// The command line's bounds for --dpi, --beam and --alpha (tools/cli/heatmap_cmd.cpp).
constexpr int kMinDpi = 20, kMaxDpi = 600, kMaxBeam = 64;
constexpr float kMaxAlpha = 10.f;

std::string str_or(const char* s, const char* fallback) { return s ? s : fallback; }

// figures::MapOptions from the C options: names parsed by the library's own parsers, layer and
// head from 1-based (0: all) to 0-based (-1: all); translation_map checks their range.
figures::MapOptions map_options(const al_figure_options& c) {
  if (c.dpi < kMinDpi || c.dpi > kMaxDpi)
    throw Error("dpi must be in [" + std::to_string(kMinDpi) + ", " + std::to_string(kMaxDpi) + "], got " +
                std::to_string(c.dpi));
  if (c.beam_size < 1 || c.beam_size > kMaxBeam)
    throw Error("beam_size must be in [1, " + std::to_string(kMaxBeam) + "], got " + std::to_string(c.beam_size));
  if (!(c.length_penalty >= 0.f && c.length_penalty <= kMaxAlpha))
    throw Error("length_penalty must be a number in [0, 10], got " + std::to_string(c.length_penalty));
  figures::MapOptions o;
  o.kind = figures::map_kind_from_name(str_or(c.kind, "cross"));
  o.cmap = render::colormap_from_name(str_or(c.cmap, "Reds"));
  o.layer = c.layer - 1;
  o.head = c.head - 1;
  o.annotate = c.annotate != 0;
  o.tokens = c.positions == 0;
  o.padding = c.padding != 0;
  o.d2l_compat = c.d2l_compat != 0;
  o.beam_size = c.beam_size;
  o.length_penalty = c.length_penalty;
  o.model_name = str_or(c.model_name, "");
  o.dpi = c.dpi;
  return o;
}

}  // namespace

extern "C" {

void al_figure_options_default(al_figure_options* o) {
  if (!o) return;
  o->kind = "cross";
  o->layer = 0;
  o->head = 0;
  o->cmap = "Reds";
  o->dpi = 100;
  o->format = "png";
  o->annotate = 0;
  o->positions = 0;
  o->padding = 0;
  o->d2l_compat = 0;
  o->beam_size = 1;
  o->length_penalty = 0.f;
  o->model_name = nullptr;
}

al_figure* al_figure_translation_map(const al_model* model, const char* sentence,
                                     const al_figure_options* options, al_error** err) {
  return construct<al_figure>(err, [&] {
    if (!model) throw Error("al_figure_translation_map: model is NULL");
    if (!sentence) throw Error("al_figure_translation_map: sentence is NULL");
    al_figure_options c;
    al_figure_options_default(&c);
    if (options) c = *options;
    const std::string format = str_or(c.format, "png");
    if (format != "png" && format != "svg") throw Error("format must be png or svg, got '" + format + "'");
    const figures::MapOptions o = map_options(c);
    const figures::Figure f = figures::translation_map(model->model, sentence, o);
    auto out = std::make_unique<al_figure>();
    if (format == "png") {
      out->data = render::encode_png(f.image);
    } else {
      const std::string svg = figures::to_svg(f);
      out->data.assign(svg.begin(), svg.end());
    }
    out->format = format;
    out->caption = f.caption;
    out->text = f.text;
    out->width = f.image.width;
    out->height = f.image.height;
    out->rows = f.rows;
    out->cols = f.cols;
    return out.release();
  });
}

const uint8_t* al_figure_data(const al_figure* f) { return f ? f->data.data() : nullptr; }
size_t al_figure_size(const al_figure* f) { return f ? f->data.size() : 0; }
const char* al_figure_format(const al_figure* f) { return f ? f->format.c_str() : ""; }
int al_figure_width(const al_figure* f) { return f ? f->width : 0; }
int al_figure_height(const al_figure* f) { return f ? f->height : 0; }
int al_figure_rows(const al_figure* f) { return f ? f->rows : 0; }
int al_figure_cols(const al_figure* f) { return f ? f->cols : 0; }
const char* al_figure_caption(const al_figure* f) { return f ? f->caption.c_str() : ""; }
const char* al_figure_text(const al_figure* f) { return f ? f->text.c_str() : ""; }
void al_figure_free(al_figure* f) { delete f; }

}  // extern "C"
