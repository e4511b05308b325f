// attnlite — the C API's errors (al_error_message, al_error_free, al_error_new). Also
// compiled into the WebAssembly figure renderer (wasm/CMakeLists.txt), which reports its
// failures with the same al_error.
#include "c_api/errors.h"

using namespace attnlite::c_api;

extern "C" {

const char* al_error_message(const al_error* err) { return err ? err->message.c_str() : ""; }
void al_error_free(al_error* err) { delete err; }
al_error* al_error_new(const char* message) {
  al_error* err = nullptr;
  set_error(&err, message ? message : "");
  return err;
}

}  // extern "C"
