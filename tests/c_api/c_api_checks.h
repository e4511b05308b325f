/* Shared by the C API tests from C (test_c_api.c, test_c_api_models.c, one program): the
 * CHECK and CHECK_STR counters and the constructor-error check; main() in test_c_api.c runs
 * the models' tests too. */
#ifndef ATTNLITE_TEST_C_API_CHECKS_H
#define ATTNLITE_TEST_C_API_CHECKS_H

#include <stdio.h>
#include <string.h>

#include "attnlite/c_api.h"

extern int passed, failed;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (cond) {                                                       \
      ++passed;                                                       \
    } else {                                                          \
      ++failed;                                                       \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                                 \
  } while (0)

#define CHECK_STR(a, b)                                                          \
  do {                                                                           \
    const char* a_ = (a);                                                        \
    const char* b_ = (b);                                                        \
    if (a_ && b_ && strcmp(a_, b_) == 0) {                                       \
      ++passed;                                                                  \
    } else {                                                                     \
      ++failed;                                                                  \
      fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, a_ ? a_ : "(null)", \
              b_ ? b_ : "(null)");                                               \
    }                                                                            \
  } while (0)

/* A constructor error: NULL handle, a message, freed. */
void check_error(al_error* err, const char* needle);
/* A CUDA session refused: the message names CUDA (a CPU build, no device); a failure where
 * ATTNLITE_TEST_CUDA=1 says the library has CUDA and the machine a device. */
void check_cuda_refused(al_error* err);

/* test_c_api_models.c */
void test_lm(void);
void test_lm_limits(void);
void test_vit(void);
void test_vit_batch(void);
/* test_c_api_figures.c */
void test_figures(void);

#endif
