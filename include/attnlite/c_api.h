/* attnlite — the C API: a plain C interface over the C++ runtime, for C programs and for
 * bindings from other languages (wasm/bindings.cpp exports it to JavaScript as is, but for
 * the figures section at the end, which is native only; the JavaScript API in
 * web/attnlite-api.mjs uses the same names, docs/web.md lists them).
 *
 *   al_error* err = NULL;
 *   al_model* m = al_model_load("models/transformer-d2l.safetensors", &err);
 *   if (!m) { fprintf(stderr, "%s\n", al_error_message(err)); al_error_free(err); return 1; }
 *   al_translator* tr = al_translator_new(m, NULL, &err);    // NULL: default limits
 *   if (al_translate(tr, "i'm home .", NULL) == AL_OK)        // NULL: default options
 *     puts(al_result_text(al_translator_result(tr, 0)));
 *   else
 *     fprintf(stderr, "%s\n", al_translator_error(tr));
 *   al_translator_free(tr);
 *   al_model_free(m);
 *
 * Handles are opaque. Errors:
 *   - Constructors (al_model_load, al_model_from_bytes, al_*_new, al_*_new_with) return
 *     NULL on failure and, when `err` is not NULL, store a new al_error in *err (free it with
 *     al_error_free). Pass NULL to ignore the message.
 *   - al_translate / al_translate_batch return an al_status; the message of the last call
 *     is al_translator_error(tr) ("" after a success).
 *   - There is no process-wide error state. No C++ exception crosses this interface.
 * Threads: an al_model is immutable and may be shared by any number of translators,
 * generators and classifiers on any number of threads; its getters and al_*_new may be called
 * from several threads at once. al_model_free only once no other thread uses that al_model
 * handle (sessions made from it do not count). An al_translator, al_generator or
 * al_classifier, and the results it hands out, belong to one thread at a time. A session
 * keeps its model alive: al_model_free may come before the session's free, even while the
 * session runs on another thread (tests/c_api/test_c_api_threads.c). al_error values belong
 * to their caller.
 * Lifetimes: strings and arrays returned by getters are owned by their handle. A result
 * (and everything read from it) stays valid until the next al_translate/al_translate_batch
 * on the same translator, or al_translator_free. Getters given a NULL handle or an index
 * out of range return 0, -1, NULL or "" (as documented) instead of crashing.
 */
#ifndef ATTNLITE_C_API_H
#define ATTNLITE_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct al_error al_error;
typedef struct al_model al_model;
typedef struct al_translator al_translator;
typedef struct al_result al_result;
typedef struct al_generator al_generator;
typedef struct al_classifier al_classifier;
typedef struct al_figure al_figure;

typedef enum al_status {
  AL_OK = 0,
  AL_ERR_ARGUMENT = 1,  /* a NULL handle or pointer, an index out of range */
  AL_ERR_INPUT = 2,     /* refused by the library: bad model file, sentence, limits, options */
  AL_ERR_INTERNAL = 3   /* out of memory or another failure */
} al_status;

/* ---- errors -------------------------------------------------------------------------- */
const char* al_error_message(const al_error* err); /* "" for NULL */
void al_error_free(al_error* err);                  /* NULL is fine */
/* A new error with a copy of message (NULL when out of memory), for bindings that report
 * their own failures the same way. */
al_error* al_error_new(const char* message);

/* ---- CPU kernels --------------------------------------------------------------------- */
/* The CPU kernel table every session uses, chosen at first use: the SIMD table this build
 * has and this CPU runs ("avx2-fma" on x86-64, "avx512" there on a CPU with AVX-512 F, DQ
 * and VL unless ATTNLITE_AVX512=0, "neon" on Arm, "simd128" in WebAssembly, "simde-portable"
 * where SIMDe found no vector unit) or else "scalar". A static string. */
const char* al_kernels(void);
/* Chooses the table for the whole process: "simd" or "scalar". AL_OK, or AL_ERR_INPUT with
 * *err set (SIMD not built in or not supported by this CPU, another word). Call it before
 * sessions start, not while one runs on another thread. */
