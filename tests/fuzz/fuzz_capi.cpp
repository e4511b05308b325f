// libFuzzer target: the C API (include/attnlite/c_api.h) driven by random call sequences.
// The input is a program: each operation is one byte (its opcode) followed by its arguments
// read from the next bytes (zeros once the input is used up). It works on a few slots of
// handles (two models, two translators, a generator, a classifier), which start empty, so
// NULL handles, sessions of the wrong model kind, models freed before their sessions, calls
// in any order and out-of-range indices all occur. Everything the API promises is checked:
// no crash, no leak, statuses in range, a message after every failure and none after a
// success, documented values from getters given NULL or bad indices, results whose counts,
// ids and probabilities are in range.
//
// Models: one tiny model of each kind from the loader's seed corpus (a Transformer, an LSTM
// Bahdanau model, a language model and a Vision Transformer of a few hundred weights, so that
// loading one costs microseconds and a program can load many; the shipped models are fuzzed
// by fuzz_translate, fuzz_generate and fuzz_image), loaded from memory by al_model_from_bytes,
// or bytes of the input.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attnlite/c_api.h"

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_capi: check failed: %s (line %d)\n", #cond, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace {

std::vector<std::vector<uint8_t>> g_models;  // file images of the four tiny models

struct Reader {
  const uint8_t* p;
  size_t n;
  bool done() const { return n == 0; }
  uint8_t u8() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  int range(int lo, int hi) { return lo + u8() % (hi - lo + 1); }  // [lo, hi]
  float f32() {
    float f = 0;
    uint8_t b[4] = {u8(), u8(), u8(), u8()};
    std::memcpy(&f, b, 4);
    return f;
  }
  // A string of up to `max` bytes (length from the next byte), NUL-terminated.
  std::string str(int max) {
    const size_t len = std::min<size_t>(u8() % (max + 1), n);
    std::string s(reinterpret_cast<const char*>(p), len);
    p += len;
    n -= len;
    return s;
  }
};

struct Slots {
  al_model* model[2] = {nullptr, nullptr};
  al_translator* tr[2] = {nullptr, nullptr};
  al_generator* gen = nullptr;
  al_classifier* cls = nullptr;
  ~Slots() {
    for (auto* t : tr) al_translator_free(t);
    al_generator_free(gen);
    al_classifier_free(cls);
    for (auto* m : model) al_model_free(m);
  }
};

void check_status(al_status s, const char* message) {
  FUZZ_CHECK(s == AL_OK || s == AL_ERR_ARGUMENT || s == AL_ERR_INPUT);
  FUZZ_CHECK(message != nullptr);
  FUZZ_CHECK((s == AL_OK) == (message[0] == '\0'));
}

// A constructor's result: a handle, or NULL with a message when one was asked for.
template <class H>
void check_made(H* h, al_error* err, bool asked) {
  if (asked) {
    FUZZ_CHECK((h == nullptr) == (err != nullptr));
    if (err) FUZZ_CHECK(std::strlen(al_error_message(err)) > 0);
  }
  al_error_free(err);
}

void check_result(const al_result* r, const al_translator* tr) {
  const int n = al_result_num_tokens(r);
  FUZZ_CHECK(n >= 0);
  const int* t = al_result_tokens(r);
  const float* pr = al_result_probs(r);
  for (int k = 0; k < n; ++k) {
    FUZZ_CHECK(t[k] >= 0 && t[k] == al_result_token(r, k));
    FUZZ_CHECK(pr[k] >= 0.f && pr[k] <= 1.f);
  }
  FUZZ_CHECK(al_result_token(r, -1) == -1 && al_result_token(r, n) == -1);
  FUZZ_CHECK(al_result_steps(r) >= n);
  FUZZ_CHECK(al_result_src_valid(r) <= al_result_src_size(r));
  const int S = al_result_src_size(r);
  const int* src = al_result_src_ids(r);
  for (int s = 0; s < S; ++s) FUZZ_CHECK(src[s] >= 0);
  const int L = al_result_layers(r), H = al_result_heads(r), ld = al_result_ld(r);
  al_limits lim;
  FUZZ_CHECK(al_translator_limits(tr, &lim) == AL_OK);
  if (const float* e = al_result_enc_self(r)) FUZZ_CHECK(std::isfinite(e[(size_t)L * H * S * S - 1]));
  if (const float* c = al_result_cross(r)) {
    const size_t cells = (size_t)(L ? L : 1) * ld * (L ? H : 1) * S;
    FUZZ_CHECK(std::isfinite(c[cells - 1]) && std::isfinite(c[0]));
  }
  const int nb = al_nbest_size(r);
  FUZZ_CHECK(nb >= 1 && nb <= lim.max_beam);
  FUZZ_CHECK(std::strcmp(al_nbest_text(r, 0), al_result_text(r)) == 0);
  FUZZ_CHECK(al_nbest_text(r, nb)[0] == '\0' && al_nbest_tokens(r, -1) == nullptr);
  for (int k = 0; k < nb; ++k) {
    FUZZ_CHECK(al_nbest_length(r, k) == al_nbest_num_tokens(r, k) + al_nbest_eos(r, k));
    FUZZ_CHECK(!(al_nbest_logp(r, k) > 0));
  }
}

