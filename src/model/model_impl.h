// attnlite — what a loaded Model holds (internal): the family's config and weights as bound
// by the loader, for the drivers that run it.
#pragma once
#include <vector>

#include "attnlite/bpe.h"
#include "attnlite/model.h"
#include "attnlite/models/language_model.h"
#include "attnlite/models/seq2seq_bahdanau.h"
#include "attnlite/models/vision_transformer.h"
#include "attnlite/models/transformer.h"
#include "attnlite/weights.h"

namespace attnlite {

struct Model::Impl {
  ModelKind kind = ModelKind::Transformer;
  models::TransformerConfig transformer;   // kind == Transformer
  models::BahdanauConfig bahdanau;         // kind == Bahdanau
  models::LanguageModelConfig lm;          // kind == LM
  models::VisionTransformerConfig vit;     // kind == ViT
  std::vector<std::string> labels; // ViT: class names
  Vocab src_vocab, tgt_vocab;      // LM: its vocabulary is both
  Bpe bpe;                         // sub-word models (attnlite.bpe); empty otherwise
  std::map<std::string, std::string> metadata;
  models::TransformerWeights transformer_weights;
  models::BahdanauWeights bahdanau_weights;
  models::LanguageModelWeights lm_weights;
  models::VisionTransformerWeights vit_weights;
  std::vector<float> zeros;        // (H) the bias of bias-free LayerNorms (LM, ViT)
  WeightStore store;
  bool int8 = false;
};

}  // namespace attnlite
