#include "attnlite/model.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "attnlite/error.h"
#include "attnlite/normalize.h"
#include "model/model_impl.h"
using namespace attnlite::attention;
using namespace attnlite::models;

namespace attnlite {

const char* model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::Transformer: return "transformer";
    case ModelKind::Bahdanau: return "bahdanau";
    case ModelKind::LM: return "lm";
    case ModelKind::ViT: return "vit";
  }
  return "?";
}

namespace {

using json = nlohmann::json;

json parse_meta_json(const SafeTensors& st, const std::string& key) {
  const auto& md = st.metadata();
  auto it = md.find(key);
  if (it == md.end()) throw Error("model metadata lacks '" + key + "'");
  try {
    return json::parse(it->second);
  } catch (const json::exception& e) {
    throw Error("model metadata '" + key + "' is not valid JSON: " + e.what());
  }
}

int cfg_int(const json& c, const char* key, int lo, int hi) {
  auto it = c.find(key);
  if (it == c.end()) throw Error(std::string("model config lacks '") + key + "'");
  if (!it->is_number_integer()) throw Error(std::string("model config '") + key + "' is not an integer");
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > hi)
    throw Error(std::string("model config '") + key + "' = " + std::to_string(v) + " is outside [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return (int)v;
}

Vocab read_vocab(const SafeTensors& st, const std::string& key, int expected_size) {
  json j = parse_meta_json(st, key);
  if (!j.is_array()) throw Error("model metadata '" + key + "' is not a JSON array");
  std::vector<std::string> toks;
  for (const auto& t : j) {
    if (!t.is_string()) throw Error("model metadata '" + key + "' holds a non-string token");
    toks.push_back(t.get<std::string>());
  }
  if ((int)toks.size() != expected_size)
    throw Error("'" + key + "' has " + std::to_string(toks.size()) + " tokens but the config says " +
                std::to_string(expected_size));
  try {
    return Vocab(std::move(toks));
  } catch (const Error& e) {
    throw Error(key + ": " + e.what());
  }
}

bool cfg_bool(const json& c, const char* key, bool def) {
  auto it = c.find(key);
  if (it == c.end()) return def;
  if (!it->is_boolean()) throw Error(std::string("model config '") + key + "' is not a boolean");
  return it->get<bool>();
}

ops::Act activation_of(const json& c) {
  if (!c.contains("activation")) return ops::Act::Relu;
  const json& a = c["activation"];
  if (a.is_string() && a.get<std::string>() == "relu") return ops::Act::Relu;
  if (a.is_string() && a.get<std::string>() == "gelu") return ops::Act::Gelu;
  throw Error("model config 'activation' must be \"relu\" or \"gelu\"");
}

float layer_norm_eps_of(const json& c) {
  if (!c.contains("layer_norm_eps")) return 1e-5f;
  const json& v = c["layer_norm_eps"];
  if (!v.is_number() || !(v.get<double>() > 0) || !(v.get<double>() < 1))
    throw Error("model config 'layer_norm_eps' must be a number in (0, 1)");
  return (float)v.get<double>();
}

void load_lm(Model::Impl& m, const SafeTensors& st, const json& c) {
  m.kind = ModelKind::LM;
  LanguageModelConfig& l = m.lm;
  EncoderLayerConfig& e = l.layer;
  l.vocab_size = cfg_int(c, "vocab_size", 4, 1 << 20);
  e.d_model = cfg_int(c, "d_model", 2, 8192);
  e.num_heads = cfg_int(c, "num_heads", 1, 256);
  l.num_layers = cfg_int(c, "num_layers", 1, 64);
  e.dim_feedforward = cfg_int(c, "dim_feedforward", 1, 65536);
  // The context holds <bos> and at least one word (a prompt is never empty).
  l.max_len = cfg_int(c, "max_len", 2, 4096);
  l.pos_max_len = c.contains("pos_max_len") ? cfg_int(c, "pos_max_len", 1, 100000) : 5000;
  e.activation = activation_of(c);
  e.norm_first = cfg_bool(c, "norm_first", false);
  e.bias = cfg_bool(c, "bias", true);
  e.layer_norm_eps = layer_norm_eps_of(c);
  if (e.d_model % e.num_heads) throw Error("model config: d_model is not a multiple of num_heads");
  if (e.d_model % 2) throw Error("model config: d_model must be even for the positional encoding");
  if (l.max_len > l.pos_max_len) throw Error("model config: max_len exceeds pos_max_len");
  l.head_bias = m.store.has("head.bias");
  m.zeros.assign((size_t)e.d_model, 0.f);
  m.lm_weights = bind_language_model(m.store, l, m.zeros.data());
  m.tgt_vocab = read_vocab(st, "attnlite.vocab", l.vocab_size);
  m.src_vocab = m.tgt_vocab;
}

void load_vit(Model::Impl& m, const SafeTensors& st, const json& c) {
  m.kind = ModelKind::ViT;
  VisionTransformerConfig& v = m.vit;
  EncoderLayerConfig& e = v.layer;
  v.image_size = cfg_int(c, "image_size", 1, 1024);
  v.patch_size = cfg_int(c, "patch_size", 1, 1024);
  v.in_channels = cfg_int(c, "in_channels", 1, 4);
  v.num_classes = cfg_int(c, "num_classes", 1, 100000);
  v.depth = cfg_int(c, "depth", 1, 64);
  e.d_model = cfg_int(c, "embed_dim", 1, 8192);
  e.num_heads = cfg_int(c, "num_heads", 1, 256);
  e.dim_feedforward = cfg_int(c, "dim_feedforward", 1, 65536);
  e.activation = c.contains("activation") ? activation_of(c) : ops::Act::Gelu;  // the lab's
  e.norm_first = cfg_bool(c, "norm_first", false);
  e.bias = cfg_bool(c, "bias", true);
  e.layer_norm_eps = layer_norm_eps_of(c);
  if (c.contains("input_scale")) {
    const json& s = c["input_scale"];
    if (!s.is_number() || !std::isfinite(s.get<double>()) || !(s.get<double>() > 0))
      throw Error("model config 'input_scale' must be a number > 0");
    v.input_scale = (float)s.get<double>();
  }
  if (cfg_bool(c, "invert", false))
    throw Error("model config 'invert' = true is not supported (attnlite's ViT reads pixel values "
                "times input_scale)");
  if (v.patch_size > v.image_size) throw Error("model config: patch_size exceeds image_size");
  if (v.num_patches() + 1 > 4097) throw Error("model config: more than 4096 patches");
  if (e.d_model % e.num_heads) throw Error("model config: embed_dim is not a multiple of num_heads");
  m.zeros.assign((size_t)e.d_model, 0.f);
  m.vit_weights = bind_vision_transformer(m.store, v, m.zeros.data());
  const json labels = parse_meta_json(st, "attnlite.labels");
  if (!labels.is_array()) throw Error("model metadata 'attnlite.labels' is not a JSON array");
  for (const auto& l : labels) {
    if (!l.is_string()) throw Error("model metadata 'attnlite.labels' holds a non-string label");
    m.labels.push_back(l.get<std::string>());
  }
  if ((int)m.labels.size() != v.num_classes)
    throw Error("'attnlite.labels' has " + std::to_string(m.labels.size()) +
                " labels but the config says " + std::to_string(v.num_classes) + " classes");
}

}  // namespace

