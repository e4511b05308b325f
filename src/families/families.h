// attnlite — the registered model families (internal), in registration order: a family's
// position is its number in the C API (al_model_kind).
#pragma once
#include <string_view>
#include <vector>

#include "families/family.h"

namespace attnlite::families {

const std::vector<const Family*>& all();
// The family registered under `name`, or nullptr.
const Family* find(std::string_view name);
// "transformer, bahdanau, lm or vit": the names, for errors.
std::string names();

}  // namespace attnlite::families
