/* The C API from C (C11) on the language model and the Vision Transformer: generation step
 * by step, attention, perplexity, a test digit PNG, an RGBA canvas, rollout, and their error
 * paths. Part of the attnlite_c_api_test program (main() in test_c_api.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlite/c_api.h"
#include "c_api_checks.h"

/* A shipped model (models/NAME.safetensors), or NULL after a failed CHECK. */
static al_model* load_shipped(const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.safetensors", ATTNLITE_MODELS_DIR, name);
  al_error* err = NULL;
  al_model* m = al_model_load(path, &err);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "cannot load %s: %s\n", path, al_error_message(err));
    al_error_free(err);
  }
  return m;
}

/* The language model: generate, step by step, attention, perplexity and errors. */
void test_lm(void) {
  al_error* err = NULL;
  al_model* m = load_shipped("lm-fra");
  if (!m) return;
  CHECK(al_model_kind(m) == AL_LM);
  CHECK_STR(al_model_kind_name(m), "lm");
  /* a translator refuses it */
  CHECK(al_translator_new(m, NULL, &err) == NULL);
  check_error(err, "language model");
  al_generator* g = al_generator_new(m, AL_DEVICE_CPU, &err);
  CHECK(g != NULL && err == NULL);
  al_model_free(m); /* the generator keeps it alive */
  if (!g) return;
  CHECK(al_generator_context(g) == 32);
  CHECK(al_generation_num_tokens(g) == 0);
  CHECK_STR(al_generation_text(g), "");
  al_generate_options o;
  al_generate_options_default(&o);
  CHECK(o.sample == 0 && o.top_k == 0 && o.top_p == 1.0f && o.temperature == 1.0f && o.attention == 1);
  CHECK(al_generate(g, "je", &o) == AL_OK);
  CHECK(al_generation_done(g) == 1);
  CHECK(al_generation_num_prompt(g) == 1);
  CHECK(al_generation_tokens(g)[0] == 2); /* <bos> */
  CHECK(strncmp(al_generation_text(g), "je ", 3) == 0);
  char whole[512];
  snprintf(whole, sizeof whole, "%s", al_generation_text(g));
  /* step by step gives the same text, and the attention grows by one row per step */
  CHECK(al_generator_start(g, "je", &o) == AL_OK);
  int steps = 0, last_positions = al_generation_positions(g);
  CHECK(last_positions == 2);
  while (!al_generation_done(g) && steps < 64) {
    CHECK(al_generator_step(g) == AL_OK);
    CHECK(al_generation_positions(g) == last_positions + 1);
    last_positions = al_generation_positions(g);
    ++steps;
  }
  CHECK_STR(al_generation_text(g), whole);
  const float* a = al_generation_attention(g);
  const int ld = al_generation_ld(g);
  CHECK(a != NULL && ld == 32 && al_generation_layers(g) == 3 && al_generation_heads(g) == 4);
  if (a) {
    CHECK(a[0] > 0.999f && a[0] < 1.001f); /* <bos> attends only to itself */
    CHECK(a[1] == 0.0f);                   /* above the diagonal: masked */
  }
  /* errors keep the session usable */
  o.sample = 1;
  o.temperature = 0.0f;
  CHECK(al_generate(g, "je", &o) == AL_ERR_INPUT);
  CHECK(strstr(al_generator_error(g), "temperature") != NULL);
  CHECK(al_generation_num_tokens(g) == 0);
  CHECK(al_generator_step(g) == AL_ERR_ARGUMENT);
  CHECK(al_generate(g, "", NULL) == AL_ERR_INPUT);
  CHECK(al_generate(g, NULL, NULL) == AL_ERR_ARGUMENT);
  CHECK(al_generate(g, "il est", NULL) == AL_OK);
  CHECK_STR(al_generator_error(g), "");
  /* perplexity of two sentences, one skipped */
  double nll = 0;
  long tokens = 0;
  int scored = -1;
  CHECK(al_generator_score(g, "je suis content .", &nll, &tokens, &scored) == AL_OK);
  CHECK(scored == 1 && tokens == 5 && nll > 0);
  CHECK(al_generator_score(g, "", &nll, &tokens, &scored) == AL_OK);
  CHECK(scored == 0 && tokens == 5);
  al_generator_free(g);
  al_generator_free(NULL);
  CHECK(al_generator_context(NULL) == -1);
  CHECK(al_generate(NULL, "je", NULL) == AL_ERR_ARGUMENT);
}

