#include "attnlite/translate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "attnlite/error.h"
#include "beam.h"

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

const char* kBeamCpuOnly = "beam search runs on the CPU only (Device::CUDA decodes greedily)";

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
}  // namespace

// Every buffer of a session, carved from one block. carve() runs twice: on a counting arena
// (required_bytes) and on the real block, so the size and the layout cannot disagree.
// With Device::CUDA the encoder/decoder buffers live on the device (cuda::Session); the
// host block keeps the inputs, the results and the attention weights copied back.
struct Translator::Impl {
  const Model& m;
  bool gpu = false;               // Device::CUDA
  int B = 1, S = 0, T = 0, L = 0, NH = 1, H = 0, V = 0;
  int KM = 1, R = 1;              // max_beam; R = B * KM decoder rows
  int F = 0;                      // finished hypotheses a sentence can collect: KM * (T + 1)
  size_t input_cap = 0, text_cap = 0, scratch_floats = 0, tmp_floats = 0;

  // inputs
  char* pre = nullptr;            // preprocessed sentence
  std::string_view* views = nullptr;  // (S) token views into pre
  int* src = nullptr;             // (B, S)
  int* valid = nullptr;           // (B)
  // outputs
  int* out_tokens = nullptr;      // (B, T)
  float* out_scores = nullptr;    // (B, T)
  char* text = nullptr;           // (B, text_cap)
  int* tok_in = nullptr;          // (R)
  float* logits = nullptr;        // (R, V)
  double* logp = nullptr;         // (R) greedy: summed log-probabilities; beam: live scores
  Hypothesis* hyps = nullptr;     // (B, KM) n-best lists
  int* nbest_size = nullptr;      // (B)
  // Transformer
  float* enc_out = nullptr;       // (R, S, H)
  float* cross_k = nullptr;       // (L, R, S, H)
  float* cross_v = nullptr;
  float* cache_k = nullptr;       // (L, R, T, H)
  float* cache_v = nullptr;
  float* att_enc = nullptr;       // (B, L, NH, S, S)
  float* att_self = nullptr;      // (B, L, T, NH, T)
  float* att_cross = nullptr;     // (B, L, T, NH, S)   Bahdanau: (B, T, S)
  float* att_step = nullptr;      // (R, S) Bahdanau step weights
  // Bahdanau
  BahdanauState bst;              // rows (R)
  float* scratch = nullptr;
  // Beam search (KM > 1): live hypotheses are rows b * K + j; finished ones per sentence.
  int* row_valid = nullptr;       // (R) source valid length of each row
  int* parent = nullptr;          // (R) the live hypothesis each new one extends
  int* live_tok = nullptr;        // (R, T) tokens of each live hypothesis
  float* live_prob = nullptr;     // (R, T)
  int* next_tok = nullptr;        // (R, T) the same for the next step (swapped)
  float* next_prob = nullptr;
  beam::Candidate* cands = nullptr;  // (2 KM) ranked candidates of one sentence
  int* fin_tok = nullptr;         // (B, F, T) finished hypotheses
  float* fin_prob = nullptr;      // (B, F, T)
  double* fin_logp = nullptr;     // (B, F)
  double* fin_score = nullptr;    // (B, F)
  int* fin_len = nullptr;         // (B, F)
  int* fin_eos = nullptr;         // (B, F)
  int* fin_count = nullptr;       // (B)
  int* order = nullptr;           // (F)
  int* fin_best = nullptr;        // (B) best finished so far, -1 before the first
  float* hist_self = nullptr;     // (R, L, T, NH, T) each row's attention history
  float* hist_cross = nullptr;    // (R, L, T, NH, S)   Bahdanau: (R, T, S)
  float* tmp = nullptr;           // (tmp_floats) row gathers
  char* nbest_text = nullptr;     // (R, text_cap)

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
    if (lim.max_beam < 1 || lim.max_beam > 64)
      throw Error("limits: max_beam must be in [1, 64], got " + std::to_string(lim.max_beam));
    if (gpu && lim.max_beam > 1) throw Error(std::string("limits: max_beam > 1: ") + kBeamCpuOnly);
    KM = lim.max_beam;
    R = B * KM;
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
    if (2 * KM > V)
      throw Error("limits: max_beam " + std::to_string(KM) + " is over half the target vocabulary (" +
                  std::to_string(V) + " tokens)");
    F = KM * (T + 1);
    input_cap = lim.max_input_bytes * 2 + 16;  // preprocessing adds at most one space per char
    size_t maxtok = 1;
    for (int i = 0; i < V; ++i) maxtok = std::max(maxtok, m.tgt_vocab.token(i).size());
    text_cap = (size_t)T * (maxtok + 1) + 1;
    if (gpu) {
      scratch_floats = 0;  // the device workspace holds the activations
    } else if (tr) {
      const size_t Rs = (size_t)B * S, Ff = m.transformer.ffn_num_hiddens, Hs = H, Rd = R;
      const size_t enc = 3 * Rs * Hs + std::max({4 * Rs * Hs + (size_t)S * S, Rs * Hs, Rs * Ff});
      const size_t dec = 6 * Rd * Hs + std::max({(size_t)std::max(S, T), Rd * Hs, Rd * Ff});
      scratch_floats = std::max(enc, dec) + 16 * 32;
    } else {
      const auto& c = m.bahdanau;
      const size_t G = (c.cell == RNNW::GRU ? 3 : 4) * (size_t)H, E = c.embed_size, Bs = B, Rd = R;
      const size_t enc = (size_t)S * Bs * (2 * H + E + G) + Bs * G;
      const size_t dec = Rd * H + Rd * (H + E) + std::max(Rd * H + H, 2 * Rd * G);
      scratch_floats = std::max(enc, dec) + 16 * 32;
    }
    if (KM > 1) {  // row gathers and the Bahdanau state expansion
      const size_t K = KM;
      tmp_floats = std::max({K * T * H, (size_t)L * B * H, K * T * S,
                             tr ? K * L * T * NH * (size_t)std::max(S, T) : 0});
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
    tok_in = a.take<int>((size_t)R);
    if (!gpu) logits = a.floats((size_t)R * V);
    logp = a.take<double>((size_t)R);
    hyps = a.take<Hypothesis>((size_t)R);
    nbest_size = a.take<int>((size_t)B);
    if (tr) {
      if (!gpu) {
        enc_out = a.floats((size_t)R * S * H);
        cross_k = a.floats((size_t)L * R * S * H);
        cross_v = a.floats((size_t)L * R * S * H);
        cache_k = a.floats((size_t)L * R * T * H);
        cache_v = a.floats((size_t)L * R * T * H);
      }
      att_enc = a.floats((size_t)B * L * NH * S * S);
      att_self = a.floats((size_t)B * L * T * NH * T);
      att_cross = a.floats((size_t)B * L * T * NH * S);
    } else {
      bst.enc_out = a.floats((size_t)R * S * H);
      bst.enc_kp = a.floats((size_t)R * S * H);
      bst.h = a.floats((size_t)L * R * H);
      bst.c = m.bahdanau.cell == RNNW::LSTM ? a.floats((size_t)L * R * H) : nullptr;
      att_cross = a.floats((size_t)B * T * S);
      att_step = a.floats((size_t)R * S);
    }
    if (scratch_floats) scratch = a.floats(scratch_floats);
    if (KM > 1) {
      row_valid = a.take<int>((size_t)R);
      parent = a.take<int>((size_t)R);
      live_tok = a.take<int>((size_t)R * T);
      live_prob = a.floats((size_t)R * T);
      next_tok = a.take<int>((size_t)R * T);
      next_prob = a.floats((size_t)R * T);
      cands = a.take<beam::Candidate>(2 * (size_t)KM);
      fin_tok = a.take<int>((size_t)B * F * T);
      fin_prob = a.floats((size_t)B * F * T);
      fin_logp = a.take<double>((size_t)B * F);
      fin_score = a.take<double>((size_t)B * F);
      fin_len = a.take<int>((size_t)B * F);
      fin_eos = a.take<int>((size_t)B * F);
      fin_count = a.take<int>((size_t)B);
      order = a.take<int>((size_t)F);
      fin_best = a.take<int>((size_t)B);
      if (tr) {
        hist_self = a.floats((size_t)R * L * T * NH * T);
        hist_cross = a.floats((size_t)R * L * T * NH * S);
      } else {
        hist_cross = a.floats((size_t)R * T * S);
      }
      tmp = a.floats(tmp_floats);
      nbest_text = a.take<char>((size_t)R * text_cap);
    }
  }

