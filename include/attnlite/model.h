// attnlite — a trained model: its kind, config, vocabularies and weights, read from one
// safetensors file (tensor names = the PyTorch state_dict names; metadata keys attnlite.kind,
// attnlite.config, attnlite.src_vocab, attnlite.tgt_vocab). A Model is immutable once loaded
// and may be shared by any number of sessions on any number of threads: every const member
// may be called from several threads at once. Models may be loaded on several threads at
// once. Sessions hold a shared_ptr, so the thread that loaded a model may drop its own while
// sessions on other threads still use it; the last owner frees it, on whichever thread.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/sentences.h"
#include "attnlite/task.h"
#include "attnlite/vocab.h"

namespace attnlite {

class SafeTensors;
class Bpe;


class Model {
 public:
  // Validate everything; throw attnlite::Error naming the problem (and the path).
  // load() maps the file where the platform can (safetensors.h) and uses the weights in place;
  // the file must then stay unchanged while the model lives.
  static std::shared_ptr<const Model> load(const std::string& path);
  // From bytes in memory: a copy of them (from_bytes), or the caller's own (from_buffer:
  // nothing copied; the bytes stay alive and unchanged while the model lives: owner, when
  // given, is what keeps them alive, released with the model).
  static std::shared_ptr<const Model> from_bytes(const uint8_t* bytes, size_t size);
  static std::shared_ptr<const Model> from_buffer(const uint8_t* bytes, size_t size,
                                                  std::shared_ptr<const void> owner = nullptr);
  ~Model();

  // The family's name, as the file's attnlite.kind says: "transformer", "bahdanau", "lm",
  // "vit" (src/families/).
  const char* kind_name() const;
  Task task() const;
  // One line for people, e.g. "Transformer · 2 layers · 4 heads".
  const std::string& description() const;
  const Vocab& src_vocab() const;  // LM: its vocabulary
  const Vocab& tgt_vocab() const;  // LM: its vocabulary
  const std::map<std::string, std::string>& metadata() const;
  // Translators whose file carries a byte-pair merge table (attnlite.bpe, bpe.h): their
  // tokenizer, else nullptr (the book's word tokenizer, vocab.h). Text in and out is then
  // cased: the source is split into pieces, the output pieces are detokenized.
  const Bpe* bpe() const;
  // The source tokens a translator reads from `sentence` (allocates; for tools): the pieces
  // of a sub-word model, else the book's preprocessed words, of the normalized sentence
  // (normalize.h), as a translator reads it. Not truncated to num_steps.
  std::vector<std::string> source_tokens(std::string_view sentence) const;
  // The sentences a translator translates one at a time from `text` (allocates; for the front
  // ends: the CLI, the bindings, the page): the sentences of split_sentences (sentences.h) that
  // read as at least one source token (one of emoji alone reads as none and is left out).
  // When none does, or the text is not UTF-8, the whole text is the one span, so that
  // translating it says why it is refused (empty, not UTF-8, nothing the model reads). Never
  // empty.
  std::vector<SentenceSpan> sentences(std::string_view text) const;

  int num_steps() const;          // the training sequence length (source padding length);
                                  // LM: the context (max_len)
  int num_layers() const;
  int num_heads() const;          // 1 for Bahdanau
  int num_hiddens() const;        // LM, ViT: d_model / embed_dim
  // ViT: the class names (attnlite.labels); empty for the other kinds.
  const std::vector<std::string>& labels() const;
  int max_target_steps() const;
  // Which attention maps it records: encoder and decoder self-attention besides the
  // encoder-decoder (cross) attention (a Transformer; a Bahdanau model has cross alone), and
  // (layers, heads) of them with named layers and heads (else one map).
  bool has_self_attention() const;
  bool layered_attention() const;   // the largest Limits::max_tgt_steps the model allows
                                  // (LM: the context)
  size_t weight_bytes() const;     // of every weight, in place or copied
  size_t copied_weight_bytes() const;  // of the weights copied at load (the rest are used in place)
  // of the layouts the CPU kernels derive from the weights at load (fp32 matrices packed in
  // the order the SIMD kernels stream them, the GRU's fused-step blocks)
  size_t derived_weight_bytes() const;
  // Some weights are int8 (tools/quantize.py): linear layers and embedding tables.
  bool is_int8() const;

  // What the runtime reads of the loaded family (src/model/model_impl.h): not an API.
  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  Model();
  static std::shared_ptr<const Model> from_safetensors(const SafeTensors& st);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlite
