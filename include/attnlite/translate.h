// attnlite — translation sessions. A Translator owns (or is handed) one aligned block sized
// by required_bytes(model, limits); after construction, translate() allocates nothing.
// Results are views into that block, valid until the next call.
//
// Decoding follows d2l's predict_seq2seq: the source is tokenized, <eos> appended, padded or
// truncated to num_steps; greedy argmax from <bos>, stopping at <eos> or after max steps.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "attnlite/arena.h"
#include "attnlite/model.h"

namespace attnlite {

// Where the encoder and decoder run. CUDA needs a build with -DATTNLITE_CUDA=ON and a
// Transformer model; tokenizing, the greedy bookkeeping and the results stay on the host.
enum class Device { CPU, CUDA };

struct Limits {
  int max_batch = 1;
  int max_tgt_steps = 0;          // 0: the model's num_steps (the book's limit)
  size_t max_input_bytes = 4096;  // longer input is an error, not a truncation
  Device device = Device::CPU;    // CUDA: weights and every activation live on the GPU
};

// True in a CUDA build when cudaGetDeviceCount reports at least one device; false in a
// CPU build. cuda_device_name() names device 0, or says why there is none.
bool cuda_available();
std::string cuda_device_name();

struct DecodeOptions {
  // The book feeds the Transformer decoder one token at a time, so every step adds the
  // positional encoding of position 0. attnlite uses position t at step t (what the model
  // was trained with); d2l_compat reproduces the book exactly.
  bool d2l_compat = false;
  int max_steps = 0;          // 0: Limits::max_tgt_steps
  bool attention = true;      // record attention weights
};

// Attention weights of one sentence (views). Transformer: L layers, NH heads,
// S = num_steps source positions, `steps` decoder calls, ld = max target steps.
struct Translation {
  std::string_view text;          // the French output, tokens joined by spaces
  const int* tokens = nullptr;    // (num_tokens) predicted ids, without <eos>
  const float* scores = nullptr;  // (num_tokens) softmax probability of each chosen token
  int num_tokens = 0;
  int steps = 0;                  // decoder calls (num_tokens + 1 when <eos> was produced)
  bool eos = false;               // stopped at <eos> (else at the step limit)

  const int* src_ids = nullptr;   // (S) padded source ids
  int src_len = 0;                // tokens + <eos> before truncation (the book's valid length)
  int src_valid = 0;              // min(src_len, S)
  bool truncated = false;         // the sentence had more than S - 1 tokens
  int num_unknown = 0;            // source words mapped to <unk>

  int layers = 0, heads = 0, S = 0, ld = 0;
  const float* enc_self = nullptr;  // (L, NH, S, S)           Transformer
  const float* dec_self = nullptr;  // (L, ld, NH, ld): [l][t][h][k], k <= t
  const float* cross = nullptr;     // (L, ld, NH, S)           Transformer: [l][t][h][s]
                                    // (ld, S)                  Bahdanau: [t][s]
  float enc_self_at(int l, int h, int q, int k) const { return enc_self[(((long)l * heads + h) * S + q) * S + k]; }
  float dec_self_at(int l, int t, int h, int k) const { return dec_self[(((long)l * ld + t) * heads + h) * ld + k]; }
  float cross_at(int l, int t, int h, int s) const {
    return layers ? cross[(((long)l * ld + t) * heads + h) * S + s] : cross[(long)t * S + s];
  }
};

class Translator {
 public:
  explicit Translator(std::shared_ptr<const Model> model, const Limits& limits = {},
                      void* block = nullptr, size_t block_bytes = 0);
  ~Translator();
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  static size_t required_bytes(const Model& model, const Limits& limits);

  // One sentence. Throws attnlite::Error on empty, over-long or invalid UTF-8 input.
  const Translation& translate(std::string_view sentence, const DecodeOptions& opts = {});
  // n <= max_batch sentences decoded together; result(i) for each.
  void translate_batch(const std::string_view* sentences, int n, const DecodeOptions& opts = {});
  const Translation& result(int i) const;

  const Model& model() const { return *model_; }
  const Limits& limits() const { return limits_; }
  size_t workspace_bytes() const;
  size_t scratch_peak() const;

 private:
  struct Impl;
  std::shared_ptr<const Model> model_;
  Limits limits_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlite
