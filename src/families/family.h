// attnlite — a model family as the rest of the runtime sees it (internal). A family is one
// folder, src/families/<name>/: its config and bound weights (a FamilyModel), how it loads and
// checks them from a file, its driver, and what the figures and the C API ask of it. It is
// registered by one line in src/families/families.cpp under the name its files carry in
// attnlite.kind; everything else looks the family up there and asks the loaded model,
// never switching on the kind.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/safetensors.h"
#include "attnlite/task.h"
#include "attnlite/vocab.h"
#include "attnlite/weights.h"
#include "drivers/driver.h"
#include "drivers/image_driver.h"
#include "drivers/text_driver.h"

namespace attnlite::families {

// Which attention maps a model records, for its figures and its front ends.
struct AttentionMaps {
  bool self_attention = false;  // encoder and decoder self-attention (else cross alone)
  bool layered = false;         // (L, NH) maps with named layers and heads (else one map)
};

// A loaded model of one family: its config and weights, bound to the Model's WeightStore.
class FamilyModel {
 public:
  virtual ~FamilyModel() = default;
  // The Model's store its weights were bound from; a driver on a device binds them again
  // against a copy of its tensors (drivers::DeviceWeights).
  const WeightStore* store = nullptr;
  // The config as Model's accessors report it (model.h).
  virtual int num_steps() const = 0;
  virtual int num_layers() const = 0;
  virtual int num_heads() const = 0;
  virtual int num_hiddens() const = 0;
  virtual int max_target_steps() const = 0;
  virtual AttentionMaps maps() const = 0;
  // One line for people (Model::description()), e.g. "Transformer · 2 layers · 4 heads".
  virtual std::string describe() const = 0;
  // The driver of its task (Task::Translate, Generate or Classify): a session's run state on
  // an op set. Only the one of the family's task is called.
  virtual std::unique_ptr<drivers::Seq2SeqDriver> seq2seq_driver(const ops::Ops& op,
                                                                 const drivers::Limits& lim) const;
  virtual std::unique_ptr<drivers::TextDriver> text_driver(const ops::Ops& op) const;
  virtual std::unique_ptr<drivers::ImageDriver> image_driver(const ops::Ops& op,
                                                             int max_batch) const;
};

// What a family's loader hands the Model: the family's part, and the vocabularies (a language
// model: one, as both) or the class names (an image classifier).
struct Loaded {
  std::unique_ptr<const FamilyModel> model;
  Vocab src_vocab, tgt_vocab;
  std::vector<std::string> labels;
};

struct Family {
  const char* name;       // attnlite.kind, and Model::kind_name()
  Task task;
  const char* what;       // "this is a <what>" in the errors of the other tasks
  // Reads attnlite.config (config), binds every weight from store, reads the vocabularies or
  // labels; throws attnlite::Error naming the problem.
  Loaded (*load)(const SafeTensors& st, const nlohmann::json& config, WeightStore& store);
};

}  // namespace attnlite::families
