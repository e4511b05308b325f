/* The C API from C (C11) on the language model and the Vision Transformer: generation step
 * by step, attention, perplexity, a test digit PNG, an RGBA canvas, rollout, and their error
 * paths. Part of the attnlite_c_api_test program (main() in test_c_api.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlite/c_api.h"
#include "c_api_checks.h"

/* The language model: generate, step by step, attention, perplexity and errors. */
void test_lm(void) {
  al_error* err = NULL;
  al_model* m = al_model_load(ATTNLITE_MODELS_DIR "/lm-fra.safetensors", &err);
  CHECK(m != NULL);
  if (!m) {
    al_error_free(err);
    return;
  }
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

/* The Vision Transformer: a test digit PNG, an RGBA canvas, attention, rollout, errors. */
void test_vit(void) {
  al_error* err = NULL;
  al_model* m = al_model_load(ATTNLITE_MODELS_DIR "/vit-digits.safetensors", &err);
  CHECK(m != NULL);
  if (!m) {
    al_error_free(err);
    return;
  }
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
  al_classifier_free(c);
  al_classifier_free(NULL);
}