al_status al_use_kernels(const char* which, al_error** err);

/* ---- models -------------------------------------------------------------------------- */
/* A model's family is its number here: its place among the registered families
 * (src/families/families.cpp); al_model_kind_name is its name, the file's attnlite.kind. */
typedef enum al_kind { AL_TRANSFORMER = 0, AL_BAHDANAU = 1, AL_LM = 2, AL_VIT = 3 } al_kind;
/* What a model does: translate (al_translator), generate text (al_generator) or classify
 * images (al_classifier). */
typedef enum al_task { AL_TRANSLATE = 0, AL_GENERATE = 1, AL_CLASSIFY = 2 } al_task;

/* Validate the whole file (safetensors header, config, vocabularies, every tensor). The file
 * is mapped where the platform allows and its weights used in place: it must stay unchanged
 * while the model lives. */
al_model* al_model_load(const char* path, al_error** err);
/* The same from bytes in memory; the model keeps its own copy. */
al_model* al_model_from_bytes(const uint8_t* bytes, size_t size, al_error** err);
/* The same from a malloc()ed buffer that the model takes over: its weights are used in place
 * (nothing copied) and the buffer is free()d with the model, or at once when loading fails.
 * The caller must not touch it afterwards. */
al_model* al_model_adopt_bytes(uint8_t* bytes, size_t size, al_error** err);
void al_model_free(al_model* model); /* NULL is fine */

int al_model_kind(const al_model* model);            /* al_kind; -1 for NULL */
const char* al_model_kind_name(const al_model* model); /* "transformer" / "bahdanau" / "lm" / "vit" */
int al_model_task(const al_model* model);            /* al_task; -1 for NULL */
/* One line for people, e.g. "Transformer · 2 layers · 4 heads"; "" for NULL. */
const char* al_model_description(const al_model* model);
/* 1 when it records encoder and decoder self-attention besides the encoder-decoder (cross)
 * attention (a Transformer; a Bahdanau model has cross alone); 1 when its maps are (layers,
 * heads) with named layers and heads (else one map). 0 for NULL. */
int al_model_self_attention(const al_model* model);
int al_model_layered_attention(const al_model* model);
int al_model_num_layers(const al_model* model);      /* encoder/decoder layers */
int al_model_num_heads(const al_model* model);       /* 1 for Bahdanau */
int al_model_num_steps(const al_model* model);       /* training length = source padding */
int al_model_num_hiddens(const al_model* model);
int al_model_max_target_steps(const al_model* model); /* largest al_limits.max_tgt_steps */
int al_model_src_vocab_size(const al_model* model);
int al_model_tgt_vocab_size(const al_model* model);
size_t al_model_weight_bytes(const al_model* model);
int al_model_is_int8(const al_model* model);         /* 1 when some weights are int8 */
/* A metadata value of the file (attnlite.config, attnlite.license ...), NULL when absent. */
const char* al_model_metadata(const al_model* model, const char* key);
/* Vocabulary tokens by id ("" out of range), and a source token's id (0 = <unk> when the
 * vocabulary lacks it; -1 for NULL arguments). */
const char* al_model_src_token(const al_model* model, int id);
const char* al_model_tgt_token(const al_model* model, int id);
int al_model_src_id(const al_model* model, const char* token);

/* The book's preprocessing (d2l preprocess_nmt) and split: the words of `sentence` joined by
 * single spaces. Writes at most cap bytes including a NUL (like snprintf) and returns the
 * full length without the NUL, or -1 (invalid UTF-8, NULL sentence) with *err set. */
long al_tokenize(const char* sentence, char* out, size_t cap, al_error** err);

