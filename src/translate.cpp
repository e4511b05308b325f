#include "attnlite/translate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attnlite/error.h"

#if ATTNLITE_HAVE_CUDA
#include "cuda/cuda_session.h"
#endif

namespace attnlite {

#if ATTNLITE_HAVE_CUDA
bool cuda_available() { return cuda::available(); }
std::string cuda_device_name() { return cuda::device_name(); }
#else
bool cuda_available() { return false; }
std::string cuda_device_name() { return "none (attnlite was built without CUDA)"; }
#endif

namespace {
// Device::CUDA is possible for this build and model; throws naming why not.
void check_device(const Model& m, Device d) {
  if (d == Device::CPU) return;
  if (d != Device::CUDA) throw Error("limits: unknown device");
#if !ATTNLITE_HAVE_CUDA
  throw Error("attnlite was built without CUDA (configure with -DATTNLITE_CUDA=ON)");
#else
  if (m.kind != ModelKind::Transformer)
    throw Error(std::string("only the Transformer runs on CUDA; the ") + model_kind_name(m.kind) +
                " model needs Device::CPU");
#endif
}
}  // namespace

// Every buffer of a session, carved from one block. carve() runs twice: on a counting arena
// (required_bytes) and on the real block, so the size and the layout cannot disagree.
// With Device::CUDA the encoder/decoder buffers live on the device (cuda::Session); the
// host block keeps the inputs, the results and the attention weights copied back.
struct Translator::Impl {
  const Model& m;
  bool gpu = false;               // Device::CUDA
  int B = 1, S = 0, T = 0, L = 0, NH = 1, H = 0, V = 0;
  size_t input_cap = 0, text_cap = 0, scratch_floats = 0;

  // inputs
  char* pre = nullptr;            // preprocessed sentence
  std::string_view* views = nullptr;  // (S) token views into pre
  int* src = nullptr;             // (B, S)
  int* valid = nullptr;           // (B)
  // outputs
  int* out_tokens = nullptr;      // (B, T)
  float* out_scores = nullptr;    // (B, T)
  char* text = nullptr;           // (B, text_cap)
  int* tok_in = nullptr;          // (B)
  float* logits = nullptr;        // (B, V)
  // Transformer
  float* enc_out = nullptr;       // (B, S, H)
  float* cross_k = nullptr;       // (L, B, S, H)
  float* cross_v = nullptr;
  float* cache_k = nullptr;       // (L, B, T, H)
  float* cache_v = nullptr;
  float* att_enc = nullptr;       // (B, L, NH, S, S)
  float* att_self = nullptr;      // (B, L, T, NH, T)
  float* att_cross = nullptr;     // (B, L, T, NH, S)   Bahdanau: (B, T, S)
  float* att_step = nullptr;      // (B, S) Bahdanau step weights
  // Bahdanau
  BahdanauState bst;
  float* scratch = nullptr;

  std::vector<Translation> results;
  std::vector<AttnOut> enc_attn;
  std::vector<DecoderAttnOut> dec_attn;
  std::vector<KVCache> caches;
  std::vector<CrossKV> cross;
  std::vector<char> done;
  AlignedBuffer owned;
  Arena scratch_arena;
#if ATTNLITE_HAVE_CUDA
  std::unique_ptr<cuda::Session> cuda;
#endif

