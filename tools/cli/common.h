// attnlite command line — shared helpers.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace attnlite::figures {
struct Figure;
}

namespace attnlite::cli {

// Exit codes: 0 ok, 1 a sentence or file failed, 2 bad usage.
constexpr int kOk = 0, kFailed = 1, kUsage = 2;

struct UsageError {
  std::string what;
};

// Weights as nested JSON arrays of `shape`, outermost first: element [i][j]... = at(i, j, ...)
// (attention weights of every layer and head, in the layout each command documents).
template <class At>
nlohmann::json nested_array(const std::vector<int>& shape, At&& at) {
  std::vector<int> idx(shape.size());
  auto level = [&](auto&& self, size_t d) -> nlohmann::json {
    nlohmann::json a = nlohmann::json::array();
    for (idx[d] = 0; idx[d] < shape[d]; ++idx[d])
      a.push_back(d + 1 == shape.size() ? nlohmann::json(at(idx)) : self(self, d + 1));
    return a;
  };
  return level(level, 0);
}

// The shipped model named `name` (e.g. "transformer-d2l"): next to an installed binary
// (../share/attnlite/models), in the source tree it was built from, or ./models.
// The model the commands use when none is given: the sub-word whole-corpus translator.
inline constexpr const char* kDefaultModel = "transformer-fra-bpe";
std::string default_model_path(const std::string& name = kDefaultModel);
std::string resolve_model(const std::string& arg);  // a path, or a shipped model's name

// Small argv walker: --flag, --key VALUE, --key=VALUE, positionals.
class Args {
 public:
  Args(int argc, char** argv, int first);
  bool flag(const std::string& name);
  bool value(const std::string& name, std::string* out);       // last occurrence
  std::vector<std::string> values(const std::string& name);    // every occurrence
  int int_value(const std::string& name, int def, int lo, int hi);
  // Remaining arguments; unknown --options are a UsageError.
  std::vector<std::string> positionals();

 private:
  std::vector<std::string> a_;
  std::vector<bool> used_;
};

// --alpha A (beam search length penalty): a number in [0, 10]; 0 when absent.
float alpha_value(Args& args);
// A sentence as the book preprocesses it: tokenized, tokens joined by single spaces.
std::string preprocessed(const std::string& text);

// The format of a figure written to `out`: `flag` (the --format value: png or svg, else a
// UsageError) when given, else svg when `out` ends in .svg, else png.
std::string figure_format(const std::string& flag, const std::string& out);
// Writes the figure as a PNG or an SVG file; throws attnlite::Error naming the path on failure.
void write_figure(const std::string& path, const figures::Figure& f, const std::string& format);

int cmd_translate(int argc, char** argv);
int cmd_heatmap(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_classify(int argc, char** argv);

}  // namespace attnlite::cli
