// attnlite — the C API (include/attnlite/c_api.h) over Model and Translator. Every entry
// point catches what the C++ side throws; errors live in the handle or in an al_error the
// caller owns, never in process state.
#include "attnlite/c_api.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/classify.h"
#include "attnlite/generate.h"
#include "attnlite/image_input.h"
#include "attnlite/model.h"
#include "attnlite/translate.h"
#include "attnlite/vocab.h"

using namespace attnlite;

struct al_error {
  std::string message;
};

struct al_model {
  std::shared_ptr<const Model> model;
};

struct al_result {
  const Translation* t = nullptr;
  NBest nb;
  // NUL-terminated copies of the texts (the Translator's are views), reserved once so that
  // repeated translations reuse the same memory.
  std::string text;
  std::vector<std::string> nbest_text;
};

struct al_translator {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Translator> tr;
  Limits limits;
  std::string error;
  int num_results = 0;  // results of the last call; 0 after a failure
  std::vector<al_result> results;
};

struct al_generator {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Generator> gen;
  std::string error;
  bool has = false;  // a generation is in progress or done
  // NUL-terminated copies of the texts, reserved once.
  std::string text, continuation;
};

struct al_classifier {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Classifier> cls;
  std::string error;
  bool has = false;
};

namespace {

// Runs f(); an exception becomes a status and its message goes to `msg`.
template <class F>
al_status guard(std::string& msg, F&& f) noexcept {
  try {
    f();
    msg.clear();
    return AL_OK;
  } catch (const Error& e) {
    msg = e.what();
    return AL_ERR_INPUT;
  } catch (const std::bad_alloc&) {
    msg = "out of memory";
  } catch (const std::exception& e) {
    msg = e.what();
  } catch (...) {
    msg = "unknown error";
  }
  return AL_ERR_INTERNAL;
}

void set_error(al_error** err, std::string msg) noexcept {
  if (!err) return;
  try {
    *err = new al_error{std::move(msg)};
  } catch (...) {
    *err = nullptr;
  }
}

// A constructor: returns make(), or NULL with *err set.
template <class T, class F>
T* construct(al_error** err, F&& make) noexcept {
  if (err) *err = nullptr;
  T* out = nullptr;
  std::string msg;
  if (guard(msg, [&] { out = make(); }) != AL_OK) set_error(err, std::move(msg));
  return out;
}

size_t longest_token(const Vocab& v) {
  size_t n = 1;
  for (int i = 0; i < v.size(); ++i) n = std::max(n, v.token(i).size());
  return n;
}

const Hypothesis* hyp(const al_result* r, int k) {
  return r && k >= 0 && k < r->nb.size ? &r->nb[k] : nullptr;
}

}  // namespace