/* The sentences of `text` (UTF-8, NUL-terminated) as a front end cuts a text before it
 * translates each sentence alone (include/attnlite/sentences.h: after . ! ? and a space, not
 * after "Mr." and the like): spans[2k] and spans[2k + 1] are sentence k's first byte and one
 * past its last. Writes the first min(n, cap) sentences (2 * cap values; spans may be NULL
 * when cap is 0) and returns n, the number of sentences (0 for a blank text), or -1 with
 * *err set for a NULL text. */
long al_split_sentences(const char* text, size_t* spans, size_t cap, al_error** err);
/* The sentences `model` translates one at a time from `text` (Model::sentences): those of
 * al_split_sentences that read as at least one source token (al_model_tokenize); when none
 * does, or the text is not UTF-8, one span, the whole text (translating it then says why it is
 * refused). Writes as al_split_sentences and returns n >= 1, or -1 with *err set for a NULL
 * model or text. The CLI, the bindings and the page translate these and join the
 * translations with a space. */
long al_model_sentences(const al_model* model, const char* text, size_t* spans, size_t cap,
                        al_error** err);

/* 1 when the model is a sub-word translator (its file carries a byte-pair merge table,
 * metadata attnlite.bpe; include/attnlite/bpe.h): it reads the English as written (cased) in
 * pieces, '_' ending a word, and its translations' text is the detokenized French. 0
 * otherwise (the book's lowercased words) and for NULL. */
int al_model_is_subword(const al_model* model);
/* The source tokens `model` reads from `sentence` once normalized as a translator normalizes
 * it (Model::source_tokens; docs/input.md), joined by single
 * spaces: the pieces of a sub-word model ("Where is the station?" -> "Wh ere_ is_ the_ st at
 * i on_ ?_"; a character never seen in training is the piece "<unk>"), the book's words of
 * al_tokenize otherwise. Not truncated to num_steps. Writes and returns as al_tokenize; -1
 * with *err set for invalid UTF-8 or a NULL model or sentence. */
long al_model_tokenize(const al_model* model, const char* sentence, char* out, size_t cap,
                       al_error** err);

/* ---- translators --------------------------------------------------------------------- */
typedef enum al_device { AL_DEVICE_CPU = 0, AL_DEVICE_CUDA = 1 } al_device;
/* attnlite::Precision: how a device holds the fp32 weights. BF16 (device CUDA): the linear
 * layers' matrices in bfloat16, sums still in fp32 (include/attnlite/device.h). */
typedef enum al_precision { AL_PRECISION_FP32 = 0, AL_PRECISION_BF16 = 1 } al_precision;

/* attnlite::Limits. al_limits_default fills in the defaults: 1, 1, 0, 4096, AL_DEVICE_CPU,
 * AL_PRECISION_FP32. */
typedef struct al_limits {
  int max_batch;          /* sentences per al_translate_batch */
  int max_beam;           /* largest beam_size */
  int max_tgt_steps;      /* 0: the model's num_steps */
  size_t max_input_bytes; /* longer input is an error */
  int device;             /* al_device (CUDA: a CUDA build and a CUDA device) */
  int precision;          /* al_precision (BF16: device CUDA only) */
} al_limits;
void al_limits_default(al_limits* limits);

/* attnlite::DecodeOptions. al_decode_options_default: 0, 0, 1, 1, 0.0. */
typedef struct al_decode_options {
  int d2l_compat;       /* 1: the book's position 0 at every decoder step */
  int max_steps;        /* 0: al_limits.max_tgt_steps */
  int attention;        /* 1: record the attention weights */
  int beam_size;        /* 1: greedy; K > 1: beam search, K <= max_beam */
  float length_penalty; /* alpha: hypotheses ranked by logp / length^alpha */
} al_decode_options;
void al_decode_options_default(al_decode_options* options);

/* A translator with buffers sized by the limits (NULL: al_limits_default). It holds a
 * reference to the model. */
al_translator* al_translator_new(const al_model* model, const al_limits* limits, al_error** err);
void al_translator_free(al_translator* tr); /* NULL is fine */
/* The message of the last al_translate/al_translate_batch: "" after a success. */
const char* al_translator_error(const al_translator* tr);
/* The limits it was made with (max_tgt_steps resolved); AL_ERR_ARGUMENT for NULLs. */
al_status al_translator_limits(const al_translator* tr, al_limits* out);
size_t al_translator_workspace_bytes(const al_translator* tr); /* its buffers */

/* One sentence (UTF-8, NUL-terminated); options NULL: al_decode_options_default. The
 * sentence is normalized first, as every translator does (docs/input.md: typographic
 * apostrophes and quotes, dashes, Unicode spaces, emoji, a sentence in capitals), so
 * "I\u2019m home." reads as "I'm home." and "I'M HOME." as "i'm home."; al_model_tokenize
 * shows the tokens read after it. */
al_status al_translate(al_translator* tr, const char* sentence, const al_decode_options* options);
/* n <= max_batch sentences decoded together. A sentence it refuses is named by its index,
 * from 0: "sentence 1 of 3: empty sentence" (al_translate: "empty sentence"). */
al_status al_translate_batch(al_translator* tr, const char* const* sentences, int n,
                             const al_decode_options* options);
/* After al_translate_batch refused a sentence: its index, from 0; the reason is what follows
 * the first ": " of al_translator_error. -1 after a success, after a failure that is no one
 * sentence's (a beam too wide, a NULL) and after al_translate. */
int al_translator_error_index(const al_translator* tr);
/* Result i of the last successful call; NULL after a failure or for i out of range. */
const al_result* al_translator_result(const al_translator* tr, int i);

/* ---- results (attnlite::Translation) --------------------------------------------------- */
const char* al_result_text(const al_result* r);        /* tokens joined by spaces */
int al_result_num_tokens(const al_result* r);          /* without <eos> */
int al_result_token(const al_result* r, int i);        /* -1 out of range */
const int* al_result_tokens(const al_result* r);       /* (num_tokens) ids */
const float* al_result_probs(const al_result* r);      /* (num_tokens) softmax probabilities */
int al_result_steps(const al_result* r);               /* decoder calls */
int al_result_eos(const al_result* r);                 /* 1: stopped at <eos> */
int al_result_src_len(const al_result* r);             /* tokens + <eos>, before truncation */
int al_result_src_valid(const al_result* r);           /* min(src_len, src_size) */
int al_result_truncated(const al_result* r);
int al_result_num_unknown(const al_result* r);         /* source words mapped to <unk> */
int al_result_src_size(const al_result* r);            /* S: padded source positions */
const int* al_result_src_ids(const al_result* r);      /* (S) padded source ids */
/* Attention weights (NULL when not recorded or not in this model), row-major:
 *   enc_self (L, NH, S, S)            Transformer
 *   dec_self (L, ld, NH, ld)          Transformer: [l][t][h][k], k <= t
 *   cross    (L, ld, NH, S)           Transformer: [l][t][h][s];  (ld, S) Bahdanau
 * L = al_result_layers (0 for Bahdanau), NH = al_result_heads, ld = al_result_ld (the row
 * stride of the decoder arrays: the translator's max target steps); rows t < steps hold data. */
int al_result_layers(const al_result* r);
int al_result_heads(const al_result* r);
int al_result_ld(const al_result* r);
const float* al_result_enc_self(const al_result* r);
const float* al_result_dec_self(const al_result* r);
const float* al_result_cross(const al_result* r);

/* The n-best list, best first: beam_size hypotheses after beam search, one after greedy
 * decoding; hypothesis 0 is the result above. Out of range k: 0, NULL or "". */
int al_nbest_size(const al_result* r);
const char* al_nbest_text(const al_result* r, int k);
int al_nbest_num_tokens(const al_result* r, int k);
const int* al_nbest_tokens(const al_result* r, int k);
const float* al_nbest_probs(const al_result* r, int k);
int al_nbest_length(const al_result* r, int k);   /* num_tokens, + 1 with <eos> */
int al_nbest_eos(const al_result* r, int k);
double al_nbest_logp(const al_result* r, int k);  /* summed log-probabilities */
double al_nbest_score(const al_result* r, int k); /* logp / length^alpha */

