// attnlite — the registered model families (internal), in registration order: a family's
// position is its number in the C API (al_model_kind).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "families/family.h"

namespace attnlite::families {

// The registered families: a view of the static table in families.cpp (nothing on the heap:
// a WebAssembly instance's heap is back to empty once its models are freed, tests/web).
struct Registered {
  const Family* const* first;
  size_t count;
  const Family* const* begin() const { return first; }
  const Family* const* end() const { return first + count; }
  size_t size() const { return count; }
  const Family* operator[](size_t i) const { return first[i]; }
};
Registered all();
// The family registered under `name`, or nullptr.
const Family* find(std::string_view name);
// "transformer, bahdanau, lm or vit": the names, for errors.
std::string names();

}  // namespace attnlite::families
