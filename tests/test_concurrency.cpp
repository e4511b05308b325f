// One Model shared by several threads, each with its own sessions, all working at once:
// every kind (Transformer, Bahdanau, the int8 corpus Transformer, LM greedy and sampled, ViT),
// with and without the thread pool, and models loaded and dropped while sessions on other
// threads use them. tools/test.sh's tsan stage runs these ("[threads]") under ThreadSanitizer.
//
// Catch2's assertions are not thread-safe: the threads only record what they computed (or
// the message of an exception), the main thread compares.
//
// Equality: with one pool thread every session runs the same code on the same inputs as the
// serial reference, so results must be bitwise equal (a difference could only come from
// state shared between sessions). With the pool on, a linear layer is split across workers,
// or runs whole on the calling thread when another session holds the pool; the split changes
// the kernels' blocking, and the rounding differences grow through the layers (the int8
// corpus Transformer's probabilities differ by up to about 1.3e-6), so numbers are compared
// at 1e-5 (relative above 1: logits) and tokens and texts exactly.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/generate.h"
#include "attnlite/model.h"
#include "attnlite/threads.h"
#include "attnlite/translate.h"
#include "fixture.h"

using namespace attnlite;

namespace {

constexpr int kThreads = 4;
constexpr int kIterations = 3;

// Lets every thread go at once (C++17 has no std::latch).
class StartLine {
 public:
  explicit StartLine(int n) : n_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lk(m_);
    if (--n_ == 0) cv_.notify_all();
    cv_.wait(lk, [this] { return n_ == 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_;
};

// What one piece of work produced: words (texts, token ids, labels) and numbers.
struct Record {
  std::vector<std::string> words;
  std::vector<float> numbers;
  std::string error;  // an exception's message
};

void add(Record& r, const Translation& t) {
  r.words.emplace_back(t.text);
  for (int k = 0; k < t.num_tokens; ++k) {
    r.words.push_back(std::to_string(t.tokens[k]));
    r.numbers.push_back(t.probs[k]);
  }
}

struct Models {
  std::shared_ptr<const Model> transformer = Model::load(test::model_path("transformer-d2l"));
  std::shared_ptr<const Model> bahdanau = Model::load(test::model_path("bahdanau-d2l"));
  std::shared_ptr<const Model> fra = Model::load(test::model_path("transformer-fra"));
  std::shared_ptr<const Model> lm = Model::load(test::model_path("lm-fra"));
  std::shared_ptr<const Model> vit = Model::load(test::model_path("vit-digits"));
};

// One thread's sessions over the shared models.
struct Sessions {
  static Limits limits() {
    Limits l;
    l.max_batch = 4;
    l.max_beam = 3;
    return l;
  }
  static ClassifyLimits vit_limits() {
    ClassifyLimits l;
    l.max_batch = 4;
    return l;
  }
  explicit Sessions(const Models& m)
      : transformer(m.transformer, limits()), bahdanau(m.bahdanau, limits()),
        fra(m.fra, limits()), lm(m.lm), vit(m.vit, vit_limits()) {}
  Translator transformer, bahdanau, fra;
  Generator lm;
  Classifier vit;
};

const std::string_view kFourSentences[4] = {"go .", "i lost .", "he's calm .", "i'm home ."};

void translate_all(Translator& tr, Record& r) {
  tr.translate_batch(kFourSentences, 4);
  for (int i = 0; i < 4; ++i) add(r, tr.result(i));
  DecodeOptions beam;
  beam.beam_size = 3;
  add(r, tr.translate("i'm home .", beam));
}

void generate_all(Generator& g, Record& r) {
  GenerateOptions greedy;
  greedy.max_tokens = 8;
  const Generation& a = g.generate("il est", greedy);
  r.words.emplace_back(a.text);
  r.numbers.insert(r.numbers.end(), a.probs, a.probs + a.num_generated);
  for (uint64_t seed : {1u, 2u, 3u}) {
    GenerateOptions s = greedy;
    s.sample = true;
    s.temperature = 0.9f;
    s.top_k = 20;
    s.seed = seed;
    const Generation& b = g.generate("nous allons", s);
    r.words.emplace_back(b.text);
    r.numbers.insert(r.numbers.end(), b.probs, b.probs + b.num_generated);
  }
}

std::vector<float> digit_images(int n, int pixels) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.f, 16.f);
  std::vector<float> v((size_t)n * pixels);
  for (auto& x : v) x = u(rng);
  return v;
}

void classify_all(Classifier& c, Record& r) {
  const int pixels = c.channels() * c.image_size() * c.image_size();
  const std::vector<float> images = digit_images(4, pixels);
  c.classify(images.data(), 4, true);
  for (int i = 0; i < 4; ++i) {
    const Classification& k = c.result(i);
    r.words.push_back(std::to_string(k.label));
    r.numbers.insert(r.numbers.end(), k.logits, k.logits + c.num_classes());
  }
  std::vector<float> roll((size_t)c.tokens() * c.tokens());
  c.rollout(0, roll.data());
  r.numbers.insert(r.numbers.end(), roll.begin(), roll.end());
}

// Everything one thread does per iteration, starting from a different kind on each thread
// so that different kinds overlap.
constexpr int kWork = 5;
void work(Sessions& s, int which, Record& r) {
  switch (which % kWork) {
    case 0: translate_all(s.transformer, r); break;
    case 1: translate_all(s.bahdanau, r); break;
    case 2: translate_all(s.fra, r); break;
    case 3: generate_all(s.lm, r); break;
    default: classify_all(s.vit, r); break;
  }
}

// The serial reference: each kind once, on this thread.
std::vector<Record> serial(const Models& m) {
  Sessions s(m);
  std::vector<Record> ref(kWork);
  for (int w = 0; w < kWork; ++w) work(s, w, ref[w]);
  return ref;
}

// kThreads threads, each with its own sessions on the shared models, kIterations rounds of
// every kind; out[t][iteration * kWork + kind].
std::vector<std::vector<Record>> concurrent(const Models& m) {
  std::vector<std::vector<Record>> out(kThreads, std::vector<Record>(kIterations * kWork));
  StartLine start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::unique_ptr<Sessions> s;
      try {
        s = std::make_unique<Sessions>(m);
      } catch (const std::exception& e) {
        out[t][0].error = e.what();
      }
      start.arrive_and_wait();
      if (!s) return;
      for (int it = 0; it < kIterations; ++it)
        for (int k = 0; k < kWork; ++k) {
          const int kind = (t + k) % kWork;
          Record& r = out[t][it * kWork + kind];
          try {
            work(*s, kind, r);
          } catch (const std::exception& e) {
            r.error = e.what();
          }
        }
    });
  for (auto& th : threads) th.join();
  return out;
}

