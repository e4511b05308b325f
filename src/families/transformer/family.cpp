// The Transformer family: its config (attnlite.config), weights and two vocabularies
// (attnlite.src_vocab, attnlite.tgt_vocab), checked at load.
#include "attnlite/error.h"
#include "families/transformer/transformer.h"
#include "file/config.h"

namespace attnlite::families {

namespace {

Loaded load_transformer(const SafeTensors& st, const nlohmann::json& c, WeightStore& store) {
  auto m = std::make_unique<TransformerModel>();
  models::TransformerConfig& t = m->config;
  t.src_vocab_size = config::integer(c, "src_vocab_size", 4, 1 << 20);
  t.tgt_vocab_size = config::integer(c, "tgt_vocab_size", 4, 1 << 20);
  t.num_hiddens = config::integer(c, "num_hiddens", 1, 8192);
  t.num_layers = config::integer(c, "num_layers", 1, 64);
  t.num_heads = config::integer(c, "num_heads", 1, 256);
  t.ffn_num_hiddens = config::integer(c, "ffn_num_hiddens", 1, 65536);
  t.num_steps = config::integer(c, "num_steps", 1, 1000);
  t.max_len = config::integer(c, "max_len", 1, 100000, 1000);
  t.use_bias = config::boolean(c, "use_bias", t.use_bias);
  if (t.num_hiddens % t.num_heads) throw Error("model config: num_hiddens is not a multiple of num_heads");
  if (t.num_hiddens % 2) throw Error("model config: num_hiddens must be even for the positional encoding");
  if (t.num_steps > t.max_len) throw Error("model config: num_steps exceeds max_len");
  t.shared_embeddings = config::boolean(c, "shared_embeddings", false);
  if (t.shared_embeddings && t.src_vocab_size != t.tgt_vocab_size)
    throw Error("model config: shared_embeddings needs src_vocab_size == tgt_vocab_size");
  m->store = &store;
  m->weights = m->bind(store);
  Loaded out;
  out.src_vocab = config::vocabulary(st, "attnlite.src_vocab", t.src_vocab_size);
  out.tgt_vocab = config::vocabulary(st, "attnlite.tgt_vocab", t.tgt_vocab_size);
  if (t.shared_embeddings)
    for (int i = 0; i < t.src_vocab_size; ++i)
      if (out.src_vocab.token(i) != out.tgt_vocab.token(i))
        throw Error("model config: shared_embeddings needs one vocabulary, but source token " +
                    std::to_string(i) + " is '" + out.src_vocab.token(i) + "' and target token '" +
                    out.tgt_vocab.token(i) + "'");
  out.model = std::move(m);
  return out;
}

}  // namespace

extern const Family transformer{"transformer", Task::Translate, "transformer model", load_transformer};

}  // namespace attnlite::families
