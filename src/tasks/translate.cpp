// A translator is a tokenizer + a model driver + a search. This file holds the first and the
// glue: the session block (carved once, sized by the same code), the source ids, and the
// Translation views over the n-best lists and the driver's attention slots.
#include "attnlite/translate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "attnlite/bpe.h"
#include "attnlite/error.h"
#include "attnlite/normalize.h"
#include "drivers/op_memory.h"
#include "search/search.h"
#include "tasks/session.h"

namespace attnlite {

namespace {

// tokens joined by spaces into p; returns the length.
size_t join_tokens(char* p, const Vocab& v, const int* toks, int n) {
  size_t len = 0;
  for (int k = 0; k < n; ++k) {
    const std::string& tok = v.token(toks[k]);
    if (k) p[len++] = ' ';
    std::memcpy(p + len, tok.data(), tok.size());
    len += tok.size();
  }
  return len;
}

// A sentence that normalizes to nothing: blank, or only what a translator does not read.
Error empty_sentence(std::string_view written) {
  return Error(blank_source(written) ? "empty sentence"
                                     : "empty sentence: nothing in it that a translator reads "
                                       "(emoji and invisible characters are left out)");
}

// 16 GiB on 64-bit hosts, half the address space on 32-bit ones (WASM), where a quarter of it,
// the most one block can hold (Arena::check_block, when the session is measured), comes first.
constexpr size_t kMaxWorkspaceBytes =
    (size_t)std::min<uint64_t>(uint64_t(16) << 30, (uint64_t)(SIZE_MAX / 2));

}  // namespace

struct Translator::Impl {
  const Model& m;
  const ops::Ops& op;
  search::Setup setup;
  int B = 1, KM = 1, S = 0, T = 0;
  size_t input_cap = 0, text_cap = 0;
  std::unique_ptr<drivers::Seq2SeqDriver> driver;
  search::Greedy greedy;
  search::Beam beam;
  search::NBestLists lists;

  // host
  char* norm = nullptr;                // normalized sentence (normalize.h), max_input_bytes
  size_t norm_cap = 0;
  char* pre = nullptr;                 // preprocessed sentence
  std::string_view* views = nullptr;   // (S) token views into pre
  int* src = nullptr;                  // (B, S)
  int* valid = nullptr;                // (B)
  char* text = nullptr;                // (B, K, text_cap)
  float* host_att = nullptr;           // (B, slot floats) when the op memory is not the host's
  long slot_floats = 0;
  std::vector<Translation> results;

  // op memory: the driver's buffers and the scratch, one block (the host block on the CPU)
  size_t scratch_bytes = 0;
  SessionMemory memory;
  Arena scratch;

  Impl(const Model& model, const Limits& lim) : m(model), op(ops_for(lim.device, lim.precision)) {
    require_task(m, Task::Translate);
    if (lim.max_batch < 1 || lim.max_batch > 4096)
      throw Error("limits: max_batch must be in [1, 4096], got " + std::to_string(lim.max_batch));
    if (lim.max_input_bytes < 1 || lim.max_input_bytes > (1u << 20))
      throw Error("limits: max_input_bytes must be in [1, 1048576]");
    if (lim.max_beam < 1 || lim.max_beam > 64)
      throw Error("limits: max_beam must be in [1, 64], got " + std::to_string(lim.max_beam));
    B = lim.max_batch;
    KM = lim.max_beam;
    S = m.num_steps();
    T = lim.max_tgt_steps ? lim.max_tgt_steps : S;
    const int V = m.tgt_vocab().size(), T_max = m.max_target_steps();
    if (T < 1 || T > T_max)
      throw Error("limits: max_tgt_steps must be in [1, " + std::to_string(T_max) + "], got " + std::to_string(T));
    if (2 * KM > V)
      throw Error("limits: max_beam " + std::to_string(KM) + " is over half the target vocabulary (" +
                  std::to_string(V) + " tokens)");
    setup = {m.tgt_vocab().bos_id, m.tgt_vocab().eos_id, V, {B, KM, S, T}, op.drop_floor()};
    norm_cap = lim.max_input_bytes;  // normalizing never lengthens a sentence
    input_cap = m.bpe() ? Bpe::words_capacity(lim.max_input_bytes)
                        : lim.max_input_bytes * 2 + 16;  // preprocessing adds at most one space per char
    size_t maxtok = 1;
    for (int i = 0; i < V; ++i) maxtok = std::max(maxtok, m.tgt_vocab().token(i).size());
    text_cap = (size_t)T * (maxtok + 1) + 1;
    driver = family_model(m).seq2seq_driver(op, setup.lim);
    scratch_bytes = measure_scratch();
    memory.measure(op, [this](Arena& host, Arena& mem) { carve(host, mem); });
  }

