// A generator is a tokenizer + the language-model driver + the sampler. This file holds the
// first and the glue: the session block (sized by the code that carves it), the sequence, and
// the Generation views.
#include "attnlite/generate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "attnlite/error.h"
#include "drivers/text_driver.h"
#include "search/sample.h"
#include "tasks/session.h"

namespace attnlite {

void validate(const GenerateOptions& o) {
  if (o.max_tokens < 0) throw Error("max_tokens must be >= 0, got " + std::to_string(o.max_tokens));
  if (!(o.temperature > 0) || !std::isfinite(o.temperature))
    throw Error("temperature must be a number > 0, got " + std::to_string(o.temperature));
  if (o.top_k < 0) throw Error("top_k must be >= 1 (or 0: no cut), got " + std::to_string(o.top_k));
  if (!(o.top_p > 0 && o.top_p <= 1))
    throw Error("top_p must be in (0, 1], got " + std::to_string(o.top_p));
}

double Perplexity::value() const { return tokens ? std::exp(nll / (double)tokens) : NAN; }

namespace {

const Model& lm_of(const std::shared_ptr<const Model>& m) {
  if (!m) throw Error("Generator needs a model");
  require_task(*m, Task::Generate);
  return *m;
}

}  // namespace

struct Generator::Impl {
  const Model& m;
  const Vocab& vocab;
  const ops::Ops& op;
  std::unique_ptr<drivers::TextDriver> driver_;
  drivers::TextDriver& driver;
  search::Sampler sampler;
  int T = 0, V = 0;
  size_t input_cap = 0, text_cap = 0;

  // host
  char* pre = nullptr;                // preprocessed prompt
  std::string_view* words = nullptr;  // (T) its words
  int* ids = nullptr;                 // (T + 1) the sequence
  float* probs = nullptr;             // (T + 1) of the generated tokens
  char* text = nullptr;               // (text_cap)
  float* host_logits = nullptr;       // (T, V) when op memory is not the host's
  float* host_attn = nullptr;         // (L, NH, T, T) likewise

  // op memory
  size_t scratch_bytes = 0;
  SessionMemory memory;
  Arena scratch;

  // the sequence
  GenerateOptions opts;
  SplitMix64 rng;
  Generation g;
  int n = 0;      // tokens in ids
  int fed = 0;    // positions the model has read
  size_t prompt_text = 0;  // bytes of text taken by the prompt words

  Impl(const Model& model, const GenerateLimits& lim)
      : m(model), vocab(model.tgt_vocab()), op(ops_for(lim.device, lim.precision)), driver_(family_model(model).text_driver(op)), driver(*driver_) {
    if (lim.max_input_bytes < 1 || lim.max_input_bytes > (1u << 20))
      throw Error("limits: max_input_bytes must be in [1, 1048576]");
    T = driver.context();
    V = driver.vocab();
    input_cap = lim.max_input_bytes * 2 + 16;  // preprocessing adds at most one space per char
    size_t maxtok = 1;
    for (int i = 0; i < V; ++i) maxtok = std::max(maxtok, vocab.token(i).size());
    text_cap = input_cap + (size_t)(T + 1) * (maxtok + 1) + 1;
    scratch_bytes = measure_scratch();
    memory.measure(op, [this](Arena& host, Arena& mem) { carve(host, mem); });
  }

  // The scratch of the largest calls, measured with the dry-run op set: the whole context in
  // one pass (prompt, perplexity) and the last single step, with and without attention.
  size_t measure_scratch() {
    return attnlite::measure_scratch([this](Arena& none) { driver.carve(none); },
                                     [this](const ops::Ctx& cx, bool attention) {
                                       driver.forward(nullptr, T, 0, true, attention, cx);
                                       driver.forward(nullptr, 1, T - 1, false, attention, cx);
                                     });
  }

  void carve(Arena& host, Arena& mem) {
    pre = host.take<char>(input_cap);
    words = host.take<std::string_view>((size_t)T);
    ids = host.take<int>((size_t)T + 1);
    probs = host.floats((size_t)T + 1);
    text = host.take<char>(text_cap);
    sampler.carve(host, V);
    if (!op.host_memory()) {
      host_logits = host.floats((size_t)T * V);
      host_attn = host.floats((size_t)driver.attention_len());
    }
    driver.carve(mem);
    scratch = Arena(mem.take<char>(scratch_bytes), scratch_bytes);
  }

  void bind(void* block, size_t bytes) {
    memory.bind(op, block, bytes, "of this model", [this](Arena& host, Arena& mem) { carve(host, mem); });
    g = Generation{};
  }

  // Preprocess + split into words; returns the word count (all of them, even past T).
  int split(std::string_view s, size_t max_bytes, const char* what) {
    if (s.size() > max_bytes)
      throw Error(std::string(what) + " is too long: " + std::to_string(s.size()) +
                  " bytes (limit " + std::to_string(max_bytes) + ")");
    const size_t len = preprocess_nmt(s, pre, input_cap);
    return split_tokens(std::string_view(pre, len), words, T);
  }

  const float* logits_on_host(const float* z, int rows) {
    if (op.host_memory()) return z;
    op.download(host_logits, z, sizeof(float) * (size_t)rows * V);
    return host_logits;
  }

  const Generation& start(std::string_view prompt, const GenerateOptions& o, size_t max_bytes) {
    validate(o);
    const int count = split(prompt, max_bytes, "prompt");
    if (count == 0) throw Error("empty prompt");
    if (count > T - 1)
      throw Error("prompt of " + std::to_string(count) + " words is longer than the limit: the model reads " +
                  std::to_string(T) + " positions, <bos> and at most " + std::to_string(T - 1) + " words");
    opts = o;
    rng = SplitMix64(o.seed);
    g = Generation{};
    ids[0] = vocab.bos_id;
    for (int k = 0; k < count; ++k) {
      ids[1 + k] = vocab.lookup(words[k]);
      if (ids[1 + k] == vocab.unk_id) ++g.num_unknown;
    }
    n = count + 1;
    g.num_prompt = count;
    // the prompt words as typed (preprocessed), then the generated tokens
    size_t len = 0;
    for (int k = 0; k < count; ++k) {
      if (k) text[len++] = ' ';
      std::memcpy(text + len, words[k].data(), words[k].size());
      len += words[k].size();
    }
    prompt_text = len;
    const ops::Ctx cx{op, scratch};
    if (o.attention) driver.clear_attention(op);
    const float* z = driver.forward(ids, n, 0, false, o.attention, cx);
    fed = n;
    next(logits_on_host(z, 1));
    return g;
  }

  void next(const float* z) {
    float p = 0;
    const int id = sampler.choose(z, opts, rng, &p);
    probs[n - g.num_prompt - 1] = p;
    ids[n++] = id;
    update();
  }

  const Generation& step() {
    if (g.done || n == 0) return g;
    const ops::Ctx cx{op, scratch};
    const float* z = driver.forward(ids + n - 1, 1, n - 1, false, opts.attention, cx);
    fed = n;
    next(logits_on_host(z, 1));
    return g;
  }

  // The Generation views after a token was appended.
  void update() {
    const int gen = n - g.num_prompt - 1;
    const bool eos = ids[n - 1] == vocab.eos_id;
    g.tokens = ids;
    g.num_tokens = n;
    g.num_generated = gen;
    g.probs = probs;
    g.eos = eos;
    g.done = eos || n == T + 1 || (opts.max_tokens && gen >= opts.max_tokens);
    size_t len = prompt_text;
    const size_t cont = len + 1;
    const int shown = eos ? gen - 1 : gen;
    for (int k = 0; k < shown; ++k) {
      const std::string& tok = vocab.token(ids[g.num_prompt + 1 + k]);
      text[len++] = ' ';
      std::memcpy(text + len, tok.data(), tok.size());
      len += tok.size();
    }
    g.text = std::string_view(text, len);
    g.continuation = shown ? std::string_view(text + cont, len - cont) : std::string_view();
    g.layers = m.num_layers();
    g.heads = m.num_heads();
    g.ld = T;
    g.positions = fed;
    g.attn = nullptr;
    if (opts.attention) {
      g.attn = driver.attention();
      if (host_attn) {
        op.download(host_attn, g.attn, sizeof(float) * (size_t)driver.attention_len());
        g.attn = host_attn;
      }
    }
  }