namespace {
std::unique_ptr<Model::Impl> load_impl(const SafeTensors& st) {
  auto m = std::make_unique<Model::Impl>();
  m->metadata = st.metadata();
  auto kind_it = st.metadata().find("attnlite.kind");
  if (kind_it == st.metadata().end()) throw Error("model metadata lacks 'attnlite.kind'");
  const json c = parse_meta_json(st, "attnlite.config");
  if (!c.is_object()) throw Error("model metadata 'attnlite.config' is not a JSON object");
  m->store = WeightStore(st);
  for (const auto& t : st.tensors()) m->int8 = m->int8 || t.dtype == DType::I8;
  if (kind_it->second == "transformer") {
    m->kind = ModelKind::Transformer;
    TransformerConfig& t = m->transformer;
    t.src_vocab_size = cfg_int(c, "src_vocab_size", 4, 1 << 20);
    t.tgt_vocab_size = cfg_int(c, "tgt_vocab_size", 4, 1 << 20);
    t.num_hiddens = cfg_int(c, "num_hiddens", 1, 8192);
    t.num_layers = cfg_int(c, "num_layers", 1, 64);
    t.num_heads = cfg_int(c, "num_heads", 1, 256);
    t.ffn_num_hiddens = cfg_int(c, "ffn_num_hiddens", 1, 65536);
    t.num_steps = cfg_int(c, "num_steps", 1, 1000);
    t.max_len = c.contains("max_len") ? cfg_int(c, "max_len", 1, 100000) : 1000;
    if (c.contains("use_bias")) {
      if (!c["use_bias"].is_boolean()) throw Error("model config 'use_bias' is not a boolean");
      t.use_bias = c["use_bias"].get<bool>();
    }
    if (t.num_hiddens % t.num_heads) throw Error("model config: num_hiddens is not a multiple of num_heads");
    if (t.num_hiddens % 2) throw Error("model config: num_hiddens must be even for the positional encoding");
    if (t.num_steps > t.max_len) throw Error("model config: num_steps exceeds max_len");
    t.shared_embeddings = cfg_bool(c, "shared_embeddings", false);
    if (t.shared_embeddings && t.src_vocab_size != t.tgt_vocab_size)
      throw Error("model config: shared_embeddings needs src_vocab_size == tgt_vocab_size");
    m->transformer_weights = bind_transformer(m->store, t);
    m->src_vocab = read_vocab(st, "attnlite.src_vocab", t.src_vocab_size);
    m->tgt_vocab = read_vocab(st, "attnlite.tgt_vocab", t.tgt_vocab_size);
    if (t.shared_embeddings)
      for (int i = 0; i < t.src_vocab_size; ++i)
        if (m->src_vocab.token(i) != m->tgt_vocab.token(i))
          throw Error("model config: shared_embeddings needs one vocabulary, but source token " +
                      std::to_string(i) + " is '" + m->src_vocab.token(i) + "' and target token '" +
                      m->tgt_vocab.token(i) + "'");
  } else if (kind_it->second == "bahdanau") {
    m->kind = ModelKind::Bahdanau;
    BahdanauConfig& b = m->bahdanau;
    b.src_vocab_size = cfg_int(c, "src_vocab_size", 4, 1 << 20);
    b.tgt_vocab_size = cfg_int(c, "tgt_vocab_size", 4, 1 << 20);
    b.embed_size = cfg_int(c, "embed_size", 1, 8192);
    b.num_hiddens = cfg_int(c, "num_hiddens", 1, 8192);
    b.num_layers = cfg_int(c, "num_layers", 1, 64);
    b.num_steps = cfg_int(c, "num_steps", 1, 1000);
    if (c.contains("rnn")) {
      if (!c["rnn"].is_string()) throw Error("model config 'rnn' is not a string");
      const std::string r = c["rnn"].get<std::string>();
      if (r == "gru") b.cell = ops::Cell::GRU;
      else if (r == "lstm") b.cell = ops::Cell::LSTM;
      else throw Error("model config 'rnn' = '" + r + "' (expected gru or lstm)");
    }
    m->bahdanau_weights = bind_bahdanau(m->store, b);
    m->src_vocab = read_vocab(st, "attnlite.src_vocab", b.src_vocab_size);
    m->tgt_vocab = read_vocab(st, "attnlite.tgt_vocab", b.tgt_vocab_size);
  } else if (kind_it->second == "lm") {
    load_lm(*m, st, c);
  } else if (kind_it->second == "vit") {
    load_vit(*m, st, c);
  } else {
    throw Error("unknown model kind '" + kind_it->second + "' (expected transformer, bahdanau, lm or vit)");
  }
  if (auto it = st.metadata().find("attnlite.bpe"); it != st.metadata().end()) {
    if (m->kind != ModelKind::Transformer && m->kind != ModelKind::Bahdanau)
      throw Error("model metadata 'attnlite.bpe': a merge table belongs to a translator, not a " +
                  kind_it->second);
    m->bpe = Bpe(it->second, m->src_vocab);
  }
  const auto extra = m->store.unused();
  if (!extra.empty())
    throw Error("unexpected tensor '" + extra.front() + "'" +
                (extra.size() > 1 ? " (and " + std::to_string(extra.size() - 1) + " more)" : "") +
                " for a " + kind_it->second + " with this config");
  m->store.release_source();
  return m;
}
}  // namespace