void check_generation(const al_generator* g) {
  const int n = al_generation_num_tokens(g), np = al_generation_num_prompt(g),
            ng = al_generation_num_generated(g);
  FUZZ_CHECK(n == 0 ? np == 0 && ng == 0 : n == 1 + np + ng);  // 0: no generation yet
  const int* t = al_generation_tokens(g);
  for (int i = 0; i < n; ++i) FUZZ_CHECK(t[i] >= 0);
  const float* p = al_generation_probs(g);
  for (int i = 0; i < ng; ++i) FUZZ_CHECK(p[i] >= 0.f && p[i] <= 1.f);
  FUZZ_CHECK(n <= al_generator_context(g) + 1);
  if (const float* a = al_generation_attention(g)) {
    const int pos = al_generation_positions(g), ld = al_generation_ld(g);
    FUZZ_CHECK(pos >= 1 && pos <= ld);
    double s = 0;
    for (int k = 0; k < pos; ++k) s += a[(size_t)(pos - 1) * ld + k];  // layer 0, head 0, last row
    FUZZ_CHECK(std::fabs(s - 1) < 1e-4);
  }
}

void translate_op(Reader& in, al_translator* tr, bool batch) {
  al_decode_options o;
  al_decode_options_default(&o);
  const bool opts = in.u8() & 1;
  if (opts) {
    o.d2l_compat = in.u8() & 1;
    o.max_steps = in.range(-1, 12);
    o.attention = in.u8() & 1;
    o.beam_size = in.range(0, 6);
    o.length_penalty = in.range(0, 3) * 0.5f - 0.5f;
  }
  al_status s;
  int n = 1;
  if (batch) {
    n = in.range(-1, 5);
    std::vector<std::string> text((size_t)std::max(n, 0));
    std::vector<const char*> ptrs;
    for (auto& t : text) {
      t = in.str(40);
      ptrs.push_back((in.u8() & 15) ? t.c_str() : nullptr);
    }
    s = al_translate_batch(tr, n > 0 ? ptrs.data() : nullptr, n, opts ? &o : nullptr);
  } else {
    const std::string t = in.str(60);
    s = al_translate(tr, (in.u8() & 15) ? t.c_str() : nullptr, opts ? &o : nullptr);
  }
  if (!tr) {
    FUZZ_CHECK(s == AL_ERR_ARGUMENT);
    FUZZ_CHECK(al_translator_error(tr) != nullptr && al_translator_error_index(tr) == -1);
    return;
  }
  check_status(s, al_translator_error(tr));
  // the sentence a batch refused: in the batch, and the one its message names
  const int at = al_translator_error_index(tr);
  FUZZ_CHECK(at == -1 || (batch && s == AL_ERR_INPUT && at < n));
  if (at >= 0)
    FUZZ_CHECK(std::string(al_translator_error(tr)).rfind(
                   "sentence " + std::to_string(at) + " of " + std::to_string(n) + ": ", 0) == 0);
  if (s != AL_OK) return;
  for (int i = 0; i < n; ++i) check_result(al_translator_result(tr, i), tr);
  FUZZ_CHECK(al_translator_result(tr, n) == nullptr && al_translator_result(tr, -1) == nullptr);
}