/* ---- language models (attnlite::Generator, generate.h) -------------------------------- */
/* A generator over a model of kind AL_LM; everything about the sampling rule, the context
 * and the perplexity formula is in include/attnlite/generate.h. Errors as for translators:
 * al_generator_new returns NULL with *err set, the others return an al_status with the
 * message in al_generator_error. A generation (and everything read from it) stays valid
 * until the next al_generate/al_generator_start/al_generator_step/al_generator_score. */

/* attnlite::GenerateOptions. al_generate_options_default: 0, 0, 1.0, 0, 1.0, 0, 1. */
typedef struct al_generate_options {
  int max_tokens;      /* new tokens at most; 0: until <eos> or the context is full */
  int sample;          /* 0: greedy; 1: sampling with the fields below */
  float temperature;   /* > 0 */
  int top_k;           /* 0: no cut; else >= 1 */
  float top_p;         /* in (0, 1]; 1: no cut */
  uint64_t seed;       /* SplitMix64 seed */
  int attention;       /* 1: record the causal attention weights */
} al_generate_options;
void al_generate_options_default(al_generate_options* options);

/* attnlite::GenerateLimits. al_generator_limits_default: 4096, AL_DEVICE_CPU,
 * AL_PRECISION_FP32. */
typedef struct al_generator_limits {
  size_t max_input_bytes; /* longer prompts are an error; 1..1048576 */
  int device;             /* al_device (CUDA: a CUDA build and a CUDA device) */
  int precision;          /* al_precision (BF16: device CUDA only) */
} al_generator_limits;
void al_generator_limits_default(al_generator_limits* limits);
/* A generator with buffers sized by the limits (NULL: al_generator_limits_default). */
al_generator* al_generator_new_with(const al_model* model, const al_generator_limits* limits,
                                    al_error** err);
/* device: al_device: al_generator_new_with with the default limits on that device. */
al_generator* al_generator_new(const al_model* model, int device, al_error** err);
void al_generator_free(al_generator* g); /* NULL is fine */
const char* al_generator_error(const al_generator* g); /* "" after a success */
int al_generator_context(const al_generator* g);      /* positions the model reads; -1 NULL */
size_t al_generator_workspace_bytes(const al_generator* g);

/* The whole generation; or start (reads the prompt, chooses the first token) and then one
 * al_generator_step per further token until al_generation_done. options NULL: defaults. */
al_status al_generate(al_generator* g, const char* prompt, const al_generate_options* options);
al_status al_generator_start(al_generator* g, const char* prompt,
                             const al_generate_options* options);
al_status al_generator_step(al_generator* g);

/* The generation so far (attnlite::Generation); 0, NULL or "" before any. */
const char* al_generation_text(const al_generator* g);         /* prompt words + generated */
const char* al_generation_continuation(const al_generator* g); /* the generated words */
int al_generation_num_tokens(const al_generator* g);   /* <bos>, prompt, generated */
const int* al_generation_tokens(const al_generator* g);
int al_generation_num_prompt(const al_generator* g);   /* prompt words */
int al_generation_num_generated(const al_generator* g);/* with <eos> when it came */
int al_generation_num_unknown(const al_generator* g);  /* prompt words mapped to <unk> */
const float* al_generation_probs(const al_generator* g); /* (num_generated) */
int al_generation_eos(const al_generator* g);
int al_generation_done(const al_generator* g);
/* Causal self-attention (L, NH, ld, ld): [l][h][q][k]; rows q < positions hold data. NULL
 * when not recorded. */
int al_generation_layers(const al_generator* g);
int al_generation_heads(const al_generator* g);
int al_generation_ld(const al_generator* g);
int al_generation_positions(const al_generator* g);
const float* al_generation_attention(const al_generator* g);

/* Perplexity: adds one sentence's -log p and predicted tokens to *nll and *tokens; *scored is
 * 1, or 0 when the sentence was skipped (empty, too long for the context). */