void require_equal(const Record& got, const Record& want, double tol) {
  REQUIRE(got.error == "");
  REQUIRE(got.words == want.words);
  REQUIRE(got.numbers.size() == want.numbers.size());
  for (size_t i = 0; i < got.numbers.size(); ++i) {
    const double scale = std::max(1.0, std::fabs((double)want.numbers[i]));
    if (!(std::fabs((double)got.numbers[i] - want.numbers[i]) <= tol * scale)) {
      INFO("number " << i << ": " << std::hexfloat << got.numbers[i] << " vs " << want.numbers[i] << std::defaultfloat << ", diff " << got.numbers[i] - want.numbers[i]);
      REQUIRE(got.numbers[i] == want.numbers[i]);
    }
  }
}

using attnlite::test::Threads;

}  // namespace

TEST_CASE("sessions on 4 threads sharing each model equal the serial run, bitwise", "[threads]") {
  REQUIRE(num_threads() == 1);
  const Models m;
  const std::vector<Record> ref = serial(m);
  const auto out = concurrent(m);
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kIterations * kWork; ++i) {
      INFO("thread " << t << ", iteration " << i / kWork << ", kind " << i % kWork);
      require_equal(out[t][i], ref[i % kWork], 0);
    }
}

TEST_CASE("sessions on 4 threads share the thread pool (2 threads)", "[threads]") {
  const Models m;
  const std::vector<Record> ref = serial(m);  // one thread
  Threads pool(2);
  const auto out = concurrent(m);
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kIterations * kWork; ++i) {
      INFO("thread " << t << ", iteration " << i / kWork << ", kind " << i % kWork);
      require_equal(out[t][i], ref[i % kWork], 1e-5);
    }
}

