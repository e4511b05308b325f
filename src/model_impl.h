// attnlite — what a loaded Model holds (internal): the family's config and weights as bound
// by the loader, for the drivers that run it.
#pragma once
#include <vector>

#include "attnlite/model.h"
#include "attnlite/models/seq2seq_bahdanau.h"
#include "attnlite/models/transformer.h"
#include "attnlite/weights.h"

namespace attnlite {

struct Model::Impl {
  ModelKind kind = ModelKind::Transformer;
  TransformerConfig transformer;   // kind == Transformer
  BahdanauConfig bahdanau;         // kind == Bahdanau
  Vocab src_vocab, tgt_vocab;
  std::map<std::string, std::string> metadata;
  TransformerWeights tw;
  BahdanauWeights bw;
  std::vector<float> P;            // positional encoding table (max_len, H), Transformer
  WeightStore store;
  bool int8 = false;
};

}  // namespace attnlite
