// attnlite eval: corpus BLEU-4 (on the book's tokens and sacreBLEU's 13a) and the book's
// bleu(k=2) of a model on a test set.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "attnlite/vocab.h"
#include "common.h"

namespace attnlite::cli {

namespace {

const char* kEvalHelp =
    "usage: attnlite eval [options] FILE.tsv     (- reads standard input)\n"
    "       attnlite eval --perplexity FILE [--model M] [--json]\n"
    "\n"
    "Translates every English sentence of FILE ('english<TAB>french' per line, as\n"
    "tools/splits.py writes the dev and test splits) and scores the translations against\n"
    "every French reference given for that sentence. Lines whose English is the same once\n"
    "preprocessed as the book does are one sentence with several references; the model\n"
    "translates its first form as written (case kept). Prints:\n"
    "  BLEU-4 (book tokens)  corpus BLEU-4 (clipped n-gram precisions over the corpus,\n"
    "                        brevity penalty, no smoothing) with translation and references\n"
    "                        lowercased and tokenized as the book preprocesses them\n"
    "  sacreBLEU 13a         what sacreBLEU's default BLEU() gives for the translations as\n"
    "                        printed against the references as written: its 13a tokenizer,\n"
    "                        case-sensitive, exp smoothing (case:mixed|eff:no|tok:13a|\n"
    "                        smooth:exp)\n"
    "  book bleu(k=2) mean   the book's bleu(k=2) over the pairs (book tokens)\n"
    "and, when there are any, how many translations contain <unk>. The precisions and the\n"
    "length ratio on the next line are those of the book-token BLEU-4. --json keys:\n"
    "corpus_bleu4 (book tokens), sacrebleu_13a, book_bleu2_mean, unk_outputs, hyp_len and\n"
    "ref_len (book tokens), sentences, pairs, seconds, beam, alpha, int8, style.\n"
    "\n"
    "Input styles: how the English is typed before it is translated (the translator\n"
    "normalizes it as always, docs/input.md):\n"
    "  written               as in FILE\n"
    "  no-final-punct        without the run of . ! ? that ends it\n"
    "  lower                 A-Z lowercased\n"
    "  lower-no-final-punct  both\n"
    "--styles scores all four (text: one line each; --json: the keys above for\n"
    "written, and \"styles\": {style: {corpus_bleu4, sacrebleu_13a, book_bleu2_mean,\n"
    "unk_outputs}}).\n"
    "\n"
    "options:\n"
    "  --model NAME|PATH  a shipped model name or a .safetensors file (default: transformer-fra-bpe)\n"
    "  --beam K           beam search with K hypotheses (default 1: greedy)\n"
    "  --alpha A          length penalty of beam search (default 0)\n"
    "  --d2l-compat       the book's decoder positions (Transformer)\n"
    "  --batch N          translate up to N sentences together, those of like source\n"
    "                     lengths (1..256; default 32; finished sentences leave their\n"
    "                     batch: about twice as fast as 1 on the default model's test split)\n"
    "  --out FILE         write 'english<TAB>translation' per sentence (English as translated)\n"
    "  --style S          type the English in style S (default written; see above)\n"
    "  --styles           score every style\n"
    "  --json             one JSON object instead of the text summary\n"
    "\n"
    "--perplexity FILE: a language model (default lm-fra) reads each line of FILE (one\n"
    "sentence per line) as <bos> w1 .. wn and predicts w1 .. wn <eos>; prints\n"
    "'perplexity P' with P = exp(NLL / N), NLL the summed -log p (float64) of the N\n"
    "predicted tokens. Empty lines and sentences longer than the context are skipped\n"
    "(counted on stderr).\n";

// The styles of typing a sentence that --style names (tools/attnlite_tools/normalize.py's
// STYLES: the same functions).
std::string drop_final_punctuation(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '.' || s.back() == '!' || s.back() == '?'))
    s.pop_back();
  return s;
}

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
  return s;
}

const char* const kStyles[] = {"written", "no-final-punct", "lower", "lower-no-final-punct"};

