// attnlite — the C API: translators and their results.
#include <algorithm>
#include <string>
#include <string_view>

#include "c_api/handles.h"
#include "attnlite/vocab.h"

using namespace attnlite;
using namespace attnlite::c_api;

namespace {

const Hypothesis* hyp(const al_result* r, int k) {
  return r && k >= 0 && k < r->nb.size ? &r->nb[k] : nullptr;
}

}  // namespace

extern "C" {

// ---- translators -------------------------------------------------------------------------
void al_limits_default(al_limits* l) {
  if (!l) return;
  const Limits d;
  l->max_batch = d.max_batch;
  l->max_beam = d.max_beam;
  l->max_tgt_steps = d.max_tgt_steps;
  l->max_input_bytes = d.max_input_bytes;
  l->device = d.device == Device::CUDA ? AL_DEVICE_CUDA : AL_DEVICE_CPU;
  l->precision = d.precision == Precision::BF16 ? AL_PRECISION_BF16 : AL_PRECISION_FP32;
}

void al_decode_options_default(al_decode_options* o) {
  if (!o) return;
  const DecodeOptions d;
  o->d2l_compat = d.d2l_compat;
  o->max_steps = d.max_steps;
  o->attention = d.attention;
  o->beam_size = d.beam_size;
  o->length_penalty = d.length_penalty;
}

al_translator* al_translator_new(const al_model* model, const al_limits* limits, al_error** err) {
  return construct<al_translator>(err, [&] {
    if (!model) throw Error("al_translator_new: model is NULL");
    al_limits l;
    al_limits_default(&l);
    if (limits) l = *limits;
    auto t = std::make_unique<al_translator>();
    t->model = model->model;
    const Model& m = *t->model;
    t->limits.max_batch = l.max_batch;
    t->limits.max_beam = l.max_beam;
    t->limits.max_tgt_steps = l.max_tgt_steps;
    t->limits.max_input_bytes = l.max_input_bytes;
    t->limits.device = device_of(l.device);
    t->limits.precision = precision_of(l.precision);
    t->tr = std::make_unique<Translator>(t->model, t->limits);
    if (t->limits.max_tgt_steps == 0) t->limits.max_tgt_steps = m.num_steps();
    // Worst case of a text: every target token joined by spaces.
    const size_t text_cap = (size_t)t->limits.max_tgt_steps * (longest_token(m.tgt_vocab()) + 1) + 1;
    t->results.resize((size_t)l.max_batch);
    for (al_result& r : t->results) {
      r.text.reserve(text_cap);
      r.nbest_text.resize((size_t)l.max_beam);
      for (std::string& s : r.nbest_text) s.reserve(text_cap);
    }
    t->error.reserve(256);
    return t.release();
  });
}

void al_translator_free(al_translator* tr) { delete tr; }

const char* al_translator_error(const al_translator* tr) {
  return tr ? tr->error.c_str() : "al_translator_error: translator is NULL";
}

al_status al_translator_limits(const al_translator* tr, al_limits* out) {
  if (!tr || !out) return AL_ERR_ARGUMENT;
  out->max_batch = tr->limits.max_batch;
  out->max_beam = tr->limits.max_beam;
  out->max_tgt_steps = tr->limits.max_tgt_steps;
  out->max_input_bytes = tr->limits.max_input_bytes;
  out->device = tr->limits.device == Device::CUDA ? AL_DEVICE_CUDA : AL_DEVICE_CPU;
  out->precision = tr->limits.precision == Precision::BF16 ? AL_PRECISION_BF16 : AL_PRECISION_FP32;
  return AL_OK;
}

size_t al_translator_workspace_bytes(const al_translator* tr) { return tr ? tr->tr->workspace_bytes() : 0; }

namespace {
// al_translate_batch, or al_translate for `one` (n == 1): Translator::translate, whose
// message does not name the sentence by its index as a batch's does.
al_status translate_n(al_translator* tr, const char* const* sentences, int n,
                      const al_decode_options* options, bool one) {
  if (!tr) return AL_ERR_ARGUMENT;
  tr->num_results = 0;
  tr->error_index = -1;
  if (!sentences || n < 1 || n > tr->limits.max_batch) {
    tr->error = !sentences ? "al_translate: sentences is NULL"
                           : "batch of " + std::to_string(n) + " sentences is outside [1, max_batch = " +
                                 std::to_string(tr->limits.max_batch) + "]";
    return AL_ERR_ARGUMENT;
  }
  for (int i = 0; i < n; ++i)
    if (!sentences[i]) {
      tr->error = "al_translate: sentence is NULL";
      return AL_ERR_ARGUMENT;
    }
  return guard(tr->error, [&] {
    DecodeOptions o;
    if (options) {
      o.d2l_compat = options->d2l_compat != 0;
      o.max_steps = options->max_steps;
      o.attention = options->attention != 0;
      o.beam_size = options->beam_size;
      o.length_penalty = options->length_penalty;
    }
    std::string_view views[64];
    std::vector<std::string_view> many;
    std::string_view* v = views;
    if (n > 64) {
      many.resize((size_t)n);
      v = many.data();
    }
    for (int i = 0; i < n; ++i) v[i] = sentences[i];
    try {
      if (one)
        tr->tr->translate(v[0], o);
      else
        tr->tr->translate_batch(v, n, o);
    } catch (const ItemError& e) {
      tr->error_index = e.index();
      throw;
    }
    for (int i = 0; i < n; ++i) {
      al_result& r = tr->results[(size_t)i];
      r.t = &tr->tr->result(i);
      r.nb = tr->tr->nbest(i);
      r.text.assign(r.t->text.data(), r.t->text.size());
      for (int k = 0; k < r.nb.size; ++k) r.nbest_text[(size_t)k].assign(r.nb[k].text.data(), r.nb[k].text.size());
    }
    tr->num_results = n;
  });
}
}  // namespace

al_status al_translate_batch(al_translator* tr, const char* const* sentences, int n,
                             const al_decode_options* options) {
  return translate_n(tr, sentences, n, options, false);
}

al_status al_translate(al_translator* tr, const char* sentence, const al_decode_options* options) {
  return translate_n(tr, &sentence, 1, options, true);  // a NULL sentence: its message
}

int al_translator_error_index(const al_translator* tr) { return tr ? tr->error_index : -1; }

const al_result* al_translator_result(const al_translator* tr, int i) {
  return tr && i >= 0 && i < tr->num_results ? &tr->results[(size_t)i] : nullptr;
}

// ---- results -----------------------------------------------------------------------------
const char* al_result_text(const al_result* r) { return r ? r->text.c_str() : ""; }
int al_result_num_tokens(const al_result* r) { return r ? r->t->num_tokens : 0; }
int al_result_token(const al_result* r, int i) {
  return r && i >= 0 && i < r->t->num_tokens ? r->t->tokens[i] : -1;
}
const int* al_result_tokens(const al_result* r) { return r ? r->t->tokens : nullptr; }
const float* al_result_probs(const al_result* r) { return r ? r->t->probs : nullptr; }
int al_result_steps(const al_result* r) { return r ? r->t->steps : 0; }
int al_result_eos(const al_result* r) { return r && r->t->eos; }
int al_result_src_len(const al_result* r) { return r ? r->t->src_len : 0; }
int al_result_src_valid(const al_result* r) { return r ? r->t->src_valid : 0; }
int al_result_truncated(const al_result* r) { return r && r->t->truncated; }
int al_result_num_unknown(const al_result* r) { return r ? r->t->num_unknown : 0; }
int al_result_src_size(const al_result* r) { return r ? r->t->S : 0; }
const int* al_result_src_ids(const al_result* r) { return r ? r->t->src_ids : nullptr; }
int al_result_layers(const al_result* r) { return r ? r->t->layers : 0; }
int al_result_heads(const al_result* r) { return r ? r->t->heads : 0; }
int al_result_ld(const al_result* r) { return r ? r->t->ld : 0; }
const float* al_result_enc_self(const al_result* r) { return r ? r->t->enc_self : nullptr; }
const float* al_result_dec_self(const al_result* r) { return r ? r->t->dec_self : nullptr; }
const float* al_result_cross(const al_result* r) { return r ? r->t->cross : nullptr; }

int al_nbest_size(const al_result* r) { return r ? r->nb.size : 0; }
const char* al_nbest_text(const al_result* r, int k) {
  return hyp(r, k) ? r->nbest_text[(size_t)k].c_str() : "";
}
int al_nbest_num_tokens(const al_result* r, int k) { return hyp(r, k) ? hyp(r, k)->num_tokens : 0; }
const int* al_nbest_tokens(const al_result* r, int k) { return hyp(r, k) ? hyp(r, k)->tokens : nullptr; }
const float* al_nbest_probs(const al_result* r, int k) { return hyp(r, k) ? hyp(r, k)->probs : nullptr; }
int al_nbest_length(const al_result* r, int k) { return hyp(r, k) ? hyp(r, k)->length : 0; }
int al_nbest_eos(const al_result* r, int k) { return hyp(r, k) && hyp(r, k)->eos; }
double al_nbest_logp(const al_result* r, int k) { return hyp(r, k) ? hyp(r, k)->logp : 0; }
double al_nbest_score(const al_result* r, int k) { return hyp(r, k) ? hyp(r, k)->score : 0; }

}  // extern "C"
