// attnlite — command line: translate English to French with the book's models, continue
// French text with the language model, classify digits with the Vision Transformer, and draw
// the chapter's attention figures.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "attnlite/error.h"
#include "common.h"

namespace {

const char* kMainHelp =
    "attnlite — attention models from d2l.ai chapter 10, outside Python\n"
    "\n"
    "usage: attnlite <command> [options]\n"
    "\n"
    "commands:\n"
    "  translate   translate English sentences to French (arguments, or one per line on stdin)\n"
    "  generate    continue a French prompt with the language model (greedy or sampled)\n"
    "  classify    which digit is in an image (the Vision Transformer)\n"
    "  heatmap     render the chapter's attention figures to PNG\n"
    "  eval        corpus BLEU-4 of a translator on a test set, or --perplexity of a\n"
    "              language model on a text file\n"
    "  tokenize    the source tokens (words or sub-word pieces) a translator reads\n"
    "  info        describe a model file\n"
    "\n"
    "Run `attnlite <command> --help` for a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace attnlite::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kMainHelp, argc < 2 ? stderr : stdout);
    return argc < 2 ? kUsage : kOk;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "translate") return cmd_translate(argc, argv);
    if (cmd == "generate") return cmd_generate(argc, argv);
    if (cmd == "classify") return cmd_classify(argc, argv);
    if (cmd == "heatmap") return cmd_heatmap(argc, argv);
    if (cmd == "info") return cmd_info(argc, argv);
    if (cmd == "eval") return cmd_eval(argc, argv);
    if (cmd == "tokenize") return cmd_tokenize(argc, argv);
    std::fprintf(stderr, "attnlite: unknown command '%s'\n\n%s", cmd.c_str(), kMainHelp);
    return kUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "attnlite %s: %s (see `attnlite %s --help`)\n", cmd.c_str(), e.what.c_str(), cmd.c_str());
    return kUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlite %s: error: %s\n", cmd.c_str(), e.what());
    return kFailed;
  }
}