  // The scratch one search takes at the limits: encode(), the last step() and the choice
  // (greedy's arg max, beam search's candidates).
  size_t measure_scratch() {
    return attnlite::measure_scratch([this](Arena& none) { driver->carve(none, none); },
                                     [this](const ops::Ctx& cx, bool attention) {
                                       const int R = B * KM, V = setup.V;
                                       driver->encode(nullptr, nullptr, B, KM, attention, cx);
                                       driver->step(nullptr, R, T - 1, 0, attention, cx);
                                       cx.op.argmax_rows(nullptr, nullptr, nullptr, nullptr, R, V, cx.scratch);
                                       if (KM > 1)
                                         cx.op.top_rows(nullptr, nullptr, nullptr, nullptr, nullptr, V, R, V,
                                                        2 * KM, cx.scratch);
                                     });
  }

  // Every buffer: host ones from `host`, op-memory ones from `mem` (the same arena when the
  // op set works in host memory).
  void carve(Arena& host, Arena& mem) {
    norm = host.take<char>(norm_cap);
    pre = host.take<char>(input_cap);
    views = host.take<std::string_view>((size_t)S);
    src = host.take<int>((size_t)B * S);
    valid = host.take<int>((size_t)B);
    text = host.take<char>((size_t)B * KM * text_cap);
    lists.carve(host, setup);
    greedy.carve(host, setup);
    if (KM > 1) beam.carve(host, setup);
    const drivers::AttentionSlot a = driver->attention(0);
    slot_floats = a.enc_self_len + a.dec_self_len + a.cross_len;
    if (!op.host_memory()) host_att = host.floats((size_t)B * slot_floats);
    driver->carve(host, mem);
    scratch = Arena(mem.take<char>(scratch_bytes), scratch_bytes);
  }

  void bind(void* block, size_t bytes) {
    memory.bind(op, block, bytes, "these limits need (lower max_batch, max_beam or max_tgt_steps)",
                [this](Arena& host, Arena& mem) { carve(host, mem); });
    results.assign((size_t)B, Translation{});
    for (int i = 0; i < B * KM; ++i) new (lists.hyps + i) Hypothesis{};
    for (int b = 0; b < B; ++b) lists.size[b] = 0;
  }

  // Normalize and tokenize sentence i into src row i; fills the source fields of results[i].
  void prepare(int i, std::string_view written, size_t max_bytes) {
    if (written.size() > max_bytes)
      throw Error("sentence is too long: " + std::to_string(written.size()) + " bytes (limit " +
                  std::to_string(max_bytes) + ")");
    const std::string_view sentence(norm, normalize_source(written, norm, norm_cap));
    Translation& r = results[(size_t)i];
    r = Translation{};
    int* row = src + (long)i * S;
    int count = 0;
    if (const Bpe* bpe = m.bpe()) {  // sub-word pieces of the cased text
      const size_t n = Bpe::words(sentence, pre, input_cap);
      count = bpe->segment(m.src_vocab(), std::string_view(pre, n), row, S, &r.num_unknown);
      if (count == 0) throw empty_sentence(written);
    } else {  // the book's words
      const size_t n = preprocess_nmt(sentence, pre, input_cap);
      count = split_tokens(std::string_view(pre, n), views, S);
      if (count == 0) throw empty_sentence(written);
      for (int k = 0; k < std::min(count, S); ++k) {
        row[k] = m.src_vocab().lookup(views[k]);
        if (row[k] == m.src_vocab().unk_id) ++r.num_unknown;
      }
    }
    const int used = std::min(count, S);
    // predict_seq2seq: tokens + <eos>, then truncate_pad to num_steps
    for (int k = used; k < S; ++k) row[k] = k == count ? m.src_vocab().eos_id : m.src_vocab().pad_id;
    r.src_ids = row;
    r.src_len = count + 1;
    r.src_valid = std::min(count + 1, S);
    r.truncated = count + 1 > S;
    valid[i] = r.src_valid;
  }

