// attnlite — the JSON parser of the library (internal): safetensors headers, model metadata,
// the byte-pair merge table.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>

namespace attnlite {

// The JSON value of data[0, size); throws nlohmann::json::parse_error (a json::exception) as
// nlohmann::json::parse does, for the same input. It builds the value with the library's DOM
// builder alone: json::parse also compiles in the builder that calls a filter callback (on a
// std::vector<bool> of its own), which attnlite never passes: 11 KB of the WebAssembly
// module (docs/web.md). One instantiation of the parser, over bytes, for every caller.
nlohmann::json parse_json(const void* data, size_t size);

}  // namespace attnlite