TEST_CASE("set_num_threads from another thread while sessions use the pool", "[threads]") {
  auto model = Model::load(test::model_path("transformer-fra"));
  Limits lim;
  lim.max_batch = 4;
  Translator ref_tr(model, lim);
  ref_tr.translate_batch(kFourSentences, 4);
  std::vector<std::string> ref;
  for (int i = 0; i < 4; ++i) ref.emplace_back(ref_tr.result(i).text);

  std::atomic<bool> stop{false};
  std::vector<std::vector<std::string>> got(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      try {
        Translator tr(model, lim);
        for (int it = 0; it < 4; ++it) {
          tr.translate_batch(kFourSentences, 4);
          for (int i = 0; i < 4; ++i) got[t].emplace_back(tr.result(i).text);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  std::thread resizer([&] {
    for (int n = 0; !stop.load(); n = (n + 1) % 3) set_num_threads(1 + n);
  });
  for (auto& th : threads) th.join();
  stop = true;
  resizer.join();
  set_num_threads(1);
  for (int t = 0; t < 2; ++t) {
    REQUIRE(errors[t] == "");
    REQUIRE(got[t].size() == 16);
    for (size_t i = 0; i < got[t].size(); ++i) REQUIRE(got[t][i] == ref[i % 4]);
  }
}

TEST_CASE("models loaded on several threads at once and dropped while sessions use them", "[threads]") {
  const std::string names[4] = {"transformer-d2l", "bahdanau-d2l", "transformer-d2l", "bahdanau-d2l"};
  std::vector<std::string> ref;
  for (const auto& n : names) {
    Translator tr(Model::load(test::model_path(n)));
    ref.emplace_back(tr.translate("i'm home .").text);
  }

  // Each thread loads a model while the others do; the main thread gets a copy, then the
  // loading thread drops its own after making a session, and the main thread drops its copy
  // while the session still translates: the last session frees the model.
  std::vector<std::shared_ptr<const Model>> shared(4);
  std::vector<std::weak_ptr<const Model>> watch(4);
  std::vector<std::vector<std::string>> got(4);
  std::vector<std::string> errors(4);
  StartLine loaded(5), dropped(5);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::unique_ptr<Translator> tr;
      try {
        auto model = Model::load(test::model_path(names[t]));
        shared[t] = model;
        tr = std::make_unique<Translator>(std::move(model));  // the session's is the only other reference
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
      loaded.arrive_and_wait();
      dropped.arrive_and_wait();  // the main thread let go of shared[t]
      if (!tr) return;
      try {
        for (int it = 0; it < 3; ++it) got[t].emplace_back(tr->translate("i'm home .").text);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
      tr.reset();  // frees the model on this thread
    });
  loaded.arrive_and_wait();
  for (int t = 0; t < 4; ++t) {
    watch[t] = shared[t];
    shared[t].reset();
  }
  dropped.arrive_and_wait();
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    INFO("thread " << t);
    REQUIRE(errors[t] == "");
    REQUIRE(got[t] == std::vector<std::string>(3, ref[t]));
    REQUIRE(watch[t].expired());
  }
}
