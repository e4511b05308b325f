// attnlite — Vision Transformer classification speed (bench/vit.sh, bench/RESULTS.md
// "Vision Transformer").
//
//   attnlite_bench_classify --model FILE --images DIGITS.f32 [--batch 1] [--attention 0|1]
//       [--threads 1] [--device cpu|cuda] [--min-time 2] [--min-runs 10] [--logits OUT.f32] [--json OUT]
//
// DIGITS.f32 is tools/export_vit_bench.py's: the test images as raw float32 (N, C, S, S),
// pixel values 0..16 as the data set has them (Classifier multiplies by the model's
// input_scale). One workload = every image once, through Classifier::classify in batches of
// `batch` (the last batch holds the remainder: 359 = 5 x 64 + 39), attention recording off
// unless --attention 1. The workload is repeated until both min-time seconds and min-runs
// runs are reached (after one warm-up); printed: the median wall-clock and process-CPU
// seconds per workload and images/s = N / median. The labels of the warm-up run are printed
// and its logits (N, K) written to --logits for the check against the peers.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/model.h"
#include "attnlite/threads.h"
#include "timing.h"

using namespace attnlite;
using namespace attnlite::bench;

namespace {

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "attnlite_bench_classify: %s\n"
               "usage: attnlite_bench_classify --model FILE --images DIGITS.f32 [--batch B]\n"
               "       [--attention 0|1] [--threads T] [--device cpu|cuda] [--min-time S] [--min-runs R]\n"
               "       [--logits OUT.f32] [--json OUT]\n",
               msg);
  std::exit(2);
}

}  // namespace

static int run(int argc, char** argv) {
  std::string model_path, images_path, json_out, logits_out;
  int batch = 1, threads = 1, min_runs = 10, attention = 0;
  double min_time = 2.0;
  Device device = Device::CPU;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--model") model_path = v;
    else if (a == "--images") images_path = v;
    else if (a == "--json") json_out = v;
    else if (a == "--logits") logits_out = v;
    else if (a == "--batch") batch = std::atoi(v);
    else if (a == "--attention") attention = std::atoi(v);
    else if (a == "--threads") threads = std::atoi(v);
    else if (a == "--min-runs") min_runs = std::atoi(v);
    else if (a == "--min-time") min_time = std::atof(v);
    else if (a == "--device" && (std::string(v) == "cpu" || std::string(v) == "cuda"))
      device = std::string(v) == "cuda" ? Device::CUDA : Device::CPU;
    else usage(("unknown option " + a).c_str());
  }
  if (model_path.empty() || images_path.empty()) usage("--model and --images are required");
  if (batch < 1 || threads < 1 || min_runs < 1) usage("bad numbers");

  set_num_threads(threads);
  auto model = Model::load(model_path);
  ClassifyLimits lim;
  lim.max_batch = batch;
  lim.device = device;
  Classifier clf(model, lim);
  const long per = (long)clf.channels() * clf.image_size() * clf.image_size();
  const int K = clf.num_classes();

  std::vector<float> images;
  {
    FILE* f = std::fopen(images_path.c_str(), "rb");
    if (!f) usage(("cannot read " + images_path).c_str());
    std::fseek(f, 0, SEEK_END);
    const long bytes = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    if (bytes <= 0 || bytes % (per * (long)sizeof(float)) != 0) usage("images: size is not N x C x S x S floats");
    images.resize((size_t)(bytes / (long)sizeof(float)));
    if (std::fread(images.data(), sizeof(float), images.size(), f) != images.size()) usage("images: short read");
    std::fclose(f);
  }
  const int N = (int)((long)images.size() / per);

  std::vector<int> labels;
  std::vector<float> logits;
  auto workload = [&](bool keep) {
    for (int i = 0; i < N; i += batch) {
      const int nb = std::min(batch, N - i);
      clf.classify(images.data() + (long)i * per, nb, attention != 0);
      if (keep)
        for (int b = 0; b < nb; ++b) {
          const Classification& r = clf.result(b);
          labels.push_back(r.label);
          logits.insert(logits.end(), r.logits, r.logits + K);
        }
    }
  };

  workload(true);  // warm-up, and the labels/logits of the check
  std::vector<double> walls, cpus;
  const double start = wall_seconds();
  while ((int)walls.size() < min_runs || wall_seconds() - start < min_time) {
    const double c0 = cpu_seconds(), w0 = wall_seconds();
    workload(false);
    walls.push_back(wall_seconds() - w0);
    cpus.push_back(cpu_seconds() - c0);
  }
  const double w = median(walls), c = median(cpus);
  const double wmin = *std::min_element(walls.begin(), walls.end());

  if (!logits_out.empty()) {
    FILE* f = std::fopen(logits_out.c_str(), "wb");
    if (!f) usage(("cannot write " + logits_out).c_str());
    std::fwrite(logits.data(), sizeof(float), logits.size(), f);
    std::fclose(f);
  }
  std::string pred;
  for (size_t i = 0; i < labels.size(); ++i) pred += (i ? "," : "") + std::to_string(labels[i]);
  std::string line(pred.size() + 1024, '\0');
  const int len = std::snprintf(
      &line[0], line.size(),
      "{\"peer\": \"attnlite\", \"device\": \"%s\", \"model\": \"%s\", \"threads\": %d, \"batch\": %d, "
      "\"attention\": %s, \"images\": %d, \"runs\": %zu, \"wall_s\": %.9g, \"min_wall_s\": %.9g, "
      "\"cpu_s\": %.9g, \"img_s\": %.6g, \"cpu_img_s\": %.6g, \"logits\": \"%s\", \"pred\": [%s]}",
      device == Device::CUDA ? "cuda" : "cpu", model_path.c_str(), threads, batch, attention ? "true" : "false", N, walls.size(), w, wmin,
      c, N / w, N / c, logits_out.c_str(), pred.c_str());
  line.resize((size_t)len);
  std::printf("%s\n", line.c_str());
  if (!json_out.empty()) {
    FILE* f = std::fopen(json_out.c_str(), "w");
    if (!f) usage(("cannot write " + json_out).c_str());
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
  return 0;
}

int main(int argc, char** argv) { return main_guarded("attnlite_bench_classify", run, argc, argv); }
