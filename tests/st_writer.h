// Builds safetensors images in tests, to feed the loader well-formed and hostile files.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/ops/operands.h"
#include "attnlite/safetensors.h"

namespace attnlite::test {

struct StTensor {
  std::string dtype = "F32";
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

struct StFile {
  std::vector<std::pair<std::string, StTensor>> tensors;  // in file order
  std::map<std::string, std::string> metadata;

  // Copies every tensor and the metadata of a parsed file.
  static StFile from(const SafeTensors& st) {
    StFile f;
    f.metadata = st.metadata();
    for (const auto& t : st.tensors()) {
      StTensor x;
      x.dtype = dtype_name(t.dtype);
      x.shape = t.shape;
      x.bytes.assign(st.data(t), st.data(t) + t.nbytes);
      f.tensors.emplace_back(t.name, std::move(x));
    }
    return f;
  }
  StTensor* find(const std::string& n) {
    for (auto& [k, v] : tensors)
      if (k == n) return &v;
    return nullptr;
  }
  void erase(const std::string& n) {
    for (auto it = tensors.begin(); it != tensors.end(); ++it)
      if (it->first == n) { tensors.erase(it); return; }
  }

  nlohmann::json header() const {
    nlohmann::json h = nlohmann::json::object();
    size_t off = 0;
    for (const auto& [n, t] : tensors) {
      h[n] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + t.bytes.size()}}};
      off += t.bytes.size();
    }
    if (!metadata.empty()) h["__metadata__"] = metadata;
    return h;
  }
  std::vector<uint8_t> data() const {
    std::vector<uint8_t> d;
    for (const auto& [n, t] : tensors) d.insert(d.end(), t.bytes.begin(), t.bytes.end());
    return d;
  }
  std::vector<uint8_t> bytes() const { return assemble(header().dump(), data()); }

  // The matrices a device holds in bfloat16 (Precision::BF16), by the rule their names follow:
  // every 2-D F32 tensor but the embedding tables (a tied output layer is its embedding table,
  // and stays fp32 with it). test_device_weights.cpp checks the rule against the store's own.
  static bool held_in_bf16(const std::string& name, const StTensor& t) {
    return t.dtype == "F32" && t.shape.size() == 2 && name.find("embedding") == std::string::npos;
  }
  // Those matrices rounded to bfloat16 and stored as F32 again: the values a device holding
  // them in bfloat16 computes with, for the CPU to compute with too.
  void round_to_bf16() {
    for (auto& [name, t] : tensors) {
      if (!held_in_bf16(name, t)) continue;
      for (size_t i = 0; i + 4 <= t.bytes.size(); i += 4) {
        float v;
        std::memcpy(&v, t.bytes.data() + i, 4);
        v = bf16_value(bf16_bits(v));
        std::memcpy(t.bytes.data() + i, &v, 4);
      }
    }
  }

  static std::vector<uint8_t> assemble(const std::string& header, const std::vector<uint8_t>& data,
                                       uint64_t claimed_len = UINT64_MAX) {
    std::vector<uint8_t> out(8 + header.size() + data.size());
    const uint64_t n = claimed_len == UINT64_MAX ? header.size() : claimed_len;
    for (int i = 0; i < 8; ++i) out[(size_t)i] = (uint8_t)(n >> (8 * i));
    if (!header.empty()) std::memcpy(out.data() + 8, header.data(), header.size());
    if (!data.empty()) std::memcpy(out.data() + 8 + header.size(), data.data(), data.size());
    return out;
  }
};

inline StTensor f32_tensor(std::vector<int64_t> shape, float value = 0.5f) {
  StTensor t;
  t.shape = shape;
  int64_t n = 1;
  for (auto d : shape) n *= d;
  t.bytes.resize((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i) std::memcpy(&t.bytes[(size_t)i * 4], &value, 4);
  return t;
}

}  // namespace attnlite::test
