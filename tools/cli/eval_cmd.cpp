// attnlite eval: corpus BLEU-4 and the book's bleu(k=2) of a model on a test set.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "attnlite/vocab.h"
#include "common.h"

namespace attnlite::cli {

namespace {

const char* kHelp =
    "usage: attnlite eval [options] FILE.tsv     (- reads standard input)\n"
    "       attnlite eval --perplexity FILE [--model M] [--json]\n"
    "\n"
    "Translates every English sentence of FILE ('english<TAB>french' per line, as\n"
    "tools/splits.py writes the dev and test splits) and scores the translations against\n"
    "every French reference given for that sentence. Prints corpus BLEU-4 (standard: clipped\n"
    "n-gram precisions over the corpus, brevity penalty) and the mean of the book's\n"
    "bleu(k=2) over the pairs. Both sides are preprocessed as the book does first.\n"
    "\n"
    "options:\n"
    "  --model NAME|PATH  a shipped model name or a .safetensors file (default: transformer-fra)\n"
    "  --beam K           beam search with K hypotheses (default 1: greedy)\n"
    "  --alpha A          length penalty of beam search (default 0)\n"
    "  --d2l-compat       the book's decoder positions (Transformer)\n"
    "  --out FILE         write 'english<TAB>translation' per sentence\n"
    "  --json             one JSON object instead of the text summary\n"
    "\n"
    "--perplexity FILE: a language model (default lm-fra) reads each line of FILE (one\n"
    "sentence per line) as <bos> w1 .. wn and predicts w1 .. wn <eos>; prints\n"
    "'perplexity P' with P = exp(NLL / N), NLL the summed -log p (float64) of the N\n"
    "predicted tokens. Empty lines and sentences longer than the context are skipped\n"
    "(counted on stderr).\n";

int eval_perplexity(const std::string& path, const std::string& model_arg, bool as_json) {
  std::ifstream fin;
  if (path != "-") {
    fin.open(path);
    if (!fin) throw Error("cannot open '" + path + "'");
  }
  std::istream& in = path == "-" ? std::cin : fin;
  auto model = Model::load(resolve_model(model_arg.empty() ? "lm-fra" : model_arg));
  Generator gen(model);
  Perplexity p;
  std::string line;
  long lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    try {
      gen.score(line, p);
    } catch (const Error& e) {
      throw Error(path + ":" + std::to_string(lineno) + ": " + e.what());
    }
  }
  if (!p.sentences) throw Error("no sentence of '" + path + "' could be scored");
  if (p.skipped)
    std::fprintf(stderr, "attnlite eval: skipped %ld line%s (empty, or longer than the context of %d positions)\n",
                 p.skipped, p.skipped > 1 ? "s" : "", gen.context());
  if (as_json) {
    nlohmann::json j = {{"perplexity", p.value()}, {"nll", p.nll}, {"tokens", p.tokens},
                        {"sentences", p.sentences}, {"skipped", p.skipped}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("perplexity %.6f\n", p.value());
  }
  return kOk;
}

}  // namespace

int cmd_eval(int argc, char** argv) {
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::fputs(kHelp, stdout);
    return kOk;
  }
  std::string model_arg, out_path, ppl_path;
  args.value("--model", &model_arg);
  args.value("--out", &out_path);
  const bool as_json = args.flag("--json");
  if (args.value("--perplexity", &ppl_path)) {
    if (!args.positionals().empty()) throw UsageError{"--perplexity takes its file; give no other"};
    return eval_perplexity(ppl_path, model_arg, as_json);
  }
  DecodeOptions opts;
  opts.d2l_compat = args.flag("--d2l-compat");
  opts.beam_size = args.int_value("--beam", 1, 1, 64);
  opts.length_penalty = alpha_value(args);
  opts.attention = false;
  const auto files = args.positionals();
  if (files.size() != 1) throw UsageError{"give one test file (english<TAB>french per line)"};

  std::ifstream fin;
  if (files[0] != "-") {
    fin.open(files[0]);
    if (!fin) throw Error("cannot open '" + files[0] + "'");
  }
  std::istream& in = files[0] == "-" ? std::cin : fin;
  // english -> its references, in first-seen order
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> refs;
  std::string line;
  long lineno = 0, pairs = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos)
      throw Error(files[0] + ":" + std::to_string(lineno) + ": expected 'english<TAB>french'");
    const std::string en = preprocessed(line.substr(0, tab));
    const std::string fr = preprocessed(line.substr(tab + 1));
    if (en.empty() || fr.empty())
      throw Error(files[0] + ":" + std::to_string(lineno) + ": an empty side");
    auto [it, fresh] = refs.try_emplace(en);
    if (fresh) order.push_back(en);
    it->second.push_back(fr);
    ++pairs;
  }
  if (order.empty()) throw Error("no sentence pairs in '" + files[0] + "'");

  auto model = Model::load(resolve_model(model_arg));
  Limits lim;
  lim.max_beam = opts.beam_size;
  Translator tr(model, lim);
  std::ofstream out;
  if (!out_path.empty()) {
    out.open(out_path);
    if (!out) throw Error("cannot write '" + out_path + "'");
  }
  CorpusBleu corpus;
  double book = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& en : order) {
    const Translation& r = tr.translate(en, opts);
    const std::string hyp(r.text);
    const auto& rs = refs[en];
    corpus.add(hyp, rs);
    for (const auto& fr : rs) book += bleu(hyp, fr, 2);
    if (out) out << en << '\t' << hyp << '\n';
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double b4 = 100 * corpus.score(), b2 = book / (double)pairs;
  if (as_json) {
    nlohmann::json j = {{"sentences", order.size()}, {"pairs", pairs}, {"corpus_bleu4", b4},
                        {"book_bleu2_mean", b2}, {"hyp_len", corpus.hyp_len()},
                        {"ref_len", corpus.ref_len()}, {"seconds", secs},
                        {"beam", opts.beam_size}, {"alpha", opts.length_penalty},
                        {"int8", model->is_int8()}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%zu sentences (%ld pairs): corpus BLEU-4 %.2f, book bleu(k=2) mean %.4f\n",
                order.size(), pairs, b4, b2);
    std::printf("  precisions %.3f %.3f %.3f %.3f, length ratio %.3f; %.2f s (%.0f sentences/s)\n",
                corpus.precision(1), corpus.precision(2), corpus.precision(3),
                corpus.precision(4), (double)corpus.hyp_len() / (double)corpus.ref_len(), secs,
                (double)order.size() / secs);
  }
  return kOk;
}

}  // namespace attnlite::cli
