// attnlite translate — English to French with a shipped or given model.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/ops/ops.h"
#include "attnlite/sentences.h"
#include "attnlite/translate.h"
#include "common.h"

namespace attnlite::cli {

namespace {

const char* kTranslateHelp =
    "usage: attnlite translate [options] [TEXT ...]\n"
    "\n"
    "Translates each TEXT (or, with none, each line of standard input, one translation\n"
    "per output line) with greedy decoding as d2l's predict_seq2seq, or with beam search.\n"
    "A text of several sentences is cut into them (after . ! ? and a space; not after\n"
    "Mr. and the like: docs/input.md), each is translated alone and the translations\n"
    "are joined by a space: \"I'm home. I'm happy.\" -> \"Je suis chez moi. Je suis\n"
    "heureux.\"\n"
    "\n"
    "options:\n"
    "  --model PATH|NAME  model file, or a shipped model name: transformer-fra-bpe\n"
    "                     (default: the whole-corpus Transformer on sub-words, cased,\n"
    "                     int8), transformer-fra (the whole-corpus word model, lowercase\n"
    "                     words), transformer-d2l, bahdanau-d2l (the book's models)\n"
    "  --ref TEXT         reference translation (repeat once per TEXT, in order);\n"
    "                     prints the book's bleu(k=2) after a tab\n"
    "  --tsv              stdin lines are 'english<TAB>french reference'\n"
    "  --whole            translate each TEXT or line as one sentence, uncut\n"
    "  --json             one JSON object per sentence: tokens, scores, attention shapes;\n"
    "                     \"input\" numbers its TEXT or line from 1, \"part\" of \"parts\"\n"
    "                     its sentences\n"
    "  --weights          with --json, include every attention weight\n"
    "  --d2l-compat       Transformer: position 0 at every decoding step, exactly as the book's\n"
    "                     predict_seq2seq (default: position t at step t)\n"
    "  --max-steps N      stop after N decoding steps (default: the model's num_steps)\n"
    "  --beam K           beam search with K hypotheses (1..64; default 1 = greedy); --json\n"
    "                     lists the K best, --verbose prints them\n"
    "  --alpha A          length penalty: hypotheses are ranked by logp / length^A\n"
    "                     (default 0 = summed log-probabilities)\n"
    "  --device cpu|cuda  where the model runs (default cpu; cuda\n"
    "                     needs a build with -DATTNLITE_CUDA=ON and a CUDA device)\n"
    ATTNLITE_CLI_PRECISION_HELP
    "  --batch N          decode up to N lines together (1..256; default 1 on the CPU,\n"
    "                     256 on cuda, 1024 / beam past --beam 4), lines of like\n"
    "                     lengths together (16 x N lines are read, then decoded shortest\n"
    "                     first), printed in input order; scores and weights may differ\n"
    "                     from one line at a time in their last float bits (on the CPU\n"
    "                     a file translates about twice as fast at --batch 32 as at 1)\n"
    "  --kernels K        CPU kernels: simd (the default where the CPU has them) or scalar,\n"
    "                     the reference (to compare with other builds, e.g. WebAssembly)\n"
    "  --verbose          print 'english => french, bleu x' like the book\n"
    "  --tokens           print the model's output tokens joined by spaces (sub-word models\n"
    "                     print their pieces; the text is the pieces detokenized)\n"
    "  --times            at the end, where the time went on stderr (ms): loading the\n"
    "                     model (on cuda, the GPU's start-up begins beside it), making\n"
    "                     the translator (on cuda: the rest of the start-up), the\n"
    "                     first call, the rest\n"
    "  -h, --help         this text\n"
    "\n"
    "Words the model does not know become <unk> (a warning names them on stderr); a\n"
    "sub-word model spells every word with pieces, and only characters it has never seen\n"
    "become <unk>. The exit\n"
    "status is 1 if any sentence failed, 2 on bad usage.\n";

using json = nlohmann::json;

// printf into a string: a sentence's output waits there until the lines before it are printed.
#if defined(__GNUC__)
void appendf(std::string* s, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
void appendf(std::string* s, const char* fmt, ...) {
  char buf[512];
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof buf) {
    const size_t at = s->size();
    s->resize(at + (size_t)n + 1);
    std::vsnprintf(&(*s)[at], (size_t)n + 1, fmt, ap2);
    s->resize(at + (size_t)n);
  } else if (n > 0) {
    s->append(buf, (size_t)n);
  }
  va_end(ap2);
}

json attention_json(const Translation& r, bool weights) {
  json a;
  const int steps = r.steps;
  if (r.layers) {
    a["encoder_self_shape"] = {r.layers, r.heads, r.S, r.S};
    a["decoder_self_shape"] = {r.layers, steps, r.heads, steps};
    a["cross_shape"] = {r.layers, steps, r.heads, r.S};
  } else {
    a["cross_shape"] = {steps, r.S};
  }
  if (!weights || !r.cross) return a;
  if (r.layers) {
    using I = const std::vector<int>&;
    a["encoder_self"] = nested_array({r.layers, r.heads, r.S, r.S},
                                     [&](I i) { return r.enc_self_at(i[0], i[1], i[2], i[3]); });
    a["decoder_self"] = nested_array({r.layers, steps, r.heads, steps},
                                     [&](I i) { return r.dec_self_at(i[0], i[1], i[2], i[3]); });
    a["cross"] = nested_array({r.layers, steps, r.heads, r.S},
                              [&](I i) { return r.cross_at(i[0], i[1], i[2], i[3]); });
  } else {
    a["cross"] = nested_array({steps, r.S}, [&](const std::vector<int>& i) { return r.cross_at(0, i[0], 0, i[1]); });
  }
  return a;
}

json nbest_json(const NBest& nb, const Vocab& vocab) {
  json list = json::array();
  for (const Hypothesis& h : nb) {
    json toks = json::array(), ids = json::array(), probs = json::array();
    for (int k = 0; k < h.num_tokens; ++k) {
      toks.push_back(vocab.token(h.tokens[k]));
      ids.push_back(h.tokens[k]);
      probs.push_back(h.probs[k]);
    }
    list.push_back({{"translation", std::string(h.text)}, {"tokens", toks}, {"token_ids", ids},
                    {"scores", probs}, {"logp", h.logp}, {"score", h.score}, {"length", h.length},
                    {"eos", h.eos}});
  }
  return list;
}

}  // namespace

int cmd_translate(int argc, char** argv) {
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::fputs(kTranslateHelp, stdout);
    return kOk;
  }
  std::string model_arg;
  args.value("--model", &model_arg);
  std::vector<std::string> refs = args.values("--ref");
  const bool tsv = args.flag("--tsv"), as_json = args.flag("--json"),
             weights = args.flag("--weights"), verbose = args.flag("--verbose"),
             tokens_out = args.flag("--tokens"), whole = args.flag("--whole");
  Times times(args.flag("--times"));
  DecodeOptions opts;
  opts.d2l_compat = args.flag("--d2l-compat");
  opts.max_steps = args.int_value("--max-steps", 0, 1, 1000);
  opts.beam_size = args.int_value("--beam", 1, 1, 64);
  opts.length_penalty = alpha_value(args);
  std::string device_arg = "cpu";
  args.value("--device", &device_arg);
  if (device_arg != "cpu" && device_arg != "cuda")
    throw UsageError{"--device must be cpu or cuda, got '" + device_arg + "'"};
  const Precision precision = precision_value(args, device_arg == "cuda");
  std::string kernels_arg;
  if (args.value("--kernels", &kernels_arg)) {
    if (kernels_arg != "simd" && kernels_arg != "scalar")
      throw UsageError{"--kernels must be simd or scalar, got '" + kernels_arg + "'"};
    ops::use_kernels(kernels_arg == "simd" ? ops::KernelTable::Simd : ops::KernelTable::Scalar);
  }
  // On cuda, 256 lines a step (1,024 rows / the beam width for beams past 4): the default
  // model's held-out split ran 1.3x faster at 256 than at 64 on an H200 (docs/cuda.md)
  const int cuda_batch = std::max(1, std::min(256, 1024 / opts.beam_size));
  const int batch = args.int_value("--batch", device_arg == "cuda" ? cuda_batch : 1, 1, 256);
  std::vector<std::string> sentences = args.positionals();
  if (weights && !as_json) throw UsageError{"--weights needs --json"};
  if (tsv && !sentences.empty()) throw UsageError{"--tsv reads standard input; give no sentences"};
  if (!refs.empty() && (sentences.empty() || refs.size() != sentences.size()))
    throw UsageError{"give one --ref per TEXT argument (" + std::to_string(sentences.size()) +
                     " texts, " + std::to_string(refs.size()) + " references)"};

