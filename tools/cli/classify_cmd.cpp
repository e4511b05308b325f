// attnlite classify — which digit is in an image, with the Vision Transformer.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/error.h"
#include "attnlite/image_input.h"
#include "attnlite/figures/figures.h"
#include "common.h"

namespace attnlite::cli {

namespace {

const char* kClassifyHelp =
    "usage: attnlite classify [options] IMAGE...\n"
    "\n"
    "Classifies each IMAGE (PNG, JPEG, BMP or GIF; any size, grey or colour, dark ink on\n"
    "light paper or the reverse) with a Vision Transformer and prints one line per image:\n"
    "PATH<TAB>LABEL<TAB>PROBABILITY. The image is preprocessed as the UCI digits were\n"
    "(include/attnlite/image_input.h: the ink's bounding box scaled to 32 pixels, centred,\n"
    "4x4 blocks counted into 8x8 values 0..16).\n"
    "\n"
    "options:\n"
    "  --model PATH|NAME  model file or shipped name (default: vit-digits)\n"
    "  --top K            with --json, the K most likely classes (default 3)\n"
    "  --json             one JSON object per image: top K, every probability, the 8x8\n"
    "                     input, attention shapes\n"
    "  --weights          with --json, every attention weight and the rollout\n"
    "  --device cpu|cuda  where the model runs (default cpu)\n"
    ATTNLITE_CLI_PRECISION_HELP
    "  --batch N          classify up to N images together (1..1024; default 1 on the\n"
    "                     CPU, 64 on cuda), printed in order\n"
    "  --heatmap OUT.png  (one IMAGE only) draw the attention: the CLS token's attention\n"
    "                     over the patches, over the 8x8 input with its patch grid, for\n"
    "                     each layer (rows) and head (columns), and the attention rollout\n"
    "                     through the layers (a last column); prints PATH: CAPTION (R x C\n"
    "                     panels, WxH pixels)\n"
    "  --layer L|all      with --heatmap, one layer (1-based) or all (default)\n"
    "  --head H|all|rollout  with --heatmap, one head (1-based), all (default: the heads\n"
    "                     and the rollout) or the rollout alone\n"
    "  --maps             with --heatmap, the full (N+1)x(N+1) maps (CLS, patches 1..N\n"
    "                     row-major) instead of the overlays\n"
    "  --cmap NAME        with --heatmap, Reds (default), Blues or viridis\n"
    "  --dpi N            with --heatmap, pixels per inch (default 100)\n"
    "  --format png|svg   with --heatmap: the file's format (default: svg for OUT.svg, else\n"
    "                     png)\n"
    "  --times            at the end, where the time went on stderr (ms): loading the\n"
    "                     model (on cuda, the GPU's start-up begins beside it), making\n"
    "                     the classifier (on cuda: the rest of the start-up), the\n"
    "                     first batch, the rest\n"
    "  -h, --help         this text\n"
    "\n"
    "An image that cannot be read is reported on stderr and the others are still classified\n"
    "(exit status 1).\n";

using json = nlohmann::json;

// --layer / --head: 1-based, or 'all' (-1); --head also 'rollout' (kVitRollout).
int parse_index(Args& a, const std::string& name, bool rollout) {
  std::string v;
  if (!a.value(name, &v) || v == "all") return -1;
  if (rollout && v == "rollout") return figures::kVitRollout;
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < 1 || n > 1024)
    throw UsageError{name + " must be a positive number" + (rollout ? ", 'all' or 'rollout'" : " or 'all'") +
                     ", got '" + v + "'"};
  return (int)n - 1;
}

}  // namespace

