// attnlite — model benchmarks (issue "Fast on the CPU").
//
//   d2l/<model>/sentence        one-sentence greedy latency ("i'm home .") of a shipped model
//                               through Translator::translate (attention recording off; the
//                               *_attn variant records every weight, as the CLI does)
//   base/encoder/B              base-size Transformer encoder on B 20-token sources
//   base/encoder+crosskv/B      the same plus the per-layer cross-attention K/V projection
//                               (what the Translator does once per source, before decoding)
//   base/translate/B/steps      greedy decode of B sentences for a fixed number of steps
//                               (random weights never emit <eos>: tools/make_random_model.py)
//
// Counters: steps and tokens per iteration; tok/s = tokens per second of the whole call.
// bench/run.sh derives decode tokens/s = B * steps / (translate - encoder+crosskv).
// The last argument of every benchmark is the thread count (attnlite/threads.h: the
// optional pool that splits large linear layers; 1 is the default).
//
// Model paths: ATTNLITE_MODELS_DIR (the shipped models) and ATTNLITE_BASE_MODEL (made by
// tools/make_random_model.py), both overridable by environment variables of the same names.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/arena.h"
#include "attnlite/attention/positional_encoding.h"
#include "attnlite/model.h"
#include "attnlite/ops/ops.h"
#include "attnlite/threads.h"
#include "attnlite/translate.h"
#include "families/transformer/transformer.h"  // the bound weights, for the block-level benchmarks
#include "model/model_impl.h"

using namespace attnlite;
using namespace attnlite::models;

namespace {

std::string env_or(const char* name, const char* def) {
  const char* v = std::getenv(name);
  return v && *v ? v : def;
}

bool file_exists(const std::string& p) {
  if (FILE* f = std::fopen(p.c_str(), "rb")) {
    std::fclose(f);
    return true;
  }
  return false;
}

// Models are loaded once per process (loading is not what these benchmarks measure).
std::shared_ptr<const Model> model_at(const std::string& path) {
  static std::map<std::string, std::shared_ptr<const Model>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const Model> m;
  if (file_exists(path)) m = Model::load(path);
  cache[path] = m;
  return m;
}

std::string shipped(const char* name) {
  return env_or("ATTNLITE_MODELS_DIR", ATTNLITE_MODELS_DIR) + "/" + name + ".safetensors";
}
std::string base_path() { return env_or("ATTNLITE_BASE_MODEL", ATTNLITE_BASE_MODEL); }

// Sets the pool for one benchmark and back to 1 thread afterwards.
struct PoolThreads {
  explicit PoolThreads(int n) { set_num_threads(n); }
  ~PoolThreads() { set_num_threads(1); }
};

// ---- shipped d2l models: one sentence ----------------------------------------------------

void BM_d2l_sentence(benchmark::State& state, const char* name, bool attention) {
  PoolThreads pool((int)state.range(0));
  auto model = model_at(shipped(name));
  if (!model) {
    state.SkipWithError(("missing " + shipped(name)).c_str());
    return;
  }
  Translator tr(model);
  DecodeOptions opts;
  opts.attention = attention;
  const char* sentence = "i'm home .";
  const Translation* r = &tr.translate(sentence, opts);
  for (auto _ : state) {
    r = &tr.translate(sentence, opts);
    benchmark::DoNotOptimize(r->tokens);
  }
  state.SetLabel(std::string(r->text));
  state.counters["steps"] = r->steps;
  state.counters["tokens"] = r->num_tokens;
}

// ---- base-size Transformer -----------------------------------------------------------------

// Source sentence i of a batch: 19 distinct words + <eos> = 20 tokens (the model's num_steps).
std::vector<std::string> base_sentences(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string s;
    for (int k = 0; k < 19; ++k) {
      if (k) s += ' ';
      s += 'w' + std::to_string(4 + (i * 977 + k * 131) % 31996);
    }
    out.push_back(s);
  }
  return out;
}

