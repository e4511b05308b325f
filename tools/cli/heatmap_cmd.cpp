// attnlite heatmap — the chapter's figures as PNG, attention maps of any translation, and the
// causal self-attention of a language model's generation.
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/figures/figures.h"
#include "attnlite/sentences.h"
#include "common.h"

namespace attnlite::cli {

namespace {

const char* kHeatmapHelp =
    "usage: attnlite heatmap --all --out DIR [options]\n"
    "       attnlite heatmap FIGURE... --out DIR [options]\n"
    "       attnlite heatmap --list\n"
    "       attnlite heatmap translate [--model M] SENTENCE [--kind enc|dec-self|cross]\n"
    "                        [--layer L|all] [--head H|all] [--out FILE.png] [options]\n"
    "       attnlite heatmap generate [--model M] PROMPT [--layer L|all] [--head H|all]\n"
    "                        [--max-tokens N] [--temperature T] [--top-k K] [--top-p P]\n"
    "                        [--seed S] [--out FILE.png] [options]\n"
    "\n"
    "Draws the figures of d2l chapter 10 (show_heatmaps and d2l.plot) with fixed seeds, the\n"
    "attention weights of one translation with the words on the axes, or the causal\n"
    "self-attention of a language model continuing PROMPT: keys on x, queries on y, both the\n"
    "tokens the model read (<bos>, the prompt, the generated tokens fed back); the future\n"
    "(keys after the query) is masked and drawn hatched grey, not as a weight of 0.\n"
    "\n"
    "options:\n"
    "  --out PATH         output folder (figures) or PNG file (translate, generate; default\n"
    "                     attention.png)\n"
    "  --dpi N            pixels per inch (default 100)\n"
    "  --format png|svg   the files' format (default: svg for an --out FILE.svg, else png);\n"
    "                     SVG has the PNG's layout, vector cells and real text\n"
    "  --sentence TEXT    sentence of the translation figures (default \"i'm home .\")\n"
    "  --transformer M    Transformer model (default: shipped transformer-d2l)\n"
    "  --bahdanau M       Bahdanau model (default: shipped bahdanau-d2l)\n"
    "  --d2l-compat       Transformer decoding with the book's position-0 quirk\n"
    "  --padding          keep the source's <pad> positions in translation maps, as the\n"
    "                     book's figures do (default: the maps end at the source's <eos>)\n"
    "  --seed N           seed of the demo data (default 0)\n"
    "translate options:\n"
    "  --model M          model path or shipped name (default transformer-fra-bpe)\n"
    "  --kind K           enc (encoder self), dec-self (decoder self), cross (default)\n"
    "  --layer L, --head H  1-based, or 'all' (default all: a layers x heads grid)\n"
    "  --cmap NAME        Reds (default), Blues or viridis\n"
    "  --annotate         print each weight in its cell\n"
    "  --positions        numeric positions on the axes instead of tokens\n"
    "  --beam K, --alpha A  the maps of beam search's best translation (as `attnlite\n"
    "                     translate --beam K --alpha A`; default greedy)\n"
    "  --view alignment   the alignment view instead of heatmaps: the keys' tokens on the\n"
    "                     left (the source), the queries' on the right, a line for each pair\n"
    "                     with its weight as opacity; one --layer (default the last), one\n"
    "                     --head or all heads averaged (the default)\n"
    "  --view rollout     the attention rollout of the encoder's self-attention through\n"
    "                     layers 1..l, a panel per l\n"
    "  --view overview    thumbnails of every layer and head of the three attention kinds\n"
    "generate options (also --layer, --head, --cmap, --annotate, --positions, --out):\n"
    "  --model M          language model path or shipped name (default lm-fra)\n"
    "  --max-tokens N     generate at most N tokens (default: until <eos> or the context)\n"
    "  --temperature T    sample from softmax(logits / T), T > 0\n"
    "  --top-k K          sample among the K most likely tokens (K >= 1)\n"
    "  --top-p P          nucleus sampling, 0 < P <= 1\n"
    "  --seed S           seed of the sampler (default 0)\n"
    "  --sample           sample with the defaults; implied by the four options above\n"
    "  Without sampling options decoding is greedy, as in `attnlite generate`.\n"
    "\n"
    "example: attnlite heatmap generate \"nous allons\" --temperature 0.8 --seed 3 --out g.png\n";

int parse_index(Args& a, const std::string& name) {
  std::string v;
  if (!a.value(name, &v) || v == "all") return -1;
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < 1 || n > 1024) throw UsageError{name + " must be a positive number or 'all', got '" + v + "'"};
  return (int)n - 1;
}

// The decoding options of `attnlite generate`, by the same rules and messages.
GenerateOptions generate_options(Args& a) {
  GenerateOptions o;
  bool sampling = a.flag("--sample");
  o.max_tokens = a.int_value("--max-tokens", 0, 1, 1 << 20);
  std::string s;
  if (a.value("--temperature", &s)) {
    sampling = true;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end || errno || !(v > 0) || !std::isfinite(v))
      throw UsageError{"--temperature must be a number > 0, got '" + s + "'"};
    o.temperature = (float)v;
  }
  if (a.value("--top-k", &s)) {
    sampling = true;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end || errno || v < 1 || v > (1 << 20))
      throw UsageError{"--top-k must be an integer >= 1, got '" + s + "'"};
    o.top_k = (int)v;
  }
  if (a.value("--top-p", &s)) {
    sampling = true;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end || errno || !(v > 0 && v <= 1))
      throw UsageError{"--top-p must be a number in (0, 1], got '" + s + "'"};
    o.top_p = (float)v;
  }
  if (a.value("--seed", &s)) {
    sampling = true;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end || errno || s[0] == '-')
      throw UsageError{"--seed must be a non-negative integer, got '" + s + "'"};
    o.seed = v;
  }
  o.sample = sampling;
  return o;
}