  Impl(const Model& model, const Limits& lim) : m(model) {
    check_device(m, lim.device);
    gpu = lim.device == Device::CUDA;
    if (lim.max_batch < 1 || lim.max_batch > 4096)
      throw Error("limits: max_batch must be in [1, 4096], got " + std::to_string(lim.max_batch));
    if (lim.max_input_bytes < 1 || lim.max_input_bytes > (1u << 20))
      throw Error("limits: max_input_bytes must be in [1, 1048576]");
    B = lim.max_batch;
    S = m.num_steps();
    T = lim.max_tgt_steps ? lim.max_tgt_steps : S;
    L = m.num_layers();
    NH = m.num_heads();
    V = m.tgt_vocab.size();
    const bool tr = m.kind == ModelKind::Transformer;
    H = tr ? m.transformer.num_hiddens : m.bahdanau.num_hiddens;
    const int T_max = tr ? m.transformer.max_len : 1000;
    if (T < 1 || T > T_max)
      throw Error("limits: max_tgt_steps must be in [1, " + std::to_string(T_max) + "], got " + std::to_string(T));
    input_cap = lim.max_input_bytes * 2 + 16;  // preprocessing adds at most one space per char
    size_t maxtok = 1;
    for (int i = 0; i < V; ++i) maxtok = std::max(maxtok, m.tgt_vocab.token(i).size());
    text_cap = (size_t)T * (maxtok + 1) + 1;
    if (gpu) {
      scratch_floats = 0;  // the device workspace holds the activations
    } else if (tr) {
      const size_t R = (size_t)B * S, F = m.transformer.ffn_num_hiddens, Hs = H;
      const size_t enc = 3 * R * Hs + std::max({4 * R * Hs + (size_t)S * S, R * Hs, R * F});
      const size_t dec = 6 * (size_t)B * Hs + std::max({(size_t)std::max(S, T), (size_t)B * Hs, (size_t)B * F});
      scratch_floats = std::max(enc, dec) + 16 * 32;
    } else {
      const auto& c = m.bahdanau;
      const size_t G = (c.cell == RNNW::GRU ? 3 : 4) * (size_t)H, E = c.embed_size, Bs = B;
      const size_t enc = (size_t)S * Bs * (2 * H + E + G) + Bs * G;
      const size_t dec = Bs * H + Bs * (H + E) + std::max(Bs * H + H, 2 * Bs * G);
      scratch_floats = std::max(enc, dec) + 16 * 32;
    }
  }

  void carve(Arena& a) {
    const bool tr = m.kind == ModelKind::Transformer;
    pre = a.take<char>(input_cap);
    views = a.take<std::string_view>((size_t)S);
    src = a.take<int>((size_t)B * S);
    valid = a.take<int>((size_t)B);
    out_tokens = a.take<int>((size_t)B * T);
    out_scores = a.floats((size_t)B * T);
    text = a.take<char>((size_t)B * text_cap);
    tok_in = a.take<int>((size_t)B);
    if (!gpu) logits = a.floats((size_t)B * V);
    if (tr) {
      if (!gpu) {
        enc_out = a.floats((size_t)B * S * H);
        cross_k = a.floats((size_t)L * B * S * H);
        cross_v = a.floats((size_t)L * B * S * H);
        cache_k = a.floats((size_t)L * B * T * H);
        cache_v = a.floats((size_t)L * B * T * H);
      }
      att_enc = a.floats((size_t)B * L * NH * S * S);
      att_self = a.floats((size_t)B * L * T * NH * T);
      att_cross = a.floats((size_t)B * L * T * NH * S);
    } else {
      bst.enc_out = a.floats((size_t)B * S * H);
      bst.enc_kp = a.floats((size_t)B * S * H);
      bst.h = a.floats((size_t)L * B * H);
      bst.c = m.bahdanau.cell == RNNW::LSTM ? a.floats((size_t)L * B * H) : nullptr;
      att_cross = a.floats((size_t)B * T * S);
      att_step = a.floats((size_t)B * S);
    }
    if (scratch_floats) scratch = a.floats(scratch_floats);
  }

  void bind() {
    scratch_arena = Arena(scratch, scratch_floats * sizeof(float));
    results.assign((size_t)B, Translation{});
    done.assign((size_t)B, 0);
    if (m.kind != ModelKind::Transformer) return;
    for (int l = 0; l < L; ++l) {
      enc_attn.push_back({att_enc + (long)l * NH * S * S, (long)L * NH * S * S, (long)S * S, S});
      dec_attn.push_back({});
      caches.push_back({cache_k + (long)l * B * T * H, cache_v + (long)l * B * T * H, T});
      cross.push_back({cross_k + (long)l * B * S * H, cross_v + (long)l * B * S * H, S});
    }
  }

  // Tokenize sentence i into src row i; fills the source fields of results[i].
  void prepare(int i, std::string_view sentence, size_t max_bytes) {
    if (sentence.size() > max_bytes)
      throw Error("sentence is too long: " + std::to_string(sentence.size()) + " bytes (limit " +
                  std::to_string(max_bytes) + ")");
    const size_t n = preprocess_nmt(sentence, pre, input_cap);
    const int count = split_tokens(std::string_view(pre, n), views, S);
    if (count == 0) throw Error("empty sentence");
    Translation& r = results[(size_t)i];
    r = Translation{};
    int* row = src + (long)i * S;
    const int used = std::min(count, S);
    for (int k = 0; k < used; ++k) {
      row[k] = m.src_vocab.lookup(views[k]);
      if (row[k] == m.src_vocab.unk) ++r.num_unknown;
    }
    // predict_seq2seq: tokens + <eos>, then truncate_pad to num_steps
    for (int k = used; k < S; ++k) row[k] = k == count ? m.src_vocab.eos : m.src_vocab.pad;
    r.src_ids = row;
    r.src_len = count + 1;
    r.src_valid = std::min(count + 1, S);
    r.truncated = count + 1 > S;
    valid[i] = r.src_valid;
  }