  void run(int n, const DecodeOptions& o) {
    if (o.max_steps < 0 || o.max_steps > T)
      throw Error("max_steps " + std::to_string(o.max_steps) + " is outside [0, max_tgt_steps = " +
                  std::to_string(T) + "]");
    if (o.beam_size < 1 || o.beam_size > KM)
      throw Error("beam_size " + std::to_string(o.beam_size) + " is outside [1, max_beam = " +
                  std::to_string(KM) + "]");
    if (!std::isfinite(o.length_penalty)) throw Error("length_penalty must be finite");
    const int steps = o.max_steps ? o.max_steps : T;
    const ops::Ctx cx{op, scratch};
    const search::Sources in{src, valid, n};
    if (o.beam_size > 1)
      beam.run(*driver, cx, in, steps, o, lists);
    else
      greedy.run(*driver, cx, in, steps, o, lists);
    op.sync();
    for (int b = 0; b < n; ++b) finish(b, o);
  }

  // results[b] and the text of its n-best list.
  void finish(int b, const DecodeOptions& o) {
    for (int k = 0; k < lists.size[b]; ++k) {
      Hypothesis& h = lists.hyps[(long)b * KM + k];
      char* p = text + ((long)b * KM + k) * text_cap;
      h.text = std::string_view(
          p, m.bpe() ? Bpe::detokenize(m.tgt_vocab(), h.tokens, h.num_tokens, p, text_cap)
                     : join_tokens(p, m.tgt_vocab(), h.tokens, h.num_tokens));
    }
    const Hypothesis& best = lists.hyps[(long)b * KM];
    Translation& r = results[(size_t)b];
    r.text = best.text;
    r.tokens = best.tokens;
    r.probs = best.probs;
    r.num_tokens = best.num_tokens;
    r.steps = best.length;
    r.eos = best.eos;
    r.S = S;
    r.ld = T;
    r.heads = m.num_heads();
    r.layers = family_model(m).maps().layered ? m.num_layers() : 0;
    r.enc_self = r.dec_self = r.cross = nullptr;
    if (!o.attention) return;
    drivers::AttentionSlot a = driver->attention(b);
    if (host_att) {  // the slots live in op memory: bring sentence b's to the host
      float* h = host_att + (long)b * slot_floats;
      auto bring = [&](const float*& p, long len) {
        if (!p) return;
        op.download(h, p, sizeof(float) * (size_t)len);
        p = h;
        h += len;
      };
      bring(a.enc_self, a.enc_self_len);
      bring(a.dec_self, a.dec_self_len);
      bring(a.cross, a.cross_len);
    }
    r.enc_self = a.enc_self;
    r.dec_self = a.dec_self;
    r.cross = a.cross;
  }
};

size_t Translator::required_bytes(const Model& model, const Limits& limits) {
  Impl impl(model, limits);
  return impl.memory.need;
}

Translator::Translator(std::shared_ptr<const Model> model, const Limits& limits, void* block,
                       size_t block_bytes)
    : model_(std::move(model)), limits_(limits) {
  if (!model_) throw Error("Translator needs a model");
  impl_ = std::make_unique<Impl>(*model_, limits_);
  const size_t need = impl_->memory.need;
  if (!block && need > kMaxWorkspaceBytes)
    throw Error("the workspace these limits need (" + std::to_string(need) + " bytes) exceeds " +
                "the cap of " + std::to_string(kMaxWorkspaceBytes) +
                " bytes; lower max_batch, max_beam or max_tgt_steps");
  impl_->bind(block, block_bytes);
}

Translator::~Translator() = default;

const Translation& Translator::translate(std::string_view sentence, const DecodeOptions& opts) {
  impl_->prepare(0, sentence, limits_.max_input_bytes);
  impl_->run(1, opts);
  return impl_->results[0];
}

void Translator::translate_batch(const std::string_view* sentences, int n, const DecodeOptions& opts) {
  if (n < 1 || n > limits_.max_batch)
    throw Error("batch of " + std::to_string(n) + " sentences is outside [1, max_batch = " +
                std::to_string(limits_.max_batch) + "]");
  for (int i = 0; i < n; ++i) {
    try {
      impl_->prepare(i, sentences[i], limits_.max_input_bytes);
    } catch (const Error& e) {  // the refused sentence by its index (from 0)
      throw ItemError("sentence " + std::to_string(i) + " of " + std::to_string(n), i, e.what());
    }
  }
  impl_->run(n, opts);
}

const Translation& Translator::result(int i) const {
  if (i < 0 || i >= limits_.max_batch) throw Error("result index out of range");
  return impl_->results[(size_t)i];
}

NBest Translator::nbest(int i) const {
  if (i < 0 || i >= limits_.max_batch) throw Error("nbest index out of range");
  return {impl_->lists.hyps + (long)i * impl_->KM, impl_->lists.size[i]};
}

size_t Translator::workspace_bytes() const { return impl_->memory.need; }
size_t Translator::scratch_peak() const { return impl_->scratch.peak(); }

}  // namespace attnlite