// A model as figure titles name it: a shipped name as given, a path by its file's stem.
std::string display_name(const std::string& arg) {
  std::string n = arg.substr(arg.find_last_of('/') + 1);
  const std::string ext = ".safetensors";
  if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0) n.resize(n.size() - ext.size());
  return n;
}

void ensure_dir(const std::string& d) {
  struct stat st;
  if (stat(d.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw Error("'" + d + "' exists and is not a folder");
    return;
  }
  if (mkdir(d.c_str(), 0755) != 0) throw Error("cannot create folder '" + d + "'");
}

}  // namespace

int cmd_heatmap(int argc, char** argv) {
  Args args(argc, argv, 2);
  if (args.flag("--help") || args.flag("-h")) {
    std::fputs(kHeatmapHelp, stdout);
    return kOk;
  }
  if (args.flag("--list")) {
    for (const auto& n : figures::names()) std::printf("%s\n", n.c_str());
    return kOk;
  }
  std::string out, format_flag;
  args.value("--out", &out);
  args.value("--format", &format_flag);
  figure_format(format_flag, "");  // a bad --format is a usage error before any work
  const int dpi = args.int_value("--dpi", 100, 20, 600);
  const bool compat = args.flag("--d2l-compat");
  const bool padding = args.flag("--padding");
  const bool all = args.flag("--all");

  std::vector<std::string> pos;
  if (argc > 2 && std::string(argv[2]) == "generate") {
    std::string model_arg = "lm-fra", cmap = "Reds";
    args.value("--model", &model_arg);
    args.value("--cmap", &cmap);
    if (compat) throw UsageError{"--d2l-compat is for Transformer translations, not generations"};
    if (padding) throw UsageError{"--padding is for translations: a generation has no padding"};
    figures::GenerationMapOptions o;
    o.model_name = display_name(model_arg);
    o.layer = parse_index(args, "--layer");
    o.head = parse_index(args, "--head");
    o.annotate = args.flag("--annotate");
    o.tokens = !args.flag("--positions");
    o.dpi = dpi;
    o.generate = generate_options(args);
    try {
      o.cmap = render::colormap_from_name(cmap);
    } catch (const Error& e) {
      throw UsageError{e.what()};
    }
    pos = args.positionals();  // "generate" PROMPT
    if (pos.size() != 2) throw UsageError{"give exactly one prompt"};
    auto model = Model::load(resolve_model(model_arg));
    const figures::Figure f = figures::generation_map(model, pos[1], o);
    const std::string format = figure_format(format_flag, out);
    if (out.empty()) out = "attention." + format;
    write_figure(out, f, format);
    std::printf("%s: %s (%dx%d panels, %dx%d pixels)\n", out.c_str(), f.caption.c_str(), f.rows, f.cols,
                f.image.width, f.image.height);
    return kOk;
  }
  if (argc > 2 && std::string(argv[2]) == "translate") {
    std::string model_arg, cmap = "Reds", kind = "cross";
    args.value("--model", &model_arg);
    args.value("--cmap", &cmap);
    std::string view = "maps";
    args.value("--view", &view);
    if (view != "maps" && view != "alignment" && view != "rollout" && view != "overview")
      throw UsageError{"--view must be maps, alignment, rollout or overview, got '" + view + "'"};
    const bool kind_given = args.value("--kind", &kind);
    figures::MapOptions o;
    o.layer = parse_index(args, "--layer");
    o.head = parse_index(args, "--head");
    o.annotate = args.flag("--annotate");
    o.tokens = !args.flag("--positions");
    o.d2l_compat = compat;
    o.padding = padding;
    o.beam_size = args.int_value("--beam", 1, 1, 64);
    o.length_penalty = alpha_value(args);
    o.model_name = display_name(model_arg.empty() ? kDefaultModel : model_arg);
    o.dpi = dpi;
    try {
      o.cmap = render::colormap_from_name(cmap);
      o.kind = figures::map_kind_from_name(kind);
    } catch (const Error& e) {
      throw UsageError{e.what()};
    }
    pos = args.positionals();  // "translate" SENTENCE
    if (pos.size() != 2) throw UsageError{"give exactly one sentence"};
    // A figure is of one translation: a text of several sentences is read as one here, where
    // `attnlite translate` would cut it.
    if (const size_t n = split_sentences(pos[1]).size(); n > 1)
      std::fprintf(stderr,
                   "attnlite heatmap: warning: the text holds %zu sentences; the maps are of it "
                   "read as one (attnlite translate translates each alone)\n", n);
    auto model = Model::load(resolve_model(model_arg));
    figures::Figure f;
    if (view != "maps" && (o.beam_size != 1 || o.length_penalty != 0.f))
      throw UsageError{"--beam and --alpha draw the heatmaps of a beam search's translation, not --view " + view};
    if (view == "alignment") {
      if (o.annotate || !o.tokens || cmap != "Reds")
        throw UsageError{"--annotate, --positions and --cmap draw heatmaps, not the alignment view"};
      figures::AlignmentOptions a;
      a.kind = o.kind;
      a.layer = o.layer;
      a.head = o.head;
      a.padding = o.padding;
      a.d2l_compat = o.d2l_compat;
      a.model_name = o.model_name;
      a.dpi = o.dpi;
      f = figures::alignment_view(model, pos[1], a);
    } else if (view == "rollout" || view == "overview") {
      if (o.layer != -1 || o.head != -1 || o.annotate || !o.tokens || (kind_given && view == "overview") ||
          (kind_given && o.kind != render::MapKind::Encoder))
        throw UsageError{"--view " + view + " draws every layer" + (view == "rollout" ? " of the encoder" : " and head") +
                         ": no --layer, --head, --annotate, --positions" + (view == "rollout" ? " or --kind other than enc" : " or --kind")};
      figures::TranslationViewOptions t;
      t.padding = o.padding;
      t.d2l_compat = o.d2l_compat;
      t.model_name = o.model_name;
      t.cmap = o.cmap;
      t.dpi = o.dpi;
      f = view == "rollout" ? figures::encoder_rollout(model, pos[1], t) : figures::overview(model, pos[1], t);
    } else {
      f = figures::translation_map(model, pos[1], o);
    }
    const std::string format = figure_format(format_flag, out);
    if (out.empty()) out = "attention." + format;
    write_figure(out, f, format);
    std::printf("%s: %s (%dx%d panels)\n", out.c_str(), f.caption.c_str(), f.rows, f.cols);
    return kOk;
  }

  figures::Context ctx;
  ctx.dpi = dpi;
  ctx.d2l_compat = compat;
  ctx.padding = padding;
  ctx.seed = (uint32_t)args.int_value("--seed", 0, 0, 1 << 30);
  args.value("--sentence", &ctx.sentence);
  std::string tpath, bpath;
  args.value("--transformer", &tpath);
  args.value("--bahdanau", &bpath);
  if (!tpath.empty()) ctx.transformer_name = display_name(tpath);
  if (!bpath.empty()) ctx.bahdanau_name = display_name(bpath);
  pos = args.positionals();
  std::vector<std::string> wanted = all ? figures::names() : pos;
  if (all && !pos.empty()) throw UsageError{"--all takes no figure names"};
  if (wanted.empty()) throw UsageError{"name figures (see --list) or pass --all"};
  if (out.empty()) throw UsageError{"--out DIR is required"};
  bool need_t = false, need_b = false;
  for (const auto& n : wanted) {
    need_t |= n.rfind("07-", 0) == 0;
    need_b |= n.rfind("04-", 0) == 0;
  }
  if (need_t) ctx.transformer = Model::load(resolve_model(tpath.empty() ? "transformer-d2l" : tpath));
  if (need_b) ctx.bahdanau = Model::load(resolve_model(bpath.empty() ? "bahdanau-d2l" : bpath));
  const std::string format = figure_format(format_flag, "");
  ensure_dir(out);
  for (const auto& n : wanted) {
    const figures::Figure f = figures::make(n, ctx);
    const std::string path = out + "/" + n + "." + format;
    write_figure(path, f, format);
    std::printf("%s: %s\n", path.c_str(), f.caption.c_str());
  }
  return kOk;
}

}  // namespace attnlite::cli
