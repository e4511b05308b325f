// attnlite — the C API's errors: the al_error handle and guard(), which turns what the C++
// side throws into a status and a message. Shared by the C API (handles.h) and by the
// bindings of both WebAssembly modules (wasm/module_common.h), so that every entry point
// reports a failure the same way.
#pragma once
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "attnlite/c_api.h"
#include "attnlite/error.h"

struct al_error {
  std::string message;
};

namespace attnlite::c_api {

// Runs f(); an exception becomes a status and its message goes to `msg`.
template <class F>
al_status guard(std::string& msg, F&& f) noexcept {
  try {
    f();
    msg.clear();
    return AL_OK;
  } catch (const Error& e) {
    msg = e.what();
    return AL_ERR_INPUT;
  } catch (const std::bad_alloc&) {
    msg = "out of memory";
  } catch (const std::exception& e) {
    msg = e.what();
  } catch (...) {
    msg = "unknown error";
  }
  return AL_ERR_INTERNAL;
}

inline void set_error(al_error** err, std::string msg) noexcept {
  if (!err) return;
  try {
    *err = new al_error{std::move(msg)};
  } catch (...) {
    *err = nullptr;
  }
}

// Runs f(); *err (when err is not null) is null after a success, a new al_error with the
// message after a failure.
template <class F>
al_status guard(al_error** err, F&& f) noexcept {
  if (err) *err = nullptr;
  std::string msg;
  const al_status st = guard(msg, std::forward<F>(f));
  if (st != AL_OK) set_error(err, std::move(msg));
  return st;
}

}  // namespace attnlite::c_api
