/* The C API on several threads: one al_model per kind shared by 4 threads, each with its own
 * al_translator, al_generator and al_classifier, all started together; the main thread calls
 * al_model_free on every model while they run (sessions keep their model alive). Every
 * result must equal, bitwise, the same work done serially first on the main thread (one pool
 * thread, the same code on the same inputs). Checks happen on the main thread after join. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlite/c_api.h"

#define THREADS 4
#define ITERATIONS 3
#define TEXT 512

static int failed = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++failed;                                                                \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* What one round produced: texts and numbers, copied out of the handles. */
typedef struct {
  char translation[TEXT], beam[TEXT], greedy[TEXT], sampled[TEXT];
  float probs[64];
  int num_probs;
  int label;
  float class_probs[16];
  int ok;
} round_result;

static al_model *transformer, *lm, *vit;
static pthread_barrier_t ready, go;

static void copy_text(char* dst, const char* src) {
  strncpy(dst, src ? src : "(null)", TEXT - 1);
  dst[TEXT - 1] = '\0';
}

typedef struct {
  al_translator* tr;
  al_generator* gen;
  al_classifier* cls;
} sessions;

static int open_sessions(sessions* s) {
  al_limits lim;
  al_limits_default(&lim);
  lim.max_beam = 3;
  s->tr = al_translator_new(transformer, &lim, NULL);
  s->gen = al_generator_new(lm, AL_DEVICE_CPU, NULL);
  s->cls = al_classifier_new(vit, AL_DEVICE_CPU, NULL);
  return s->tr && s->gen && s->cls;
}

static void close_sessions(sessions* s) {
  al_translator_free(s->tr);
  al_generator_free(s->gen);
  al_classifier_free(s->cls);
}

static void one_round(sessions* s, round_result* r) {
  memset(r, 0, sizeof *r);
  r->ok = 1;
  const al_result* res;
  if (al_translate(s->tr, "he's calm .", NULL) != AL_OK) r->ok = 0;
  res = al_translator_result(s->tr, 0);
  copy_text(r->translation, al_result_text(res));
  {
    int n = al_result_num_tokens(res), i;
    const float* p = al_result_probs(res);
    for (i = 0; i < n && r->num_probs < 64; ++i) r->probs[r->num_probs++] = p[i];
  }
  {
    al_decode_options o;
    al_decode_options_default(&o);
    o.beam_size = 3;
    if (al_translate(s->tr, "i'm home .", &o) != AL_OK) r->ok = 0;
    copy_text(r->beam, al_result_text(al_translator_result(s->tr, 0)));
  }
  {
    al_generate_options o;
    al_generate_options_default(&o);
    o.max_tokens = 8;
    if (al_generate(s->gen, "il est", &o) != AL_OK) r->ok = 0;
    copy_text(r->greedy, al_generation_text(s->gen));
    o.sample = 1;
    o.temperature = 0.9f;
    o.top_k = 20;
    o.seed = 7;
    if (al_generate(s->gen, "nous allons", &o) != AL_OK) r->ok = 0;
    copy_text(r->sampled, al_generation_text(s->gen));
    {
      int n = al_generation_num_generated(s->gen), i;
      const float* p = al_generation_probs(s->gen);
      for (i = 0; i < n && r->num_probs < 64; ++i) r->probs[r->num_probs++] = p[i];
    }
  }
  {
    float image[64];
    int i, k = al_classifier_num_classes(s->cls);
    for (i = 0; i < 64; ++i) image[i] = (float)((i * 7) % 17);
    if (al_classify(s->cls, image, 1) != AL_OK) r->ok = 0;
    r->label = al_classification_label(s->cls);
    if (k > 16) k = 16;
    for (i = 0; i < k; ++i) r->class_probs[i] = al_classification_probs(s->cls)[i];
  }
}

static round_result results[THREADS][ITERATIONS];
static int opened[THREADS];

static void* worker(void* arg) {
  int t = (int)(size_t)arg, it;
  sessions s;
  opened[t] = open_sessions(&s);
  pthread_barrier_wait(&ready); /* sessions made: the main thread may free the models */
  pthread_barrier_wait(&go);
  if (opened[t])
    for (it = 0; it < ITERATIONS; ++it) one_round(&s, &results[t][it]);
  close_sessions(&s); /* the last one frees its model */
  return NULL;
}

static int same(const round_result* a, const round_result* b) {
  return a->ok && b->ok && strcmp(a->translation, b->translation) == 0 &&
         strcmp(a->beam, b->beam) == 0 && strcmp(a->greedy, b->greedy) == 0 &&
         strcmp(a->sampled, b->sampled) == 0 && a->num_probs == b->num_probs &&
         memcmp(a->probs, b->probs, sizeof a->probs) == 0 && a->label == b->label &&
         memcmp(a->class_probs, b->class_probs, sizeof a->class_probs) == 0;
}

int main(void) {
  pthread_t threads[THREADS];
  round_result ref;
  sessions s;
  int t, it;
  transformer = al_model_load(ATTNLITE_MODELS_DIR "/transformer-d2l.safetensors", NULL);
  lm = al_model_load(ATTNLITE_MODELS_DIR "/lm-fra.safetensors", NULL);
  vit = al_model_load(ATTNLITE_MODELS_DIR "/vit-digits.safetensors", NULL);
  if (!transformer || !lm || !vit) {
    fprintf(stderr, "cannot load the shipped models\n");
    return 1;
  }
  CHECK(open_sessions(&s));
  one_round(&s, &ref);
  close_sessions(&s);
  CHECK(ref.ok);
  CHECK(ref.num_probs > 0);

  pthread_barrier_init(&ready, NULL, THREADS + 1);
  pthread_barrier_init(&go, NULL, THREADS + 1);
  for (t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, worker, (void*)(size_t)t);
  pthread_barrier_wait(&ready);
  pthread_barrier_wait(&go);
  /* the threads are translating, generating and classifying: drop the main thread's models */
  al_model_free(transformer);
  al_model_free(lm);
  al_model_free(vit);
  for (t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&ready);
  pthread_barrier_destroy(&go);

  for (t = 0; t < THREADS; ++t) {
    CHECK(opened[t]);
    for (it = 0; it < ITERATIONS; ++it)
      if (!same(&results[t][it], &ref)) {
        ++failed;
        fprintf(stderr, "thread %d, iteration %d differs from the serial run: \"%s\" / \"%s\"\n",
                t, it, results[t][it].translation, results[t][it].sampled);
      }
  }
  if (failed) {
    fprintf(stderr, "%d check(s) failed\n", failed);
    return 1;
  }
  printf("c_api threads: %d threads x %d rounds equal the serial run\n", THREADS, ITERATIONS);
  return 0;
}