  const float* forward(const int* in, int count, bool attention) {
    if (count < 1 || count > T)
      throw Error("forward: " + std::to_string(count) + " tokens is outside [1, " + std::to_string(T) + "]");
    for (int k = 0; k < count; ++k)
      if (in[k] < 0 || in[k] >= V) throw Error("forward: token id " + std::to_string(in[k]) + " is outside the vocabulary");
    const ops::Ctx cx{op, scratch};
    if (attention) driver.clear_attention(op);
    const float* z = logits_on_host(driver.forward(in, count, 0, true, attention, cx), count);
    g = Generation{};
    g.layers = m.num_layers();
    g.heads = m.num_heads();
    g.ld = T;
    g.positions = count;
    if (attention) {
      g.attn = driver.attention();
      if (host_attn) {
        op.download(host_attn, g.attn, sizeof(float) * (size_t)driver.attention_len());
        g.attn = host_attn;
      }
    }
    n = 0;  // no generation in progress
    return z;
  }

  bool score(std::string_view sentence, Perplexity& acc, size_t max_bytes) {
    const int count = split(sentence, max_bytes, "sentence");
    if (count == 0 || count > T - 1) {
      ++acc.skipped;
      return false;
    }
    ids[0] = vocab.bos_id;
    for (int k = 0; k < count; ++k) ids[1 + k] = vocab.lookup(words[k]);
    ids[count + 1] = vocab.eos_id;
    const ops::Ctx cx{op, scratch};
    const float* z = logits_on_host(driver.forward(ids, count + 1, 0, true, false, cx), count + 1);
    double nll = 0;
    for (int i = 0; i <= count; ++i) nll -= search::log_softmax_at(z + (long)i * V, V, ids[i + 1]);
    acc.nll += nll;
    acc.tokens += count + 1;
    ++acc.sentences;
    n = 0;
    g = Generation{};
    return true;
  }
};

size_t Generator::required_bytes(const Model& model, const GenerateLimits& limits) {
  Impl impl(model, limits);
  return impl.memory.need;
}

Generator::Generator(std::shared_ptr<const Model> model, const GenerateLimits& limits,
                     void* block, size_t block_bytes)
    : model_(std::move(model)), limits_(limits) {
  impl_ = std::make_unique<Impl>(lm_of(model_), limits_);
  impl_->bind(block, block_bytes);
}

Generator::~Generator() = default;

const Generation& Generator::generate(std::string_view prompt, const GenerateOptions& opts) {
  impl_->start(prompt, opts, limits_.max_input_bytes);
  while (!impl_->g.done) impl_->step();
  return impl_->g;
}

const Generation& Generator::start(std::string_view prompt, const GenerateOptions& opts) {
  return impl_->start(prompt, opts, limits_.max_input_bytes);
}
const Generation& Generator::step() { return impl_->step(); }
const Generation& Generator::result() const { return impl_->g; }

bool Generator::score(std::string_view sentence, Perplexity& acc) {
  return impl_->score(sentence, acc, limits_.max_input_bytes);
}

const float* Generator::forward(const int* ids, int num_tokens, bool attention) {
  return impl_->forward(ids, num_tokens, attention);
}

int Generator::context() const { return impl_->T; }
size_t Generator::workspace_bytes() const { return impl_->memory.need; }

}  // namespace attnlite