Model::Model() = default;
Model::~Model() = default;

std::shared_ptr<const Model> Model::from_safetensors(const SafeTensors& st) {
  std::shared_ptr<Model> m(new Model());
  m->impl_ = load_impl(st);
  return m;
}

std::shared_ptr<const Model> Model::load(const std::string& path) {
  SafeTensors st = SafeTensors::load(path);
  try {
    return from_safetensors(st);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

std::shared_ptr<const Model> Model::from_bytes(const uint8_t* bytes, size_t size) {
  return from_safetensors(SafeTensors::parse(bytes, size));
}

std::shared_ptr<const Model> Model::from_buffer(const uint8_t* bytes, size_t size,
                                               std::shared_ptr<const void> owner) {
  return from_safetensors(SafeTensors::view(bytes, size, std::move(owner)));
}

ModelKind Model::kind() const { return impl_->kind; }
const Vocab& Model::src_vocab() const { return impl_->src_vocab; }
const Vocab& Model::tgt_vocab() const { return impl_->tgt_vocab; }
const std::map<std::string, std::string>& Model::metadata() const { return impl_->metadata; }
size_t Model::weight_bytes() const { return impl_->store.bytes(); }
size_t Model::copied_weight_bytes() const { return impl_->store.copied_bytes(); }
bool Model::is_int8() const { return impl_->int8; }
const Bpe* Model::bpe() const { return impl_->bpe.empty() ? nullptr : &impl_->bpe; }
std::vector<std::string> Model::source_tokens(std::string_view written) const {
  const std::string sentence = normalize_source(written);
  if (const Bpe* b = bpe()) return b->pieces(impl_->src_vocab, sentence);
  return tokenize(sentence);
}
const std::vector<std::string>& Model::labels() const { return impl_->labels; }

int Model::num_steps() const {
  switch (kind()) {
    case ModelKind::Transformer: return impl_->transformer.num_steps;
    case ModelKind::Bahdanau: return impl_->bahdanau.num_steps;
    case ModelKind::ViT: return impl_->vit.tokens();
    default: return impl_->lm.max_len;
  }
}
int Model::num_layers() const {
  switch (kind()) {
    case ModelKind::Transformer: return impl_->transformer.num_layers;
    case ModelKind::Bahdanau: return impl_->bahdanau.num_layers;
    case ModelKind::ViT: return impl_->vit.depth;
    default: return impl_->lm.num_layers;
  }
}
int Model::num_heads() const {
  switch (kind()) {
    case ModelKind::Transformer: return impl_->transformer.num_heads;
    case ModelKind::Bahdanau: return 1;
    case ModelKind::ViT: return impl_->vit.layer.num_heads;
    default: return impl_->lm.layer.num_heads;
  }
}
int Model::num_hiddens() const {
  switch (kind()) {
    case ModelKind::Transformer: return impl_->transformer.num_hiddens;
    case ModelKind::Bahdanau: return impl_->bahdanau.num_hiddens;
    case ModelKind::ViT: return impl_->vit.layer.d_model;
    default: return impl_->lm.layer.d_model;
  }
}
int Model::max_target_steps() const {
  switch (kind()) {
    case ModelKind::Transformer: return impl_->transformer.max_len;
    case ModelKind::Bahdanau: return 1000;
    case ModelKind::ViT: return 0;
    default: return impl_->lm.max_len;
  }
}

}  // namespace attnlite
