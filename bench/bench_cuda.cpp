// bench_cuda — greedy decoding throughput of a base-size Transformer on the CUDA backend.
//
// The model is generated here (no file needed): num_hiddens 512, 6 encoder + 6 decoder
// layers, 8 heads, ffn 2048, source and target vocabularies of 32000, PyTorch-like uniform
// random weights (fixed seed). Sources are 20 words (+ <eos> = num_steps 21). Each batch
// size is timed twice through the public API (Translator, Device::CUDA, no attention
// weights): with max_steps = 1 (encoder + one decoder step) and with max_steps = N; the
// difference gives the decoder's tokens/s without the encoder:
//     decode tokens/s = batch · (N − 1) / (t_N − t_1)
// Every decoder step ends with the ids/probabilities copied back, so wall time is GPU time.
//
// usage: bench_cuda [--batch 1,32] [--steps 64] [--reps 5] [--precision fp32|bf16] [--cpu]
//                   [--json OUT] [--check] [--products]
//   --precision  how the GPU holds the weights (Limits::precision; default fp32)
//   --products  instead: each fp32 product of a decoding step of this model at each batch's
//            rows, on its own, in each way the products can run (cuda::BlasMode: SGEMM and the
//            bias kernel, the default, the GEMV of many rows), microseconds per call: the calls
//            over enough copies of the weights that they come from memory, as in a step, as
//            one CUDA graph (cuda::check::linear_us); and their sum over a decoder step
//   --cpu    also time the CPU path at the same sizes (slow at this model size)
//   --json   also write the rows as JSON (tools/gpu-check.sh's report reads it)
//   --check  no GPU needed: build the model, translate one source for 2 steps on the CPU
// Build: cmake -DATTNLITE_CUDA=ON -DATTNLITE_BENCH=ON ...; the binary is bench/bench_cuda.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "cuda/device.h"

namespace {

using namespace attnlite;

struct Config {
  int H = 512, L = 6, NH = 8, F = 2048, V = 32000, src_words = 20;
};

// A safetensors image of a random Transformer with the d2l state_dict names.
std::vector<uint8_t> random_model_bytes(const Config& c) {
  struct T {
    std::string name;
    std::vector<int64_t> shape;
    float init;  // > 0: uniform(-init, init); 0: ones (LayerNorm weight); < 0: zeros
  };
  std::vector<T> ts;
  const int64_t H = c.H, F = c.F, V = c.V;
  auto linear = [&](const std::string& p, int64_t out, int64_t in, bool bias) {
    const float a = 1.f / std::sqrt((float)in);
    ts.push_back({p + ".weight", {out, in}, a});
    if (bias) ts.push_back({p + ".bias", {out}, a});
  };
  auto mha = [&](const std::string& p) {
    for (const char* w : {"W_q", "W_k", "W_v", "W_o"}) linear(p + w, H, H, /*bias=*/false);
  };
  auto norm = [&](const std::string& p) {
    ts.push_back({p + "ln.weight", {H}, 0.f});
    ts.push_back({p + "ln.bias", {H}, -1.f});
  };
  auto ffn = [&](const std::string& p) {
    linear(p + "ffn.dense1", F, H, true);
    linear(p + "ffn.dense2", H, F, true);
  };
  ts.push_back({"encoder.embedding.weight", {V, H}, 1.f});
  for (int l = 0; l < c.L; ++l) {
    const std::string p = "encoder.blks.block" + std::to_string(l) + ".";
    mha(p + "attention.");
    norm(p + "addnorm1.");
    ffn(p);
    norm(p + "addnorm2.");
  }
  ts.push_back({"decoder.embedding.weight", {V, H}, 1.f});
  for (int l = 0; l < c.L; ++l) {
    const std::string p = "decoder.blks.block" + std::to_string(l) + ".";
    mha(p + "attention1.");
    norm(p + "addnorm1.");
    mha(p + "attention2.");
    norm(p + "addnorm2.");
    ffn(p);
    norm(p + "addnorm3.");
  }
  linear("decoder.dense", V, H, true);

  nlohmann::json vocab = {"<unk>", "<pad>", "<bos>", "<eos>"};
  for (int i = 4; i < c.V; ++i) vocab.push_back("w" + std::to_string(i));
  nlohmann::json header = nlohmann::json::object();
  size_t off = 0;
  for (const auto& t : ts) {
    size_t n = 1;
    for (auto d : t.shape) n *= (size_t)d;
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {off, off + 4 * n}}};
    off += 4 * n;
  }
  header["__metadata__"] = {
      {"attnlite.kind", "transformer"},
      {"attnlite.config",
       nlohmann::json{{"src_vocab_size", c.V}, {"tgt_vocab_size", c.V}, {"num_hiddens", c.H},
                      {"num_layers", c.L}, {"num_heads", c.NH}, {"ffn_num_hiddens", c.F},
                      {"num_steps", c.src_words + 1}}
           .dump()},
      {"attnlite.src_vocab", vocab.dump()},
      {"attnlite.tgt_vocab", vocab.dump()}};
  const std::string h = header.dump();
  std::vector<uint8_t> out(8 + h.size() + off);
  for (int i = 0; i < 8; ++i) out[(size_t)i] = (uint8_t)((uint64_t)h.size() >> (8 * i));
  std::memcpy(out.data() + 8, h.data(), h.size());
  uint64_t s = 0x9E3779B97F4A7C15ull;  // xorshift64*, fixed seed
  uint8_t* p = out.data() + 8 + h.size();
  for (const auto& t : ts) {
    size_t n = 1;
    for (auto d : t.shape) n *= (size_t)d;
    for (size_t i = 0; i < n; ++i) {
      float v;
      if (t.init > 0) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        const float u = (float)((s * 2685821657736338717ull) >> 40) / (float)(1 << 24);  // [0, 1)
        v = (2.f * u - 1.f) * t.init;
      } else {
        v = t.init == 0.f ? 1.f : 0.f;
      }
      std::memcpy(p, &v, 4);
      p += 4;
    }
  }
  return out;
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  size_t i = 0;
  while (i < s.size()) {
    const size_t j = s.find(',', i);
    v.push_back(std::stoi(s.substr(i, j == std::string::npos ? std::string::npos : j - i)));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return v;
}

