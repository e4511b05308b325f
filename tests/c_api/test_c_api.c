/* The C API from C (C11): the book's sentences with the shipped transformer-d2l model (the
 * strings are those of `attnlite translate --model transformer-d2l`), every getter, beam
 * search's n-best list, and error paths that must give messages, not crashes. The language
 * model and the Vision Transformer: test_c_api_models.c, run by main() below. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlite/c_api.h"
#include "c_api_checks.h"

int passed = 0, failed = 0;

static const char* model_path(void) { return ATTNLITE_MODELS_DIR "/transformer-d2l.safetensors"; }

/* A constructor error: NULL handle, a message, freed. */
void check_error(al_error* err, const char* needle) {
  CHECK(err != NULL);
  const char* msg = al_error_message(err);
  CHECK(msg[0] != '\0');
  if (needle && !strstr(msg, needle)) {
    ++failed;
    fprintf(stderr, "error \"%s\" lacks \"%s\"\n", msg, needle);
  }
  al_error_free(err);
}

void check_cuda_refused(al_error* err) {
  const char* want = getenv("ATTNLITE_TEST_CUDA");
  if (want && strcmp(want, "1") == 0) {
    ++failed;
    fprintf(stderr, "a CUDA session was refused where ATTNLITE_TEST_CUDA=1: %s\n",
            err ? al_error_message(err) : "(no message)");
    al_error_free(err);
    return;
  }
  check_error(err, "CUDA");
}

/* A translator on CUDA, a batch of two greedy and one beam search: the CPU's texts; in a
 * library without CUDA or on a machine without a device, the refusal that says so. */
static void test_cuda(const al_model* m) {
  al_limits lim;
  al_limits_default(&lim);
  lim.max_batch = 2;
  lim.max_beam = 4;
  al_error* err = NULL;
  al_translator* cpu = al_translator_new(m, &lim, &err);
  CHECK(cpu != NULL);
  lim.device = AL_DEVICE_CUDA;
  al_translator* gpu = al_translator_new(m, &lim, &err);
  if (!gpu) {
    check_cuda_refused(err);
    al_translator_free(cpu);
    return;
  }
  const char* two[2] = {"i'm home .", "he's calm ."};
  al_decode_options o;
  al_decode_options_default(&o);
  CHECK(al_translate_batch(cpu, two, 2, &o) == AL_OK);
  CHECK(al_translate_batch(gpu, two, 2, &o) == AL_OK);
  for (int i = 0; i < 2; ++i)
    CHECK_STR(al_result_text(al_translator_result(gpu, i)), al_result_text(al_translator_result(cpu, i)));
  CHECK_STR(al_result_text(al_translator_result(gpu, 0)), "je suis chez moi .");
  o.beam_size = 4;
  CHECK(al_translate(gpu, "i lost .", &o) == AL_OK);
  CHECK(al_translate(cpu, "i lost .", &o) == AL_OK);
  CHECK_STR(al_result_text(al_translator_result(gpu, 0)), al_result_text(al_translator_result(cpu, 0)));
  al_translator_free(gpu);
  al_translator_free(cpu);
}

static void test_model(const al_model* m) {
  CHECK(al_model_kind(m) == AL_TRANSFORMER);
  CHECK_STR(al_model_kind_name(m), "transformer");
  CHECK(al_model_num_layers(m) == 2);
  CHECK(al_model_num_heads(m) == 4);
  CHECK(al_model_num_steps(m) == 10);
  CHECK(al_model_num_hiddens(m) == 32);
  CHECK(al_model_max_target_steps(m) >= al_model_num_steps(m));
  CHECK(al_model_src_vocab_size(m) > 100);
  CHECK(al_model_tgt_vocab_size(m) > 100);
  CHECK(al_model_weight_bytes(m) > 0);
  CHECK(al_model_is_int8(m) == 0);
  CHECK_STR(al_model_metadata(m, "attnlite.kind"), "transformer");
  CHECK(al_model_metadata(m, "no such key") == NULL);
  CHECK(al_model_metadata(m, NULL) == NULL);
  CHECK_STR(al_model_src_token(m, 0), "<unk>");
  CHECK_STR(al_model_tgt_token(m, 0), "<unk>");
  CHECK_STR(al_model_src_token(m, -1), "");
  CHECK_STR(al_model_tgt_token(m, 1 << 30), "");
  CHECK(al_model_src_id(m, "<unk>") == 0);
  CHECK(al_model_src_id(m, "zyzzyva") == 0);
  CHECK(al_model_src_id(m, "go") > 3);
  CHECK_STR(al_model_src_token(m, al_model_src_id(m, "go")), "go");
  CHECK(al_model_src_id(m, NULL) == -1);
}