  CudaStartUp start_up(device_arg == "cuda");  // while the model is read
  auto model = Model::load(resolve_model(model_arg));
  times.loaded();
  Limits lim;
  lim.max_tgt_steps = std::max(model->num_steps(), opts.max_steps);
  lim.device = device_arg == "cuda" ? Device::CUDA : Device::CPU;
  lim.precision = precision;
  lim.max_beam = opts.beam_size;
  lim.max_batch = batch;
  Translator tr(model, lim);
  times.made();
  opts.attention = as_json;  // weights are only read for --json

  int failures = 0;
  // A sentence: part `part` of the `parts` cut from the `index`-th text of the input (one
  // unless --whole), and what it prints once translated: its translation (`text`; printed
  // with the other parts' as one line), its --json or --verbose lines (`out`, for stdout), its
  // warnings and errors (`err`, for stderr).
  struct Item {
    std::string src;
    std::string ref;  // the whole text's
    bool has_ref;
    size_t index;
    size_t part, parts;
    size_t length = 0;  // source tokens: the decoding order
    std::string text, out, err;
    bool ok = false;
  };
  // The book's bleu on the book's tokens (a sub-word model's text is cased and detokenized).
  auto text_bleu = [&](const std::string& text, const std::string& ref) {
    return model->bpe() ? bleu(preprocessed(text), preprocessed(ref), 2) : bleu(text, ref, 2);
  };
  // "sentence 3", or "sentence 3, part 2 of 4" for a text cut into several
  auto where = [](const Item& it) {
    std::string w = "sentence " + std::to_string(it.index + 1);
    if (it.parts > 1) w += ", part " + std::to_string(it.part + 1) + " of " + std::to_string(it.parts);
    return w;
  };
  // Sentence `it`'s result: row i of the Translator's last call.
  auto emit = [&](int i, Item& it) {
    const std::string& src = it.src;
    // a text cut into several sentences has its bleu once, on the joined translations
    const std::string* ref = it.has_ref && it.parts == 1 ? &it.ref : nullptr;
    const std::string at = where(it);
    std::string *out = &it.out, *err = &it.err;
    const Translation& r = tr.result(i);
    std::vector<std::string> unknown;
    if (!model->bpe())
      for (const auto& w : model->source_tokens(src))
        if (model->src_vocab().lookup(w) == model->src_vocab().unk_id) unknown.push_back(w);
    if (model->bpe() && r.num_unknown)
      appendf(err, "attnlite translate: warning: %s: %d character(s) the model has never seen become <unk>\n",
                   at.c_str(), r.num_unknown);
    if (!unknown.empty()) {
      std::string list;
      for (const auto& w : unknown) list += (list.empty() ? "" : ", ") + w;
      appendf(err, "attnlite translate: warning: %s: unknown word(s) become <unk>: %s\n",
                   at.c_str(), list.c_str());
    }
    if (r.truncated)
      appendf(err, "attnlite translate: warning: %s: longer than %d tokens, truncated as the book does\n",
                   at.c_str(), r.S - 1);
    const std::string text(r.text);
    const double b = ref ? text_bleu(text, *ref) : 0.0;
    it.ok = true;
    if (as_json) {
      json j;
      j["input"] = it.index + 1;
      j["part"] = it.part + 1;
      j["parts"] = it.parts;
      j["source"] = src;
      j["translation"] = text;
      json toks = json::array(), scores = json::array(), ids = json::array(), srcs = json::array();
      for (int k = 0; k < r.num_tokens; ++k) {
        toks.push_back(model->tgt_vocab().token(r.tokens[k]));
        ids.push_back(r.tokens[k]);
        scores.push_back(r.probs[k]);
      }
      for (int k = 0; k < r.S; ++k) srcs.push_back(model->src_vocab().token(r.src_ids[k]));
      j["tokens"] = toks;
      j["token_ids"] = ids;
      j["scores"] = scores;
      j["source_tokens"] = srcs;
      j["source_valid_len"] = r.src_valid;
      j["unknown"] = unknown;
      j["truncated"] = r.truncated;
      j["steps"] = r.steps;
      j["eos"] = r.eos;
      j["model"] = model->kind_name();
      j["positions"] = opts.d2l_compat ? "d2l" : "step";
      j["beam"] = opts.beam_size;
      j["length_penalty"] = opts.length_penalty;
      j["nbest"] = nbest_json(tr.nbest(i), model->tgt_vocab());
      j["attention"] = attention_json(r, weights);
      if (it.has_ref) {
        j["reference"] = it.ref;
        if (ref) j["bleu"] = b;
      }
      *out += j.dump() + "\n";
    } else if (verbose) {
      appendf(out, "%s => %s", src.c_str(), text.c_str());
      if (ref) appendf(out, ", bleu %.3f", b);
      appendf(out, "\n");
      if (opts.beam_size > 1) {
        int k = 0;
        for (const Hypothesis& h : tr.nbest(i)) {
          appendf(out, "  %d. %s  (score %.4f, logp %.4f, length %d%s", ++k,
                  std::string(h.text).c_str(), h.score, h.logp, h.length, h.eos ? "" : ", no <eos>");
          if (ref) appendf(out, ", bleu %.3f", bleu(std::string(h.text), *ref, 2));
          appendf(out, ")\n");
        }
      }
    }
    if (tokens_out) {
      for (int k = 0; k < r.num_tokens; ++k)
        it.text += (k ? " " : "") + model->tgt_vocab().token(r.tokens[k]);
    } else {
      it.text = text;
    }
  };
  auto fail = [&](Item& it, const char* what) {
    ++failures;
    appendf(&it.err, "attnlite translate: error: %s: %s\n", where(it).c_str(), what);
  };
  // Sentences wait in a window of `batch` x kWindowBatches, are decoded `batch` at a time in
  // the order of their source lengths (a batch decodes until its longest translation ends, so
  // sentences of like lengths waste fewer steps: on the default model's test split, 1,896
  // lines, 163 decoder steps instead of 195 in its eight 256-line batches; on the CPU, where
  // finished sentences also leave their batch, bench/RESULTS.md has the times), and are printed in input order, each sentence's warnings
  // and errors on stderr just before its line. A sentence the Translator refuses (empty, too
  // long...) fails alone: the batch goes again without it (a refusal comes before any
  // decoding), and the others are printed as without --batch. At --batch 1 each line is
  // printed once translated.
  constexpr int kWindowBatches = 16;
  const size_t window = batch == 1 ? 1 : (size_t)batch * kWindowBatches;
  std::vector<Item> pending;
  // The sentences of one text, pending[first, last): their messages, then its line.
  auto print_text = [&](size_t first, size_t last) {
    bool ok = true;
    std::string joined;
    for (size_t k = first; k < last; ++k) {
      const Item& it = pending[k];
      std::fputs(it.err.c_str(), stderr);
      ok = ok && it.ok;
      if (it.ok) joined += (joined.empty() ? "" : " ") + it.text;
    }
    std::string line;
    if (as_json || verbose) {
      for (size_t k = first; k < last; ++k) line += pending[k].out;
      const Item& it = pending[first];
      if (verbose && ok && it.has_ref && it.parts > 1)  // the bleu of the joined translations
        appendf(&line, "  => %s, bleu %.3f\n", joined.c_str(), text_bleu(joined, it.ref));
    } else if (ok) {
      line = joined;
      if (pending[first].has_ref) appendf(&line, "\t%.3f", text_bleu(joined, pending[first].ref));
      line += "\n";
    }
    if (!ok && sentences.empty() && !as_json) line += "\n";  // keep stdin lines aligned
    std::fputs(line.c_str(), stdout);
  };
  std::vector<size_t> order, members;
  std::vector<std::string_view> views;
  auto one = [&](Item& it) {
    try {
      tr.translate(it.src, opts);
      times.called();
      emit(0, it);
    } catch (const Error& e) {
      fail(it, e.what());
    }
  };
  auto flush = [&]() {
    if (pending.empty()) return;
    order.resize(pending.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    if (pending.size() > 1) {
      for (Item& it : pending) {
        try {
          it.length = model->source_tokens(it.src).size();
        } catch (const Error&) {  // invalid UTF-8: its batch fails, then it fails alone
          it.length = 0;
        }
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return pending[a].length < pending[b].length; });
    }
    for (size_t k0 = 0; k0 < order.size(); k0 += (size_t)batch) {
      const size_t n = std::min((size_t)batch, order.size() - k0);
      if (n == 1) {
        one(pending[order[k0]]);
        continue;
      }
      members.assign(order.begin() + (long)k0, order.begin() + (long)(k0 + n));
      while (!members.empty()) {
        views.clear();
        for (size_t m : members) views.emplace_back(pending[m].src);
        bool done = false;
        try {
          tr.translate_batch(views.data(), (int)members.size(), opts);
          times.called();
          done = true;
        } catch (const ItemError& e) {  // that sentence fails; the batch goes again without it
          fail(pending[members[(size_t)e.index()]], e.reason());
          members.erase(members.begin() + e.index());
          continue;
        } catch (const Error&) {  // not one sentence's failure: each on its own
        }
        for (size_t j = 0; j < members.size(); ++j) {
          if (done)
            emit((int)j, pending[members[j]]);
          else
            one(pending[members[j]]);
        }
        break;
      }
    }
    for (size_t first = 0; first < pending.size();) {
      size_t last = first + 1;
      while (last < pending.size() && pending[last].index == pending[first].index) ++last;
      std::fflush(stdout);
      print_text(first, last);
      first = last;
    }
    std::fflush(stdout);
    pending.clear();
  };
  size_t count = 0;
  // Text `index`, cut into the sentences the model translates one at a time (Model::sentences).
  std::vector<std::string_view> parts;
  auto add = [&](const std::string& src, const std::string* ref, size_t index) {
    parts.clear();
    if (whole)
      parts.emplace_back(src);
    else
      for (const SentenceSpan& p : model->sentences(src))
        parts.push_back(std::string_view(src).substr(p.begin, p.end - p.begin));
    for (size_t k = 0; k < parts.size(); ++k) {
      ++count;
      pending.push_back({std::string(parts[k]), ref ? *ref : std::string(), ref != nullptr, index,
                         k, parts.size(), 0, {}, {}, {}, false});
    }
    if (pending.size() >= window) flush();
  };

