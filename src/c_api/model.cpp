// attnlite — the C API: models and the tokenizer (errors: errors.cpp).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "c_api/handles.h"
#include "families/families.h"
#include "model/model_impl.h"
#include "attnlite/ops/ops.h"
#include "attnlite/sentences.h"
#include "attnlite/vocab.h"

using namespace attnlite;
using namespace attnlite::c_api;

extern "C" {

// ---- CPU kernels -------------------------------------------------------------------------
const char* al_kernels(void) { return ops::kernels_name(); }

al_status al_use_kernels(const char* which, al_error** err) {
  return guard(err, [&] {
    const std::string w = which ? which : "";
    if (w != "simd" && w != "scalar")
      throw Error("al_use_kernels: expected \"simd\" or \"scalar\", got \"" + w + "\"");
    ops::use_kernels(w == "simd" ? ops::KernelTable::Simd : ops::KernelTable::Scalar);
  });
}

// ---- models ------------------------------------------------------------------------------
al_model* al_model_load(const char* path, al_error** err) {
  return construct<al_model>(err, [&] {
    if (!path) throw Error("al_model_load: path is NULL");
    return new al_model{Model::load(path)};
  });
}

al_model* al_model_from_bytes(const uint8_t* bytes, size_t size, al_error** err) {
  return construct<al_model>(err, [&] {
    if (!bytes || size == 0) throw Error("the model file is empty");
    return new al_model{Model::from_bytes(bytes, size)};
  });
}

al_model* al_model_adopt_bytes(uint8_t* bytes, size_t size, al_error** err) {
  std::shared_ptr<const void> owner;
  try {
    owner = std::shared_ptr<const void>(bytes, [](const void* p) { std::free(const_cast<void*>(p)); });
  } catch (...) {  // no memory for the control block: shared_ptr has freed the buffer
    if (err) *err = al_error_new("out of memory");
    return nullptr;
  }
  return construct<al_model>(err, [&] {
    if (!bytes || size == 0) throw Error("the model file is empty");
    return new al_model{Model::from_buffer(bytes, size, std::move(owner))};
  });
}

void al_model_free(al_model* model) { delete model; }

int al_model_kind(const al_model* m) {
  if (!m) return -1;
  const auto all = families::all();
  return (int)(std::find(all.begin(), all.end(), m->model->impl().family) - all.begin());
}
const char* al_model_kind_name(const al_model* m) { return m ? m->model->kind_name() : ""; }
int al_model_task(const al_model* m) { return m ? (int)m->model->task() : -1; }
const char* al_model_description(const al_model* m) { return m ? m->model->description().c_str() : ""; }
int al_model_self_attention(const al_model* m) { return m && m->model->has_self_attention(); }
int al_model_layered_attention(const al_model* m) { return m && m->model->layered_attention(); }
int al_model_num_layers(const al_model* m) { return m ? m->model->num_layers() : 0; }
int al_model_num_heads(const al_model* m) { return m ? m->model->num_heads() : 0; }
int al_model_num_steps(const al_model* m) { return m ? m->model->num_steps() : 0; }
int al_model_num_hiddens(const al_model* m) { return m ? m->model->num_hiddens() : 0; }
int al_model_max_target_steps(const al_model* m) { return m ? m->model->max_target_steps() : 0; }
int al_model_src_vocab_size(const al_model* m) { return m ? m->model->src_vocab().size() : 0; }
int al_model_tgt_vocab_size(const al_model* m) { return m ? m->model->tgt_vocab().size() : 0; }
size_t al_model_weight_bytes(const al_model* m) { return m ? m->model->weight_bytes() : 0; }
int al_model_is_int8(const al_model* m) { return m && m->model->is_int8(); }

const char* al_model_metadata(const al_model* m, const char* key) {
  if (!m || !key) return nullptr;
  const auto& md = m->model->metadata();
  const auto it = md.find(key);
  return it == md.end() ? nullptr : it->second.c_str();
}

const char* al_model_src_token(const al_model* m, int id) {
  return m && id >= 0 && id < m->model->src_vocab().size() ? m->model->src_vocab().token(id).c_str() : "";
}
const char* al_model_tgt_token(const al_model* m, int id) {
  return m && id >= 0 && id < m->model->tgt_vocab().size() ? m->model->tgt_vocab().token(id).c_str() : "";
}
int al_model_src_id(const al_model* m, const char* token) {
  return m && token ? m->model->src_vocab().lookup(token) : -1;
}

}  // extern "C"

namespace {

// Tokens joined by single spaces into out (cap bytes with the NUL, like snprintf); returns the
// full length, or -1 with *err set when tokens() throws.
template <class F>
long write_tokens(const char* call, const char* sentence, char* out, size_t cap, al_error** err,
                  F&& tokens) {
  long len = -1;
  guard(err, [&] {
    if (!sentence) throw Error(std::string(call) + ": sentence is NULL");
    std::string joined;
    for (const auto& w : tokens(sentence)) {
      if (!joined.empty()) joined += ' ';
      joined += w;
    }
    if (out && cap) {
      const size_t n = std::min(joined.size(), cap - 1);
      joined.copy(out, n);
      out[n] = '\0';
    }
    len = (long)joined.size();
  });
  return len;
}

// The sentences of text (al_split_sentences, model NULL) or those model translates
// (al_model_sentences), as pairs of offsets into spans[] (the first min(n, cap)); returns n,
// or -1 with *err set.
long write_spans(const char* call, bool of_model, const al_model* m, const char* text,
                 size_t* spans, size_t cap, al_error** err) {
  long n = -1;
  guard(err, [&] {
    if (of_model && !m) throw Error(std::string(call) + ": model is NULL");
    if (!text) throw Error(std::string(call) + ": text is NULL");
    if (cap && !spans) throw Error(std::string(call) + ": spans is NULL");
    const std::string_view t(text);
    std::vector<SentenceSpan> found;
    if (m) {
      found = m->model->sentences(t);
    } else {
      found.resize(split_sentences(t, nullptr, 0));
      split_sentences(t, found.data(), found.size());
    }
    for (size_t k = 0; k < found.size() && k < cap; ++k) {
      spans[2 * k] = found[k].begin;
      spans[2 * k + 1] = found[k].end;
    }
    n = (long)found.size();
  });
  return n;
}

}  // namespace

extern "C" {

long al_tokenize(const char* sentence, char* out, size_t cap, al_error** err) {
  return write_tokens("al_tokenize", sentence, out, cap, err,
                      [](const char* s) { return tokenize(s); });
}

long al_split_sentences(const char* text, size_t* spans, size_t cap, al_error** err) {
  return write_spans("al_split_sentences", false, nullptr, text, spans, cap, err);
}

long al_model_sentences(const al_model* m, const char* text, size_t* spans, size_t cap,
                        al_error** err) {
  return write_spans("al_model_sentences", true, m, text, spans, cap, err);
}

int al_model_is_subword(const al_model* m) { return m && m->model->bpe() != nullptr; }

long al_model_tokenize(const al_model* m, const char* sentence, char* out, size_t cap,
                       al_error** err) {
  return write_tokens("al_model_tokenize", sentence, out, cap, err, [&](const char* s) {
    if (!m) throw Error("al_model_tokenize: model is NULL");
    return m->model->source_tokens(s);
  });
}

}  // extern "C"