static void test_greedy(al_translator* tr, const al_model* m) {
  static const char* const en[] = {"go .", "i lost .", "he's calm .", "i'm home ."};
  static const char* const fr[] = {"va !", "je l\xe2\x80\x99" "ai perdu .", "il est calme .",
                                   "je suis chez moi ."};
  for (int i = 0; i < 4; ++i) {
    CHECK(al_translate(tr, en[i], NULL) == AL_OK);
    CHECK_STR(al_translator_error(tr), "");
    const al_result* r = al_translator_result(tr, 0);
    CHECK(r != NULL);
    CHECK_STR(al_result_text(r), fr[i]);
  }
  /* Every getter of the last one: "i'm home ." -> "je suis chez moi ." */
  const al_result* r = al_translator_result(tr, 0);
  CHECK(al_translator_result(tr, 1) == NULL);
  CHECK(al_translator_result(tr, -1) == NULL);
  const int n = al_result_num_tokens(r);
  CHECK(n == 5);
  char joined[256] = "";
  for (int i = 0; i < n; ++i) {
    CHECK(al_result_token(r, i) == al_result_tokens(r)[i]);
    if (i) strcat(joined, " ");
    strcat(joined, al_model_tgt_token(m, al_result_token(r, i)));
    const float p = al_result_probs(r)[i];
    CHECK(p > 0.f && p <= 1.f);
  }
  CHECK_STR(joined, "je suis chez moi .");
  CHECK(al_result_token(r, n) == -1);
  CHECK(al_result_token(r, -1) == -1);
  CHECK(al_result_steps(r) == n + 1);
  CHECK(al_result_eos(r) == 1);
  CHECK(al_result_src_len(r) == 4); /* i'm home . <eos> */
  CHECK(al_result_src_valid(r) == 4);
  CHECK(al_result_truncated(r) == 0);
  CHECK(al_result_num_unknown(r) == 0);
  const int S = al_result_src_size(r);
  CHECK(S == 10);
  CHECK_STR(al_model_src_token(m, al_result_src_ids(r)[0]), "i'm");
  CHECK_STR(al_model_src_token(m, al_result_src_ids(r)[3]), "<eos>");
  CHECK_STR(al_model_src_token(m, al_result_src_ids(r)[S - 1]), "<pad>");
  const int L = al_result_layers(r), NH = al_result_heads(r), ld = al_result_ld(r);
  CHECK(L == 2 && NH == 4 && ld >= al_result_steps(r));
  /* Attention rows are distributions: encoder self over the valid keys, cross over them. */
  const float* enc = al_result_enc_self(r);
  const float* dec = al_result_dec_self(r);
  const float* cross = al_result_cross(r);
  CHECK(enc && dec && cross);
  if (enc && dec && cross) {
    double se = 0, sd = 0, sc = 0;
    for (int k = 0; k < S; ++k) se += enc[(((long)1 * NH + 2) * S + 1) * S + k];
    const int t = al_result_steps(r) - 1;
    for (int k = 0; k <= t; ++k) sd += dec[(((long)1 * ld + t) * NH + 3) * ld + k];
    for (int s = 0; s < S; ++s) sc += cross[(((long)0 * ld + t) * NH + 0) * S + s];
    CHECK(fabs(se - 1) < 1e-4 && fabs(sd - 1) < 1e-4 && fabs(sc - 1) < 1e-4);
  }
  /* Greedy: a one-entry n-best list equal to the result. */
  CHECK(al_nbest_size(r) == 1);
  CHECK_STR(al_nbest_text(r, 0), al_result_text(r));
  CHECK(al_nbest_num_tokens(r, 0) == n);
  CHECK(al_nbest_eos(r, 0) == 1 && al_nbest_length(r, 0) == n + 1);

  /* Options: attention off, max steps, an unknown word. */
  al_decode_options o;
  al_decode_options_default(&o);
  CHECK(o.beam_size == 1 && o.attention == 1 && o.max_steps == 0 && o.d2l_compat == 0);
  o.attention = 0;
  o.max_steps = 2;
  CHECK(al_translate(tr, "i'm home .", &o) == AL_OK);
  r = al_translator_result(tr, 0);
  CHECK(al_result_steps(r) == 2 && al_result_num_tokens(r) == 2 && al_result_eos(r) == 0);
  CHECK(al_result_enc_self(r) == NULL && al_result_cross(r) == NULL);
  CHECK(al_translate(tr, "Zyzzyva!", NULL) == AL_OK);
  r = al_translator_result(tr, 0);
  CHECK(al_result_num_unknown(r) == 1);
  CHECK(al_result_src_ids(r)[0] == 0);
}