/* Generators made from limits: the defaults, a short prompt limit, bad limits, and the GPU
 * with bfloat16 weights where the library has CUDA and a device (the shipped model is int8,
 * whose matrices stay int8: the CPU's text), else the error that says so. */
void test_lm_limits(void) {
  al_error* err = NULL;
  al_model* m = load_shipped("lm-fra");
  if (!m) return;
  al_generator_limits lim;
  memset(&lim, 0x5a, sizeof lim);
  al_generator_limits_default(&lim);
  CHECK(lim.max_input_bytes == 4096 && lim.device == AL_DEVICE_CPU && lim.precision == AL_PRECISION_FP32);
  al_generator_limits_default(NULL);
  al_generator* g = al_generator_new_with(m, NULL, &err);
  CHECK(g != NULL && err == NULL);
  char want[512] = "";
  if (g) {
    CHECK(al_generate(g, "nous allons", NULL) == AL_OK);
    snprintf(want, sizeof want, "%s", al_generation_text(g));
    CHECK(strncmp(want, "nous allons ", 12) == 0);
  }
  al_generator_free(g);
  lim.max_input_bytes = 8;
  g = al_generator_new_with(m, &lim, &err);
  CHECK(g != NULL && err == NULL);
  if (g) {
    CHECK(al_generate(g, "nous", NULL) == AL_OK);
    CHECK(al_generate(g, "nous allons", NULL) == AL_ERR_INPUT); /* 11 bytes */
    CHECK(strstr(al_generator_error(g), "too long") != NULL);
  }
  al_generator_free(g);
  al_generator_limits_default(&lim);
  lim.max_input_bytes = 0;
  CHECK(al_generator_new_with(m, &lim, &err) == NULL);
  check_error(err, "max_input_bytes");
  al_generator_limits_default(&lim);
  lim.device = 7;
  CHECK(al_generator_new_with(m, &lim, &err) == NULL);
  check_error(err, "limits: unknown device 7");
  CHECK(al_generator_new(m, -1, &err) == NULL);
  check_error(err, "limits: unknown device -1");
  al_generator_limits_default(&lim);
  lim.precision = 5;
  CHECK(al_generator_new_with(m, &lim, &err) == NULL);
  check_error(err, "limits: unknown precision 5");
  lim.precision = AL_PRECISION_BF16;
  CHECK(al_generator_new_with(m, &lim, &err) == NULL);
  check_error(err, "bf16 weights are a CUDA option");
  CHECK(al_generator_new_with(NULL, &lim, &err) == NULL);
  check_error(err, "al_generator_new_with: model is NULL");
  CHECK(al_generator_new(NULL, AL_DEVICE_CPU, &err) == NULL);
  check_error(err, "al_generator_new: model is NULL");
  lim.device = AL_DEVICE_CUDA;
  g = al_generator_new_with(m, &lim, &err);
  if (g) {
    CHECK(al_generate(g, "nous allons", NULL) == AL_OK);
    CHECK_STR(al_generation_text(g), want);
    al_generator_free(g);
  } else {
    check_cuda_refused(err);
  }
  al_model_free(m);
}

/* The Vision Transformer: a test digit PNG, an RGBA canvas, attention, rollout, errors. */
void test_vit(void) {
  al_error* err = NULL;
  al_model* m = load_shipped("vit-digits");
  if (!m) return;
  CHECK(al_model_kind(m) == AL_VIT);
  CHECK_STR(al_model_kind_name(m), "vit");
  CHECK(al_generator_new(m, AL_DEVICE_CPU, &err) == NULL);
  check_error(err, "vision transformer");
  al_classifier* c = al_classifier_new(m, AL_DEVICE_CPU, &err);
  CHECK(c != NULL && err == NULL);
  al_model_free(m);
  if (!c) return;
  CHECK(al_classifier_image_size(c) == 8 && al_classifier_channels(c) == 1);
  CHECK(al_classifier_num_classes(c) == 10 && al_classifier_tokens(c) == 17);
  CHECK_STR(al_classifier_label(c, 7), "7");
  CHECK_STR(al_classifier_label(c, 10), "");
  CHECK(al_classification_label(c) == -1);
  /* a test digit "2" as a PNG file */
  FILE* f = fopen(ATTNLITE_FIXTURES_DIR "/digits/idx0022_label2_32x32.png", "rb");
  CHECK(f != NULL);
  if (f) {
    unsigned char bytes[4096];
    const size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    float px[64];
    CHECK(al_digit_from_file_bytes(bytes, n, px, &err) == AL_OK);
    CHECK(al_classify(c, px, 1) == AL_OK);
    CHECK(al_classification_label(c) == 2);
    CHECK(al_classification_prob(c) > 0.9f);
    const float* a = al_classification_attention(c, 2);
    CHECK(a != NULL && al_classification_attention(c, 3) == NULL);
    float roll[17 * 17];
    CHECK(al_classification_rollout(c, roll) == AL_OK);
    float row = 0;
    for (int k = 0; k < 17; ++k) row += roll[k];
    CHECK(row > 0.999f && row < 1.001f);
    /* a truncated file */
    CHECK(al_digit_from_file_bytes(bytes, 40, px, &err) == AL_ERR_INPUT);
    check_error(err, "corrupt PNG");
  }
  /* an RGBA canvas: white with a black vertical bar reads as a 1 */
  static unsigned char canvas[64 * 64 * 4];
  for (int i = 0; i < 64 * 64; ++i) {
    const int x = i % 64, y = i / 64;
    const unsigned char v = (x >= 28 && x < 36 && y >= 6 && y < 58) ? 0 : 255;
    canvas[i * 4] = canvas[i * 4 + 1] = canvas[i * 4 + 2] = v;
    canvas[i * 4 + 3] = 255;
  }
  float px[64];
  CHECK(al_digit_from_rgba(canvas, 64, 64, px, &err) == AL_OK);
  CHECK(al_classify(c, px, 0) == AL_OK);
  CHECK(al_classification_label(c) == 1);
  CHECK(al_classification_attention(c, 0) == NULL);
  CHECK(al_classification_rollout(c, px) == AL_ERR_INPUT);
  CHECK(al_digit_from_rgba(NULL, 0, 0, px, &err) == AL_ERR_INPUT);
  check_error(err, NULL);
  CHECK(al_classify(c, NULL, 0) == AL_ERR_ARGUMENT);
  CHECK_STR(al_classifier_error(c), "al_classify: image is NULL");
  CHECK(al_classification_count(c) == 0);
  /* one image at a time: a batch of 2 is beyond max_batch 1 */
  CHECK(al_classify_batch(c, px, 2, 0) == AL_ERR_INPUT);
  CHECK_STR(al_classifier_error(c), "batch of 2 images is outside [1, max_batch = 1]");
  al_classifier_free(c);
  al_classifier_free(NULL);
}

/* The first 8 images of tests/fixtures/vit_digits_test.json (the digits' 8x8 values 0..16)
 * and PyTorch's labels for them. */
