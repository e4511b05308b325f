// Test helpers: PyTorch reference fixtures (tests/fixtures/*.safetensors, made by
// tools/make_fixtures.py) and closeness checks that report the worst element.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/model.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/ops/ops.h"
#include "attnlite/safetensors.h"
#include "attnlite/threads.h"
#include "attnlite/weights.h"

namespace attnlite::test {

// n values uniform in [lo, hi), drawn in order from rng: the tests' random inputs.
inline std::vector<float> random_vec(std::mt19937& rng, size_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline std::string fixture_path(const std::string& name) {
  return std::string(ATTNLITE_FIXTURES_DIR) + "/" + name + ".safetensors";
}
inline std::string model_path(const std::string& name) {
  return std::string(ATTNLITE_MODELS_DIR) + "/" + name + ".safetensors";
}

// The shipped language model, loaded once for the whole test program.
inline std::shared_ptr<const Model> lm_fra() {
  static auto m = Model::load(model_path("lm-fra"));
  return m;
}

// set_num_threads(n) for a scope: one thread again at its end, whatever happens.
struct Threads {
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(1); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;
};

struct Fixture {
  SafeTensors st;
  WeightStore ws;
  explicit Fixture(const std::string& name) : st(SafeTensors::load(fixture_path(name))), ws(st) {}
  Fixture(const Fixture&) = delete;
  std::vector<float> f(const std::string& n) const { return st.f32(n); }
  std::vector<int> ids(const std::string& n) const {
    auto v = st.i64(n);
    return std::vector<int>(v.begin(), v.end());
  }
  std::vector<int64_t> shape(const std::string& n) const { return st.get(n).shape; }
  // Parameters (not in.* / out.*) that no binding asked for.
  std::vector<std::string> unused_params() const {
    std::vector<std::string> r;
    for (auto& n : ws.unused())
      if (n.rfind("in.", 0) != 0 && n.rfind("out.", 0) != 0) r.push_back(n);
    return r;
  }
};

// A roomy scratch arena for module tests.
struct Scratch {
  AlignedBuffer buf{size_t(64) << 20};
  Arena arena{buf.data(), buf.size()};
  ops::Ctx cx{ops::cpu(), arena};
};

// A driver's buffers: its carve() on counting arenas, then on blocks of those sizes, and a
// scratch arena of scratch_bytes. carve(host, mem) takes the two arenas.
struct DriverBlocks {
  AlignedBuffer host, mem, scratch;
  Arena scratch_arena;
  template <class Carve>
  DriverBlocks(Carve&& carve, size_t scratch_bytes) {
    Arena h, m;
    carve(h, m);
    host = AlignedBuffer(h.peak() + 64);
    mem = AlignedBuffer(m.peak() + 64);
    scratch = AlignedBuffer(scratch_bytes);
    Arena hb(host.data(), host.size()), mb(mem.data(), mem.size());
    carve(hb, mb);
    scratch_arena = Arena(scratch.data(), scratch.size());
  }
};

struct Diff {
  double max = 0;
  size_t at = 0;
};
inline Diff max_abs_diff(const float* a, const float* b, size_t n) {
  Diff d;
  for (size_t i = 0; i < n; ++i) {
    const double e = std::fabs((double)a[i] - b[i]);
    if (!(e <= d.max)) { d.max = e; d.at = i; }  // NaN counts as worst
  }
  return d;
}

// An environment variable for a scope (set(""): unset), the caller's value restored after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name) : name_(name) {
    const char* v = std::getenv(name);
    had_ = v != nullptr;
    old_ = v ? v : "";
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  void set(const std::string& v) { v.empty() ? unsetenv(name_) : setenv(name_, v.c_str(), 1); }

 private:
  const char* name_;
  bool had_;
  std::string old_;
};

}  // namespace attnlite::test

// max |actual - expected| <= tol over every element; sizes must agree.
#define REQUIRE_CLOSE(actual, expected, tol)                                                   \
  do {                                                                                          \
    const auto& exp_ = (expected);                                                              \
    REQUIRE((actual).size() == exp_.size());                                                    \
    auto d_ = attnlite::test::max_abs_diff((actual).data(), exp_.data(), exp_.size());          \
    INFO("max |diff| " << d_.max << " at index " << d_.at << ": " << (actual)[d_.at] << " vs " \
                       << exp_[d_.at]);                                                        \
    REQUIRE(d_.max <= (tol));                                                                   \
  } while (0)

// Runs the enclosing test once per available CPU kernel table (scalar always, SIMD if built).
#define FOR_EACH_KERNEL_TABLE()                                                                 \
  auto kernels_ = GENERATE(attnlite::ops::KernelTable::Scalar, attnlite::ops::KernelTable::Simd); \
  if (kernels_ == attnlite::ops::KernelTable::Simd && !attnlite::ops::simd_kernels()) return;   \
  attnlite::ops::use_kernels(kernels_);                                                         \
  INFO("kernels " << attnlite::ops::kernels_name())
