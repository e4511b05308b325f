/* The C API's figures from C (C11): al_figure_translation_map gives, byte for byte, the file
 * `attnlite heatmap translate` writes for the same model, sentence and options (the CLI of the
 * same build, ATTNLITE_CLI, run through system(); files in ATTNLITE_TEST_TMP), as PNG and SVG,
 * for the Transformer and the Bahdanau model; its getters; bad options refused with a message.
 * Part of the attnlite_c_api_test program (main() in test_c_api.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlite/c_api.h"
#include "c_api_checks.h"

/* The whole file at path into a malloc()ed buffer (*size bytes), NULL when unreadable. */
static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  unsigned char* buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    unsigned char* bigger = realloc(buf, cap *= 2);
    if (!bigger) free(buf);
    buf = bigger;
  }
  fclose(f);
  *size = n;
  return buf;
}

#ifdef ATTNLITE_CLI
/* Runs `attnlite heatmap translate --model MODEL SENTENCE ARGS --out FILE` and compares its
 * file with the figure's bytes. The sentence must not hold a double quote. */
static void check_equals_cli(const al_figure* fig, const char* model, const char* sentence,
                             const char* args, const char* file) {
  char path[1024], cmd[4096];
  snprintf(path, sizeof path, "%s/%s", ATTNLITE_TEST_TMP, file);
  remove(path);
  /* ATTNLITE_RUN_PREFIX: the emulator of a cross build (qemu-user), else "" */
  snprintf(cmd, sizeof cmd, "%s\"%s\" heatmap translate --model %s \"%s\" %s --out \"%s\" >/dev/null",
           ATTNLITE_RUN_PREFIX, ATTNLITE_CLI, model, sentence, args, path);
  const int rc = system(cmd);
  CHECK(rc == 0);
  size_t n = 0;
  unsigned char* want = read_file(path, &n);
  CHECK(want != NULL);
  if (!want || !fig) {
    free(want);
    return;
  }
  const int same = n == al_figure_size(fig) && memcmp(want, al_figure_data(fig), n) == 0;
  CHECK(same);
  if (!same) fprintf(stderr, "%s: %zu bytes from the CLI, %zu from the C API (%s)\n", file, n,
                     al_figure_size(fig), cmd);
  free(want);
  remove(path);
}
#endif

/* A figure of `sentence` with options o; NULL (and a failed check) when it fails. */
static al_figure* draw(const al_model* m, const char* sentence, const al_figure_options* o) {
  al_error* err = NULL;
  al_figure* fig = al_figure_translation_map(m, sentence, o, &err);
  CHECK(fig != NULL && err == NULL);
  if (!fig) {
    fprintf(stderr, "al_figure_translation_map: %s\n", al_error_message(err));
    al_error_free(err);
  }
  return fig;
}

/* Refused with a message holding `needle`. */
static void check_refused(const al_model* m, const char* sentence, const al_figure_options* o,
                          const char* needle) {
  al_error* err = NULL;
  CHECK(al_figure_translation_map(m, sentence, o, &err) == NULL);
  check_error(err, needle);
}