static const float kDigits[8][64] = {
    {0, 0, 0, 12, 13, 0, 0, 0, 0, 0, 5, 16, 8, 0, 0, 0, 0, 0, 13, 16, 3, 0, 0, 0, 0, 0, 14, 13, 0, 0, 0, 0,
     0, 0, 15, 12, 7, 2, 0, 0, 0, 0, 13, 16, 13, 16, 3, 0, 0, 0, 7, 16, 11, 15, 8, 0, 0, 0, 1, 9, 15, 11, 3, 0},
    {0, 0, 0, 8, 15, 1, 0, 0, 0, 0, 1, 14, 13, 1, 1, 0, 0, 0, 10, 15, 3, 15, 11, 0, 0, 7, 16, 7, 1, 16, 8, 0,
     0, 9, 16, 13, 14, 16, 5, 0, 0, 1, 10, 15, 16, 14, 0, 0, 0, 0, 0, 1, 16, 10, 0, 0, 0, 0, 0, 10, 15, 4, 0, 0},
    {0, 0, 10, 7, 13, 9, 0, 0, 0, 0, 9, 10, 12, 15, 2, 0, 0, 0, 4, 11, 10, 11, 0, 0, 0, 0, 1, 16, 10, 1, 0, 0,
     0, 0, 12, 13, 4, 0, 0, 0, 0, 0, 12, 1, 12, 0, 0, 0, 0, 1, 10, 2, 14, 0, 0, 0, 0, 0, 11, 14, 5, 0, 0, 0},
    {0, 0, 8, 16, 5, 0, 0, 0, 0, 1, 13, 11, 16, 0, 0, 0, 0, 0, 10, 0, 13, 3, 0, 0, 0, 0, 3, 1, 16, 1, 0, 0,
     0, 0, 0, 9, 12, 0, 0, 0, 0, 0, 3, 15, 5, 0, 0, 0, 0, 0, 14, 15, 8, 8, 3, 0, 0, 0, 7, 12, 12, 12, 13, 1},
    {0, 0, 1, 13, 14, 3, 0, 0, 0, 0, 8, 16, 13, 2, 0, 0, 0, 2, 16, 16, 3, 0, 0, 0, 0, 3, 16, 12, 1, 0, 0, 0,
     0, 5, 16, 14, 5, 0, 0, 0, 0, 3, 16, 16, 16, 16, 6, 0, 0, 1, 14, 16, 16, 16, 12, 0, 0, 0, 3, 12, 15, 14, 7, 0},
    {0, 2, 13, 16, 16, 16, 11, 0, 0, 5, 16, 10, 5, 4, 1, 0, 0, 6, 16, 7, 3, 0, 0, 0, 0, 9, 16, 16, 16, 6, 0, 0,
     0, 3, 8, 4, 11, 15, 0, 0, 0, 0, 0, 1, 12, 15, 0, 0, 0, 0, 4, 13, 16, 6, 0, 0, 0, 2, 16, 15, 8, 0, 0, 0},
    {0, 0, 6, 14, 10, 2, 0, 0, 0, 0, 15, 15, 13, 15, 3, 0, 0, 2, 16, 10, 0, 13, 9, 0, 0, 1, 16, 5, 0, 12, 5, 0,
     0, 0, 16, 3, 0, 13, 6, 0, 0, 1, 15, 5, 6, 13, 1, 0, 0, 0, 16, 11, 14, 10, 0, 0, 0, 0, 7, 16, 11, 1, 0, 0},
    {0, 0, 7, 7, 13, 16, 4, 0, 0, 0, 13, 13, 6, 12, 7, 0, 0, 0, 10, 4, 10, 11, 1, 0, 0, 0, 8, 16, 10, 0, 0, 0,
     0, 3, 14, 16, 0, 0, 0, 0, 0, 8, 8, 11, 5, 0, 0, 0, 0, 4, 10, 9, 8, 0, 0, 0, 0, 1, 11, 16, 6, 0, 0, 0},
};
static const int kDigitLabels[8] = {6, 4, 8, 2, 6, 5, 0, 8};

/* Batches: al_classifier_new_with, al_classify_batch and the _at getters: each image's label,
 * probabilities (to float rounding), attention and rollout as when classified alone; the
 * limits' errors; the GPU with bfloat16 weights where there is one (labels as on the CPU). */
