// attnlite — the registered model families (internal), in registration order: a family's
// position is its number in the C API (al_model_kind).
#pragma once
#include <array>
#include <string_view>
#include <vector>

#include "families/family.h"

namespace attnlite::families {

// A static table, nothing on the heap: a WebAssembly instance's heap is back to empty once
// its models are freed (tests/web). A new family: its line in families.cpp, and 1 more here.
const std::array<const Family*, 4>& all();
// The family registered under `name`, or nullptr.
const Family* find(std::string_view name);
// "transformer, bahdanau, lm or vit": the names, for errors.
std::string names();

}  // namespace attnlite::families
