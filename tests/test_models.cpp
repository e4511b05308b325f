// Whole models against PyTorch fixtures: the Transformer encoder-decoder (teacher forced,
// and step by step with and without the book's position-0 quirk), the Seq2Seq encoders and
// the Bahdanau decoder.
#include <algorithm>

#include "attnlite/attention/positional_encoding.h"
#include "attnlite/models/seq2seq_bahdanau.h"
#include "attnlite/models/transformer.h"
#include "fixture.h"
using namespace attnlite::attention;
using namespace attnlite::models;

using namespace attnlite;
using attnlite::test::Fixture;
using attnlite::test::Scratch;

constexpr double kModelTol = 1e-5;

namespace {

struct TinyTransformer {
  Fixture fx{"transformer"};
  TransformerConfig c;
  TransformerWeights w;
  std::vector<float> P;
  static constexpr int B = 2, S = 10, T = 10, H = 32, NH = 4, L = 2, V = 60;
  TinyTransformer() {
    c.src_vocab_size = 50; c.tgt_vocab_size = 60; c.num_hiddens = 32; c.num_layers = 2;
    c.num_heads = 4; c.ffn_num_hiddens = 64; c.num_steps = 10;
    w = bind_transformer(fx.ws, c);
    REQUIRE(fx.unused_params().empty());  // every parameter is bound
    P.resize(1000 * 32);
    positional_encoding_table(P.data(), 1000, 32);
  }
};

}  // namespace

TEST_CASE("Transformer teacher forcing (causal decoder) matches PyTorch", "[models]") {
  FOR_EACH_KERNEL_TABLE();
  TinyTransformer m;
  Scratch s;
  auto src = m.fx.ids("in.src");
  auto vl = m.fx.ids("in.src_valid_lens");
  auto dec_in = m.fx.ids("in.dec_in");
  const ValidLens svl = ValidLens::per_batch(vl.data());
  const int B = 2, S = 10, H = 32, NH = 4, V = 60;
  std::vector<float> enc(B * S * H), ea0(8 * 100), ea1(8 * 100);
  AttnOut ea[2] = {AttnOut::dense(ea0.data(), NH, S, S), AttnOut::dense(ea1.data(), NH, S, S)};
  transformer_encode(enc.data(), ea, m.w, m.c, m.P.data(), src.data(), B, S, svl, s.cx);
  REQUIRE_CLOSE(ea0, m.fx.f("out.tf_enc_attn.0"), kModelTol);
  REQUIRE_CLOSE(ea1, m.fx.f("out.tf_enc_attn.1"), kModelTol);

  std::vector<float> ck(2 * B * S * H), cv(ck.size()), kc(2 * B * 10 * H), vc(kc.size());
  KVCache caches[2];
  CrossKV cross[2];
  for (int l = 0; l < 2; ++l) {
    project_cross_kv(&ck[l * B * S * H], &cv[l * B * S * H], m.w.dec[l], enc.data(), B, S, s.cx);
    cross[l] = {&ck[l * B * S * H], &cv[l * B * S * H], S};
    caches[l] = {&kc[l * B * 10 * H], &vc[l * B * 10 * H], 10};
  }
  std::vector<float> logits(B * 10 * V), ds[2], cs[2];
  DecoderAttnOut da[2];
  for (int l = 0; l < 2; ++l) {
    ds[l].resize(8 * 100);
    cs[l].resize(8 * 100);
    da[l] = {AttnOut::dense(ds[l].data(), NH, 10, 10), AttnOut::dense(cs[l].data(), NH, 10, S)};
  }
  transformer_decode(logits.data(), da, m.w, m.c, m.P.data(), dec_in.data(), B, 10, 0, nullptr,
                     /*causal=*/true, caches, cross, svl, s.cx);
  REQUIRE_CLOSE(logits, m.fx.f("out.tf_logits"), kModelTol);
  for (int l = 0; l < 2; ++l) {
    REQUIRE_CLOSE(ds[l], m.fx.f("out.tf_dec_self." + std::to_string(l)), kModelTol);
    REQUIRE_CLOSE(cs[l], m.fx.f("out.tf_cross." + std::to_string(l)), kModelTol);
  }
}