void test_vit_batch(void) {
  al_error* err = NULL;
  al_model* m = load_shipped("vit-digits");
  if (!m) return;
  al_classifier_limits lim;
  memset(&lim, 0x5a, sizeof lim);
  al_classifier_limits_default(&lim);
  CHECK(lim.max_batch == 1 && lim.device == AL_DEVICE_CPU && lim.precision == AL_PRECISION_FP32);
  al_classifier_limits_default(NULL);
  al_classifier* one = al_classifier_new_with(m, NULL, &err);
  CHECK(one != NULL && err == NULL);
  lim.max_batch = 8;
  al_classifier* c = al_classifier_new_with(m, &lim, &err);
  CHECK(c != NULL && err == NULL);
  if (one && c) {
    enum { T = 17, NH = 4, L = 3 };
    CHECK(al_classify_batch(c, &kDigits[0][0], 8, 1) == AL_OK);
    CHECK(al_classification_count(c) == 8);
    CHECK(al_classification_layers(c) == L && al_classification_heads(c) == NH);
    static float roll_b[T * T], roll_1[T * T];
    for (int i = 0; i < 8; ++i) {
      CHECK(al_classification_label_at(c, i) == kDigitLabels[i]);
      CHECK(al_classify(one, kDigits[i], 1) == AL_OK);
      CHECK(al_classification_label_at(c, i) == al_classification_label(one));
      const float* pb = al_classification_probs_at(c, i);
      const float* p1 = al_classification_probs(one);
      float worst = 0;
      for (int k = 0; k < 10; ++k) worst = fmaxf(worst, fabsf(pb[k] - p1[k]));
      CHECK(worst <= 1e-6f);
      CHECK(al_classification_prob_at(c, i) == pb[kDigitLabels[i]]);
      for (int l = 0; l < L; ++l) {
        const float* ab = al_classification_attention_at(c, i, l);
        const float* a1 = al_classification_attention(one, l);
        CHECK(ab != NULL && a1 != NULL);
        worst = 0;
        for (int j = 0; ab && a1 && j < NH * T * T; ++j) worst = fmaxf(worst, fabsf(ab[j] - a1[j]));
        CHECK(worst <= 1e-6f);
      }
      CHECK(al_classification_attention_at(c, i, L) == NULL);
      CHECK(al_classification_rollout_at(c, i, roll_b) == AL_OK);
      CHECK(al_classification_rollout(one, roll_1) == AL_OK);
      worst = 0;
      for (int j = 0; j < T * T; ++j) worst = fmaxf(worst, fabsf(roll_b[j] - roll_1[j]));
      CHECK(worst <= 1e-6f);
    }
    /* image 0 through the getters without _at */
    CHECK(al_classification_label(c) == al_classification_label_at(c, 0));
    CHECK(al_classification_probs(c) == al_classification_probs_at(c, 0));
    CHECK(al_classification_attention(c, 1) == al_classification_attention_at(c, 0, 1));
    /* out of range */
    CHECK(al_classification_label_at(c, 8) == -1 && al_classification_label_at(c, -1) == -1);
    CHECK(al_classification_prob_at(c, 8) == 0.0f && al_classification_probs_at(c, 8) == NULL);
    CHECK(al_classification_attention_at(c, 8, 0) == NULL && al_classification_attention_at(c, 0, -1) == NULL);
    CHECK(al_classification_rollout_at(c, 8, roll_b) == AL_ERR_ARGUMENT);
    CHECK_STR(al_classifier_error(c), "al_classification_rollout_at: image 8 is outside [0, 8)");
    CHECK(al_classification_rollout_at(c, 0, NULL) == AL_ERR_ARGUMENT);
    CHECK(al_classification_label_at(NULL, 0) == -1 && al_classification_count(NULL) == 0);
    /* a smaller batch next, without attention */
    CHECK(al_classify_batch(c, &kDigits[5][0], 3, 0) == AL_OK);
    CHECK(al_classification_count(c) == 3);
    CHECK(al_classification_label_at(c, 2) == kDigitLabels[7] && al_classification_label_at(c, 3) == -1);
    CHECK(al_classification_attention_at(c, 0, 0) == NULL);
    CHECK(al_classification_rollout_at(c, 1, roll_b) == AL_ERR_INPUT);
    /* a failed call leaves no results */
    CHECK(al_classify_batch(c, &kDigits[0][0], 9, 0) == AL_ERR_INPUT);
    CHECK_STR(al_classifier_error(c), "batch of 9 images is outside [1, max_batch = 8]");
    CHECK(al_classifier_error_index(c) == -1);
    CHECK(al_classification_count(c) == 0 && al_classification_label(c) == -1);
    CHECK(al_classify_batch(c, &kDigits[0][0], 0, 0) == AL_ERR_INPUT);
    CHECK(al_classify_batch(c, NULL, 1, 0) == AL_ERR_ARGUMENT);
    CHECK_STR(al_classifier_error(c), "al_classify_batch: images is NULL");
    CHECK(al_classify_batch(NULL, &kDigits[0][0], 1, 0) == AL_ERR_ARGUMENT);
    static float bad[2][64];
    memcpy(bad, kDigits, sizeof bad);
    bad[1][10] = NAN;
    CHECK(al_classify_batch(c, &bad[0][0], 2, 0) == AL_ERR_INPUT);
    CHECK_STR(al_classifier_error(c), "image 1: pixel 10 is not a finite number");
    CHECK(al_classifier_error_index(c) == 1);
    CHECK(al_classify(c, &bad[1][0], 0) == AL_ERR_INPUT && al_classifier_error_index(c) == 0);
    CHECK_STR(al_classifier_error(c), "image 0: pixel 10 is not a finite number");
    CHECK(al_classification_rollout_at(c, 0, roll_b) == AL_ERR_ARGUMENT);
    CHECK_STR(al_classifier_error(c), "al_classification_rollout_at: nothing was classified");
    CHECK(al_classification_rollout(c, roll_b) == AL_ERR_ARGUMENT);
    CHECK_STR(al_classifier_error(c), "al_classification_rollout: nothing was classified");
    CHECK(al_classify_batch(c, &bad[0][0], 2, 0) == AL_ERR_INPUT && al_classifier_error_index(c) == 1);
    CHECK(al_classify(c, &bad[0][0], 0) == AL_OK && al_classifier_error_index(c) == -1);
    CHECK(al_classifier_error_index(NULL) == -1);
  }
  al_classifier_free(one);
  al_classifier_free(c);
  /* bad limits */
  al_classifier_limits_default(&lim);
  lim.max_batch = 0;
  CHECK(al_classifier_new_with(m, &lim, &err) == NULL);
  check_error(err, "max_batch must be in [1, 4096], got 0");
  lim.max_batch = 4097;
  CHECK(al_classifier_new_with(m, &lim, &err) == NULL);
  check_error(err, "max_batch");
  al_classifier_limits_default(&lim);
  lim.device = 2;
  CHECK(al_classifier_new_with(m, &lim, &err) == NULL);
  check_error(err, "limits: unknown device 2");
  CHECK(al_classifier_new(m, 9, &err) == NULL);
  check_error(err, "limits: unknown device 9");
  al_classifier_limits_default(&lim);
  lim.precision = -1;
  CHECK(al_classifier_new_with(m, &lim, &err) == NULL);
  check_error(err, "limits: unknown precision -1");
  lim.precision = AL_PRECISION_BF16;
  CHECK(al_classifier_new_with(m, &lim, &err) == NULL);
  check_error(err, "bf16 weights are a CUDA option");
  CHECK(al_classifier_new_with(NULL, NULL, &err) == NULL);
  check_error(err, "al_classifier_new_with: model is NULL");
  CHECK(al_classifier_new(NULL, AL_DEVICE_CPU, &err) == NULL);
  check_error(err, "al_classifier_new: model is NULL");
  /* the GPU: a batch of 8 with bfloat16 weights */
  lim.device = AL_DEVICE_CUDA;
  lim.max_batch = 8;
  c = al_classifier_new_with(m, &lim, &err);
  if (c) {
    CHECK(al_classify_batch(c, &kDigits[0][0], 8, 0) == AL_OK);
    for (int i = 0; i < 8; ++i) CHECK(al_classification_label_at(c, i) == kDigitLabels[i]);
    al_classifier_free(c);
  } else {
    check_cuda_refused(err);
  }
  al_model_free(m);
}