static void test_beam(const al_model* m) {
  al_limits lim;
  al_limits_default(&lim);
  CHECK(lim.max_batch == 1 && lim.max_beam == 1 && lim.max_tgt_steps == 0 &&
        lim.max_input_bytes == 4096 && lim.device == AL_DEVICE_CPU &&
        lim.precision == AL_PRECISION_FP32);
  lim.max_beam = 4;
  lim.max_batch = 2;
  al_error* err = NULL;
  al_translator* tr = al_translator_new(m, &lim, &err);
  CHECK(tr != NULL && err == NULL);
  if (!tr) return;
  al_limits got;
  CHECK(al_translator_limits(tr, &got) == AL_OK);
  CHECK(got.max_beam == 4 && got.max_batch == 2 && got.max_tgt_steps == al_model_num_steps(m) &&
        got.device == AL_DEVICE_CPU && got.precision == AL_PRECISION_FP32);
  CHECK(al_translator_workspace_bytes(tr) > 0);

  al_decode_options o;
  al_decode_options_default(&o);
  o.beam_size = 4;
  CHECK(al_translate(tr, "i'm home .", &o) == AL_OK);
  const al_result* r = al_translator_result(tr, 0);
  /* attnlite translate --model transformer-d2l --beam 4 --verbose "i'm home ." */
  static const char* const best[] = {"je suis chez moi .", "j'ai froid .", "je suis ici .",
                                     "je suis chez nous ."};
  static const double logp[] = {-0.0370, -4.9713, -5.0503, -5.4246};
  static const int length[] = {6, 4, 5, 6};
  CHECK(al_nbest_size(r) == 4);
  for (int k = 0; k < 4; ++k) {
    CHECK_STR(al_nbest_text(r, k), best[k]);
    CHECK(fabs(al_nbest_logp(r, k) - logp[k]) < 1e-4);
    CHECK(al_nbest_score(r, k) == al_nbest_logp(r, k)); /* alpha 0 */
    CHECK(al_nbest_length(r, k) == length[k]);
    CHECK(al_nbest_eos(r, k) == 1);
    CHECK(al_nbest_num_tokens(r, k) == length[k] - 1);
    double s = 0;
    for (int i = 0; i < al_nbest_num_tokens(r, k); ++i) s += log(al_nbest_probs(r, k)[i]);
    CHECK(s > al_nbest_logp(r, k)); /* the <eos> probability is in logp too */
    CHECK(al_nbest_tokens(r, k) != NULL);
    if (k) CHECK(al_nbest_score(r, k) <= al_nbest_score(r, k - 1));
  }
  CHECK_STR(al_result_text(r), best[0]);
  CHECK(al_nbest_size(NULL) == 0);
  CHECK_STR(al_nbest_text(r, 4), "");
  CHECK(al_nbest_tokens(r, -1) == NULL);
  CHECK(al_nbest_logp(r, 9) == 0);

  /* A batch of two. */
  const char* two[] = {"go .", "he's calm ."};
  o.beam_size = 1;
  CHECK(al_translate_batch(tr, two, 2, &o) == AL_OK);
  CHECK_STR(al_result_text(al_translator_result(tr, 0)), "va !");
  CHECK_STR(al_result_text(al_translator_result(tr, 1)), "il est calme .");
  /* A refused sentence in a batch is named by its index; no result is left behind. */
  const char* with_empty[] = {"go .", "  "};
  CHECK(al_translate_batch(tr, with_empty, 2, &o) == AL_ERR_INPUT);
  CHECK_STR(al_translator_error(tr), "sentence 1 of 2: empty sentence");
  CHECK(al_translator_error_index(tr) == 1);
  CHECK(al_translator_result(tr, 0) == NULL);
  CHECK(al_translate_batch(tr, with_empty + 1, 1, &o) == AL_ERR_INPUT);
  CHECK_STR(al_translator_error(tr), "sentence 0 of 1: empty sentence");
  CHECK(al_translator_error_index(tr) == 0);
  /* al_translate names no index; a success clears it */
  CHECK(al_translate(tr, "  ", &o) == AL_ERR_INPUT);
  CHECK_STR(al_translator_error(tr), "empty sentence");
  CHECK(al_translator_error_index(tr) == -1);
  CHECK(al_translate_batch(tr, with_empty, 2, &o) == AL_ERR_INPUT && al_translator_error_index(tr) == 1);
  CHECK(al_translate_batch(tr, two, 2, &o) == AL_OK && al_translator_error_index(tr) == -1);
  CHECK(al_translator_error_index(NULL) == -1);

  /* Beam over max_beam, batch over max_batch: errors, and no result left behind. */
  o.beam_size = 5;
  CHECK(al_translate_batch(tr, with_empty, 2, &o) == AL_ERR_INPUT && al_translator_error_index(tr) == 1);
  CHECK(al_translate(tr, "go .", &o) == AL_ERR_INPUT);
  CHECK(strstr(al_translator_error(tr), "beam_size 5") != NULL);
  CHECK(al_translator_error_index(tr) == -1);
  CHECK(al_translate_batch(tr, two, 2, &o) == AL_ERR_INPUT && al_translator_error_index(tr) == -1);
  CHECK(al_translator_result(tr, 0) == NULL);
  const char* three[] = {"go .", "go .", "go ."};
  CHECK(al_translate_batch(tr, three, 3, NULL) == AL_ERR_ARGUMENT);
  CHECK(strstr(al_translator_error(tr), "max_batch") != NULL);
  CHECK(al_translator_error_index(tr) == -1);
  CHECK(al_translate(tr, "go .", NULL) == AL_OK);
  CHECK_STR(al_translator_error(tr), "");
  al_translator_free(tr);
}

