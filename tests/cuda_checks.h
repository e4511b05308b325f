// Shared by the CUDA tests (test_cuda.cpp, test_cuda_models.cpp): models built from the
// random module fixtures, and the check that says why a GPU case is skipped.
#pragma once
#include <catch2/catch.hpp>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "fixture.h"
#include "st_writer.h"

namespace attnlite::test {

// A loadable model from a module fixture: its parameters, plus the metadata a model file
// carries (kind, config, vocabularies of placeholder words w4.., f4..); bf16_rounded: the
// matrices a device holds in bfloat16 rounded (StFile::round_to_bf16).
inline std::shared_ptr<const Model> model_from_fixture(const std::string& fixture,
                                                       const char* kind, nlohmann::json config,
                                                       bool bf16_rounded = false) {
  StFile f = StFile::from(SafeTensors::load(attnlite::test::fixture_path(fixture)));
  std::vector<std::string> drop;
  for (const auto& [name, t] : f.tensors)
    if (name.rfind("in.", 0) == 0 || name.rfind("out.", 0) == 0) drop.push_back(name);
  for (const auto& n : drop) f.erase(n);
  auto vocab = [](int size, const char* prefix) {
    nlohmann::json v = {"<unk>", "<pad>", "<bos>", "<eos>"};
    for (int i = 4; i < size; ++i) v.push_back(prefix + std::to_string(i));
    return v.dump();
  };
  f.metadata = {{"attnlite.kind", kind},
                {"attnlite.config", config.dump()},
                {"attnlite.src_vocab", vocab(config["src_vocab_size"].get<int>(), "w")},
                {"attnlite.tgt_vocab", vocab(config["tgt_vocab_size"].get<int>(), "f")}};
  if (bf16_rounded) f.round_to_bf16();
  const auto bytes = f.bytes();
  return Model::from_bytes(bytes.data(), bytes.size());
}

// The model file at `path` (model_path, fixture_path) with those matrices rounded.
inline std::shared_ptr<const Model> rounded_to_bf16(const std::string& path) {
  StFile f = StFile::from(SafeTensors::load(path));
  f.round_to_bf16();
  const auto bytes = f.bytes();
  return Model::from_bytes(bytes.data(), bytes.size());
}

// tests/fixtures/transformer.safetensors: 2 layers, 4 heads, H 32, random weights.
inline std::shared_ptr<const Model> random_transformer(bool bf16_rounded = false) {
  return model_from_fixture("transformer", "transformer",
                            {{"src_vocab_size", 50}, {"tgt_vocab_size", 60}, {"num_hiddens", 32},
                             {"num_layers", 2}, {"num_heads", 4}, {"ffn_num_hiddens", 64},
                             {"num_steps", 10}},
                            bf16_rounded);
}
inline std::shared_ptr<const Model> random_bahdanau() {
  return model_from_fixture("bahdanau", "bahdanau",
                            {{"src_vocab_size", 10}, {"tgt_vocab_size", 10}, {"embed_size", 8},
                             {"num_hiddens", 16}, {"num_layers", 2}, {"num_steps", 7}});
}

// True when GPU cases can run; otherwise says why they are skipped.
inline bool have_gpu(const char* what) {
  if (cuda_available()) return true;
  WARN("no CUDA device: skipping " << what << " (" << cuda_device_name() << ")");
  return false;
}

}  // namespace attnlite::test