void BM_base_encoder(benchmark::State& state, bool cross_kv) {
  const int B = (int)state.range(0);
  PoolThreads pool((int)state.range(1));
  auto model = model_at(base_path());
  if (!model) {
    state.SkipWithError(("missing " + base_path() + " (tools/make_random_model.py)").c_str());
    return;
  }
  const auto& tm = static_cast<const attnlite::families::TransformerModel&>(*model->impl().model);
  const TransformerConfig& c = tm.config;
  const TransformerWeights& w = tm.weights;
  const int S = c.num_steps, H = c.num_hiddens, L = c.num_layers;
  // The sources as the Translator sees base_sentences(B): 19 word ids, then <eos>.
  std::vector<int> src((size_t)B * S);
  for (int i = 0; i < B; ++i)
    for (int k = 0; k < S; ++k)
      src[(size_t)i * S + k] = k + 1 < S ? 4 + (i * 977 + k * 131) % 31996 : model->src_vocab().eos_id;
  std::vector<int> valid(B, S);
  const size_t R = (size_t)B * S;
  const size_t scratch_floats = 8 * R * H + R * c.ffn_num_hiddens + (size_t)S * S + 4096;
  AlignedBuffer buf((scratch_floats + (size_t)B * S * H * (1 + 2 * L)) * sizeof(float));
  float* enc_out = static_cast<float*>(buf.data());
  float* kv = enc_out + (size_t)B * S * H;  // (L, 2, B, S, H)
  float* scratch = kv + (size_t)2 * L * B * S * H;
  Arena arena(scratch, scratch_floats * sizeof(float));
  const ops::Ctx cx{ops::cpu(), arena};
  const ValidLens vl = ValidLens::per_batch(valid.data());
  std::vector<float> P((size_t)S * H);  // the positional rows of the sources
  attnlite::attention::positional_encoding_table(P.data(), S, H);
  for (auto _ : state) {
    transformer_encode(enc_out, nullptr, w, c, P.data(), src.data(), B, S, vl, cx);
    if (cross_kv)
      for (int l = 0; l < L; ++l)
        project_cross_kv(kv + (size_t)(2 * l) * B * S * H, kv + (size_t)(2 * l + 1) * B * S * H,
                         w.dec[(size_t)l], enc_out, B, S, cx);
    benchmark::DoNotOptimize(enc_out);
    benchmark::ClobberMemory();
  }
  state.counters["src_tokens"] = B * S;
}

void BM_base_translate(benchmark::State& state) {
  const int B = (int)state.range(0), steps = (int)state.range(1);
  PoolThreads pool((int)state.range(2));
  auto model = model_at(base_path());
  if (!model) {
    state.SkipWithError(("missing " + base_path() + " (tools/make_random_model.py)").c_str());
    return;
  }
  Limits lim;
  lim.max_batch = B;
  lim.max_tgt_steps = steps;
  Translator tr(model, lim);
  DecodeOptions opts;
  opts.attention = false;
  opts.max_steps = steps;
  const auto text = base_sentences(B);
  std::vector<std::string_view> views(text.begin(), text.end());
  tr.translate_batch(views.data(), B, opts);  // warm up
  for (auto _ : state) {
    tr.translate_batch(views.data(), B, opts);
    benchmark::DoNotOptimize(tr.result(0).tokens);
  }
  int tokens = 0;
  for (int b = 0; b < B; ++b) {
    if (tr.result(b).steps != steps) {
      state.SkipWithError("a sentence stopped before the step limit (<eos>)");
      return;
    }
    tokens += tr.result(b).steps;
  }
  state.counters["batch"] = B;
  state.counters["steps"] = steps;
  state.counters["tok/s"] = benchmark::Counter((double)tokens * (double)state.iterations(), benchmark::Counter::kIsRate);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("attnlite.kernels", ops::kernels_name());

  const struct { const char* name; const char* file; } d2l[] = {
      {"transformer", "transformer-d2l"}, {"bahdanau", "bahdanau-d2l"}};
  for (const auto& m : d2l) {
    const std::string prefix = std::string("d2l/") + m.name;
    benchmark::RegisterBenchmark((prefix + "/sentence").c_str(), BM_d2l_sentence, m.file, false)
        ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((prefix + "/sentence_attn").c_str(), BM_d2l_sentence, m.file, true)
        ->ArgName("threads")->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
  }
  for (const bool kv : {false, true})
    benchmark::RegisterBenchmark(kv ? "base/encoder+crosskv" : "base/encoder", BM_base_encoder, kv)
        ->ArgNames({"B", "threads"})
        ->Args({1, 1})->Args({16, 1})->Args({1, 2})->Args({16, 2})
        ->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("base/translate", BM_base_translate)
      ->ArgNames({"B", "steps", "threads"})
      ->Args({1, 20, 1})->Args({16, 20, 1})->Args({1, 20, 2})->Args({16, 20, 2})
      ->UseRealTime()->Unit(benchmark::kMillisecond);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
