// A Model: a file's family looked up by its attnlite.kind among the registered families
// (src/families/families.cpp), which loads and checks its part; then what every model shares
// (metadata, the merge table of sub-word translators, no unexpected tensor).
#include "attnlite/model.h"

#include "attnlite/error.h"
#include "attnlite/normalize.h"
#include "families/families.h"
#include "file/config.h"
#include "model/model_impl.h"
#include "text/utf8.h"

namespace attnlite {

namespace {

std::unique_ptr<Model::Impl> load_impl(const SafeTensors& st) {
  auto m = std::make_unique<Model::Impl>();
  m->metadata = st.metadata();
  auto kind_it = st.metadata().find("attnlite.kind");
  if (kind_it == st.metadata().end()) throw Error("model metadata lacks 'attnlite.kind'");
  const config::json c = config::metadata_json(st, "attnlite.config");
  if (!c.is_object()) throw Error("model metadata 'attnlite.config' is not a JSON object");
  m->store = WeightStore(st);
  for (const auto& t : st.tensors()) m->int8 = m->int8 || t.dtype == DType::I8;
  m->family = families::find(kind_it->second);
  if (!m->family)
    throw Error("unknown model kind '" + kind_it->second + "' (expected " + families::names() + ")");
  families::Loaded loaded = m->family->load(st, c, m->store);
  m->model = std::move(loaded.model);
  m->src_vocab = std::move(loaded.src_vocab);
  m->tgt_vocab = std::move(loaded.tgt_vocab);
  m->labels = std::move(loaded.labels);
  m->description = m->model->describe();
  if (auto it = st.metadata().find("attnlite.bpe"); it != st.metadata().end()) {
    if (m->family->task != Task::Translate)
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

const char* Model::kind_name() const { return impl_->family->name; }
Task Model::task() const { return impl_->family->task; }
const std::string& Model::description() const { return impl_->description; }
const Vocab& Model::src_vocab() const { return impl_->src_vocab; }
const Vocab& Model::tgt_vocab() const { return impl_->tgt_vocab; }
const std::map<std::string, std::string>& Model::metadata() const { return impl_->metadata; }
size_t Model::weight_bytes() const { return impl_->store.bytes(); }
size_t Model::copied_weight_bytes() const { return impl_->store.copied_bytes(); }
size_t Model::derived_weight_bytes() const { return impl_->store.derived_bytes(); }
bool Model::is_int8() const { return impl_->int8; }
const Bpe* Model::bpe() const { return impl_->bpe.empty() ? nullptr : &impl_->bpe; }
std::vector<std::string> Model::source_tokens(std::string_view written) const {
  const std::string sentence = normalize_source(written);
  if (const Bpe* b = bpe()) return b->pieces(impl_->src_vocab, sentence);
  return tokenize(sentence);
}
std::vector<SentenceSpan> Model::sentences(std::string_view text) const {
  std::vector<SentenceSpan> spans(split_sentences(text, nullptr, 0));
  split_sentences(text, spans.data(), spans.size());
  uint32_t cp;
  for (size_t i = 0, n = 0; i < text.size(); i += n)
    if (!(n = (size_t)utf8_next(text, i, &cp))) {  // not UTF-8: the whole text
      spans.clear();
      break;
    }
  size_t kept = 0;
  for (const SentenceSpan& s : spans)
    if (!source_tokens(text.substr(s.begin, s.end - s.begin)).empty()) spans[kept++] = s;
  spans.resize(kept ? kept : 1);
  if (!kept) spans[0] = {0, text.size()};
  return spans;
}
const std::vector<std::string>& Model::labels() const { return impl_->labels; }

int Model::num_steps() const { return impl_->model->num_steps(); }
int Model::num_layers() const { return impl_->model->num_layers(); }
int Model::num_heads() const { return impl_->model->num_heads(); }
int Model::num_hiddens() const { return impl_->model->num_hiddens(); }
int Model::max_target_steps() const { return impl_->model->max_target_steps(); }
bool Model::has_self_attention() const { return impl_->model->maps().self_attention; }
bool Model::layered_attention() const { return impl_->model->maps().layered; }

}  // namespace attnlite
