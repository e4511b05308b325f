// attnlite command line — shared helpers.
#pragma once
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attnlite/device.h"

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

// Where a command's time went: reading the model (on cuda, CUDA's start-up runs beside it:
// CudaStartUp), making the session (on cuda: what is left of the GPU's start-up, the weights'
// upload, the workspace), its first call (on cuda:
// loading the kernels and cuBLAS where they are not yet), the calls after it. At the end:
// - with --times (translate, generate, classify), one line on stderr, in milliseconds:
//   "attnlite CMD: times (ms): load L, set-up S, first call F, rest R, total T", T all of the
//   command from its start; what a whole process takes beyond T is the program's start and
//   exit (on cuda: the context's teardown);
// - with --device cuda, whether the GPU paid off: when the set-up took longer than the work
//   after it and the work was little (less than one batch; any generation), a note on stderr
//   says that the CPU is likely faster for so little work. Full batches are where the GPU
//   pays off (docs/cuda.md), so a run of one or more full batches gets no note.
class Times {
 public:
  explicit Times(bool print);  // the clock starts; print: --times
  void loaded();               // the model is read
  void made();                 // the session is made
  void called();               // a call of the session returned (the first one is kept)
  // `what` names the work ("3 sentences"); `little`: the work was small for a GPU (less than
  // one batch); `cuda`: the session runs on the GPU. Prints what applies of the two above.
  void done(const char* cmd, const std::string& what, bool little, bool cuda) const;

 private:
  bool print_;
  double t0_ = 0, load_ = 0, made_ = 0, first_ = 0;
};

// With --device cuda, CUDA's start-up (attnlite::cuda_start_up: the driver, the context,
// cuBLAS's libraries) on a thread of its own from here, while the command reads its model;
// the object's end waits for that thread (cuBLAS's loading thread is the process's, as when
// a session starts it), so a command that fails early still waits for the context.
class CudaStartUp {
 public:
  explicit CudaStartUp(bool cuda) {
    if (cuda) f_ = std::async(std::launch::async, attnlite::cuda_start_up);
  }

 private:
  std::future<void> f_;
};

// --alpha A (beam search length penalty): a number in [0, 10]; 0 when absent.
float alpha_value(Args& args);
// --precision fp32|bf16 (the weights' precision on a device, attnlite::Precision): fp32 when
// absent; bf16 needs --device cuda (`cuda`), else a UsageError.
attnlite::Precision precision_value(Args& args, bool cuda);
// The help lines of --precision, for the commands' usage texts.
#define ATTNLITE_CLI_PRECISION_HELP                                                         \
  "  --precision P      fp32 or bf16 (default fp32); bf16, with --device cuda, holds\n"   \
  "                     the linear layers' matrices in bfloat16: half their memory, and\n" \
  "                     half the bytes a step of up to 64 rows reads (larger ones widen\n" \
  "                     them first); sums stay fp32; an output may differ from fp32's\n"   \
  "                     where two candidates are close\n"
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