// Median seconds of `reps` translate_batch calls (after one warm-up).
double time_batch(Translator& tr, const std::vector<std::string_view>& src, int n, int steps,
                  int reps, int* decoder_steps) {
  DecodeOptions o;
  o.attention = false;
  o.max_steps = steps;
  tr.translate_batch(src.data(), n, o);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    tr.translate_batch(src.data(), n, o);
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double>(b - a).count());
  }
  int most = 0;
  for (int i = 0; i < n; ++i) most = std::max(most, tr.result(i).steps);
  *decoder_steps = most;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// --products: each product of a decoder step (fp32) at each batch's rows, in each BLAS mode.
int time_products(const Config& c, const std::vector<int>& batches, int reps,
                  const std::string& json_path) {
  struct Product {
    const char* name;
    int N, K, layers;
    bool relu;
    int per_step;  // calls in a decoder step (the output layer once, the others per layer)
  };
  const std::vector<Product> ps = {
      {"self-attention Q, K, V (3 layers, one launch)", c.H, c.H, 3, false, c.L},
      {"H x H (self and cross output, cross Q)", c.H, c.H, 1, false, 3 * c.L},
      {"FFN 1 (ReLU)", c.F, c.H, 1, true, c.L},
      {"FFN 2", c.H, c.F, 1, false, c.L},
      {"output layer", c.V, c.H, 1, false, 1},
  };
  struct Mode {
    int id;
    const char* name;
  };
  const std::vector<Mode> modes = {{0, "SGEMM + bias kernel (ATTNLITE_CUDA_LT=0)"},
                                   {1, "default"},
                                   {3, "GEMV of many rows (ATTNLITE_CUDA_LT=gemv)"}};
  std::printf("# the fp32 products of a decoding step of the base Transformer, each on its own: "
              "microseconds per call, median of %d runs, each one replay of a CUDA graph of the "
              "calls over copies of the weights (at least 128 MB: from memory, not L2)\n"
              "# device: %s\n",
              reps, cuda_device_name().c_str());
  std::printf("| rows | product | calls a step |");
  for (const Mode& m : modes) std::printf(" %s |", m.name);
  std::printf("\n|---:|---|---:|");
  for (size_t i = 0; i < modes.size(); ++i) std::printf("---:|");
  std::printf("\n");
  nlohmann::json rows = nlohmann::json::array();
  for (int M : batches) {
    std::vector<double> step(modes.size(), 0.0);
    for (const Product& p : ps) {
      const double bytes = 4.0 * p.N * p.K * p.layers;
      const int copies = (int)std::min(64.0, std::max(1.0, std::ceil(128e6 / bytes)));
      std::printf("| %d | %s | %d |", M, p.name, p.per_step);
      nlohmann::json us = nlohmann::json::object();
      for (size_t i = 0; i < modes.size(); ++i) {
        std::vector<double> t;
        for (int r = 0; r < reps; ++r)
          t.push_back(cuda::check::linear_us(M, p.N, p.K, p.layers, p.relu, modes[i].id, copies, 1));
        std::sort(t.begin(), t.end());
        const double med = t[t.size() / 2];
        step[i] += med * p.per_step;
        us[std::to_string(modes[i].id)] = med;
        std::printf(" %.2f |", med);
      }
      std::printf("\n");
      std::fflush(stdout);
      rows.push_back({{"rows", M}, {"product", p.name}, {"N", p.N}, {"K", p.K}, {"layers", p.layers},
                      {"per_step", p.per_step}, {"us", us}});
    }
    std::printf("| %d | **a decoder step's products** | |", M);
    nlohmann::json us = nlohmann::json::object();
    for (size_t i = 0; i < modes.size(); ++i) {
      std::printf(" **%.1f** |", step[i]);
      us[std::to_string(modes[i].id)] = step[i];
    }
    std::printf("\n");
    rows.push_back({{"rows", M}, {"product", "step"}, {"us", us}});
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << nlohmann::json{{"device", cuda_device_name()}, {"products", rows}}.dump() << '\n';
    if (!out) throw Error("cannot write '" + json_path + "'");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> batches = {1, 32};
  int steps = 64, reps = 5;
  bool cpu = false, check = false, products = false;
  std::string json_path;
  Precision precision = Precision::F32;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--batch" && i + 1 < argc) batches = parse_list(argv[++i]);
    else if (a == "--steps" && i + 1 < argc) steps = std::stoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--cpu") cpu = true;
    else if (a == "--check") check = true;
    else if (a == "--products") products = true;
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--precision" && i + 1 < argc && parse_precision(argv[i + 1], &precision)) ++i;
    else {
      std::fprintf(stderr, "usage: bench_cuda [--batch 1,32] [--steps 64] [--reps 5] [--precision fp32|bf16] "
                           "[--cpu] [--json OUT] [--check] [--products]\n");
      return 2;
    }
  }
  if (steps < 2 || reps < 1 || batches.empty()) {
    std::fprintf(stderr, "bench_cuda: --steps must be >= 2 and --reps >= 1\n");
    return 2;
  }
  if (!check && !cuda_available()) {
    std::fprintf(stderr, "bench_cuda: no CUDA device: %s\n", cuda_device_name().c_str());
    return 1;
  }
  try {
    const Config c;
    if (products) return time_products(c, batches, reps, json_path);
    const auto bytes = random_model_bytes(c);
    auto model = Model::from_bytes(bytes.data(), bytes.size());
    const int max_batch = *std::max_element(batches.begin(), batches.end());
    // 20-word sources, different per row
    std::vector<std::string> sentences;
    for (int b = 0; b < max_batch; ++b) {
      std::string s;
      for (int k = 0; k < c.src_words; ++k)
        s += (k ? " w" : "w") + std::to_string(4 + (b * 7919 + k * 104729) % (c.V - 4));
      sentences.push_back(s);
    }
    std::vector<std::string_view> src(sentences.begin(), sentences.end());
    if (check) {
      Translator tr(model);
      DecodeOptions o;
      o.max_steps = 2;
      const Translation& r = tr.translate(src[0], o);
      std::printf("check: %zu-byte model, source valid length %d, %d steps, output '%.*s'\n",
                  bytes.size(), r.src_valid, r.steps, (int)r.text.size(), r.text.data());
      return r.src_valid == c.src_words + 1 && r.steps >= 1 ? 0 : 1;
    }

    std::printf("# base Transformer: H %d, %d+%d layers, %d heads, ffn %d, vocab %d, source %d words\n",
                c.H, c.L, c.L, c.NH, c.F, c.V, c.src_words);
    std::printf("# device: %s; %s weights on the GPU, every sum in FP32 (cuBLAS CUBLAS_COMPUTE_32F, "
                "no TF32); median of %d\n",
                cuda_device_name().c_str(), precision == Precision::BF16 ? "bfloat16" : "FP32", reps);
    std::printf("| device | batch | steps | encoder+1 step ms | full ms | decode tokens/s |\n");
    std::printf("|---|---|---|---|---|---|\n");
    nlohmann::json rows = nlohmann::json::array();
    for (const Device d : cpu ? std::vector<Device>{Device::CUDA, Device::CPU}
                              : std::vector<Device>{Device::CUDA}) {
      for (int n : batches) {
        Limits lim;
        lim.max_batch = n;
        lim.max_tgt_steps = steps;
        lim.device = d;
        if (d == Device::CUDA) lim.precision = precision;
        Translator tr(model, lim);
        int s1 = 0, sN = 0;
        const double t1 = time_batch(tr, src, n, 1, reps, &s1);
        const double tN = time_batch(tr, src, n, steps, reps, &sN);
        const double tps = tN > t1 ? n * (double)(sN - 1) / (tN - t1) : 0.0;
        std::printf("| %s | %d | %d | %.3f | %.3f | %.0f |\n", d == Device::CUDA ? "cuda" : "cpu",
                    n, sN, t1 * 1e3, tN * 1e3, tps);
        std::fflush(stdout);
        rows.push_back({{"device", d == Device::CUDA ? "cuda" : "cpu"}, {"batch", n}, {"steps", sN},
                        {"t1_ms", t1 * 1e3}, {"tN_ms", tN * 1e3}, {"decode_tokens_per_s", tps}});
      }
    }
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << nlohmann::json{{"device", cuda_device_name()}, {"precision", precision_name(precision)}, {"rows", rows}}.dump()
          << '\n';
      if (!out) throw Error("cannot write '" + json_path + "'");
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_cuda: %s\n", e.what());
    return 1;
  }
  return 0;
}