  if (!sentences.empty()) {
    for (size_t i = 0; i < sentences.size(); ++i) add(sentences[i], refs.empty() ? nullptr : &refs[i], i);
  } else {
    std::string line;
    size_t i = 0;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (tsv) {
        const size_t tab = line.find('\t');
        if (tab == std::string::npos) {
          flush();  // keep the output in input order
          ++failures;
          std::fprintf(stderr, "attnlite translate: error: line %zu has no tab\n", i + 1);
          std::printf("\n");
          std::fflush(stdout);
          ++i;
          continue;
        }
        // References get the same preprocessing as the book's targets.
        const std::string pre = preprocessed(line.substr(tab + 1));
        add(line.substr(0, tab), &pre, i++);
      } else {
        add(line, nullptr, i++);
      }
    }
  }
  flush();
  times.done("translate", std::to_string(count) + (count == 1 ? " sentence" : " sentences"),
             count < (size_t)batch, lim.device == Device::CUDA);
  return failures ? kFailed : kOk;
}

// The processor this binary was compiled for.
static const char* build_arch() {
#if defined(__x86_64__) || defined(_M_X64)
  return "x86-64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__arm__) && defined(__ARM_NEON)
  return "armv7-neon";
#elif defined(__arm__)
  return "arm";
#elif defined(__wasm__)
  return "wasm32";
#else
  return "other";
#endif
}

