// Transformer layers, RNNs and blocks against PyTorch fixtures (tolerance 1e-5).
#include "attnlite/attention/positional_encoding.h"
#include "attnlite/models/transformer.h"
#include "attnlite/models/layers.h"
#include "attnlite/models/rnn.h"
#include "fixture.h"
using namespace attnlite::attention;
using namespace attnlite::models;
using namespace attnlite::ops;

using namespace attnlite;
using attnlite::test::Fixture;
using attnlite::test::Scratch;

constexpr double kLayerTol = 1e-5;

TEST_CASE("PositionWiseFFN(4, 4, 8)", "[layers]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("ffn");
  Scratch s;
  auto w = bind_ffn(fx.ws, "", 4, 4, 8);
  auto X = fx.f("in.X");
  std::vector<float> Y(2 * 3 * 8);
  ffn(Y.data(), w, X.data(), 6, s.cx);
  REQUIRE_CLOSE(Y, fx.f("out.Y"), kLayerTol);
}

TEST_CASE("AddNorm over [3, 4] and [24]", "[layers]") {
  FOR_EACH_KERNEL_TABLE();
  Scratch s;
  {
    Fixture fx("addnorm");
    auto w = bind_add_norm(fx.ws, "", {3, 4});
    auto X = fx.f("in.X"), Y = fx.f("in.Y");
    std::vector<float> Z(24);
    add_norm(Z.data(), w, X.data(), Y.data(), 2, s.cx);
    REQUIRE_CLOSE(Z, fx.f("out.Z"), kLayerTol);
  }
  {
    Fixture fx("addnorm24");
    auto w = bind_add_norm(fx.ws, "", {24});
    auto X = fx.f("in.X"), Y = fx.f("in.Y");
    add_norm(X.data(), w, X.data(), Y.data(), 10, s.cx);  // in place
    REQUIRE_CLOSE(X, fx.f("out.Z"), kLayerTol);
  }
}

TEST_CASE("GRU and LSTM, 2 layers, PyTorch gate order", "[layers]") {
  FOR_EACH_KERNEL_TABLE();
  Scratch s;
  {
    Fixture fx("gru");
    auto w = bind_rnn(fx.ws, "", ops::Cell::GRU, 8, 16, 2);
    auto X = fx.f("in.X"), h = fx.f("in.h0");
    std::vector<float> Y(5 * 3 * 16);
    rnn_forward(Y.data(), h.data(), nullptr, w, X.data(), 5, 3, s.cx);
    REQUIRE_CLOSE(Y, fx.f("out.Y"), kLayerTol);
    REQUIRE_CLOSE(h, fx.f("out.hn"), kLayerTol);
    // Step by step gives the same final state.
    auto h2 = fx.f("in.h0");
    for (int t = 0; t < 5; ++t) rnn_step(h2.data(), nullptr, w, X.data() + t * 3 * 8, 3, s.cx);
    REQUIRE_CLOSE(h2, fx.f("out.hn"), kLayerTol);
  }
  {
    Fixture fx("lstm");
    auto w = bind_rnn(fx.ws, "", ops::Cell::LSTM, 8, 16, 2);
    auto X = fx.f("in.X"), h = fx.f("in.h0"), c = fx.f("in.c0");
    std::vector<float> Y(5 * 3 * 16);
    rnn_forward(Y.data(), h.data(), c.data(), w, X.data(), 5, 3, s.cx);
    REQUIRE_CLOSE(Y, fx.f("out.Y"), kLayerTol);
    REQUIRE_CLOSE(h, fx.f("out.hn"), kLayerTol);
    REQUIRE_CLOSE(c, fx.f("out.cn"), kLayerTol);
  }
}

