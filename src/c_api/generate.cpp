// attnlite — the C API: language-model generators.
#include <string>

#include "c_api/handles.h"

using namespace attnlite;
using namespace attnlite::c_api;

extern "C" {

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

void al_generator_limits_default(al_generator_limits* l) {
  if (!l) return;
  const GenerateLimits d;
  l->max_input_bytes = d.max_input_bytes;
  l->device = AL_DEVICE_CPU;
  l->precision = AL_PRECISION_FP32;
}

}  // extern "C"

namespace {
// al_generator_new_with and al_generator_new; who: the name in the messages.
al_generator* make_generator(const al_model* model, const al_generator_limits* limits, al_error** err,
                             const char* who) {
  return construct<al_generator>(err, [&] {
    if (!model) throw Error(std::string(who) + ": model is NULL");
    al_generator_limits l;
    al_generator_limits_default(&l);
    if (limits) l = *limits;
    GenerateLimits lim;
    lim.max_input_bytes = l.max_input_bytes;
    lim.device = device_of(l.device);
    lim.precision = precision_of(l.precision);
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
}  // namespace

extern "C" {

al_generator* al_generator_new_with(const al_model* model, const al_generator_limits* limits,
                                    al_error** err) {
  return make_generator(model, limits, err, "al_generator_new_with");
}

al_generator* al_generator_new(const al_model* model, int device, al_error** err) {
  al_generator_limits l;
  al_generator_limits_default(&l);
  l.device = device;
  return make_generator(model, &l, err, "al_generator_new");
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

}  // extern "C"
