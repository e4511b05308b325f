// attnlite — language-model generation speed at batch 1 (bench/lm.sh, bench/RESULTS.md
// "Language model").
//
//   attnlite_bench_generate --model FILE --prompt TEXT [--tokens 16] [--gens 4]
//       [--threads 1] [--device cpu|cuda] [--min-time 2] [--min-runs 10] [--json OUT]
//
// One workload = `gens` generations of `tokens` new tokens each from the same prompt,
// through Generator::generate (greedy, attention recording off, KV cache): per generation
// the prompt in one causal pass, then tokens - 1 single-token steps. The workload is
// repeated until both min-time seconds and min-runs runs are reached (after one warm-up);
// printed: the median wall-clock and process-CPU seconds per workload and tokens/s =
// gens * tokens / median. The generated ids of the first run are printed for the token
// check (bench/lm.sh compares them with the peers' and the full-forward reference's).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/threads.h"
#include "timing.h"

using namespace attnlite;
using namespace attnlite::bench;

namespace {

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "attnlite_bench_generate: %s\n"
               "usage: attnlite_bench_generate --model FILE --prompt TEXT [--tokens N] [--gens G]\n"
               "       [--threads T] [--device cpu|cuda] [--min-time S] [--min-runs R] [--json OUT]\n",
               msg);
  std::exit(2);
}

}  // namespace

static int run(int argc, char** argv) {
  std::string model_path, prompt, json_out;
  int tokens = 16, gens = 4, threads = 1, min_runs = 10;
  double min_time = 2.0;
  Device device = Device::CPU;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--model") model_path = v;
    else if (a == "--prompt") prompt = v;
    else if (a == "--json") json_out = v;
    else if (a == "--tokens") tokens = std::atoi(v);
    else if (a == "--gens") gens = std::atoi(v);
    else if (a == "--threads") threads = std::atoi(v);
    else if (a == "--min-runs") min_runs = std::atoi(v);
    else if (a == "--min-time") min_time = std::atof(v);
    else if (a == "--device" && (std::string(v) == "cpu" || std::string(v) == "cuda"))
      device = std::string(v) == "cuda" ? Device::CUDA : Device::CPU;
    else usage(("unknown option " + a).c_str());
  }
  if (model_path.empty() || prompt.empty()) usage("--model and --prompt are required");
  if (tokens < 1 || gens < 1 || threads < 1 || min_runs < 1) usage("bad numbers");

  set_num_threads(threads);
  auto model = Model::load(model_path);
  GenerateLimits lim;
  lim.device = device;
  Generator gen(model, lim);
  GenerateOptions opts;
  opts.max_tokens = tokens;
  opts.attention = false;  // the peers record nothing either

  std::vector<int> ids;  // <bos>, prompt, generated of the first generation
  int generated = 0;
  bool eos = false;
  auto workload = [&]() {
    int total = 0;
    for (int g = 0; g < gens; ++g) {
      const Generation& r = gen.generate(prompt, opts);
      total += r.num_generated;
      if (g == 0 && ids.empty()) {
        ids.assign(r.tokens, r.tokens + r.num_tokens);
        generated = r.num_generated;
        eos = r.eos;
      }
    }
    return total;
  };

  const int per_run = workload();  // warm-up, and the tokens of one run
  std::vector<double> walls, cpus;
  const double start = wall_seconds();
  while ((int)walls.size() < min_runs || wall_seconds() - start < min_time) {
    const double c0 = cpu_seconds(), w0 = wall_seconds();
    workload();
    walls.push_back(wall_seconds() - w0);
    cpus.push_back(cpu_seconds() - c0);
  }
  const double w = median(walls), c = median(cpus);
  const double wmin = *std::min_element(walls.begin(), walls.end());

  std::string id_list;
  for (size_t i = 0; i < ids.size(); ++i) id_list += (i ? "," : "") + std::to_string(ids[i]);
  char buf[4096];
  std::snprintf(buf, sizeof buf,
                "{\"peer\": \"attnlite\", \"device\": \"%s\", \"model\": \"%s\", \"threads\": %d, \"gens\": %d, "
                "\"tokens\": %d, \"tokens_per_run\": %d, \"runs\": %zu, \"wall_s\": %.9g, "
                "\"min_wall_s\": %.9g, \"cpu_s\": %.9g, \"tok_s\": %.6g, \"cpu_tok_s\": %.6g, "
                "\"num_prompt_tokens\": %d, \"generated\": %d, \"eos\": %s, \"ids\": [%s]}",
                device == Device::CUDA ? "cuda" : "cpu", model_path.c_str(), threads, gens, tokens, per_run, walls.size(), w, wmin, c,
                per_run / w, per_run / c, (int)ids.size() - generated, generated,
                eos ? "true" : "false", id_list.c_str());
  std::printf("%s\n", buf);
  if (!json_out.empty()) {
    FILE* f = std::fopen(json_out.c_str(), "w");
    if (!f) usage(("cannot write " + json_out).c_str());
    std::fprintf(f, "%s\n", buf);
    std::fclose(f);
  }
  return 0;
}

int main(int argc, char** argv) { return main_guarded("attnlite_bench_generate", run, argc, argv); }