  // Greedy choice for row b of logits: id and its softmax probability.
  std::pair<int, float> pick(int b) const {
    const float* lg = logits + (long)b * V;
    int best = 0;
    for (int v = 1; v < V; ++v)
      if (lg[v] > lg[best]) best = v;
    double s = 0.0;
    for (int v = 0; v < V; ++v) s += std::exp((double)lg[v] - lg[best]);
    return {best, (float)(1.0 / s)};
  }

  // This step's greedy choice for row b: from the device (argmax ran there) or the logits.
  std::pair<int, float> choice(int b) const {
#if ATTNLITE_HAVE_CUDA
    if (gpu) return {cuda->ids()[b], cuda->probs()[b]};
#endif
    return pick(b);
  }

  void run(int n, const DecodeOptions& o) {
    const bool tr = m.kind == ModelKind::Transformer;
    if (o.max_steps < 0 || o.max_steps > T)
      throw Error("max_steps " + std::to_string(o.max_steps) + " is outside [0, max_tgt_steps = " +
                  std::to_string(T) + "]");
    const int steps = o.max_steps ? o.max_steps : T;
    const ValidLens src_vl = ValidLens::per_batch(valid);
    if (o.attention) {
      if (tr) {
        std::memset(att_enc, 0, sizeof(float) * (size_t)B * L * NH * S * S);
        std::memset(att_self, 0, sizeof(float) * (size_t)B * L * T * NH * T);
        std::memset(att_cross, 0, sizeof(float) * (size_t)B * L * T * NH * S);
      } else {
        std::memset(att_cross, 0, sizeof(float) * (size_t)B * T * S);
      }
    }
    if (gpu) {
#if ATTNLITE_HAVE_CUDA
      cuda->encode(src, valid, n, o.attention);
#endif
    } else if (tr) {
      transformer_encode(enc_out, o.attention ? enc_attn.data() : nullptr, m.tw, m.transformer,
                         m.P.data(), src, n, S, src_vl, scratch_arena);
      for (int l = 0; l < L; ++l) {
        cross[l].k = cross_k + (long)l * n * S * H;  // batch n packed at the front
        cross[l].v = cross_v + (long)l * n * S * H;
        project_cross_kv(cross_k + (long)l * n * S * H, cross_v + (long)l * n * S * H, m.tw.dec[l],
                         enc_out, n, S);
      }
    } else {
      bahdanau_encode(bst, m.bw, src, n, S, scratch_arena);
    }
    for (int b = 0; b < n; ++b) {
      tok_in[b] = m.tgt_vocab.bos;
      done[b] = 0;
    }
    int live = n;
    for (int t = 0; t < steps && live > 0; ++t) {
      if (gpu) {
#if ATTNLITE_HAVE_CUDA
        cuda->decode_step(tok_in, n, t, /*pos=*/o.d2l_compat ? 0 : t, o.attention);
#endif
      } else if (tr) {
        const int pos = o.d2l_compat ? 0 : t;
        for (int l = 0; l < L; ++l) {
          dec_attn[l].self = {att_self + ((long)l * T + t) * NH * T, (long)L * T * NH * T, T, T};
          dec_attn[l].cross = {att_cross + ((long)l * T + t) * NH * S, (long)L * T * NH * S, S, S};
        }
        transformer_decode(logits, o.attention ? dec_attn.data() : nullptr, m.tw, m.transformer,
                           m.P.data(), tok_in, n, 1, t, &pos, /*causal=*/false, caches.data(),
                           cross.data(), src_vl, scratch_arena);
      } else {
        bahdanau_decode_step(logits, att_step, m.bw, bst, tok_in, n, src_vl, scratch_arena);
        if (o.attention)
          for (int b = 0; b < n; ++b)
            std::memcpy(att_cross + ((long)b * T + t) * S, att_step + (long)b * S, sizeof(float) * S);
      }
      for (int b = 0; b < n; ++b) {
        if (done[b]) continue;
        Translation& r = results[(size_t)b];
        const auto [id, p] = choice(b);
        r.steps = t + 1;
        tok_in[b] = id;
        if (id == m.tgt_vocab.eos) {
          r.eos = true;
          done[b] = 1;
          --live;
          continue;
        }
        out_tokens[(long)b * T + r.num_tokens] = id;
        out_scores[(long)b * T + r.num_tokens] = p;
        ++r.num_tokens;
      }
    }
#if ATTNLITE_HAVE_CUDA
    if (gpu && o.attention) cuda->fetch_attention(att_enc, att_self, att_cross, n);
#endif
    for (int b = 0; b < n; ++b) finish(b, o);
  }