int cmd_classify(int argc, char** argv) {
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::fputs(kClassifyHelp, stdout);
    return kOk;
  }
  std::string model_arg = "vit-digits", device_arg = "cpu";
  args.value("--model", &model_arg);
  args.value("--device", &device_arg);
  if (device_arg != "cpu" && device_arg != "cuda")
    throw UsageError{"--device must be cpu or cuda, got '" + device_arg + "'"};
  const Precision precision = precision_value(args, device_arg == "cuda");
  const bool as_json = args.flag("--json"), weights = args.flag("--weights");
  if (weights && !as_json) throw UsageError{"--weights needs --json"};
  const int top = args.int_value("--top", 3, 1, 100000);
  std::string heatmap, cmap_arg = "Reds";
  const bool draw = args.value("--heatmap", &heatmap);
  figures::VitMapOptions vo;
  vo.layer = parse_index(args, "--layer", false);
  vo.head = parse_index(args, "--head", true);
  if (args.flag("--maps")) vo.view = figures::VitView::Maps;
  const bool cmap_given = args.value("--cmap", &cmap_arg);
  std::string format_flag;
  const bool format_given = args.value("--format", &format_flag);
  const std::string format = figure_format(format_flag, heatmap);
  vo.dpi = args.int_value("--dpi", 100, 20, 600);
  try {
    vo.cmap = render::colormap_from_name(cmap_arg);
  } catch (const Error& e) {
    throw UsageError{e.what()};
  }
  const int batch = args.int_value("--batch", device_arg == "cuda" ? 64 : 1, 1, 1024);
  Times times(args.flag("--times"));
  const auto paths = args.positionals();
  if (paths.empty()) throw UsageError{"give at least one image"};
  if (draw && heatmap.empty()) throw UsageError{"--heatmap needs a file name"};
  if (draw && paths.size() != 1)
    throw UsageError{"--heatmap draws one image: give exactly one IMAGE, got " + std::to_string(paths.size())};
  if (!draw && (vo.layer != -1 || vo.head != -1 || vo.view != figures::VitView::Overlay || cmap_given ||
                vo.dpi != 100 || format_given))
    throw UsageError{"--layer, --head, --maps, --cmap, --dpi and --format go with --heatmap"};

  CudaStartUp start_up(device_arg == "cuda");  // while the model is read
  auto model = Model::load(resolve_model(model_arg));
  times.loaded();
  ClassifyLimits lim;
  lim.device = device_arg == "cuda" ? Device::CUDA : Device::CPU;
  lim.precision = precision;
  lim.max_batch = batch;
  Classifier cls(model, lim);
  times.made();
  if (cls.channels() != 1 || cls.image_size() != 8)
    throw Error("this model reads " + std::to_string(cls.image_size()) + "x" + std::to_string(cls.image_size()) +
                " images of " + std::to_string(cls.channels()) +
                " channels; the command line prepares images for 8x8 one-channel digit models");
  const auto& labels = model->labels();
  int status = kOk;
  std::vector<float> rollout((size_t)cls.tokens() * cls.tokens());
  std::vector<float> px((size_t)batch * 64);
  std::vector<const std::string*> pending;  // the images in px, in order
  size_t count = 0;
  // Classifies the pending images together and prints each one's line (or JSON) in order.
  auto run = [&]() {
    if (pending.empty()) return;
    cls.classify(px.data(), (int)pending.size(), as_json || draw);
    times.called();
    for (size_t i = 0; i < pending.size(); ++i) {
      const std::string& path = *pending[i];
      const float* in = px.data() + i * 64;
      const Classification& r = cls.result((int)i);
      if (draw) {
        const auto f = figures::vit_map(cls, (int)i, in, vo);
        write_figure(heatmap, f, format);
        std::printf("%s: %s (%dx%d panels, %dx%d pixels)\n", heatmap.c_str(), f.caption.c_str(), f.rows, f.cols,
                    f.image.width, f.image.height);
      }
      if (!as_json) {
        std::printf("%s\t%s\t%.4f\n", path.c_str(), labels[(size_t)r.label].c_str(), r.prob);
        continue;
      }
      std::vector<int> order((size_t)cls.num_classes());
      for (int k = 0; k < cls.num_classes(); ++k) order[(size_t)k] = k;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return r.probs[a] > r.probs[b]; });
      json tops = json::array(), probs = json::array(), input = json::array();
      for (int k = 0; k < std::min(top, cls.num_classes()); ++k)
        tops.push_back({{"label", labels[(size_t)order[(size_t)k]]}, {"index", order[(size_t)k]},
                        {"prob", r.probs[order[(size_t)k]]}});
      for (int k = 0; k < cls.num_classes(); ++k) probs.push_back(r.probs[k]);
      for (int y = 0; y < 8; ++y) input.push_back(std::vector<float>(in + y * 8, in + y * 8 + 8));
      json j = {{"path", path},
                {"label", labels[(size_t)r.label]},
                {"index", r.label},
                {"prob", r.prob},
                {"top", tops},
                {"probs", probs},
                {"input", input},
                {"attention_shape", {r.layers, r.heads, r.tokens, r.tokens}}};
      if (weights) {
        j["attention"] = nested_array({r.layers, r.heads, r.tokens, r.tokens}, [&](const std::vector<int>& ix) {
          return r.attn_at(ix[0], ix[1], ix[2], ix[3]);
        });
        cls.rollout((int)i, rollout.data());
        json ro = json::array();
        for (int q = 0; q < r.tokens; ++q)
          ro.push_back(std::vector<float>(rollout.begin() + (long)q * r.tokens,
                                          rollout.begin() + (long)(q + 1) * r.tokens));
        j["rollout"] = ro;
      }
      std::printf("%s\n", j.dump().c_str());
    }
    std::fflush(stdout);
    pending.clear();
  };
  for (const auto& path : paths) {
    try {
      digit_8x8(load_image(path), px.data() + pending.size() * 64);
    } catch (const Error& e) {
      run();  // what came before is printed first
      std::fprintf(stderr, "attnlite classify: %s\n", e.what());
      status = kFailed;
      continue;
    }
    ++count;
    pending.push_back(&path);
    if ((int)pending.size() == batch) run();
  }
  run();
  times.done("classify", std::to_string(count) + (count == 1 ? " image" : " images"), count < (size_t)batch,
             lim.device == Device::CUDA);
  return status;
}

}  // namespace attnlite::cli
