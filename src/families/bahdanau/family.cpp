// The Bahdanau family: its config (attnlite.config), weights and two vocabularies, checked at
// load.
#include "attnlite/error.h"
#include "families/bahdanau/bahdanau.h"
#include "file/config.h"

namespace attnlite::families {

namespace {

Loaded load_bahdanau(const SafeTensors& st, const nlohmann::json& c, WeightStore& store) {
  auto m = std::make_unique<BahdanauModel>();
  models::BahdanauConfig& b = m->config;
  b.src_vocab_size = config::integer(c, "src_vocab_size", 4, 1 << 20);
  b.tgt_vocab_size = config::integer(c, "tgt_vocab_size", 4, 1 << 20);
  b.embed_size = config::integer(c, "embed_size", 1, 8192);
  b.num_hiddens = config::integer(c, "num_hiddens", 1, 8192);
  b.num_layers = config::integer(c, "num_layers", 1, 64);
  b.num_steps = config::integer(c, "num_steps", 1, 1000);
  b.cell = config::choice(c, "rnn", {"gru", "lstm"}, 0) == 0 ? ops::Cell::GRU : ops::Cell::LSTM;
  m->store = &store;
  m->weights = m->bind(store);
  Loaded out;
  out.src_vocab = config::vocabulary(st, "attnlite.src_vocab", b.src_vocab_size);
  out.tgt_vocab = config::vocabulary(st, "attnlite.tgt_vocab", b.tgt_vocab_size);
  out.model = std::move(m);
  return out;
}

}  // namespace

extern const Family bahdanau{"bahdanau", Task::Translate, "bahdanau model", load_bahdanau};

}  // namespace attnlite::families