al_status al_generator_score(al_generator* g, const char* sentence, double* nll, long* tokens,
                             int* scored);

/* ---- images and the Vision Transformer (attnlite::Classifier, classify.h) --------------- */
/* The digits preprocessing of image_input.h on an image file's bytes (PNG, JPEG, BMP, GIF)
 * or on RGBA pixels (a canvas: width x height x 4 bytes, row-major): out (64) in 0..16.
 * AL_OK, or AL_ERR_INPUT with *err set (when not NULL). */
al_status al_digit_from_file_bytes(const uint8_t* bytes, size_t size, float* out, al_error** err);
al_status al_digit_from_rgba(const uint8_t* rgba, int width, int height, float* out, al_error** err);

/* attnlite::ClassifyLimits. al_classifier_limits_default: 1, AL_DEVICE_CPU,
 * AL_PRECISION_FP32. */
typedef struct al_classifier_limits {
  int max_batch;  /* images per al_classify_batch, 1..4096 */
  int device;     /* al_device (CUDA: a CUDA build and a CUDA device) */
  int precision;  /* al_precision (BF16: device CUDA only) */
} al_classifier_limits;
void al_classifier_limits_default(al_classifier_limits* limits);
/* A classifier for a model of kind AL_VIT with buffers for max_batch images (limits NULL:
 * al_classifier_limits_default). */
al_classifier* al_classifier_new_with(const al_model* model, const al_classifier_limits* limits,
                                      al_error** err);
/* device: al_device: al_classifier_new_with with the default limits (one image) on it. */
al_classifier* al_classifier_new(const al_model* model, int device, al_error** err);
void al_classifier_free(al_classifier* c); /* NULL is fine */
const char* al_classifier_error(const al_classifier* c);
int al_classifier_image_size(const al_classifier* c); /* S: images are C x S x S */
int al_classifier_channels(const al_classifier* c);
int al_classifier_num_classes(const al_classifier* c);
int al_classifier_tokens(const al_classifier* c);     /* T = patches + 1 (CLS first) */
const char* al_classifier_label(const al_classifier* c, int k); /* "" out of range */
/* One image (C x S x S floats, the model's pixel values: digits 0..16); attention 1 records
 * the attention weights. */
al_status al_classify(al_classifier* c, const float* image, int attention);
/* n images (n x C x S x S floats), 1 <= n <= max_batch, in one pass of the model (on CUDA
 * one graph: where a GPU pays off). Each image's result is al_classify's for it alone to float
 * rounding (a product of many rows may sum in another order than one of a single row). */
al_status al_classify_batch(al_classifier* c, const float* images, int n, int attention);
/* After al_classify or al_classify_batch refused an image (not a finite pixel, activations
 * that overflowed: "image 1: ..."): its index, from 0; the reason is what follows the first
 * ": " of al_classifier_error. -1 after a success and after a failure that is no one image's. */
int al_classifier_error_index(const al_classifier* c);
/* Images of the last call: 0 before any or after a failure. */
int al_classification_count(const al_classifier* c);
/* Image i of the last call: -1, 0 or NULL before any, after a failure or for i out of
 * range. The functions without _at below read image 0. */
int al_classification_label_at(const al_classifier* c, int i);
float al_classification_prob_at(const al_classifier* c, int i);
const float* al_classification_probs_at(const al_classifier* c, int i); /* (num_classes) */
/* Layer l's weights (NH, T, T) of image i, [h][q][k]; NULL when not recorded. */
const float* al_classification_attention_at(const al_classifier* c, int i, int layer);
/* Image i's attention rollout into out (T x T); AL_ERR_ARGUMENT for i out of range,
 * AL_ERR_INPUT without recorded attention. */
