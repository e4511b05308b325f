#include "file/config.h"

#include <cmath>
#include <cstdint>

#include "attnlite/error.h"
#include "file/json.h"

namespace attnlite::config {

namespace {
// "model config '<key>' <what>", thrown.
[[noreturn]] void bad(const char* key, const std::string& what) {
  throw Error(std::string("model config '") + key + "' " + what);
}
}  // namespace

json metadata_json(const SafeTensors& st, const std::string& key) {
  const auto& md = st.metadata();
  auto it = md.find(key);
  if (it == md.end()) throw Error("model metadata lacks '" + key + "'");
  try {
    return parse_json(it->second.data(), it->second.size());
  } catch (const json::exception& e) {
    throw Error("model metadata '" + key + "' is not valid JSON: " + e.what());
  }
}

int integer(const json& c, const char* key, int lo, int hi) {
  auto it = c.find(key);
  if (it == c.end()) throw Error(std::string("model config lacks '") + key + "'");
  if (!it->is_number_integer()) bad(key, "is not an integer");
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > hi)
    bad(key, "= " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return (int)v;
}

int integer(const json& c, const char* key, int lo, int hi, int def) {
  return c.contains(key) ? integer(c, key, lo, hi) : def;
}

float positive(const json& c, const char* key, float def) {
  auto it = c.find(key);
  if (it == c.end()) return def;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || !(it->get<double>() > 0))
    bad(key, "must be a number > 0");
  return (float)it->get<double>();
}

int choice(const json& c, const char* key, std::initializer_list<const char*> names, int def) {
  auto it = c.find(key);
  if (it == c.end()) return def;
  if (!it->is_string()) bad(key, "is not a string");
  const std::string v = it->get<std::string>();
  std::string expected;
  int i = 0;
  for (const char* n : names) {
    if (v == n) return i;
    expected += std::string(i ? (i + 1 == (int)names.size() ? " or " : ", ") : "") + n;
    ++i;
  }
  bad(key, "= '" + v + "' (expected " + expected + ")");
}

bool boolean(const json& c, const char* key, bool def) {
  auto it = c.find(key);
  if (it == c.end()) return def;
  if (!it->is_boolean()) bad(key, "is not a boolean");
  return it->get<bool>();
}

ops::Act activation(const json& c, ops::Act def) {
  if (!c.contains("activation")) return def;
  const json& a = c["activation"];
  if (a.is_string() && a.get<std::string>() == "relu") return ops::Act::Relu;
  if (a.is_string() && a.get<std::string>() == "gelu") return ops::Act::Gelu;
  throw Error("model config 'activation' must be \"relu\" or \"gelu\"");
}

float layer_norm_eps(const json& c) {
  if (!c.contains("layer_norm_eps")) return 1e-5f;
  const json& v = c["layer_norm_eps"];
  if (!v.is_number() || !(v.get<double>() > 0) || !(v.get<double>() < 1))
    throw Error("model config 'layer_norm_eps' must be a number in (0, 1)");
  return (float)v.get<double>();
}

Vocab vocabulary(const SafeTensors& st, const std::string& key, int size) {
  std::vector<std::string> toks = strings(st, key, "token");
  if ((int)toks.size() != size)
    throw Error("'" + key + "' has " + std::to_string(toks.size()) + " tokens but the config says " +
                std::to_string(size));
  try {
    return Vocab(std::move(toks));
  } catch (const Error& e) {
    throw Error(key + ": " + e.what());
  }
}

std::vector<std::string> strings(const SafeTensors& st, const std::string& key, const char* what) {
  const json j = metadata_json(st, key);
  if (!j.is_array()) throw Error("model metadata '" + key + "' is not a JSON array");
  std::vector<std::string> out;
  for (const auto& t : j) {
    if (!t.is_string()) throw Error("model metadata '" + key + "' holds a non-string " + what);
    out.push_back(t.get<std::string>());
  }
  return out;
}

}  // namespace attnlite::config
