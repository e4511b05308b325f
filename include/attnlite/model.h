// attnlite — a trained translation model: config, both vocabularies and the weights, read
// from one safetensors file (tensor names = the d2l state_dict names; metadata keys
// attnlite.kind, attnlite.config, attnlite.src_vocab, attnlite.tgt_vocab).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/models/seq2seq_bahdanau.h"
#include "attnlite/models/transformer.h"
#include "attnlite/vocab.h"
#include "attnlite/weights.h"

namespace attnlite {

enum class ModelKind { Transformer, Bahdanau };
const char* model_kind_name(ModelKind);

class Model {
 public:
  // Validate everything; throw attnlite::Error naming the problem (and the path).
  static std::shared_ptr<const Model> load(const std::string& path);
  static std::shared_ptr<const Model> from_bytes(const uint8_t* bytes, size_t size);

  ModelKind kind = ModelKind::Transformer;
  TransformerConfig transformer;  // when kind == Transformer
  BahdanauConfig bahdanau;        // when kind == Bahdanau
  Vocab src_vocab, tgt_vocab;
  std::map<std::string, std::string> metadata;

  TransformerWeights tw;
  BahdanauWeights bw;
  std::vector<float> P;           // positional encoding table (max_len, H), Transformer only

  int num_steps() const;
  int num_layers() const;
  int num_heads() const;          // 1 for Bahdanau
  size_t weight_bytes() const { return store_.bytes(); }
  // Some weights are int8 (tools/quantize.py): linear layers and embedding tables.
  bool is_int8() const { return int8_; }

 private:
  static std::shared_ptr<const Model> from_safetensors(const SafeTensors& st);
  WeightStore store_;
  bool int8_ = false;
};

}  // namespace attnlite