TEST_CASE("Transformer step-by-step greedy decoding with the key/value cache", "[models]") {
  FOR_EACH_KERNEL_TABLE();
  const std::string variant = GENERATE(as<std::string>(), "pos", "d2l");
  INFO("variant " << variant);
  TinyTransformer m;
  Scratch s;
  auto src = m.fx.ids("in.src");
  auto vl = m.fx.ids("in.src_valid_lens");
  const ValidLens svl = ValidLens::per_batch(vl.data());
  const int B = 2, S = 10, H = 32, NH = 4, V = 60, T = 10;
  std::vector<float> enc(B * S * H);
  transformer_encode(enc.data(), nullptr, m.w, m.c, m.P.data(), src.data(), B, S, svl, s.cx);
  std::vector<float> ck(2 * B * S * H), cv(ck.size()), kc(2 * B * T * H), vc(kc.size());
  KVCache caches[2];
  CrossKV cross[2];
  for (int l = 0; l < 2; ++l) {
    project_cross_kv(&ck[l * B * S * H], &cv[l * B * S * H], m.w.dec[l], enc.data(), B, S, s.cx);
    cross[l] = {&ck[l * B * S * H], &cv[l * B * S * H], S};
    caches[l] = {&kc[l * B * T * H], &vc[l * B * T * H], T};
  }
  std::vector<float> logits(T * B * V), ds[2], cs[2];
  for (int l = 0; l < 2; ++l) {
    ds[l].assign(T * B * NH * T, 0.f);
    cs[l].assign(T * B * NH * S, 0.f);
  }
  std::vector<int> tokens(B * T), in = {2, 2};
  for (int t = 0; t < T; ++t) {
    DecoderAttnOut da[2];
    for (int l = 0; l < 2; ++l)
      da[l] = {AttnOut{&ds[l][t * B * NH * T], NH * T, T, T}, AttnOut{&cs[l][t * B * NH * S], NH * S, S, S}};
    const int pos = variant == "pos" ? t : 0;
    transformer_decode(&logits[t * B * V], da, m.w, m.c, m.P.data(), in.data(), B, 1, t, &pos,
                       false, caches, cross, svl, s.cx);
    for (int b = 0; b < B; ++b) {
      const float* lg = &logits[(t * B + b) * V];
      in[b] = (int)(std::max_element(lg, lg + V) - lg);
      tokens[b * T + t] = in[b];
    }
  }
  REQUIRE_CLOSE(logits, m.fx.f("out." + variant + ".logits"), kModelTol);
  REQUIRE(tokens == m.fx.ids("out." + variant + ".tokens"));
  for (int l = 0; l < 2; ++l) {
    REQUIRE_CLOSE(ds[l], m.fx.f("out." + variant + ".dec_self." + std::to_string(l)), kModelTol);
    REQUIRE_CLOSE(cs[l], m.fx.f("out." + variant + ".cross." + std::to_string(l)), kModelTol);
  }
}

TEST_CASE("Seq2SeqEncoder (GRU and LSTM) on the book's (4, 7) input", "[models]") {
  FOR_EACH_KERNEL_TABLE();
  Scratch s;
  {
    Fixture fx("seq2seq_encoder");
    auto w = bind_seq2seq_encoder(fx.ws, "", ops::Cell::GRU, 10, 8, 16, 2);
    for (std::string sfx : {"", "_rand"}) {
      auto X = fx.ids("in.X" + sfx);
      std::vector<float> out(7 * 4 * 16), h(2 * 4 * 16);
      seq2seq_encode(out.data(), h.data(), nullptr, w, X.data(), 4, 7, s.cx);
      REQUIRE(fx.shape("out.output" + sfx) == std::vector<int64_t>{7, 4, 16});  // book: (7, 4, 16)
      REQUIRE_CLOSE(out, fx.f("out.output" + sfx), kModelTol);
      REQUIRE_CLOSE(h, fx.f("out.state" + sfx), kModelTol);
    }
  }
  {
    Fixture fx("seq2seq_lstm_encoder");
    auto w = bind_seq2seq_encoder(fx.ws, "", ops::Cell::LSTM, 10, 8, 16, 2);
    for (std::string sfx : {"", "_rand"}) {
      auto X = fx.ids("in.X" + sfx);
      std::vector<float> out(7 * 4 * 16), h(2 * 4 * 16), c(h.size());
      seq2seq_encode(out.data(), h.data(), c.data(), w, X.data(), 4, 7, s.cx);
      REQUIRE_CLOSE(out, fx.f("out.output" + sfx), kModelTol);
      REQUIRE_CLOSE(h, fx.f("out.h" + sfx), kModelTol);
      REQUIRE_CLOSE(c, fx.f("out.c" + sfx), kModelTol);
    }
  }
}

TEST_CASE("Seq2SeqAttentionDecoder (Bahdanau) matches PyTorch", "[models]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("bahdanau");
  Scratch s;
  BahdanauConfig c;
  c.src_vocab_size = c.tgt_vocab_size = 10;
  c.embed_size = 8; c.num_hiddens = 16; c.num_layers = 2; c.num_steps = 7;
  auto w = bind_bahdanau(fx.ws, c);
  REQUIRE(fx.unused_params().empty());
  const int B = 4, S = 7, Hh = 16, V = 10;
  std::vector<float> enc_out(B * S * Hh), kp(B * S * Hh), h(2 * B * Hh);
  BahdanauState st{enc_out.data(), kp.data(), h.data(), nullptr, 0};

  auto run = [&](const std::vector<int>& src, const std::vector<int>& dec, int T, ValidLens vl,
                 const std::string& sfx) {
    bahdanau_encode(st, w, src.data(), B, S, s.cx);
    std::vector<float> out(B * T * V), attn(T * B * S), lg(B * V);
    std::vector<int> tok(B);
    for (int t = 0; t < T; ++t) {
      for (int b = 0; b < B; ++b) tok[b] = dec[b * T + t];
      bahdanau_decode_step(lg.data(), &attn[t * B * S], w, st, tok.data(), B, vl, s.cx);
      for (int b = 0; b < B; ++b) std::copy(&lg[b * V], &lg[b * V] + V, &out[(b * T + t) * V]);
    }
    REQUIRE_CLOSE(out, fx.f("out.output" + sfx), kModelTol);
    REQUIRE_CLOSE(h, fx.f("out.state" + sfx), kModelTol);
    REQUIRE_CLOSE(attn, fx.f("out.attention_weights" + sfx), kModelTol);
  };
  SECTION("the book's zeros input") {
    auto X = fx.ids("in.X");
    run(X, X, 7, ValidLens::none(), "");
    REQUIRE(fx.shape("out.output") == std::vector<int64_t>{4, 7, 10});  // book: (4, 7, 10)
  }
  SECTION("random tokens with valid lengths") {
    auto vl = fx.ids("in.valid_lens");
    run(fx.ids("in.X_rand"), fx.ids("in.dec_rand"), 5, ValidLens::per_batch(vl.data()), "_rand");
  }
}