std::string styled(const std::string& english, const std::string& style) {
  if (style == "written") return english;
  if (style == "no-final-punct") return drop_final_punctuation(english);
  if (style == "lower") return ascii_lower(english);
  return ascii_lower(drop_final_punctuation(english));
}

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
    std::fputs(kEvalHelp, stdout);
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
  std::string style = "written";
  if (args.value("--style", &style)) {
    bool known = false;
    for (const char* k : kStyles) known = known || style == k;
    if (!known)
      throw UsageError{"--style must be written, no-final-punct, lower or lower-no-final-punct, got '" +
                       style + "'"};
  }
  const bool all_styles = args.flag("--styles");
  if (all_styles && style != "written") throw UsageError{"give --style or --styles, not both"};
  DecodeOptions opts;
  opts.d2l_compat = args.flag("--d2l-compat");
  opts.beam_size = args.int_value("--beam", 1, 1, 64);
  opts.length_penalty = alpha_value(args);
  opts.attention = false;
  const int batch = args.int_value("--batch", 32, 1, 256);
  const auto files = args.positionals();
  if (files.size() != 1) throw UsageError{"give one test file (english<TAB>french per line)"};

  std::ifstream fin;
  if (files[0] != "-") {
    fin.open(files[0]);
    if (!fin) throw Error("cannot open '" + files[0] + "'");
  }
  std::istream& in = files[0] == "-" ? std::cin : fin;
  // Sentences grouped by their preprocessed English, in first-seen order: the English as
  // first written (what is translated) and every reference, as written and preprocessed.
  struct Sentence {
    std::string english;
    std::vector<std::string> refs, refs_book;
    long line;  // the first line it is on
  };
  std::vector<Sentence> order;
  std::map<std::string, size_t> index;
  std::string line;
  long lineno = 0, pairs = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos)
      throw Error(files[0] + ":" + std::to_string(lineno) + ": expected 'english<TAB>french'");
    const std::string en_raw = line.substr(0, tab), fr_raw = line.substr(tab + 1);
    const std::string en = preprocessed(en_raw);
    const std::string fr = preprocessed(fr_raw);
    if (en.empty() || fr.empty())
      throw Error(files[0] + ":" + std::to_string(lineno) + ": an empty side");
    auto [it, fresh] = index.try_emplace(en, order.size());
    if (fresh) order.push_back({en_raw, {}, {}, lineno});
    order[it->second].refs.push_back(fr_raw);
    order[it->second].refs_book.push_back(fr);
    ++pairs;
  }
  if (order.empty()) throw Error("no sentence pairs in '" + files[0] + "'");

  auto model = Model::load(resolve_model(model_arg));
  Limits lim;
  lim.max_beam = opts.beam_size;
  lim.max_batch = batch;
  Translator tr(model, lim);
  std::ofstream out;
  if (!out_path.empty()) {
    out.open(out_path);
    if (!out) throw Error("cannot write '" + out_path + "'");
  }
  struct Score {
    CorpusBleu corpus;                           // the book's tokens
    CorpusBleu sacre = CorpusBleu::sacrebleu();  // 13a, exp smoothing, case kept
    double book = 0;
    long unk_outputs = 0;
    double secs = 0;
  };
  // Each sentence's English in style st and its translation, decoded `batch` at a time in the
  // order of their source lengths (a batch runs until its longest translation ends).
  std::vector<std::string> english(order.size()), hyps(order.size());
  std::vector<size_t> by_length(order.size());
  std::vector<size_t> length(order.size());
  std::vector<std::string_view> views((size_t)batch);
  auto translate_all = [&](const std::string& st) {
    for (size_t i = 0; i < order.size(); ++i) {
      english[i] = styled(order[i].english, st);
      length[i] = batch > 1 ? model->source_tokens(english[i]).size() : 0;
      by_length[i] = i;
    }
    std::stable_sort(by_length.begin(), by_length.end(),
                     [&](size_t a, size_t b) { return length[a] < length[b]; });
    for (size_t at = 0; at < order.size(); at += (size_t)batch) {
      const int n = (int)std::min(order.size() - at, (size_t)batch);
      for (int k = 0; k < n; ++k) views[(size_t)k] = english[by_length[at + (size_t)k]];
      try {
        tr.translate_batch(views.data(), n, opts);
      } catch (const ItemError& e) {  // a sentence refused (in this style): named by its line
        throw Error(files[0] + ":" + std::to_string(order[by_length[at + (size_t)e.index()]].line) +
                    ": the English" + (st == "written" ? std::string() : " typed " + st) + ": " + e.reason());
      }
      for (int k = 0; k < n; ++k) hyps[by_length[at + (size_t)k]] = tr.result(k).text;
    }
  };
  auto score = [&](const std::string& st, bool write) {
    Score sc;
    const auto t0 = std::chrono::steady_clock::now();
    translate_all(st);
    for (size_t i = 0; i < order.size(); ++i) {
      const Sentence& s = order[i];
      const std::string& hyp = hyps[i];
      const std::string hyp_book = preprocessed(hyp);
      sc.corpus.add(hyp_book, s.refs_book);
      sc.sacre.add(hyp, s.refs);
      for (const auto& fr : s.refs_book) sc.book += bleu(hyp_book, fr, 2);
      if (hyp.find("<unk>") != std::string::npos) ++sc.unk_outputs;
      if (write && out) out << english[i] << '\t' << hyp << '\n';
    }
    sc.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return sc;
  };
  const Score first = score(style, true);
  const CorpusBleu& corpus = first.corpus;
  const double secs = first.secs;
  const long unk_outputs = first.unk_outputs;
  const double b4 = 100 * corpus.score(), b2 = first.book / (double)pairs;
  const double sb = 100 * first.sacre.score();
  std::vector<std::pair<std::string, Score>> others;
  if (all_styles)
    for (const char* k : kStyles)
      if (k != style) others.emplace_back(k, score(k, false));
  if (as_json) {
    nlohmann::json j = {{"sentences", order.size()}, {"pairs", pairs}, {"corpus_bleu4", b4},
                        {"sacrebleu_13a", sb}, {"book_bleu2_mean", b2},
                        {"unk_outputs", unk_outputs}, {"hyp_len", corpus.hyp_len()},
                        {"ref_len", corpus.ref_len()}, {"seconds", secs},
                        {"beam", opts.beam_size}, {"alpha", opts.length_penalty},
                        {"int8", model->is_int8()}, {"style", style}};
    if (all_styles) {
      auto entry = [&](const Score& sc) {
        return nlohmann::json{{"corpus_bleu4", 100 * sc.corpus.score()},
                              {"sacrebleu_13a", 100 * sc.sacre.score()},
                              {"book_bleu2_mean", sc.book / (double)pairs},
                              {"unk_outputs", sc.unk_outputs}};
      };
      j["styles"][style] = entry(first);
      for (const auto& [k, sc] : others) j["styles"][k] = entry(sc);
    }
    std::printf("%s\n", j.dump().c_str());
  } else if (all_styles) {
    std::printf("%zu sentences (%ld pairs), BLEU-4 (book tokens) / sacreBLEU 13a by input style:\n",
                order.size(), pairs);
    std::printf("  %-22s %6.2f / %6.2f\n", style.c_str(), b4, sb);
    for (const auto& [k, sc] : others)
      std::printf("  %-22s %6.2f / %6.2f\n", k.c_str(), 100 * sc.corpus.score(), 100 * sc.sacre.score());
  } else {
    std::printf("%zu sentences (%ld pairs): BLEU-4 %.2f (book tokens), sacreBLEU 13a %.2f, "
                "book bleu(k=2) mean %.4f\n",
                order.size(), pairs, b4, sb, b2);
    std::printf("  precisions %.3f %.3f %.3f %.3f, length ratio %.3f; %.2f s (%.0f sentences/s)\n",
                corpus.precision(1), corpus.precision(2), corpus.precision(3),
                corpus.precision(4), (double)corpus.hyp_len() / (double)corpus.ref_len(), secs,
                (double)order.size() / secs);
    if (unk_outputs)
      std::printf("  %ld translation%s contain%s <unk>\n", unk_outputs, unk_outputs > 1 ? "s" : "",
                  unk_outputs > 1 ? "" : "s");
  }
  return kOk;
}

}  // namespace attnlite::cli
