// attnlite tokenize: the source tokens a translator reads, one line per sentence.
#include <cstdio>
#include <iostream>
#include <string>

#include "attnlite/bpe.h"
#include "attnlite/model.h"
#include "attnlite/normalize.h"
#include "common.h"

namespace attnlite::cli {

namespace {

const char* kTokenizeHelp =
    "usage: attnlite tokenize [--model NAME|PATH] [--text] [SENTENCE ...]   (or one per line on stdin)\n"
    "\n"
    "Prints the source tokens the model reads from each sentence, separated by spaces, one\n"
    "line per sentence: for a sub-word model (a byte-pair merge table in its file) the\n"
    "pieces, '_' ending each word; for the book's models the preprocessed words. Each\n"
    "sentence is first normalized as a translator normalizes it (typographic quotes and\n"
    "apostrophes, dashes, Unicode spaces; docs/input.md). A line with no token prints\n"
    "empty. The same tokens as tools/bpe.py segment of the normalized text.\n"
    "\n"
    "options:\n"
    "  --model NAME|PATH  a shipped model name or a .safetensors file (default: transformer-fra-bpe)\n"
    "  --text             print each normalized sentence instead of its tokens (no model is read;\n"
    "                     the same text as tools/normalize.py)\n";

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::fputs(kTokenizeHelp, stdout);
    return kOk;
  }
  std::string model_arg;
  const bool text_only = args.flag("--text");
  args.value("--model", &model_arg);
  if (text_only && !model_arg.empty()) throw UsageError{"--text reads no model: give --model or --text"};
  const auto sentences = args.positionals();
  std::shared_ptr<const Model> model;
  if (!text_only) model = Model::load(resolve_model(model_arg));
  std::string out;
  auto one = [&](const std::string& s) {
    out.clear();
    if (text_only) {
      out = normalize_source(s);
    } else {
      for (const auto& t : model->source_tokens(s)) {
        if (!out.empty()) out += ' ';
        out += t;
      }
    }
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stdout);
  };
  if (!sentences.empty()) {
    for (const auto& s : sentences) one(s);
    return kOk;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    one(line);
  }
  return kOk;
}

}  // namespace attnlite::cli
