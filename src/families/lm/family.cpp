// The language model family: its config (attnlite.config), weights and vocabulary
// (attnlite.vocab), checked at load.
#include "attnlite/error.h"
#include "families/lm/lm.h"
#include "file/config.h"

namespace attnlite::families {

namespace {

Loaded load_lm(const SafeTensors& st, const nlohmann::json& c, WeightStore& store) {
  auto m = std::make_unique<LmModel>();
  models::LanguageModelConfig& l = m->config;
  models::EncoderLayerConfig& e = l.layer;
  l.vocab_size = config::integer(c, "vocab_size", 4, 1 << 20);
  e.d_model = config::integer(c, "d_model", 2, 8192);
  e.num_heads = config::integer(c, "num_heads", 1, 256);
  l.num_layers = config::integer(c, "num_layers", 1, 64);
  e.dim_feedforward = config::integer(c, "dim_feedforward", 1, 65536);
  // The context holds <bos> and at least one word (a prompt is never empty).
  l.max_len = config::integer(c, "max_len", 2, 4096);
  l.pos_max_len = config::integer(c, "pos_max_len", 1, 100000, 5000);
  e.activation = config::activation(c);
  e.norm_first = config::boolean(c, "norm_first", false);
  e.bias = config::boolean(c, "bias", true);
  e.layer_norm_eps = config::layer_norm_eps(c);
  if (e.d_model % e.num_heads) throw Error("model config: d_model is not a multiple of num_heads");
  if (e.d_model % 2) throw Error("model config: d_model must be even for the positional encoding");
  if (l.max_len > l.pos_max_len) throw Error("model config: max_len exceeds pos_max_len");
  l.head_bias = store.has("head.bias");
  m->zeros.assign((size_t)e.d_model, 0.f);
  m->store = &store;
  m->weights = m->bind(store, m->zeros.data());
  Loaded out;
  out.tgt_vocab = config::vocabulary(st, "attnlite.vocab", l.vocab_size);
  out.src_vocab = out.tgt_vocab;  // one vocabulary
  out.model = std::move(m);
  return out;
}

}  // namespace

extern const Family lm{"lm", Task::Generate, "language model (kind lm)", load_lm};

}  // namespace attnlite::families
