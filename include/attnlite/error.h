// attnlite — errors. Every failure at the API edge is an attnlite::Error with a message
// that names the problem; kernels themselves never throw or exit.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace attnlite {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// An input of a batch that the library refuses, a sentence or an image: what() names it by
// its index in the batch, from 0, then gives the reason ("sentence 1 of 3: empty sentence");
// index() and reason() are the two parts, for a caller that names the input in its own terms
// (a line of a file, a place in a longer list).
class ItemError : public Error {
 public:
  // name: how the message names the input ("sentence 1 of 3")
  ItemError(const std::string& name, int index, const std::string& reason)
      : Error(name + ": " + reason), index_(index), reason_at_(name.size() + 2) {}
  int index() const { return index_; }
  const char* reason() const { return what() + reason_at_; }

 private:
  int index_;
  size_t reason_at_;
};

}  // namespace attnlite
