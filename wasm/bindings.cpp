// attnlite for the web: the C API of include/attnlite/c_api.h, exported from the WASM
// module as it is (wasm/build.sh lists its functions in EXPORTED_FUNCTIONS: translators,
// results and the language model's al_generator_* / al_generation_*), plus what only
// the web page needs, here: the allocator's usage, the kernel switch and Nadaraya-Watson.
// The figures (al_render_heatmap, al_render_plot, al_colormap_rgb, al_image_*) are a second
// module, attnlite-figures.wasm (wasm/figures_bindings.cpp), which the translation worker
// never loads. wasm/attnlite-api.mjs wraps both in JavaScript classes; nothing here is
// meant to be called by hand.
//
// Conventions are the C API's: functions that can fail return 0 or a null pointer and, when
// `err` is not null, store an al_error in *err (al_error_message, al_error_free); C++
// exceptions never cross into JavaScript. No state lives in this file: the one process-wide
// setting is the kernel table (ops::set_backend), which the library itself keeps.
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
#include "attnlite/ops/kernels.h"

// The sanitized node build (wasm/build.sh node-asan): ASan's allocator replaces dlmalloc, whose
// mallinfo() it answers with zeros, so the bytes in use come from the sanitizer instead.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLITE_ASAN 1
#include <sanitizer/allocator_interface.h>
#include <sanitizer/lsan_interface.h>
#endif
#endif

using namespace attnlite;

// wasm/attnlite-api.mjs writes these structs into WASM memory field by field (5 x 4 bytes).
static_assert(sizeof(al_limits) == 20 && offsetof(al_limits, max_input_bytes) == 12 &&
                  offsetof(al_limits, device) == 16,
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

namespace {

// Calls f(), turning any exception into an al_error in *err.
template <class F>
bool guard(al_error** err, F&& f) {
  if (err) *err = nullptr;
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    if (err) *err = al_error_new(e.what());
  } catch (...) {
    if (err) *err = al_error_new("unknown error");
  }
  return false;
}

}  // namespace

extern "C" {

// ---- memory and kernels ----------------------------------------------------------------
// Bytes in use by the allocator (dlmalloc's mallinfo), for the heap-stability test.
#ifdef ATTNLITE_ASAN
EMSCRIPTEN_KEEPALIVE size_t al_heap_used() { return __sanitizer_get_current_allocated_bytes(); }
// The sanitized build only: LeakSanitizer's check now (the module never exits, so it would not
// run at exit); prints a report and returns 1 when blocks are unreachable, else 0.
EMSCRIPTEN_KEEPALIVE int al_leak_check() { return __lsan_do_recoverable_leak_check(); }
#else
EMSCRIPTEN_KEEPALIVE size_t al_heap_used() { return (size_t)mallinfo().uordblks; }
#endif

// The kernel table in use: "scalar" or the SIMD table's name (builds with src/cpu/simd).
EMSCRIPTEN_KEEPALIVE const char* al_backend() { return ops::kernels().name; }
// 0 scalar, 1 SIMD. Returns 1, or 0 with *err set when SIMD is not built in.
EMSCRIPTEN_KEEPALIVE int al_set_backend(int simd, al_error** err) {
  return guard(err, [&] { ops::set_backend(simd ? ops::Backend::Simd : ops::Backend::Scalar); }) ? 1 : 0;
}

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
  }) ? 1 : 0;
}

}  // extern "C"
