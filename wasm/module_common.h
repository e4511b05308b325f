// What the bindings of both WebAssembly modules share (wasm/bindings.cpp: the runtime;
// wasm/figures_bindings.cpp: the figure renderer): the sanitized build's detection, guard(),
// and the allocator's usage exported from each module. Included by one source file of each.
#pragma once
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cstddef>
#include <exception>

#include "attnlite/c_api.h"

// The sanitized node build (wasm/build.sh node-asan): ASan's allocator replaces dlmalloc, whose
// mallinfo() it answers with zeros, so the bytes in use come from the sanitizer instead.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLITE_ASAN 1
#include <sanitizer/allocator_interface.h>
#include <sanitizer/lsan_interface.h>
#endif
#endif

namespace attnlite::wasm {

// Calls f(), turning any exception into an al_error in *err (al_error_new of the module).
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

}  // namespace attnlite::wasm

extern "C" {
// Bytes in use by this module's allocator (dlmalloc's mallinfo), for the tests that check that
// memory comes back.
#ifdef ATTNLITE_ASAN
EMSCRIPTEN_KEEPALIVE size_t al_heap_used() { return __sanitizer_get_current_allocated_bytes(); }
// The sanitized build only: LeakSanitizer's check now (the module never exits, so it would not
// run at exit); prints a report and returns 1 when blocks are unreachable, else 0.
EMSCRIPTEN_KEEPALIVE int al_leak_check() { return __lsan_do_recoverable_leak_check(); }
#else
EMSCRIPTEN_KEEPALIVE size_t al_heap_used() { return (size_t)mallinfo().uordblks; }
#endif
}  // extern "C"
