// What the bindings of both WebAssembly modules share (wasm/bindings.cpp: the runtime;
// wasm/figures_bindings.cpp: the figure renderer): the sanitized build's detection, the C
// API's al_error and guard() (src/c_api/errors.h), and the allocator's usage exported from
// each module. Included by one source file of each.
#pragma once
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cstddef>

#include "attnlite/c_api.h"
#include "c_api/errors.h"  // al_error and guard(), the C API's

// The sanitized node build (wasm/build.sh node-asan): ASan's allocator replaces dlmalloc, whose
// mallinfo() it answers with zeros, so the bytes in use come from the sanitizer instead.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLITE_ASAN 1
#include <sanitizer/allocator_interface.h>
#include <sanitizer/lsan_interface.h>
#endif
#endif

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
