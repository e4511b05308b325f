// attnlite generate — continue a French prompt with the decoder-only language model.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/generate.h"
#include "common.h"

namespace attnlite::cli {

namespace {

const char* kGenerateHelp =
    "usage: attnlite generate [options] \"PROMPT\"\n"
    "\n"
    "Continues PROMPT (French, preprocessed as the book does) with a decoder-only language\n"
    "model: the prompt is read in one causal pass, then one token per step over the cached\n"
    "keys and values, until <eos>, --max-tokens or the model's context is full. Prints the\n"
    "prompt's words and the generated ones. Without sampling options decoding is greedy.\n"
    "\n"
    "options:\n"
    "  --model PATH|NAME  model file or shipped name (default: lm-fra)\n"
    "  --max-tokens N     generate at most N tokens (default: until <eos> or the context)\n"
    "  --temperature T    sample from softmax(logits / T), T > 0 (default 1 when sampling)\n"
    "  --top-k K          sample among the K most likely tokens (K >= 1)\n"
    "  --top-p P          sample among the smallest set of tokens whose probability reaches\n"
    "                     P, 0 < P <= 1 (nucleus sampling)\n"
    "  --seed S           seed of the SplitMix64 generator (default 0); the same seed and\n"
    "                     options give the same text on every platform\n"
    "  --sample           sample with the defaults (temperature 1, no cut); implied by\n"
    "                     --temperature, --top-k, --top-p and --seed\n"
    "  --json             one JSON object: tokens, ids, probabilities, attention shape\n"
    "  --weights          with --json, include every attention weight\n"
    "  --device cpu|cuda  where the model runs (default cpu)\n"
    ATTNLITE_CLI_PRECISION_HELP
    "  --times            at the end, where the time went on stderr (ms): loading the\n"
    "                     model (on cuda, the GPU's start-up begins beside it), making\n"
    "                     the generator (on cuda: the rest of the start-up), the\n"
    "                     first call (the generation), the rest\n"
    "  -h, --help         this text\n"
    "\n"
    "Words the model does not know become <unk> (a warning names their count on stderr).\n";

using json = nlohmann::json;

double number(Args& a, const std::string& name, double def, bool* given) {
  std::string s;
  if (!a.value(name, &s)) return def;
  *given = true;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || errno) throw UsageError{name + " must be a number, got '" + s + "'"};
  return v;
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::fputs(kGenerateHelp, stdout);
    return kOk;
  }
  std::string model_arg = "lm-fra", device_arg = "cpu", seed_arg;
  args.value("--model", &model_arg);
  args.value("--device", &device_arg);
  if (device_arg != "cpu" && device_arg != "cuda")
    throw UsageError{"--device must be cpu or cuda, got '" + device_arg + "'"};
  const Precision precision = precision_value(args, device_arg == "cuda");
  const bool as_json = args.flag("--json"), weights = args.flag("--weights");
  if (weights && !as_json) throw UsageError{"--weights needs --json"};
  GenerateOptions o;
  bool sampling = args.flag("--sample");
  o.max_tokens = args.int_value("--max-tokens", 0, 1, 1 << 20);
  o.temperature = (float)number(args, "--temperature", 1.0, &sampling);
  if (!(o.temperature > 0) || !std::isfinite(o.temperature))
    throw UsageError{"--temperature must be a number > 0"};
  std::string k;
  if (args.value("--top-k", &k)) {
    sampling = true;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(k.c_str(), &end, 10);
    if (k.empty() || *end || errno || v < 1 || v > (1 << 20))
      throw UsageError{"--top-k must be an integer >= 1, got '" + k + "'"};
    o.top_k = (int)v;
  }
  o.top_p = (float)number(args, "--top-p", 1.0, &sampling);
  if (!(o.top_p > 0 && o.top_p <= 1)) throw UsageError{"--top-p must be in (0, 1]"};
  if (args.value("--seed", &seed_arg)) {
    sampling = true;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(seed_arg.c_str(), &end, 10);
    if (seed_arg.empty() || *end || errno || seed_arg[0] == '-')
      throw UsageError{"--seed must be a non-negative integer, got '" + seed_arg + "'"};
    o.seed = v;
  }
  o.sample = sampling;
  o.attention = as_json;
  Times times(args.flag("--times"));
  const auto pos = args.positionals();
  if (pos.size() != 1) throw UsageError{"give one prompt"};

  CudaStartUp start_up(device_arg == "cuda");  // while the model is read
  auto model = Model::load(resolve_model(model_arg));
  times.loaded();
  GenerateLimits lim;
  lim.device = device_arg == "cuda" ? Device::CUDA : Device::CPU;
  lim.precision = precision;
  Generator gen(model, lim);
  times.made();
  const Generation& g = gen.generate(pos[0], o);
  times.called();
  times.done("generate", std::to_string(g.num_generated) + " tokens", true, lim.device == Device::CUDA);
  if (g.num_unknown)
    std::fprintf(stderr, "attnlite generate: %d prompt word%s not in the vocabulary (read as <unk>)\n",
                 g.num_unknown, g.num_unknown > 1 ? "s are" : " is");
  if (!as_json) {
    std::printf("%.*s\n", (int)g.text.size(), g.text.data());
    return kOk;
  }
  const Vocab& v = model->tgt_vocab();
  json toks = json::array(), ids = json::array(), probs = json::array();
  for (int i = 0; i < g.num_tokens; ++i) {
    toks.push_back(v.token(g.tokens[i]));
    ids.push_back(g.tokens[i]);
  }
  for (int i = 0; i < g.num_generated; ++i) probs.push_back(g.probs[i]);
  json j = {{"prompt", pos[0]},
            {"text", std::string(g.text)},
            {"continuation", std::string(g.continuation)},
            {"tokens", toks},
            {"token_ids", ids},
            {"num_prompt", g.num_prompt},
            {"num_generated", g.num_generated},
            {"num_unknown", g.num_unknown},
            {"probs", probs},
            {"eos", g.eos},
            {"options", {{"sample", o.sample}, {"temperature", o.temperature}, {"top_k", o.top_k},
                         {"top_p", o.top_p}, {"seed", o.seed}, {"max_tokens", o.max_tokens}}},
            {"attention_shape", {g.layers, g.heads, g.positions, g.positions}}};
  if (weights) {
    j["attention"] = nested_array({g.layers, g.heads, g.positions, g.positions}, [&](const std::vector<int>& i) {
      return g.attn_at(i[0], i[1], i[2], i[3]);
    });
  }
  std::printf("%s\n", j.dump().c_str());
  return kOk;
}

}  // namespace attnlite::cli
