/* The C side of python/bench_overhead.py: translates the sentences of a file (one a line)
 * through the C API as one batch (al_translate_batch, greedy, no attention recorded), one round
 * per line read from stdin, and prints each round's seconds (the batch call and reading every
 * result's text, token ids and probabilities) as "round SECONDS"; at the end of its input, the
 * translations, "text TRANSLATION" one a line. Built by bench_overhead.py:
 *
 *   cc -O2 -std=c11 -Iinclude python/bench_overhead.c -L<dir of libattnlite_c.so> -lattnlite_c
 *
 *   bench_overhead MODEL.safetensors SENTENCES.txt < rounds
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlite/c_api.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL SENTENCES < rounds\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[2], "r");
  if (!f) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  static char lines[1024][512];
  const char* sentences[1024];
  int n = 0;
  while (n < 1024 && fgets(lines[n], sizeof lines[n], f)) {
    lines[n][strcspn(lines[n], "\r\n")] = '\0';
    sentences[n] = lines[n];
    ++n;
  }
  fclose(f);

  al_error* err = NULL;
  al_model* m = al_model_load(argv[1], &err);
  if (!m) {
    fprintf(stderr, "%s\n", al_error_message(err));
    return 1;
  }
  al_limits lim;
  al_limits_default(&lim);
  lim.max_batch = n;
  al_translator* tr = al_translator_new(m, &lim, &err);
  if (!tr) {
    fprintf(stderr, "%s\n", al_error_message(err));
    return 1;
  }
  al_decode_options o;
  al_decode_options_default(&o);
  o.attention = 0; /* as Translator.translate's default (al_decode_options_default records it) */
  long checksum = 0;
  char cmd[64];
  while (fgets(cmd, sizeof cmd, stdin)) {
    const double t0 = now();
    if (al_translate_batch(tr, sentences, n, &o) != AL_OK) {
      fprintf(stderr, "%s\n", al_translator_error(tr));
      return 1;
    }
    for (int i = 0; i < n; ++i) {  /* what the Python side copies out, read here */
      const al_result* res = al_translator_result(tr, i);
      const int k = al_result_num_tokens(res);
      checksum += (long)strlen(al_result_text(res)) + k;
      if (k > 0) checksum += al_result_tokens(res)[k - 1] + (long)(al_result_probs(res)[k - 1] > 0.5f);
    }
    printf("round %.9f\n", now() - t0);
    fflush(stdout);
  }
  for (int i = 0; i < n; ++i) printf("text %s\n", al_result_text(al_translator_result(tr, i)));
  fprintf(stderr, "checksum %ld\n", checksum);
  al_translator_free(tr);
  al_model_free(m);
  return 0;
}