int cmd_info(int argc, char** argv) {
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::puts("usage: attnlite info [--model PATH|NAME]\n\nPrints a model's kind, config, vocabulary sizes and weight bytes, and\n"
              "this build: the processor it was built for (arch) and the CPU kernel table\n"
              "in use (kernels: avx512, avx2-fma, neon, simd128 or scalar).");
    return kOk;
  }
  std::string model_arg;
  args.value("--model", &model_arg);
  auto pos = args.positionals();
  if (!pos.empty()) model_arg = pos[0];
  const std::string path = resolve_model(model_arg);
  auto m = Model::load(path);
  json j;
  j["path"] = path;
  j["kind"] = m->kind_name();
  auto it = m->metadata().find("attnlite.config");
  j["config"] = json::parse(it->second);
  j["src_vocab_size"] = m->src_vocab().size();
  j["tgt_vocab_size"] = m->tgt_vocab().size();
  j["weight_bytes"] = m->weight_bytes();
  j["int8"] = m->is_int8();
  j["arch"] = build_arch();
  j["kernels"] = ops::kernels_name();
  for (const char* k : {"attnlite.license", "attnlite.training", "attnlite.quantization",
                        "attnlite.evaluation"}) {
    auto f = m->metadata().find(k);
    if (f != m->metadata().end()) j[k + 9] = f->second;
  }
  std::cout << j.dump(2) << "\n";
  return kOk;
}

}  // namespace attnlite::cli
