// attnlite for the web: the C API of include/attnlite/c_api.h, exported from the WASM
// module as it is (wasm/CMakeLists.txt lists its functions in EXPORTED_FUNCTIONS: translators,
// results and the language model's al_generator_* / al_generation_*), plus what only
// the web page needs, here: the allocator's usage and Nadaraya-Watson.
// The figures (al_render_heatmap, al_render_plot, al_colormap_rgb, al_image_*) are a second
// module, attnlite-figures.wasm (wasm/figures_bindings.cpp), which the translation worker
// never loads. web/attnlite-api.mjs wraps both in JavaScript classes; nothing here is
// meant to be called by hand.
//
// Conventions are the C API's: functions that can fail return 0 or a null pointer and, when
// `err` is not null, store an al_error in *err (al_error_message, al_error_free); C++
// exceptions never cross into JavaScript. No state lives in this file: the one process-wide
// setting is the kernel table (the C API's al_use_kernels), which the library itself keeps.
// Strings going in are UTF-8, NUL-terminated; lists of strings are joined with '\n'.
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "attnlite/attention/nadaraya_watson.h"
#include "attnlite/c_api.h"
#include "attnlite/error.h"

#include "module_common.h"

using namespace attnlite;

// web/attnlite-api.mjs writes these structs into WASM memory field by field (6 x 4 bytes).
static_assert(sizeof(al_limits) == 24 && offsetof(al_limits, max_input_bytes) == 12 &&
                  offsetof(al_limits, device) == 16 && offsetof(al_limits, precision) == 20,
              "the al_limits layout that attnlite-api.mjs writes");
static_assert(sizeof(al_decode_options) == 20 && offsetof(al_decode_options, beam_size) == 12 &&
                  offsetof(al_decode_options, length_penalty) == 16,
              "the al_decode_options layout that attnlite-api.mjs writes");
// The language model's options (the Generator class): the uint64 seed at byte 24 as two
// 32-bit halves, little-endian, 40 bytes in all.
static_assert(sizeof(al_generate_options) == 40 && offsetof(al_generate_options, top_p) == 16 &&
                  offsetof(al_generate_options, seed) == 24 &&
                  offsetof(al_generate_options, attention) == 32,
              "the al_generate_options layout that attnlite-api.mjs writes");

using c_api::guard;

extern "C" {

// (al_heap_used, al_leak_check: module_common.h; the kernel table: the C API's al_kernels
// and al_use_kernels)

// ---- d2l 10.2: Nadaraya-Watson ---------------------------------------------------------
// y (nq) and weights (nq, nk) for queries (nq) against one shared set of keys/values (nk),
// Gaussian kernel of width w. Returns 1, or 0 with *err set.
EMSCRIPTEN_KEEPALIVE int al_nadaraya_watson(float* y, float* weights, const float* queries, int nq,
                                            const float* keys, const float* values, int nk, float w,
                                            al_error** err) {
  return guard(err, [&] {
    if (nq < 1 || nk < 1) throw Error("nadaraya_watson: needs queries and keys");
    if (!(std::isfinite(w))) throw Error("nadaraya_watson: w must be finite");
    attention::nadaraya_watson(y, weights, queries, nq, keys, values, nk, /*ld=*/0, w);
  }) == AL_OK ? 1 : 0;
}

}  // extern "C"
