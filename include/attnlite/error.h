// attnlite — errors. Every failure at the API edge is an attnlite::Error with a message
// that names the problem; kernels themselves never throw or exit.
#pragma once
#include <stdexcept>
#include <string>

namespace attnlite {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace attnlite