void test_figures(void) {
  al_error* err = NULL;
  al_model* t = al_model_load(ATTNLITE_MODELS_DIR "/transformer-d2l.safetensors", &err);
  al_model* b = al_model_load(ATTNLITE_MODELS_DIR "/bahdanau-d2l.safetensors", &err);
  CHECK(t != NULL && b != NULL);
  if (!t || !b) {
    al_error_free(err);
    al_model_free(t);
    al_model_free(b);
    return;
  }
  al_figure_options o;
  al_figure_options_default(&o);
  CHECK_STR(o.kind, "cross");
  CHECK_STR(o.cmap, "Reds");
  CHECK_STR(o.format, "png");
  CHECK(o.layer == 0 && o.head == 0 && o.dpi == 100 && o.beam_size == 1 && o.length_penalty == 0.f);
  CHECK(o.model_name == NULL && o.annotate == 0 && o.positions == 0 && o.padding == 0 && o.d2l_compat == 0);

  /* The default figure: cross-attention, every layer and head, PNG. */
  o.model_name = "transformer-d2l";
  al_figure* fig = draw(t, "i'm home .", &o);
  if (fig) {
    static const unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    CHECK(al_figure_size(fig) > 8 && memcmp(al_figure_data(fig), png_magic, 8) == 0);
    CHECK_STR(al_figure_format(fig), "png");
    CHECK_STR(al_figure_text(fig), "je suis chez moi .");
    CHECK(strstr(al_figure_caption(fig), "i'm home .") != NULL);
    CHECK(al_figure_rows(fig) == 2 && al_figure_cols(fig) == 4);
    CHECK(al_figure_width(fig) > 100 && al_figure_height(fig) > 100);
#ifdef ATTNLITE_CLI
    check_equals_cli(fig, "transformer-d2l", "i'm home .", "", "c_api_fig_cross.png");
#endif
    al_figure_free(fig);
  }
  /* Options: one encoder panel, Blues, annotated, at 80 dpi, as SVG. */
  o.kind = "enc";
  o.layer = 2;
  o.head = 3;
  o.cmap = "Blues";
  o.annotate = 1;
  o.dpi = 80;
  o.format = "svg";
  fig = draw(t, "he's calm .", &o);
  if (fig) {
    CHECK(al_figure_size(fig) > 5 && memcmp(al_figure_data(fig), "<?xml", 5) == 0);
    CHECK_STR(al_figure_format(fig), "svg");
    CHECK(al_figure_rows(fig) == 1 && al_figure_cols(fig) == 1);
#ifdef ATTNLITE_CLI
    check_equals_cli(fig, "transformer-d2l", "he's calm .",
                     "--kind enc --layer 2 --head 3 --cmap Blues --annotate --dpi 80 --format svg",
                     "c_api_fig_enc.svg");
#endif
    al_figure_free(fig);
  }
  /* Decoder self-attention of beam search's best, positions on the axes, the padding kept. */
  al_figure_options_default(&o);
  o.model_name = "transformer-d2l";
  o.kind = "dec-self";
  o.head = 2;
  o.beam_size = 4;
  o.length_penalty = 0.75f;
  o.positions = 1;
  o.padding = 1;
  o.cmap = "viridis";
  fig = draw(t, "i lost .", &o);
#ifdef ATTNLITE_CLI
  check_equals_cli(fig, "transformer-d2l", "i lost .",
                   "--kind dec-self --head 2 --beam 4 --alpha 0.75 --positions --padding --cmap viridis",
                   "c_api_fig_dec.png");
#endif
  al_figure_free(fig);
  /* The Bahdanau model, PNG and SVG, with the book's padding. */
  al_figure_options_default(&o);
  o.model_name = "bahdanau-d2l";
  o.padding = 1;
  fig = draw(b, "i'm home .", &o);
  if (fig) CHECK(al_figure_rows(fig) == 1 && al_figure_cols(fig) == 1);
#ifdef ATTNLITE_CLI
  check_equals_cli(fig, "bahdanau-d2l", "i'm home .", "--padding", "c_api_fig_bahdanau.png");
#endif
  al_figure_free(fig);
  o.format = "svg";
  fig = draw(b, "i'm home .", &o);
#ifdef ATTNLITE_CLI
  check_equals_cli(fig, "bahdanau-d2l", "i'm home .", "--padding --format svg", "c_api_fig_bahdanau.svg");
#endif
  al_figure_free(fig);
  /* NULL options: the defaults; no model_name: the model's kind in the title. */
  fig = draw(t, "go .", NULL);
  if (fig) CHECK_STR(al_figure_format(fig), "png");
  al_figure_free(fig);

  /* Refused, with a message. */
  al_figure_options_default(&o);
  o.kind = "sideways";
  check_refused(t, "go .", &o, "attention kind");
  al_figure_options_default(&o);
  o.cmap = "rainbow";
  check_refused(t, "go .", &o, "colormap");
  al_figure_options_default(&o);
  o.format = "jpeg";
  check_refused(t, "go .", &o, "png or svg");
  al_figure_options_default(&o);
  o.dpi = 5;
  check_refused(t, "go .", &o, "dpi");
  al_figure_options_default(&o);
  o.head = 9;
  check_refused(t, "go .", &o, "head 9 is out of range");
  al_figure_options_default(&o);
  o.layer = -1;
  check_refused(t, "go .", &o, "out of range");
  al_figure_options_default(&o);
  o.beam_size = 0;
  check_refused(t, "go .", &o, "beam_size");
  al_figure_options_default(&o);
  o.length_penalty = -1.f;
  check_refused(t, "go .", &o, "length_penalty");
  al_figure_options_default(&o);
  o.kind = "enc";
  check_refused(b, "go .", &o, "Bahdanau");
  check_refused(t, "", NULL, NULL);
  check_refused(t, NULL, NULL, "sentence is NULL");
  check_refused(NULL, "go .", NULL, "model is NULL");
  al_model* lm = al_model_load(ATTNLITE_MODELS_DIR "/lm-fra.safetensors", &err);
  CHECK(lm != NULL);
  if (lm) check_refused(lm, "go .", NULL, NULL);
  al_model_free(lm);
  /* err NULL is fine; getters of NULL */
  CHECK(al_figure_translation_map(t, NULL, NULL, NULL) == NULL);
  CHECK(al_figure_data(NULL) == NULL && al_figure_size(NULL) == 0);
  CHECK_STR(al_figure_format(NULL), "");
  CHECK_STR(al_figure_caption(NULL), "");
  CHECK(al_figure_width(NULL) == 0 && al_figure_rows(NULL) == 0);
  al_figure_free(NULL);
  al_model_free(t);
  al_model_free(b);
}