  void bind() {
    scratch_arena = Arena(scratch, scratch_floats * sizeof(float));
    results.assign((size_t)B, Translation{});
    done.assign((size_t)B, 0);
    for (int r = 0; r < R; ++r) new (hyps + r) Hypothesis{};
    for (int b = 0; b < B; ++b) nbest_size[b] = 0;
    if (m.kind != ModelKind::Transformer) return;
    for (int l = 0; l < L; ++l) {
      enc_attn.push_back({att_enc + (long)l * NH * S * S, (long)L * NH * S * S, (long)S * S, S});
      dec_attn.push_back({});
      caches.push_back({cache_k + (long)l * R * T * H, cache_v + (long)l * R * T * H, T});
      cross.push_back({cross_k + (long)l * R * S * H, cross_v + (long)l * R * S * H, S});
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

  struct Choice {
    int id;
    float p;      // its softmax probability
    double logp;  // its log-probability, float64
  };
  // Greedy choice for row b of logits.
  Choice pick(int b) const {
    const float* lg = logits + (long)b * V;
    int best = 0;
    for (int v = 1; v < V; ++v)
      if (lg[v] > lg[best]) best = v;
    double s = 0.0;
    for (int v = 0; v < V; ++v) s += std::exp((double)lg[v] - lg[best]);
    return {best, (float)(1.0 / s), -std::log(s)};
  }

  // This step's greedy choice for row b: from the device (argmax ran there) or the logits.
  Choice choice(int b) const {
#if ATTNLITE_HAVE_CUDA
    if (gpu) return {cuda->ids()[b], cuda->probs()[b], std::log((double)cuda->probs()[b])};
#endif
    return pick(b);
  }

  void run(int n, const DecodeOptions& o) {
    const bool tr = m.kind == ModelKind::Transformer;
    if (o.max_steps < 0 || o.max_steps > T)
      throw Error("max_steps " + std::to_string(o.max_steps) + " is outside [0, max_tgt_steps = " +
                  std::to_string(T) + "]");
    if (o.beam_size > 1 && gpu) throw Error(kBeamCpuOnly);
    if (o.beam_size < 1 || o.beam_size > KM)
      throw Error("beam_size " + std::to_string(o.beam_size) + " is outside [1, max_beam = " +
                  std::to_string(KM) + "]");
    if (!std::isfinite(o.length_penalty)) throw Error("length_penalty must be finite");
    const int steps = o.max_steps ? o.max_steps : T;
    if (o.beam_size > 1) return run_beam(n, o, steps);
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
      logp[b] = 0.0;
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
        const auto [id, p, lp] = choice(b);
        r.steps = t + 1;
        tok_in[b] = id;
        logp[b] += lp;
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
    for (int b = 0; b < n; ++b) {
      finish(b, o);
      const Translation& r = results[(size_t)b];
      Hypothesis& h = hyps[(long)b * KM];
      h = {r.text, r.tokens, r.scores, r.num_tokens, r.steps, r.eos, logp[b],
           beam::penalized(logp[b], r.steps, o.length_penalty)};
      nbest_size[b] = 1;
    }
  }

  // ---- Beam search (the rules are in translate.h). Hypothesis j of sentence b is row
  // b * K + j of every per-row buffer; `rows` = n * K rows are in use.

  // The encoder over the n sentences, then each sentence's decoder state copied to its K rows.
  void beam_encode(int n, int K, bool attention) {
    const int rows = n * K;
    for (int b = 0; b < n; ++b)
      for (int j = 0; j < K; ++j) row_valid[b * K + j] = valid[b];
    if (m.kind == ModelKind::Transformer) {
      transformer_encode(enc_out, attention ? enc_attn.data() : nullptr, m.tw, m.transformer,
                         m.P.data(), src, n, S, ValidLens::per_batch(valid), scratch_arena);
      for (int l = 0; l < L; ++l) {  // layer l's rows packed at the front of its (R, S, H)
        float* k = cross_k + (long)l * rows * S * H;
        float* v = cross_v + (long)l * rows * S * H;
        project_cross_kv(k, v, m.tw.dec[l], enc_out, n, S);
        beam::expand_rows(k, (long)S * H, n, K);
        beam::expand_rows(v, (long)S * H, n, K);
        cross[l].k = k;
        cross[l].v = v;
      }
      return;
    }
    bahdanau_encode(bst, m.bw, src, n, S, scratch_arena);
    beam::expand_rows(bst.enc_out, (long)S * H, n, K);
    beam::expand_rows(bst.enc_kp, (long)S * H, n, K);
    for (float* st : {bst.h, bst.c}) {  // (L, n, H) -> (L, n * K, H)
      if (!st) continue;
      std::memcpy(tmp, st, sizeof(float) * L * n * H);
      for (int l = 0; l < L; ++l)
        for (int r = 0; r < rows; ++r)
          std::memcpy(st + ((long)l * rows + r) * H, tmp + ((long)l * n + r / K) * H, sizeof(float) * H);
    }
  }

  // One decoder step over all rows; attention goes to each row's history.
  void beam_decode(int rows, int t, const DecodeOptions& o) {
    const ValidLens vl = ValidLens::per_batch(row_valid);
    if (m.kind == ModelKind::Transformer) {
      const int pos = o.d2l_compat ? 0 : t;
      for (int l = 0; l < L; ++l) {
        dec_attn[l].self = {hist_self + ((long)l * T + t) * NH * T, (long)L * T * NH * T, T, T};
        dec_attn[l].cross = {hist_cross + ((long)l * T + t) * NH * S, (long)L * T * NH * S, S, S};
      }
      transformer_decode(logits, o.attention ? dec_attn.data() : nullptr, m.tw, m.transformer,
                         m.P.data(), tok_in, rows, 1, t, &pos, /*causal=*/false, caches.data(),
                         cross.data(), vl, scratch_arena);
      return;
    }
    bahdanau_decode_step(logits, att_step, m.bw, bst, tok_in, rows, vl, scratch_arena);
    if (o.attention)
      for (int r = 0; r < rows; ++r)
        std::memcpy(hist_cross + ((long)r * T + t) * S, att_step + (long)r * S, sizeof(float) * S);
  }

  long hist_self_len() const { return (long)L * T * NH * T; }
  long hist_cross_len() const { return m.kind == ModelKind::Transformer ? (long)L * T * NH * S : (long)T * S; }

  // Appends a finished hypothesis to sentence b's list: row `row`'s first ntok tokens, with
  // <eos> after them when eos. The best so far keeps a copy of the row's attention.
  void add_finished(int b, int row, int ntok, bool eos, double lp, const DecodeOptions& o) {
    const int f = fin_count[b]++;
    const long fi = (long)b * F + f;
    std::memcpy(fin_tok + fi * T, live_tok + (long)row * T, sizeof(int) * ntok);
    std::memcpy(fin_prob + fi * T, live_prob + (long)row * T, sizeof(float) * ntok);
    fin_logp[fi] = lp;
    fin_len[fi] = ntok + (eos ? 1 : 0);
    fin_eos[fi] = eos;
    fin_score[fi] = beam::penalized(lp, fin_len[fi], o.length_penalty);
    if (fin_best[b] >= 0 && !(fin_score[fi] > fin_score[(long)b * F + fin_best[b]])) return;
    fin_best[b] = f;
    if (!o.attention) return;
    if (hist_self)
      std::memcpy(att_self + b * hist_self_len(), hist_self + row * hist_self_len(), sizeof(float) * hist_self_len());
    std::memcpy(att_cross + b * hist_cross_len(), hist_cross + row * hist_cross_len(), sizeof(float) * hist_cross_len());
  }

  // Step t of sentence b: rank the candidates, finish <eos> ones, pick the next K live
  // hypotheses and move every per-row state to them. False when the sentence stops.
  bool beam_select(int b, int K, int t, int rows, const DecodeOptions& o) {
    const int eos = m.tgt_vocab.eos, b0 = b * K;
    beam::TopList top{cands, 0, 2 * K};  // at most K <eos> among them, so K others
    for (int h = 0; h < (t == 0 ? 1 : K); ++h) {
      const float* lg = logits + (long)(b0 + h) * V;
      const beam::LogSoftmax ls = beam::log_softmax(lg, V);
      for (int v = 0; v < V; ++v) {
        const double lp = ls(lg[v]);
        top.offer(logp[b0 + h] + lp, lp, h, v);
      }
    }
    int nl = 0;
    bool all_eos = true;
    for (int r = 0; r < top.n && nl < K; ++r) {
      const beam::Candidate& c = top.c[r];
      if (c.token == eos) {
        if (r < K) add_finished(b, b0 + c.hyp, t, /*eos=*/true, c.score, o);
        continue;
      }
      if (r < K) all_eos = false;
      const long dst = b0 + nl, from = b0 + c.hyp;
      parent[dst] = c.hyp;
      std::memcpy(next_tok + dst * T, live_tok + from * T, sizeof(int) * t);
      std::memcpy(next_prob + dst * T, live_prob + from * T, sizeof(float) * t);
      next_tok[dst * T + t] = c.token;
      next_prob[dst * T + t] = (float)std::exp(c.lp);
      tok_in[dst] = c.token;
      logp[dst] = c.score;  // the offers above are done reading the old scores
      ++nl;
    }
    if (all_eos) return false;
    const int* par = parent + b0;
    if (m.kind == ModelKind::Transformer) {
      for (int l = 0; l < L; ++l) {
        beam::gather_rows(caches[l].k + (long)b0 * T * H, (long)T * H, (long)(t + 1) * H, par, K, tmp);
        beam::gather_rows(caches[l].v + (long)b0 * T * H, (long)T * H, (long)(t + 1) * H, par, K, tmp);
      }
      if (o.attention)
        beam::gather_rows(hist_self + b0 * hist_self_len(), hist_self_len(), hist_self_len(), par, K, tmp);
    } else {
      for (int l = 0; l < L; ++l) {
        beam::gather_rows(bst.h + ((long)l * rows + b0) * H, (long)H, (long)H, par, K, tmp);
        if (bst.c) beam::gather_rows(bst.c + ((long)l * rows + b0) * H, (long)H, (long)H, par, K, tmp);
      }
    }
    if (o.attention)
      beam::gather_rows(hist_cross + b0 * hist_cross_len(), hist_cross_len(), hist_cross_len(), par, K, tmp);
    return true;
  }

  void run_beam(int n, const DecodeOptions& o, int steps) {
    const int K = o.beam_size, rows = n * K;
    if (o.attention) {
      if (m.kind == ModelKind::Transformer) {
        std::memset(att_enc, 0, sizeof(float) * (size_t)n * L * NH * S * S);
        std::memset(att_self, 0, sizeof(float) * (size_t)n * hist_self_len());
        std::memset(hist_self, 0, sizeof(float) * (size_t)rows * hist_self_len());
      }
      std::memset(att_cross, 0, sizeof(float) * (size_t)n * hist_cross_len());
      std::memset(hist_cross, 0, sizeof(float) * (size_t)rows * hist_cross_len());
    }
    beam_encode(n, K, o.attention);
    for (int b = 0; b < n; ++b) {
      done[b] = 0;
      fin_count[b] = 0;
      fin_best[b] = -1;
    }
    for (int r = 0; r < rows; ++r) {
      tok_in[r] = m.tgt_vocab.bos;
      logp[r] = 0.0;
    }
    int active = n, t = 0;
    for (; t < steps && active > 0; ++t) {
      beam_decode(rows, t, o);
      for (int b = 0; b < n; ++b) {
        if (done[b] || beam_select(b, K, t, rows, o)) continue;
        done[b] = 1;
        --active;
      }
      std::swap(live_tok, next_tok);
      std::swap(live_prob, next_prob);
    }
    for (int b = 0; b < n; ++b) {
      if (!done[b])  // out of steps: the live hypotheses finish as they are
        for (int j = 0; j < K; ++j) add_finished(b, b * K + j, t, /*eos=*/false, logp[b * K + j], o);
      beam_results(b, K, o);
    }
  }

  // The n-best list and the Translation (the best hypothesis) of sentence b.
  void beam_results(int b, int K, const DecodeOptions& o) {
    const int nf = fin_count[b];
    beam::rank(order, fin_score + (long)b * F, nf);
    nbest_size[b] = std::min(K, nf);
    for (int k = 0; k < nbest_size[b]; ++k) {
      const long fi = (long)b * F + order[k];
      const int ntok = fin_len[fi] - fin_eos[fi];
      char* p = nbest_text + ((long)b * KM + k) * text_cap;
      const size_t len = join_tokens(p, m.tgt_vocab, fin_tok + fi * T, ntok);
      hyps[(long)b * KM + k] = {std::string_view(p, len), fin_tok + fi * T, fin_prob + fi * T, ntok,
                                fin_len[fi], fin_eos[fi] != 0, fin_logp[fi], fin_score[fi]};
    }
    const long fi = (long)b * F + fin_best[b];  // == order[0]: both keep the first of equal scores
    Translation& r = results[(size_t)b];
    r.num_tokens = fin_len[fi] - fin_eos[fi];
    r.steps = fin_len[fi];
    r.eos = fin_eos[fi] != 0;
    std::memcpy(out_tokens + (long)b * T, fin_tok + fi * T, sizeof(int) * r.num_tokens);
    std::memcpy(out_scores + (long)b * T, fin_prob + fi * T, sizeof(float) * r.num_tokens);
    finish(b, o);
  }

  // Fills results[b] from its tokens (out_tokens row b) and the attention buffers.
  void finish(int b, const DecodeOptions& o) {
    Translation& r = results[(size_t)b];
    r.tokens = out_tokens + (long)b * T;
    r.scores = out_scores + (long)b * T;
    char* p = text + (long)b * text_cap;
    r.text = std::string_view(p, join_tokens(p, m.tgt_vocab, r.tokens, r.num_tokens));
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

namespace {
// 16 GiB on 64-bit hosts, half the address space on 32-bit ones (WASM).
constexpr size_t kMaxWorkspaceBytes =
    (size_t)std::min<uint64_t>(uint64_t(16) << 30, (uint64_t)(SIZE_MAX / 2));
}  // namespace

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
  if (!block && need > kMaxWorkspaceBytes)
    throw Error("the workspace these limits need (" + std::to_string(need) + " bytes) exceeds " +
                "the cap of " + std::to_string(kMaxWorkspaceBytes) +
                " bytes; lower max_batch, max_beam or max_tgt_steps");
  if (block) {
    if (block_bytes < need)
      throw Error("workspace block of " + std::to_string(block_bytes) + " bytes is too small: " +
                  std::to_string(need) + " required");
    if (reinterpret_cast<uintptr_t>(block) % Arena::kAlign)
      throw Error("workspace block must be 64-byte aligned");
  } else {
    try {
      impl_->owned = AlignedBuffer(need);
    } catch (const std::bad_alloc&) {
      throw Error("cannot allocate the " + std::to_string(need) +
                  "-byte workspace these limits need (lower max_batch, max_beam or max_tgt_steps)");
    }
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

NBest Translator::nbest(int i) const {
  if (i < 0 || i >= limits_.max_batch) throw Error("nbest index out of range");
  return {impl_->hyps + (long)i * impl_->KM, impl_->nbest_size[i]};
}

size_t Translator::workspace_bytes() const { return required_bytes(*model_, limits_); }
size_t Translator::scratch_peak() const { return impl_->scratch_arena.peak(); }

}  // namespace attnlite