extern "C" {

// ---- errors ------------------------------------------------------------------------------
const char* al_error_message(const al_error* err) { return err ? err->message.c_str() : ""; }
void al_error_free(al_error* err) { delete err; }
al_error* al_error_new(const char* message) {
  al_error* err = nullptr;
  set_error(&err, message ? message : "");
  return err;
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

void al_model_free(al_model* model) { delete model; }

int al_model_kind(const al_model* m) {
  return m ? (int)m->model->kind() : -1;  // al_kind follows ModelKind
}
const char* al_model_kind_name(const al_model* m) { return m ? m->model->kind_name() : ""; }
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

long al_tokenize(const char* sentence, char* out, size_t cap, al_error** err) {
  if (err) *err = nullptr;
  long len = -1;
  std::string msg;
  const al_status s = guard(msg, [&] {
    if (!sentence) throw Error("al_tokenize: sentence is NULL");
    std::string joined;
    for (const auto& w : tokenize(sentence)) {
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
  if (s != AL_OK) set_error(err, std::move(msg));
  return len;
}

// ---- translators -------------------------------------------------------------------------
void al_limits_default(al_limits* l) {
  if (!l) return;
  const Limits d;
  l->max_batch = d.max_batch;
  l->max_beam = d.max_beam;
  l->max_tgt_steps = d.max_tgt_steps;
  l->max_input_bytes = d.max_input_bytes;
  l->device = d.device == Device::CUDA ? AL_DEVICE_CUDA : AL_DEVICE_CPU;
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
    if (l.device != AL_DEVICE_CPU && l.device != AL_DEVICE_CUDA)
      throw Error("limits: unknown device " + std::to_string(l.device));
    auto t = std::make_unique<al_translator>();
    t->model = model->model;
    const Model& m = *t->model;
    t->limits.max_batch = l.max_batch;
    t->limits.max_beam = l.max_beam;
    t->limits.max_tgt_steps = l.max_tgt_steps;
    t->limits.max_input_bytes = l.max_input_bytes;
    t->limits.device = l.device == AL_DEVICE_CUDA ? Device::CUDA : Device::CPU;
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
  return AL_OK;
}

size_t al_translator_workspace_bytes(const al_translator* tr) { return tr ? tr->tr->workspace_bytes() : 0; }

al_status al_translate_batch(al_translator* tr, const char* const* sentences, int n,
                             const al_decode_options* options) {
  if (!tr) return AL_ERR_ARGUMENT;
  tr->num_results = 0;
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
    tr->tr->translate_batch(v, n, o);
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

al_status al_translate(al_translator* tr, const char* sentence, const al_decode_options* options) {
  if (tr && !sentence) {
    tr->num_results = 0;
    tr->error = "al_translate: sentence is NULL";
    return AL_ERR_ARGUMENT;
  }
  return al_translate_batch(tr, &sentence, 1, options);
}

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

// ---- language models ----------------------------------------------------------------------
void al_generate_options_default(al_generate_options* o) {
  if (!o) return;
  const GenerateOptions d;
  o->max_tokens = d.max_tokens;
  o->sample = d.sample;
  o->temperature = d.temperature;
  o->top_k = d.top_k;
  o->top_p = d.top_p;
  o->seed = d.seed;
  o->attention = d.attention;
}

al_generator* al_generator_new(const al_model* model, int device, al_error** err) {
  return construct<al_generator>(err, [&] {
    if (!model) throw Error("al_generator_new: model is NULL");
    if (device != AL_DEVICE_CPU && device != AL_DEVICE_CUDA)
      throw Error("al_generator_new: unknown device " + std::to_string(device));
    GenerateLimits lim;
    lim.device = device == AL_DEVICE_CUDA ? Device::CUDA : Device::CPU;
    auto g = std::make_unique<al_generator>();
    g->model = model->model;
    g->gen = std::make_unique<Generator>(model->model, lim);
    const size_t cap = lim.max_input_bytes * 2 + 16 +
                       (size_t)(g->gen->context() + 1) * (longest_token(model->model->tgt_vocab()) + 1);
    g->text.reserve(cap);
    g->continuation.reserve(cap);
    return g.release();
  });
}

void al_generator_free(al_generator* g) { delete g; }
const char* al_generator_error(const al_generator* g) { return g ? g->error.c_str() : ""; }
int al_generator_context(const al_generator* g) { return g ? g->gen->context() : -1; }
size_t al_generator_workspace_bytes(const al_generator* g) { return g ? g->gen->workspace_bytes() : 0; }

}  // extern "C"

namespace {
GenerateOptions gen_options(const al_generate_options* o) {
  GenerateOptions r;
  if (!o) return r;
  r.max_tokens = o->max_tokens;
  r.sample = o->sample != 0;
  r.temperature = o->temperature;
  r.top_k = o->top_k;
  r.top_p = o->top_p;
  r.seed = o->seed;
  r.attention = o->attention != 0;
  return r;
}
void gen_texts(al_generator* g) {
  const Generation& r = g->gen->result();
  g->text.assign(r.text.data(), r.text.size());
  g->continuation.assign(r.continuation.data(), r.continuation.size());
  g->has = true;
}
const Generation* gen_result(const al_generator* g) {
  return g && g->has ? &g->gen->result() : nullptr;
}
}  // namespace

extern "C" {

al_status al_generate(al_generator* g, const char* prompt, const al_generate_options* options) {
  if (!g) return AL_ERR_ARGUMENT;
  g->has = false;
  if (!prompt) {
    g->error = "al_generate: prompt is NULL";
    return AL_ERR_ARGUMENT;
  }
  return guard(g->error, [&] {
    g->gen->generate(prompt, gen_options(options));
    gen_texts(g);
  });
}

al_status al_generator_start(al_generator* g, const char* prompt,
                             const al_generate_options* options) {
  if (!g) return AL_ERR_ARGUMENT;
  g->has = false;
  if (!prompt) {
    g->error = "al_generator_start: prompt is NULL";
    return AL_ERR_ARGUMENT;
  }
  return guard(g->error, [&] {
    g->gen->start(prompt, gen_options(options));
    gen_texts(g);
  });
}

al_status al_generator_step(al_generator* g) {
  if (!g) return AL_ERR_ARGUMENT;
  if (!g->has) {
    g->error = "al_generator_step: no generation was started";
    return AL_ERR_ARGUMENT;
  }
  return guard(g->error, [&] {
    g->gen->step();
    gen_texts(g);
  });
}

const char* al_generation_text(const al_generator* g) { return gen_result(g) ? g->text.c_str() : ""; }
const char* al_generation_continuation(const al_generator* g) {
  return gen_result(g) ? g->continuation.c_str() : "";
}
int al_generation_num_tokens(const al_generator* g) { auto r = gen_result(g); return r ? r->num_tokens : 0; }
const int* al_generation_tokens(const al_generator* g) { auto r = gen_result(g); return r ? r->tokens : nullptr; }
int al_generation_num_prompt(const al_generator* g) { auto r = gen_result(g); return r ? r->num_prompt : 0; }
int al_generation_num_generated(const al_generator* g) { auto r = gen_result(g); return r ? r->num_generated : 0; }
int al_generation_num_unknown(const al_generator* g) { auto r = gen_result(g); return r ? r->num_unknown : 0; }
const float* al_generation_probs(const al_generator* g) { auto r = gen_result(g); return r ? r->probs : nullptr; }
int al_generation_eos(const al_generator* g) { auto r = gen_result(g); return r ? r->eos : 0; }
int al_generation_done(const al_generator* g) { auto r = gen_result(g); return r ? r->done : 0; }
int al_generation_layers(const al_generator* g) { auto r = gen_result(g); return r ? r->layers : 0; }
int al_generation_heads(const al_generator* g) { auto r = gen_result(g); return r ? r->heads : 0; }
int al_generation_ld(const al_generator* g) { auto r = gen_result(g); return r ? r->ld : 0; }
int al_generation_positions(const al_generator* g) { auto r = gen_result(g); return r ? r->positions : 0; }
const float* al_generation_attention(const al_generator* g) { auto r = gen_result(g); return r ? r->attn : nullptr; }

al_status al_generator_score(al_generator* g, const char* sentence, double* nll, long* tokens,
                             int* scored) {
  if (!g) return AL_ERR_ARGUMENT;
  g->has = false;
  if (!sentence || !nll || !tokens) {
    g->error = "al_generator_score: NULL argument";
    return AL_ERR_ARGUMENT;
  }
  return guard(g->error, [&] {
    Perplexity p;
    const bool ok = g->gen->score(sentence, p);
    *nll += p.nll;
    *tokens += p.tokens;
    if (scored) *scored = ok ? 1 : 0;
  });
}

// ---- images and the Vision Transformer --------------------------------------------------
al_status al_digit_from_file_bytes(const uint8_t* bytes, size_t size, float* out, al_error** err) {
  if (err) *err = nullptr;
  if (!out) return AL_ERR_ARGUMENT;
  std::string msg;
  const al_status st = guard(msg, [&] { digit_8x8(decode_image(bytes, size), out); });
  if (st != AL_OK) set_error(err, msg);
  return st;
}

al_status al_digit_from_rgba(const uint8_t* rgba, int width, int height, float* out, al_error** err) {
  if (err) *err = nullptr;
  if (!out) return AL_ERR_ARGUMENT;
  std::string msg;
  const al_status st = guard(msg, [&] {
    if (!rgba || width <= 0 || height <= 0 || width > kMaxImageSide || height > kMaxImageSide)
      throw Error("al_digit_from_rgba: no pixels, or more than " + std::to_string(kMaxImageSide) + " per side");
    GreyImage g;
    g.width = width;
    g.height = height;
    g.pixels.resize((size_t)width * height);
    for (size_t i = 0; i < g.pixels.size(); ++i) {
      const uint8_t* p = rgba + i * 4;
      const float a = p[3] / 255.f;
      g.pixels[i] = (0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]) / 255.f * a + (1.f - a);
    }
    digit_8x8(g, out);
  });
  if (st != AL_OK) set_error(err, msg);
  return st;
}

al_classifier* al_classifier_new(const al_model* model, int device, al_error** err) {
  return construct<al_classifier>(err, [&] {
    if (!model) throw Error("al_classifier_new: model is NULL");
    if (device != AL_DEVICE_CPU && device != AL_DEVICE_CUDA)
      throw Error("al_classifier_new: unknown device " + std::to_string(device));
    ClassifyLimits lim;
    lim.device = device == AL_DEVICE_CUDA ? Device::CUDA : Device::CPU;
    auto c = std::make_unique<al_classifier>();
    c->model = model->model;
    c->cls = std::make_unique<Classifier>(model->model, lim);
    return c.release();
  });
}

void al_classifier_free(al_classifier* c) { delete c; }
const char* al_classifier_error(const al_classifier* c) { return c ? c->error.c_str() : ""; }
int al_classifier_image_size(const al_classifier* c) { return c ? c->cls->image_size() : 0; }
int al_classifier_channels(const al_classifier* c) { return c ? c->cls->channels() : 0; }
int al_classifier_num_classes(const al_classifier* c) { return c ? c->cls->num_classes() : 0; }
int al_classifier_tokens(const al_classifier* c) { return c ? c->cls->tokens() : 0; }
const char* al_classifier_label(const al_classifier* c, int k) {
  if (!c || k < 0 || k >= c->cls->num_classes()) return "";
  return c->model->labels()[(size_t)k].c_str();
}

al_status al_classify(al_classifier* c, const float* image, int attention) {
  if (!c) return AL_ERR_ARGUMENT;
  c->has = false;
  if (!image) {
    c->error = "al_classify: image is NULL";
    return AL_ERR_ARGUMENT;
  }
  return guard(c->error, [&] {
    c->cls->classify(image, 1, attention != 0);
    c->has = true;
  });
}

}  // extern "C"

namespace {
const Classification* cls_result(const al_classifier* c) { return c && c->has ? &c->cls->result(0) : nullptr; }
}  // namespace

extern "C" {

int al_classification_label(const al_classifier* c) { auto r = cls_result(c); return r ? r->label : -1; }
float al_classification_prob(const al_classifier* c) { auto r = cls_result(c); return r ? r->prob : 0.f; }
const float* al_classification_probs(const al_classifier* c) { auto r = cls_result(c); return r ? r->probs : nullptr; }
int al_classification_layers(const al_classifier* c) { auto r = cls_result(c); return r ? r->layers : 0; }
int al_classification_heads(const al_classifier* c) { auto r = cls_result(c); return r ? r->heads : 0; }
const float* al_classification_attention(const al_classifier* c, int layer) {
  auto r = cls_result(c);
  if (!r || !r->attn || layer < 0 || layer >= r->layers) return nullptr;
  return r->attn + layer * r->layer_stride;
}
al_status al_classification_rollout(al_classifier* c, float* out) {
  if (!c || !out) return AL_ERR_ARGUMENT;
  if (!c->has) {
    c->error = "al_classification_rollout: nothing was classified";
    return AL_ERR_ARGUMENT;
  }
  return guard(c->error, [&] { c->cls->rollout(0, out); });
}

}  // extern "C"
