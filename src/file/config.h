// attnlite — reading a model file's metadata (internal): the JSON values under
// `__metadata__` (attnlite.config, vocabularies, labels), each checked with an error that
// names the key. What the model families' loaders share.
#pragma once
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/ops/ops.h"
#include "attnlite/safetensors.h"
#include "attnlite/vocab.h"

namespace attnlite::config {

using json = nlohmann::json;

// The JSON value of metadata `key` (throws when it is missing or not JSON).
json metadata_json(const SafeTensors& st, const std::string& key);
// Config value `key`: an integer in [lo, hi] (def when absent, in the second form); a boolean
// (def when absent); a finite number > 0 (def when absent); one of `names` (def when absent),
// returned as its index.
int integer(const json& c, const char* key, int lo, int hi);
int integer(const json& c, const char* key, int lo, int hi, int def);
bool boolean(const json& c, const char* key, bool def);
float positive(const json& c, const char* key, float def);
int choice(const json& c, const char* key, std::initializer_list<const char*> names, int def);
// "activation": "relu" (the default) or "gelu"; "layer_norm_eps" in (0, 1), default 1e-5.
ops::Act activation(const json& c, ops::Act def = ops::Act::Relu);
float layer_norm_eps(const json& c);
// A vocabulary (JSON array of tokens) of exactly `size` tokens from metadata `key`.
Vocab vocabulary(const SafeTensors& st, const std::string& key, int size);
// A JSON array of strings from metadata `key` (`what` names an element in errors).
std::vector<std::string> strings(const SafeTensors& st, const std::string& key, const char* what);

}  // namespace attnlite::config
