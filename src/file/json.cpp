// The library's JSON parser (json.h): nlohmann's SAX parser feeding its DOM builder.
#include "file/json.h"

#include <cstdint>

namespace attnlite {

nlohmann::json parse_json(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  nlohmann::json value;
  // json::parse(p, p + size) without a callback runs exactly this builder (allow_exceptions:
  // a syntax error throws parse_error; input after the value is an error too, strict).
  nlohmann::detail::json_sax_dom_parser<nlohmann::json> builder(value, true);
  nlohmann::json::sax_parse(p, p + size, &builder);
  return value;
}

}  // namespace attnlite
