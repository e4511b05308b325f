#include "common.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "attnlite/error.h"
#include "attnlite/figures/figures.h"
#include "attnlite/vocab.h"

namespace attnlite::cli {

namespace {
bool exists(const std::string& p) { return std::ifstream(p).good(); }

std::string exe_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string p(buf, (size_t)n);
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}
}  // namespace

std::string default_model_path(const std::string& name) {
  const std::string file = name + ".safetensors";
  const std::string candidates[] = {
      exe_dir() + "/../share/attnlite/models/" + file,
      std::string(ATTNLITE_SOURCE_MODELS_DIR) + "/" + file,
      "models/" + file,
  };
  for (const auto& c : candidates)
    if (exists(c)) return c;
  throw Error("cannot find the shipped model '" + file + "' (looked next to the binary, in " +
              ATTNLITE_SOURCE_MODELS_DIR + " and ./models); pass --model PATH");
}

std::string resolve_model(const std::string& arg) {
  if (arg.empty()) return default_model_path();
  if (arg.find('/') == std::string::npos && arg.find(".safetensors") == std::string::npos)
    return default_model_path(arg);
  return arg;
}

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) a_.emplace_back(argv[i]);
  used_.assign(a_.size(), false);
}

bool Args::flag(const std::string& name) {
  bool found = false;
  for (size_t i = 0; i < a_.size(); ++i)
    if (!used_[i] && a_[i] == name) used_[i] = found = true;
  return found;
}

std::vector<std::string> Args::values(const std::string& name) {
  std::vector<std::string> r;
  for (size_t i = 0; i < a_.size(); ++i) {
    if (used_[i]) continue;
    if (a_[i] == name) {
      if (i + 1 >= a_.size()) throw UsageError{name + " needs a value"};
      used_[i] = used_[i + 1] = true;
      r.push_back(a_[++i]);
    } else if (a_[i].rfind(name + "=", 0) == 0) {
      used_[i] = true;
      r.push_back(a_[i].substr(name.size() + 1));
    }
  }
  return r;
}

bool Args::value(const std::string& name, std::string* out) {
  auto v = values(name);
  if (v.empty()) return false;
  *out = v.back();
  return true;
}

int Args::int_value(const std::string& name, int def, int lo, int hi) {
  std::string s;
  if (!value(name, &s)) return def;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || errno || v < lo || v > hi)
    throw UsageError{name + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + s + "'"};
  return (int)v;
}

std::vector<std::string> Args::positionals() {
  std::vector<std::string> r;
  bool rest = false;
  for (size_t i = 0; i < a_.size(); ++i) {
    if (used_[i]) continue;
    if (!rest && a_[i] == "--") { rest = true; continue; }
    if (!rest && a_[i].size() > 1 && a_[i][0] == '-' && a_[i][1] == '-')
      throw UsageError{"unknown option '" + a_[i] + "'"};
    r.push_back(a_[i]);
  }
  return r;
}

namespace {
double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Times::Times(bool print) : print_(print), t0_(seconds_now()) {}
void Times::loaded() { load_ = seconds_now(); }
void Times::made() { made_ = seconds_now(); }
void Times::called() {
  if (first_ == 0) first_ = seconds_now();
}

void Times::done(const char* cmd, const std::string& what, bool little, bool cuda) const {
  const double end = seconds_now(), first = first_ == 0 ? end : first_;
  const double setup = made_ - load_, work = end - made_;
  if (print_)
    std::fprintf(stderr,
                 "attnlite %s: times (ms): load %.1f, set-up %.1f, first call %.1f, rest %.1f, "
                 "total %.1f\n",
                 cmd, (load_ - t0_) * 1e3, setup * 1e3, (first - made_) * 1e3, (end - first) * 1e3,
                 (end - t0_) * 1e3);
  if (cuda && little && setup > work)
    std::fprintf(stderr,
                 "attnlite %s: note: the GPU's start-up took %.0f ms, the work (%s) %.0f ms: for so "
                 "little work --device cpu is likely faster (the GPU pays off on many lines or "
                 "images at once, and on long generations)\n",
                 cmd, setup * 1e3, what.c_str(), work * 1e3);
}

float alpha_value(Args& args) {
  std::string s;
  if (!args.value("--alpha", &s)) return 0.f;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || errno || !std::isfinite(v) || v < 0 || v > 10)
    throw UsageError{"--alpha must be a number in [0, 10], got '" + s + "'"};
  return (float)v;
}

attnlite::Precision precision_value(Args& args, bool cuda) {
  std::string s;
  attnlite::Precision p = attnlite::Precision::F32;
  if (!args.value("--precision", &s)) return p;
  if (!attnlite::parse_precision(s.c_str(), &p))
    throw UsageError{"--precision must be fp32 or bf16, got '" + s + "'"};
  if (p == attnlite::Precision::BF16 && !cuda)
    throw UsageError{"--precision bf16 needs --device cuda: the CPU reads its weights as stored"};
  return p;
}

std::string preprocessed(const std::string& text) {
  std::string r;
  for (const auto& t : tokenize(text)) r += (r.empty() ? "" : " ") + t;
  return r;
}

std::string figure_format(const std::string& flag, const std::string& out) {
  if (!flag.empty()) {
    if (flag != "png" && flag != "svg") throw UsageError{"--format must be png or svg, got '" + flag + "'"};
    return flag;
  }
  const std::string ext = ".svg";
  return out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0 ? "svg" : "png";
}

void write_figure(const std::string& path, const figures::Figure& f, const std::string& format) {
  if (format == "png") {
    render::write_png(path, f.image);
    return;
  }
  const std::string svg = figures::to_svg(f);
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) throw Error("cannot write SVG '" + path + "': " + std::strerror(errno));
  const size_t written = std::fwrite(svg.data(), 1, svg.size(), out);
  const int write_errno = errno;
  if (std::fclose(out) != 0 || written != svg.size())
    throw Error("cannot write SVG '" + path + "': " + std::strerror(written != svg.size() ? write_errno : errno));
}

}  // namespace attnlite::cli