al_status al_classification_rollout_at(al_classifier* c, int i, float* out);
/* Image 0 of the last classification: 0, -1 or NULL before any or after a failure. */
int al_classification_label(const al_classifier* c);
float al_classification_prob(const al_classifier* c);
const float* al_classification_probs(const al_classifier* c);  /* (num_classes) */
int al_classification_layers(const al_classifier* c);
int al_classification_heads(const al_classifier* c);
/* Layer l's weights (NH, T, T), [h][q][k]; NULL when not recorded or l out of range. */
const float* al_classification_attention(const al_classifier* c, int layer);
/* Attention rollout (classify.h) into out (T x T); AL_ERR_INPUT without recorded attention. */
al_status al_classification_rollout(al_classifier* c, float* out);

/* ---- figures (native only) ------------------------------------------------------------ */
/* The attention maps of one translation as `attnlite heatmap translate` draws them: the same
 * figure function (figures::translation_map, include/attnlite/figures/figures.h), so the bytes
 * are those of the file the command line writes for the same model, sentence and options.
 * Not in the WASM runtime module (wasm/build.sh leaves src/c_api/figures.cpp and every
 * al_figure_* name out: the page draws its maps with its renderer module). */

/* The options of `attnlite heatmap translate` (its default view, the heatmaps). Strings may be
 * NULL for their default. al_figure_options_default: "cross", 0, 0, "Reds", 100, "png", 0, 0,
 * 0, 0, 1, 0.0, NULL. */
typedef struct al_figure_options {
  const char* kind;       /* --kind: "enc" (encoder self), "dec-self" (decoder self) or
                           * "cross" (encoder-decoder; the only kind of a Bahdanau model) */
  int layer;              /* --layer: 1-based; 0 for every layer (a row per layer) */
  int head;               /* --head: 1-based; 0 for every head (a column per head) */
  const char* cmap;       /* --cmap: "Reds", "Blues" or "viridis" */
  int dpi;                /* --dpi: pixels per inch, 20 to 600 */
  const char* format;     /* --format: "png" or "svg" (the PNG's layout, vector cells, text) */
  int annotate;           /* --annotate: 1 prints each weight in its cell */
  int positions;          /* --positions: 1 labels the axes with positions, not tokens */
  int padding;            /* --padding: 1 keeps the source's <pad> positions */
  int d2l_compat;         /* --d2l-compat: the book's position 0 at every decoder step */
  int beam_size;          /* --beam: 1 greedy, up to 64: beam search's best translation */
  float length_penalty;   /* --alpha: in [0, 10] */
  const char* model_name; /* the model named in the title, as the command line names it (a
                           * shipped name, or a path's file name without .safetensors);
                           * NULL or "": the model's kind */
} al_figure_options;
void al_figure_options_default(al_figure_options* options);

/* Translates `sentence` with `model` (a Transformer or Bahdanau model) and draws the figure;
 * options NULL: al_figure_options_default. Returns a figure (free it with al_figure_free), or
 * NULL with *err set (when not NULL): a bad option (kind, cmap, format, dpi, beam, alpha, a
 * layer or head out of range, a kind the model lacks), a sentence the translator refuses. */
al_figure* al_figure_translation_map(const al_model* model, const char* sentence,
                                     const al_figure_options* options, al_error** err);
/* The encoded file: PNG or SVG bytes, owned by the figure (NULL and 0 for NULL). */
const uint8_t* al_figure_data(const al_figure* fig);
size_t al_figure_size(const al_figure* fig);
const char* al_figure_format(const al_figure* fig);   /* "png" or "svg" ("" for NULL) */
int al_figure_width(const al_figure* fig);            /* pixels (0 for NULL) */
int al_figure_height(const al_figure* fig);
int al_figure_rows(const al_figure* fig);             /* panels: layers drawn */
int al_figure_cols(const al_figure* fig);             /* panels: heads drawn */
const char* al_figure_caption(const al_figure* fig);  /* what the command line prints */
const char* al_figure_text(const al_figure* fig);     /* the translation drawn */
void al_figure_free(al_figure* fig);                  /* NULL is fine */

#ifdef __cplusplus
}
#endif
#endif /* ATTNLITE_C_API_H */