TEST_CASE("EncoderBlock(24, ..., 8 heads) on (2, 100, 24)", "[layers]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("encoder_block");
  Scratch s;
  auto w = bind_encoder_block(fx.ws, "", 24, 48, 8, false, {24});
  auto X = fx.f("in.X");
  auto vl = fx.ids("in.valid_lens");
  std::vector<float> Y(2 * 100 * 24), attn(16 * 100 * 100);
  encoder_block(Y.data(), AttnOut::dense(attn.data(), 8, 100, 100), w, X.data(), 2, 100,
                ValidLens::per_batch(vl.data()), s.cx);
  REQUIRE(fx.shape("out.Y") == std::vector<int64_t>{2, 100, 24});  // the book: shape unchanged
  REQUIRE_CLOSE(Y, fx.f("out.Y"), kLayerTol);
  REQUIRE_CLOSE(attn, fx.f("out.attention_weights"), kLayerTol);
}

TEST_CASE("TransformerEncoder(200, ..., 2 layers) on (2, 100)", "[layers]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("transformer_encoder");
  Scratch s;
  TransformerConfig c;
  c.src_vocab_size = c.tgt_vocab_size = 200;
  c.num_hiddens = 24; c.num_layers = 2; c.num_heads = 8; c.ffn_num_hiddens = 48; c.num_steps = 100;
  TransformerWeights w;
  w.enc_embedding = bind_embedding(fx.ws, "embedding.weight", 200, 24);
  for (int l = 0; l < 2; ++l)
    w.enc.push_back(bind_encoder_block(fx.ws, "blks.block" + std::to_string(l) + ".", 24, 48, 8, false, {24}));
  std::vector<float> P(1000 * 24);
  positional_encoding_table(P.data(), 1000, 24);
  auto X = fx.ids("in.X");
  auto vl = fx.ids("in.valid_lens");
  std::vector<float> Y(2 * 100 * 24), a0(16 * 100 * 100), a1(a0.size());
  AttnOut attn[2] = {AttnOut::dense(a0.data(), 8, 100, 100), AttnOut::dense(a1.data(), 8, 100, 100)};
  transformer_encode(Y.data(), attn, w, c, P.data(), X.data(), 2, 100, ValidLens::per_batch(vl.data()), s.cx);
  REQUIRE_CLOSE(Y, fx.f("out.Y"), kLayerTol);
  REQUIRE_CLOSE(a0, fx.f("out.attention_weights.0"), kLayerTol);
  REQUIRE_CLOSE(a1, fx.f("out.attention_weights.1"), kLayerTol);
}

TEST_CASE("DecoderBlock in eval mode (the book's example)", "[layers]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("decoder_block");
  Scratch s;
  auto enc = bind_encoder_block(fx.ws, "enc.", 24, 48, 8, false, {24});
  auto dec = bind_decoder_block(fx.ws, "", 24, 48, 8, false, {24});
  auto X = fx.f("in.X");
  auto vl = fx.ids("in.valid_lens");
  const ValidLens src = ValidLens::per_batch(vl.data());
  std::vector<float> E(2 * 100 * 24), Y(E.size()), self(16 * 100 * 100), cross(self.size());
  encoder_block(E.data(), AttnOut{}, enc, X.data(), 2, 100, src, s.cx);
  REQUIRE_CLOSE(E, fx.f("out.enc_outputs"), kLayerTol);
  std::vector<float> ck(E.size()), cv(E.size()), kc(E.size()), vc(E.size());
  project_cross_kv(ck.data(), cv.data(), dec, E.data(), 2, 100, s.cx);
  KVCache cache{kc.data(), vc.data(), 100};
  CrossKV cr{ck.data(), cv.data(), 100};
  DecoderAttnOut attn{AttnOut::dense(self.data(), 8, 100, 100), AttnOut::dense(cross.data(), 8, 100, 100)};
  decoder_block(Y.data(), attn, dec, X.data(), 2, 100, 0, /*causal=*/false, cache, cr, src, s.cx);
  REQUIRE_CLOSE(Y, fx.f("out.Y"), kLayerTol);
  REQUIRE_CLOSE(self, fx.f("out.self_attention_weights"), kLayerTol);
  REQUIRE_CLOSE(cross, fx.f("out.cross_attention_weights"), kLayerTol);
}