/* al_model_adopt_bytes: the model takes over a malloc()ed copy of the file (freed with it, or
 * at once on failure: leak checkers see both), and translates as the loaded one does. */
/* The kernel table: the one this build was configured for (ATTNLITE_EXPECT_KERNELS, from
 * CMake's view of the target: "neon" on Arm, "avx2-fma" on x86-64, "avx512" there on a CPU
 * with AVX-512, "scalar" without SIMD),
 * switchable to the scalar reference and back; translations identical on both. */
static void test_kernels(al_model* m) {
  const char* expect = ATTNLITE_EXPECT_KERNELS;
  const char* now = al_kernels();
  printf("kernels: %s (this build: %s)\n", now, expect);
  /* x86-64 without AVX2 and FMA falls back to the reference */
  if (strcmp(expect, "avx2-fma") == 0 && strcmp(now, "scalar") == 0) expect = "scalar";
#if defined(__x86_64__) && defined(__GNUC__)
  /* and picks the AVX-512 table on a CPU with AVX-512 F, DQ and VL, unless ATTNLITE_AVX512=0 */
  {
    const char* off = getenv("ATTNLITE_AVX512");
    if (strcmp(expect, "avx2-fma") == 0 && !(off && strcmp(off, "0") == 0) &&
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      expect = "avx512";
  }
#endif
  CHECK_STR(now, expect);
  al_error* err = NULL;
  CHECK(al_use_kernels("fast", &err) == AL_ERR_INPUT);
  CHECK(strstr(al_error_message(err), "\"simd\" or \"scalar\"") != NULL);
  al_error_free(err);
  err = NULL;
  CHECK(al_use_kernels(NULL, &err) == AL_ERR_INPUT);
  al_error_free(err);
  al_translator* tr = al_translator_new(m, NULL, NULL);
  CHECK(tr != NULL);
  if (!tr) return;
  CHECK(al_use_kernels("scalar", NULL) == AL_OK);
  CHECK_STR(al_kernels(), "scalar");
  CHECK(al_translate(tr, "i'm home .", NULL) == AL_OK);
  CHECK_STR(al_result_text(al_translator_result(tr, 0)), "je suis chez moi .");
  if (strcmp(expect, "scalar") == 0) {
    err = NULL;
    CHECK(al_use_kernels("simd", &err) == AL_ERR_INPUT);
    CHECK(strstr(al_error_message(err), "not available") != NULL);
    al_error_free(err);
  } else {
    CHECK(al_use_kernels("simd", NULL) == AL_OK);
    CHECK_STR(al_kernels(), expect);
    CHECK(al_translate(tr, "i'm home .", NULL) == AL_OK);
    CHECK_STR(al_result_text(al_translator_result(tr, 0)), "je suis chez moi .");
  }
  al_translator_free(tr);
}

static void test_adopt(void) {
  FILE* f = fopen(model_path(), "rb");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* bytes = (uint8_t*)malloc((size_t)n);
  CHECK(bytes != NULL && fread(bytes, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  al_error* err = NULL;
  al_model* m = al_model_adopt_bytes(bytes, (size_t)n, &err);
  CHECK(m != NULL && err == NULL);
  al_translator* tr = m ? al_translator_new(m, NULL, &err) : NULL;
  al_model_free(m); /* the translator keeps the model, and so the bytes, alive */
  CHECK(tr != NULL);
  if (tr) {
    CHECK(al_translate(tr, "i'm home .", NULL) == AL_OK);
    CHECK_STR(al_result_text(al_translator_result(tr, 0)), "je suis chez moi .");
    al_translator_free(tr);
  }
  uint8_t* junk = (uint8_t*)malloc(12);
  CHECK(junk != NULL);
  if (junk) memset(junk, 7, 12);
  err = NULL;
  CHECK(al_model_adopt_bytes(junk, 12, &err) == NULL);
  check_error(err, NULL);
  err = NULL;
  CHECK(al_model_adopt_bytes(NULL, 0, &err) == NULL);
  check_error(err, "empty");
}

static void test_errors(const al_model* m, al_translator* tr) {
  al_error* err = NULL;
  CHECK(al_model_load("/no/such/model.safetensors", &err) == NULL);
  check_error(err, "model.safetensors");
  err = NULL;
  CHECK(al_model_load(NULL, &err) == NULL);
  check_error(err, "NULL");
  err = NULL;
  CHECK(al_model_from_bytes(NULL, 10, &err) == NULL);
  check_error(err, "empty");
  const uint8_t junk[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  err = NULL;
  CHECK(al_model_from_bytes(junk, sizeof junk, &err) == NULL);
  check_error(err, NULL);
  CHECK(al_model_load("/no/such/model.safetensors", NULL) == NULL); /* err may be NULL */

  err = NULL;
  CHECK(al_translator_new(NULL, NULL, &err) == NULL);
  check_error(err, "NULL");
  al_limits lim;
  al_limits_default(&lim);
  lim.max_batch = 0;
  err = NULL;
  CHECK(al_translator_new(m, &lim, &err) == NULL);
  check_error(err, "max_batch");
  al_limits_default(&lim);
  lim.device = 7;
  err = NULL;
  CHECK(al_translator_new(m, &lim, &err) == NULL);
  check_error(err, "device");
  al_limits_default(&lim);
  lim.precision = 5;
  err = NULL;
  CHECK(al_translator_new(m, &lim, &err) == NULL);
  check_error(err, "limits: unknown precision 5");
  al_limits_default(&lim);
  lim.precision = AL_PRECISION_BF16; /* bfloat16 weights are a CUDA option */
  err = NULL;
  CHECK(al_translator_new(m, &lim, &err) == NULL);
  check_error(err, "bf16 weights are a CUDA option");

  CHECK(al_translate(NULL, "go .", NULL) == AL_ERR_ARGUMENT);
  CHECK(al_translate(tr, NULL, NULL) == AL_ERR_ARGUMENT);
  CHECK_STR(al_translator_error(tr), "al_translate: sentence is NULL");
  CHECK(al_translate(tr, "", NULL) == AL_ERR_INPUT);
  CHECK_STR(al_translator_error(tr), "empty sentence");
  CHECK(al_translate(tr, "   ", NULL) == AL_ERR_INPUT);
  CHECK_STR(al_translator_error(tr), "empty sentence");
  CHECK(al_translator_result(tr, 0) == NULL);
  char* longer = malloc(5001);
  memset(longer, 'a', 5000);
  longer[5000] = '\0';
  CHECK(al_translate(tr, longer, NULL) == AL_ERR_INPUT);
  CHECK(strstr(al_translator_error(tr), "sentence is too long") != NULL);
  free(longer);
  CHECK(al_translate(tr, "caf\xc3(", NULL) == AL_ERR_INPUT); /* invalid UTF-8 */
  CHECK(al_translator_error(tr)[0] != '\0');
  al_decode_options o;
  al_decode_options_default(&o);
  o.beam_size = 2; /* over this translator's max_beam 1 */
  CHECK(al_translate(tr, "go .", &o) == AL_ERR_INPUT);
  CHECK(strstr(al_translator_error(tr), "beam_size") != NULL);
  al_decode_options_default(&o);
  o.max_steps = 1000;
  CHECK(al_translate(tr, "go .", &o) == AL_ERR_INPUT);
  CHECK(strstr(al_translator_error(tr), "max_steps") != NULL);
  al_decode_options_default(&o);
  o.length_penalty = NAN;
  CHECK(al_translate(tr, "go .", &o) == AL_ERR_INPUT);
  /* The translator still works. */
  CHECK(al_translate(tr, "go .", NULL) == AL_OK);
  CHECK_STR(al_result_text(al_translator_result(tr, 0)), "va !");

  /* NULL handles everywhere. */
  CHECK(al_model_kind(NULL) == -1);
  CHECK(al_model_num_layers(NULL) == 0);
  CHECK(al_model_metadata(NULL, "attnlite.kind") == NULL);
  CHECK(al_translator_error(NULL)[0] != '\0');
  CHECK(al_translator_result(NULL, 0) == NULL);
  CHECK(al_translator_limits(NULL, &lim) == AL_ERR_ARGUMENT);
  CHECK_STR(al_result_text(NULL), "");
  CHECK(al_result_tokens(NULL) == NULL && al_result_num_tokens(NULL) == 0);
  CHECK_STR(al_error_message(NULL), "");
  al_error_free(NULL);
  al_model_free(NULL);
  al_translator_free(NULL);

  /* Tokenizer. */
  char buf[64];
  CHECK(al_tokenize("Go.", buf, sizeof buf, NULL) == 4);
  CHECK_STR(buf, "go .");
  CHECK(al_tokenize("He's  calm!", buf, 4, NULL) == 11);
  CHECK_STR(buf, "he'");
  err = NULL;
  CHECK(al_tokenize("caf\xc3(", buf, sizeof buf, &err) == -1);
  check_error(err, NULL);

  /* Sentences: byte spans, a counting call, a short array, NULLs. */
  size_t spans[6] = {99, 99, 99, 99, 99, 99};
  const char* text = " I'm home. Mr. Smith is here!  ok ";
  CHECK(al_split_sentences(text, NULL, 0, NULL) == 3);
  CHECK(al_split_sentences(text, spans, 3, NULL) == 3);
  CHECK(spans[0] == 1 && spans[1] == 10);   /* "I'm home." */
  CHECK(spans[2] == 11 && spans[3] == 29);  /* "Mr. Smith is here!" */
  CHECK(spans[4] == 31 && spans[5] == 33);  /* "ok" */
  spans[2] = 99;
  CHECK(al_split_sentences("Go. Run!", spans, 1, NULL) == 2);
  CHECK(spans[0] == 0 && spans[1] == 3 && spans[2] == 99);
  CHECK(al_split_sentences(" \t ", spans, 3, NULL) == 0);
  err = NULL;
  CHECK(al_split_sentences(NULL, spans, 3, &err) == -1);
  check_error(err, "al_split_sentences: text is NULL");
  err = NULL;
  CHECK(al_split_sentences("Go.", NULL, 1, &err) == -1);
  check_error(err, "al_split_sentences: spans is NULL");
}

/* A sub-word translator (tests/fixtures/bpe_tiny.safetensors: random weights, the pieces and
 * translations of tests/fixtures/bpe_tiny.json): al_model_is_subword, al_model_tokenize gives
 * its pieces of the cased, normalized text (al_tokenize stays the book's words), and the translation's
 * text is the detokenized French. */
static void test_subword(const al_model* words) {
  al_error* err = NULL;
  al_model* m = al_model_load(ATTNLITE_FIXTURES_DIR "/bpe_tiny.safetensors", &err);
  CHECK(m != NULL && err == NULL);
  if (!m) {
    al_error_free(err);
    return;
  }
  CHECK(al_model_is_subword(m) == 1);
  CHECK(al_model_is_subword(words) == 0);
  CHECK(al_model_is_subword(NULL) == 0);
  char buf[256];
  /* The sentence normalized first (docs/input.md): guillemets read as '"', a typographic
   * apostrophe as the straight one, a no-break space as a space. */
  static const char* const en[] = {"Where is the station?", "I'm home.", "Look at \xe6\xbc\xa2\xe5\xad\x97 now.",
                                   "She said:\xc2\xa0\xc2\xabno\xc2\xbb!", "I\xe2\x80\x99m home."};
  static const char* const pieces[] = {"Wh ere_ is_ the_ st at i on_ ?_", "I'm_ h om e_ ._",
                                       "L oo k_ at_ <unk> <unk> _ now_ ._",
                                       "She_ s ai d : _ \" no \" _ !_", "I'm_ h om e_ ._"};
  for (int i = 0; i < 5; ++i) {
    CHECK(al_model_tokenize(m, en[i], buf, sizeof buf, NULL) == (long)strlen(pieces[i]));
    CHECK_STR(buf, pieces[i]);
  }
  /* The word models' tokenizer: the book's words, as al_tokenize. */
  CHECK(al_model_tokenize(words, "He's  calm!", buf, sizeof buf, NULL) == 11);
  CHECK_STR(buf, "he's calm !");
  CHECK(al_tokenize("I'm home.", buf, sizeof buf, NULL) == 10);
  CHECK_STR(buf, "i'm home .");
  /* Like snprintf: cap bytes at most, the full length returned; no buffer at all. */
  CHECK(al_model_tokenize(m, "I'm home.", buf, 5, NULL) == 15);
  CHECK_STR(buf, "I'm_");
  CHECK(al_model_tokenize(m, "I'm home.", NULL, 0, NULL) == 15);
  CHECK(al_model_tokenize(m, "", buf, sizeof buf, NULL) == 0);
  CHECK_STR(buf, "");
  /* Errors: a message, -1. */
  err = NULL;
  CHECK(al_model_tokenize(m, "caf\xc3(", buf, sizeof buf, &err) == -1);
  check_error(err, "UTF-8");
  err = NULL;
  CHECK(al_model_tokenize(NULL, "Go.", buf, sizeof buf, &err) == -1);
  check_error(err, "model is NULL");
  err = NULL;
  CHECK(al_model_tokenize(m, NULL, buf, sizeof buf, &err) == -1);
  check_error(err, "sentence is NULL");
  CHECK(al_model_tokenize(m, NULL, buf, sizeof buf, NULL) == -1); /* err NULL is fine */

  /* The sentences it translates: a sentence of emoji alone (no piece) left out; none left, or
   * invalid UTF-8: the whole text. */
  size_t spans[6] = {99, 99, 99, 99, 99, 99};
  const char* text = "Go. Run! \xf0\x9f\x98\x80";
  CHECK(al_model_sentences(m, text, NULL, 0, NULL) == 2);
  CHECK(al_model_sentences(m, text, spans, 3, NULL) == 2);
  CHECK(spans[0] == 0 && spans[1] == 3 && spans[2] == 4 && spans[3] == 8 && spans[4] == 99);
  CHECK(al_model_sentences(m, text, spans, 1, NULL) == 2);
  CHECK(spans[0] == 0 && spans[1] == 3 && spans[2] == 4);
  CHECK(al_model_sentences(m, " \xf0\x9f\x98\x80 ", spans, 3, NULL) == 1);
  CHECK(spans[0] == 0 && spans[1] == 6);
  CHECK(al_model_sentences(m, "", spans, 3, NULL) == 1);
  CHECK(spans[0] == 0 && spans[1] == 0);
  CHECK(al_model_sentences(m, "Go. \xff.", spans, 3, NULL) == 1);
  CHECK(spans[0] == 0 && spans[1] == 6);
  err = NULL;
  CHECK(al_model_sentences(NULL, "Go.", spans, 3, &err) == -1);
  check_error(err, "al_model_sentences: model is NULL");
  err = NULL;
  CHECK(al_model_sentences(m, NULL, spans, 3, &err) == -1);
  check_error(err, "al_model_sentences: text is NULL");
  err = NULL;
  CHECK(al_model_sentences(m, "Go.", NULL, 1, &err) == -1);
  check_error(err, "al_model_sentences: spans is NULL");

  /* PyTorch's translation: the pieces' ids and the detokenized text. */
  al_translator* tr = al_translator_new(m, NULL, &err);
  CHECK(tr != NULL && err == NULL);
  if (tr) {
    CHECK(al_translate(tr, "My brother's going to kill me.", NULL) == AL_OK);
    const al_result* r = al_translator_result(tr, 0);
    CHECK_STR(al_result_text(r), "de de de de de de de de de de de de");
    CHECK(al_result_num_tokens(r) == 12);
    CHECK(al_result_num_tokens(r) == 12 && al_result_tokens(r)[0] == 141);
    CHECK_STR(al_model_tgt_token(m, al_result_tokens(r)[0]), "de_");
    CHECK(al_result_src_len(r) == 16); /* 15 pieces and <eos> */
    CHECK(al_result_num_unknown(r) == 0);
    CHECK(al_translate(tr, en[2], NULL) == AL_OK);
    CHECK(al_result_num_unknown(al_translator_result(tr, 0)) == 2);
    /* "I\u2019m home." is read as "I'm home.": the same translation. */
    CHECK(al_translate(tr, en[1], NULL) == AL_OK);
    char straight[256];
    snprintf(straight, sizeof straight, "%s", al_result_text(al_translator_result(tr, 0)));
    CHECK(al_translate(tr, en[4], NULL) == AL_OK);
    CHECK_STR(al_result_text(al_translator_result(tr, 0)), straight);
    al_translator_free(tr);
  }
  al_model_free(m);
}

int main(void) {
  al_error* err = NULL;
  al_model* m = al_model_load(model_path(), &err);
  if (!m) {
    fprintf(stderr, "cannot load %s: %s\n", model_path(), al_error_message(err));
    al_error_free(err);
    return 1;
  }
  test_model(m);
  test_kernels(m);
  al_translator* tr = al_translator_new(m, NULL, &err);
  CHECK(tr != NULL && err == NULL);
  if (tr) {
    test_greedy(tr, m);
    test_errors(m, tr);
  }
  test_beam(m);
  test_adopt();
  test_subword(m);
  test_cuda(m);
  /* The translator keeps the model alive after al_model_free. */
  al_model_free(m);
  if (tr) {
    CHECK(al_translate(tr, "he's calm .", NULL) == AL_OK);
    CHECK_STR(al_result_text(al_translator_result(tr, 0)), "il est calme .");
    al_translator_free(tr);
  }
  test_lm();
  test_lm_limits();
  test_vit();
  test_vit_batch();
  test_figures();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