  void finish(int b, const DecodeOptions& o) {
    Translation& r = results[(size_t)b];
    r.tokens = out_tokens + (long)b * T;
    r.scores = out_scores + (long)b * T;
    char* p = text + (long)b * text_cap;
    size_t len = 0;
    for (int k = 0; k < r.num_tokens; ++k) {
      const std::string& tok = m.tgt_vocab.token(r.tokens[k]);
      if (k) p[len++] = ' ';
      std::memcpy(p + len, tok.data(), tok.size());
      len += tok.size();
    }
    r.text = std::string_view(p, len);
    r.S = S;
    r.ld = T;
    r.heads = NH;
    if (m.kind == ModelKind::Transformer) {
      r.layers = L;
      r.enc_self = o.attention ? att_enc + (long)b * L * NH * S * S : nullptr;
      r.dec_self = o.attention ? att_self + (long)b * L * T * NH * T : nullptr;
      r.cross = o.attention ? att_cross + (long)b * L * T * NH * S : nullptr;
    } else {
      r.layers = 0;
      r.cross = o.attention ? att_cross + (long)b * T * S : nullptr;
    }
  }
};

size_t Translator::required_bytes(const Model& model, const Limits& limits) {
  Impl impl(model, limits);
  Arena counter;
  impl.carve(counter);
  return counter.peak();
}

Translator::Translator(std::shared_ptr<const Model> model, const Limits& limits, void* block,
                       size_t block_bytes)
    : model_(std::move(model)), limits_(limits) {
  if (!model_) throw Error("Translator needs a model");
  impl_ = std::make_unique<Impl>(*model_, limits_);
  const size_t need = required_bytes(*model_, limits_);
  if (block) {
    if (block_bytes < need)
      throw Error("workspace block of " + std::to_string(block_bytes) + " bytes is too small: " +
                  std::to_string(need) + " required");
    if (reinterpret_cast<uintptr_t>(block) % Arena::kAlign)
      throw Error("workspace block must be 64-byte aligned");
  } else {
    impl_->owned = AlignedBuffer(need);
    block = impl_->owned.data();
    block_bytes = need;
  }
  Arena arena(block, block_bytes);
  impl_->carve(arena);
  impl_->bind();
#if ATTNLITE_HAVE_CUDA
  if (impl_->gpu)
    impl_->cuda = std::make_unique<cuda::Session>(*model_, impl_->B, impl_->S, impl_->T);
#endif
}

Translator::~Translator() = default;

const Translation& Translator::translate(std::string_view sentence, const DecodeOptions& opts) {
  translate_batch(&sentence, 1, opts);
  return impl_->results[0];
}

void Translator::translate_batch(const std::string_view* sentences, int n, const DecodeOptions& opts) {
  if (n < 1 || n > limits_.max_batch)
    throw Error("batch of " + std::to_string(n) + " sentences is outside [1, max_batch = " +
                std::to_string(limits_.max_batch) + "]");
  for (int i = 0; i < n; ++i) impl_->prepare(i, sentences[i], limits_.max_input_bytes);
  impl_->run(n, opts);
}

const Translation& Translator::result(int i) const {
  if (i < 0 || i >= limits_.max_batch) throw Error("result index out of range");
  return impl_->results[(size_t)i];
}

size_t Translator::workspace_bytes() const { return required_bytes(*model_, limits_); }
size_t Translator::scratch_peak() const { return impl_->scratch_arena.peak(); }

}  // namespace attnlite