void generate_op(Reader& in, al_generator* g) {
  al_generate_options o;
  al_generate_options_default(&o);
  const bool opts = in.u8() & 1;
  if (opts) {
    o.max_tokens = in.range(-1, 6);
    o.sample = in.u8() & 1;
    o.temperature = in.range(-1, 8) * 0.25f;
    o.top_k = in.range(-1, 20);
    o.top_p = in.range(0, 5) * 0.25f;
    o.seed = in.u8();
    o.attention = in.u8() & 1;
  }
  const int what = in.range(0, 3);
  const std::string t = in.str(60);
  const char* text = (in.u8() & 15) ? t.c_str() : nullptr;
  al_status s;
  if (what == 0) {
    s = al_generate(g, text, opts ? &o : nullptr);
  } else if (what == 1) {
    s = al_generator_start(g, text, opts ? &o : nullptr);
  } else if (what == 2) {
    s = al_generator_step(g);
  } else {
    double nll = -1;
    long tokens = -1;
    int scored = -1;
    s = al_generator_score(g, text, &nll, &tokens, &scored);
    if (s == AL_OK) FUZZ_CHECK((scored == 1 && nll >= 0 && tokens >= 1) || scored == 0);
  }
  if (!g) {
    FUZZ_CHECK(s == AL_ERR_ARGUMENT);
    return;
  }
  check_status(s, al_generator_error(g));
  check_generation(g);
}

void classify_op(Reader& in, al_classifier* c) {
  const int C = al_classifier_channels(c), S = al_classifier_image_size(c);
  const int n = in.range(-1, 5);  // images (al_classify_batch; 1 may be al_classify)
  const long per = std::max(C * S * S, 1);
  std::vector<float> images((size_t)(per * std::max(n, 1)));
  const int kind = in.range(0, 3);
  for (float& v : images) v = kind == 0 ? in.f32() : (float)in.range(0, 16);
  const float* px = in.u8() & 1 ? images.data() : nullptr;
  const int attention = in.u8() & 1;
  const al_status s = n == 1 && (in.u8() & 1) ? al_classify(c, px, attention)
                                               : al_classify_batch(c, px, n, attention);
  if (!c) {
    FUZZ_CHECK(s == AL_ERR_ARGUMENT);
    FUZZ_CHECK(al_classification_label(c) == -1 && al_classification_count(c) == 0);
    FUZZ_CHECK(al_classifier_error_index(c) == -1);
    return;
  }
  check_status(s, al_classifier_error(c));
  const int at = al_classifier_error_index(c);  // the image refused, the one its message names
  FUZZ_CHECK(at == -1 || (s == AL_ERR_INPUT && at < n));
  if (at >= 0) FUZZ_CHECK(std::string(al_classifier_error(c)).rfind("image " + std::to_string(at) + ": ", 0) == 0);
  const int K = al_classifier_num_classes(c), T = al_classifier_tokens(c);
  if (s != AL_OK) {
    FUZZ_CHECK(al_classification_count(c) == 0);
    FUZZ_CHECK(al_classification_label(c) == -1 && al_classification_probs(c) == nullptr);
    return;
  }
  FUZZ_CHECK(al_classification_count(c) == n);
  FUZZ_CHECK(al_classifier_label(c, K)[0] == '\0' && al_classifier_label(c, -1)[0] == '\0');
  const int L = al_classification_layers(c);
  std::vector<float> roll((size_t)T * T);
  for (int i = -1; i <= n; ++i) {
    if (i < 0 || i == n) {  // out of range
      FUZZ_CHECK(al_classification_label_at(c, i) == -1 && al_classification_probs_at(c, i) == nullptr);
      FUZZ_CHECK(al_classification_attention_at(c, i, 0) == nullptr);
      FUZZ_CHECK(al_classification_rollout_at(c, i, roll.data()) == AL_ERR_ARGUMENT);
      continue;
    }
    const int label = al_classification_label_at(c, i);
    FUZZ_CHECK(label >= 0 && label < K);
    const float* probs = al_classification_probs_at(c, i);
    double sum = 0;
    for (int k = 0; k < K; ++k) sum += probs[k];
    FUZZ_CHECK(std::fabs(sum - 1) < 1e-4);
    FUZZ_CHECK(al_classification_prob_at(c, i) == probs[label]);
    FUZZ_CHECK(al_classification_attention_at(c, i, L) == nullptr &&
               al_classification_attention_at(c, i, -1) == nullptr);
    const al_status rs = al_classification_rollout_at(c, i, roll.data());
    FUZZ_CHECK(rs == AL_OK || rs == AL_ERR_INPUT);
    if (al_classification_attention_at(c, i, 0)) {
      FUZZ_CHECK(rs == AL_OK);
      for (int q = 0; q < T; ++q) {
        double r = 0;
        for (int k = 0; k < T; ++k) r += roll[(size_t)q * T + k];
        FUZZ_CHECK(std::fabs(r - 1) < 1e-3);
      }
    } else {
      FUZZ_CHECK(rs == AL_ERR_INPUT);
    }
  }
  FUZZ_CHECK(al_classification_label(c) == al_classification_label_at(c, 0));
}

void digit_op(Reader& in) {
  float out[64];
  al_error* err = nullptr;
  const bool ask = in.u8() & 1;
  al_status s;
  if (in.u8() & 1) {
    const std::string bytes = in.str(255);
    s = al_digit_from_file_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), out,
                                 ask ? &err : nullptr);
  } else {
    const int w = in.range(-1, 9), h = in.range(-1, 9);
    std::vector<uint8_t> rgba((size_t)std::max(w, 0) * std::max(h, 0) * 4);
    for (auto& b : rgba) b = in.u8();
    s = al_digit_from_rgba(rgba.empty() ? nullptr : rgba.data(), w, h, out, ask ? &err : nullptr);
  }
  FUZZ_CHECK(s == AL_OK || s == AL_ERR_INPUT || s == AL_ERR_ARGUMENT);
  if (s == AL_OK)
    for (float v : out) FUZZ_CHECK(v >= 0.f && v <= 16.0001f);
  check_made(s == AL_OK ? out : nullptr, err, ask);
}

void model_op(Reader& in, const al_model* m) {
  const int kind = al_model_kind(m);
  if (!m) {
    FUZZ_CHECK(kind == -1 && al_model_num_layers(m) <= 0 && al_model_src_token(m, 0) != nullptr);
    return;
  }
  FUZZ_CHECK(kind >= 0 && std::strlen(al_model_kind_name(m)) > 0);
  static const char* keys[] = {"attnlite.kind", "attnlite.config", "nope", ""};
  const int key = in.range(0, 3);
  FUZZ_CHECK((al_model_metadata(m, keys[key]) != nullptr) == (key < 2));
  if (kind == AL_VIT) return;  // no vocabulary
  const int sv = al_model_src_vocab_size(m), tv = al_model_tgt_vocab_size(m);
  FUZZ_CHECK(sv >= 4 && tv >= 4);
  const int id = in.range(-2, 60) * (in.u8() & 1 ? 1 : 1000);
  const char* s = al_model_src_token(m, id);
  const char* t = al_model_tgt_token(m, id);
  FUZZ_CHECK(s && t);
  if (id >= 0 && id < sv) FUZZ_CHECK(al_model_src_id(m, s) == id);
  else FUZZ_CHECK(s[0] == '\0');
  if (id < 0 || id >= tv) FUZZ_CHECK(t[0] == '\0');
  const std::string word = in.str(12);
  const int w = al_model_src_id(m, word.c_str());
  FUZZ_CHECK(w >= 0 && w < sv);
}

void tokenize_op(Reader& in) {
  const std::string s = in.str(80);
  const size_t cap = in.range(0, 100);
  std::vector<char> out(cap + 1, '\x7f');
  al_error* err = nullptr;
  const bool ask = in.u8() & 1;
  const long n = al_tokenize(s.c_str(), cap ? out.data() : nullptr, cap, ask ? &err : nullptr);
  if (n >= 0) FUZZ_CHECK(err == nullptr);
  if (n >= 0 && (size_t)n < cap) FUZZ_CHECK(out[(size_t)n] == '\0');
  FUZZ_CHECK(out[cap] == '\x7f');  // nothing written past cap
  if (ask && n < 0) FUZZ_CHECK(err && std::strlen(al_error_message(err)) > 0);
  al_error_free(err);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const char* n : {"transformer", "bahdanau_lstm", "lm_post_relu", "vit_post_gelu"}) {
    std::ifstream f(std::string(ATTNLITE_FUZZ_CORPUS_DIR) + "/loader/" + n + ".safetensors", std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "fuzz_capi: tests/fuzz/corpus/loader/%s.safetensors is missing\n", n);
      std::exit(1);
    }
    g_models.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  Slots h;
  for (int ops = 0; !in.done() && ops < 64; ++ops) {
    const uint8_t op = in.u8();
    const int a = in.u8() & 1;
    switch (op % 14) {
      case 0: {  // load a model into slot a (a shipped one, or bytes of the input)
        const int which = in.range(0, 4);
        al_error* err = nullptr;
        const bool ask = in.u8() & 1;
        al_model* m;
        if (which < 4) {
          m = al_model_from_bytes(g_models[(size_t)which].data(), g_models[(size_t)which].size(), ask ? &err : nullptr);
          FUZZ_CHECK(m != nullptr);
        } else {
          const std::string bytes = in.str(255);
          m = al_model_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), ask ? &err : nullptr);
        }
        check_made(m, err, ask);
        al_model_free(h.model[a]);
        h.model[a] = m;
        break;
      }
      case 1:  // free a model (its sessions keep it alive)
        al_model_free(h.model[a]);
        h.model[a] = nullptr;
        break;
      case 2: {  // a translator over model slot a
        al_limits lim;
        al_limits_default(&lim);
        const bool limits = in.u8() & 1;
        if (limits) {
          lim.max_batch = in.range(-1, 4);
          lim.max_beam = in.range(-1, 5);
          lim.max_tgt_steps = in.range(-1, 14);
          lim.max_input_bytes = (size_t)in.range(0, 8) * 32;
          lim.device = in.range(-1, 2);
          lim.precision = in.range(-1, 2);
        }
        al_error* err = nullptr;
        const bool ask = in.u8() & 1;
        al_translator* t = al_translator_new(h.model[a], limits ? &lim : nullptr, ask ? &err : nullptr);
        if (!h.model[a]) FUZZ_CHECK(t == nullptr);
        check_made(t, err, ask);
        const int slot = in.u8() & 1;
        al_translator_free(h.tr[slot]);
        h.tr[slot] = t;
        break;
      }
      case 3:
        al_translator_free(h.tr[a]);
        h.tr[a] = nullptr;
        break;
      case 4:
        translate_op(in, h.tr[a], false);
        break;
      case 5:
        translate_op(in, h.tr[a], true);
        break;
      case 6: {  // a generator over model slot a, or free it
        if (in.u8() & 1) {
          al_generator_free(h.gen);
          h.gen = nullptr;
          break;
        }
        al_error* err = nullptr;
        const bool ask = in.u8() & 1;
        al_generator* g;
        if (in.u8() & 1) {
          g = al_generator_new(h.model[a], in.range(-1, 2), ask ? &err : nullptr);
        } else {  // limits: maybe out of range
          al_generator_limits lim;
          al_generator_limits_default(&lim);
          const size_t bytes[] = {0, 1, 16, 4096, (size_t)1 << 20, ((size_t)1 << 20) + 1, SIZE_MAX};
          lim.max_input_bytes = bytes[in.range(0, 6)];
          lim.device = in.range(-1, 2);
          lim.precision = in.range(-1, 2);
          g = al_generator_new_with(h.model[a], in.u8() & 1 ? &lim : nullptr, ask ? &err : nullptr);
        }
        check_made(g, err, ask);
        al_generator_free(h.gen);
        h.gen = g;
        break;
      }
      case 7:
        generate_op(in, h.gen);
        break;
      case 8: {  // a classifier over model slot a, or free it
        if (in.u8() & 1) {
          al_classifier_free(h.cls);
          h.cls = nullptr;
          break;
        }
        al_error* err = nullptr;
        const bool ask = in.u8() & 1;
        al_classifier* c;
        if (in.u8() & 1) {
          c = al_classifier_new(h.model[a], in.range(-1, 2), ask ? &err : nullptr);
        } else {  // limits: maybe out of range
          al_classifier_limits lim;
          al_classifier_limits_default(&lim);
          // up to 64: a hostile model's attention of 4,096 images could ask for gigabytes
          const int batches[] = {-1, 0, 1, 2, 4, 64, 4097, INT_MAX};
          lim.max_batch = batches[in.range(0, 7)];
          lim.device = in.range(-1, 2);
          lim.precision = in.range(-1, 2);
          c = al_classifier_new_with(h.model[a], in.u8() & 1 ? &lim : nullptr, ask ? &err : nullptr);
        }
        check_made(c, err, ask);
        al_classifier_free(h.cls);
        h.cls = c;
        break;
      }
      case 9:
        classify_op(in, h.cls);
        break;
      case 10:
        digit_op(in);
        break;
      case 11:
        model_op(in, h.model[a]);
        break;
      case 12:
        tokenize_op(in);
        break;
      default: {  // getters of the sessions, any state
        const al_translator* t = h.tr[a];
        const al_result* r = al_translator_result(t, in.range(-1, 4));
        if (!t) FUZZ_CHECK(r == nullptr && al_translator_workspace_bytes(t) == 0);
        FUZZ_CHECK(al_result_text(r) != nullptr && al_nbest_text(r, in.range(-1, 6)) != nullptr);
        FUZZ_CHECK(al_generation_text(h.gen) != nullptr && al_generation_continuation(h.gen) != nullptr);
        FUZZ_CHECK(al_classifier_label(h.cls, in.range(-1, 10)) != nullptr);
        al_error* e = al_error_new(in.str(20).c_str());
        FUZZ_CHECK(al_error_message(e) != nullptr);
        al_error_free(e);
        break;
      }
    }
  }
  return 0;
}
