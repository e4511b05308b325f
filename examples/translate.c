/* attnlite — translate lines through the C API: the whole program a translate-only device
 * needs (built with the small core, cmake -DATTNLITE_MINIMAL=ON; docs/edge.md).
 *
 *   translate MODEL.safetensors [BEAM [ALPHA]] < english.txt > french.txt
 *   translate --kernels      (prints the CPU kernel table in use: neon, avx512, scalar...)
 *
 * One translation per input line, as `attnlite translate --model MODEL [--beam BEAM --alpha
 * ALPHA]` prints it. Buffers are sized once, when the translator is made; the loop
 * allocates nothing. A line the translator refuses (over 4096 bytes, say) prints an empty
 * line and a message on stderr, and the exit status is 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlite/c_api.h"

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--kernels") == 0) {
    puts(al_kernels());
    return 0;
  }
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: %s MODEL.safetensors [BEAM [ALPHA]] < lines\n       %s --kernels\n",
            argv[0], argv[0]);
    return 2;
  }
  al_decode_options opt;
  al_decode_options_default(&opt);
  opt.attention = 0;
  if (argc > 2) opt.beam_size = atoi(argv[2]);
  if (argc > 3) opt.length_penalty = (float)atof(argv[3]);
  if (opt.beam_size < 1 || opt.beam_size > 64) {
    fprintf(stderr, "BEAM must be 1..64\n");
    return 2;
  }

  al_error* err = NULL;
  al_model* model = al_model_load(argv[1], &err);
  if (!model) {
    fprintf(stderr, "%s\n", al_error_message(err));
    al_error_free(err);
    return 1;
  }
  al_limits lim;
  al_limits_default(&lim);
  lim.max_beam = opt.beam_size;
  al_translator* tr = al_translator_new(model, &lim, &err);
  al_model_free(model); /* the translator keeps it */
  if (!tr) {
    fprintf(stderr, "%s\n", al_error_message(err));
    al_error_free(err);
    return 1;
  }

  static char line[8192];
  int status = 0;
  long n = 0;
  while (fgets(line, sizeof line, stdin)) {
    ++n;
    size_t len = strlen(line);
    if (len == sizeof line - 1 && line[len - 1] != '\n') {
      /* the rest of an over-long line is skipped, and the line refused */
      int c;
      while ((c = getchar()) != EOF && c != '\n') {}
      fprintf(stderr, "line %ld: longer than %zu bytes\n", n, sizeof line - 2);
      puts("");
      status = 1;
      continue;
    }
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (al_translate(tr, line, &opt) == AL_OK) {
      puts(al_result_text(al_translator_result(tr, 0)));
    } else {
      fprintf(stderr, "line %ld: %s\n", n, al_translator_error(tr));
      puts("");
      status = 1;
    }
  }
  al_translator_free(tr);
  return status;
}
