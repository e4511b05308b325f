// attnlite — what a loaded Model holds (internal): its family (src/families) with the family's
// config and bound weights, the vocabularies or labels, the tokenizer's merge table.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnlite/bpe.h"
#include "attnlite/model.h"
#include "attnlite/weights.h"
#include "families/family.h"

namespace attnlite {

struct Model::Impl {
  const families::Family* family = nullptr;
  std::unique_ptr<const families::FamilyModel> model;  // config and weights, bound to store
  std::string description;          // FamilyModel::describe()
  std::vector<std::string> labels;  // classifiers: class names
  Vocab src_vocab, tgt_vocab;       // a language model: its vocabulary is both
  Bpe bpe;                          // sub-word translators (attnlite.bpe); empty otherwise
  std::map<std::string, std::string> metadata;
  WeightStore store;
  bool int8 = false;
};

}  // namespace attnlite
