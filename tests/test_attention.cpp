// Attention modules against PyTorch fixtures (tolerance 1e-5) and the book's printed facts.
#include <cmath>

#include "attnlite/attention/additive.h"
#include "attnlite/attention/dot_product.h"
#include "attnlite/attention/masked_softmax.h"
#include "attnlite/attention/multi_head.h"
#include "attnlite/attention/nadaraya_watson.h"
#include "attnlite/attention/positional_encoding.h"
#include "fixture.h"
using namespace attnlite::attention;

using namespace attnlite;
using attnlite::test::Fixture;
using attnlite::test::Scratch;

constexpr double kAttentionTol = 1e-5;

TEST_CASE("sequence_mask matches the book", "[attention]") {
  Fixture fx("sequence_mask");
  auto x = fx.f("in.X");
  auto vl = fx.ids("in.valid_len");
  sequence_mask(x.data(), 2, 3, vl.data(), 0.f);
  REQUIRE_CLOSE(x, fx.f("out.Y"), 0.0);
  // 3-D input (2, 3, 4) masked along axis 1 with value -1: rows of 4 are the unit.
  auto x3 = fx.f("in.X3");
  std::vector<float> y3 = x3;
  for (int b = 0; b < 2; ++b)
    for (int t = vl[b]; t < 3; ++t)
      for (int k = 0; k < 4; ++k) y3[(b * 3 + t) * 4 + k] = -1.f;
  REQUIRE_CLOSE(y3, fx.f("out.Y3"), 0.0);
}

TEST_CASE("masked_softmax with 1-D, 2-D and no valid_lens", "[attention]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("masked_softmax");
  auto v1 = fx.ids("in.valid_lens_1d");
  auto v2 = fx.ids("in.valid_lens_2d");
  auto x = fx.f("in.X");
  masked_softmax(x.data(), 2, 2, 4, ValidLens::per_batch(v1.data()));
  REQUIRE_CLOSE(x, fx.f("out.Y_1d"), kAttentionTol);
  // masked entries are exactly zero (book: "masked" columns print as 0.)
  for (int b = 0; b < 2; ++b)
    for (int q = 0; q < 2; ++q)
      for (int k = v1[b]; k < 4; ++k) REQUIRE(x[(b * 2 + q) * 4 + k] == 0.f);
  x = fx.f("in.X");
  masked_softmax(x.data(), 2, 2, 4, ValidLens::per_query(v2.data()));
  REQUIRE_CLOSE(x, fx.f("out.Y_2d"), kAttentionTol);
  x = fx.f("in.X");
  masked_softmax(x.data(), 2, 2, 4, ValidLens::none());
  REQUIRE_CLOSE(x, fx.f("out.Y_none"), kAttentionTol);
}

TEST_CASE("AdditiveAttention: the book's example", "[attention]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("additive_attention");
  Scratch s;
  auto w = bind_additive_attention(fx.ws, "", 2, 20, 8);
  auto q = fx.f("in.queries"), k = fx.f("in.keys"), v = fx.f("in.values");
  auto vl = fx.ids("in.valid_lens");
  std::vector<float> out(2 * 1 * 4), attn(2 * 1 * 10);
  additive_attention(out.data(), attn.data(), w, q.data(), k.data(), v.data(), 2, 1, 10, 4,
                     ValidLens::per_batch(vl.data()), s.cx);
  REQUIRE_CLOSE(out, fx.f("out.output"), kAttentionTol);
  REQUIRE_CLOSE(attn, fx.f("out.attention_weights"), kAttentionTol);
  // Book: identical keys give uniform weights over the valid length, and the outputs
  // [[2, 3, 4, 5]] and [[10, 11, 12, 13]].
  for (int j = 0; j < 10; ++j) {
    CHECK(attn[j] == Approx(j < 2 ? 0.5 : 0.0).margin(1e-7));
    CHECK(attn[10 + j] == Approx(j < 6 ? 1.0 / 6 : 0.0).margin(1e-7));
  }
  const float book[8] = {2, 3, 4, 5, 10, 11, 12, 13};
  for (int i = 0; i < 8; ++i) CHECK(out[i] == Approx(book[i]).margin(1e-5));

  auto kr = fx.f("in.keys_rand");
  additive_attention(out.data(), attn.data(), w, q.data(), kr.data(), v.data(), 2, 1, 10, 4,
                     ValidLens::per_batch(vl.data()), s.cx);
  REQUIRE_CLOSE(out, fx.f("out.output_rand"), kAttentionTol);
  REQUIRE_CLOSE(attn, fx.f("out.attention_weights_rand"), kAttentionTol);
}

TEST_CASE("DotProductAttention: book example and 2-D valid lengths", "[attention]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("dot_product_attention");
  auto q = fx.f("in.queries"), k = fx.f("in.keys"), v = fx.f("in.values");
  auto vl = fx.ids("in.valid_lens");
  std::vector<float> out(2 * 4), attn(2 * 10);
  dot_product_attention(out.data(), attn.data(), q.data(), k.data(), v.data(), 2, 1, 10, 2, 4,
                        ValidLens::per_batch(vl.data()));
  REQUIRE_CLOSE(out, fx.f("out.output"), kAttentionTol);
  REQUIRE_CLOSE(attn, fx.f("out.attention_weights"), kAttentionTol);

  auto q2 = fx.f("in.queries2"), k2 = fx.f("in.keys2"), v2 = fx.f("in.values2");
  auto vl2 = fx.ids("in.valid_lens2");
  std::vector<float> out2(2 * 3 * 6), attn2(2 * 3 * 5);
  dot_product_attention(out2.data(), attn2.data(), q2.data(), k2.data(), v2.data(), 2, 3, 5, 8, 6,
                        ValidLens::per_query(vl2.data()));
  REQUIRE_CLOSE(out2, fx.f("out.output2"), kAttentionTol);
  REQUIRE_CLOSE(attn2, fx.f("out.attention_weights2"), kAttentionTol);
}

TEST_CASE("MultiHeadAttention(100, 100, 100, 100, 5) on (2, 4, 100)", "[attention]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("multi_head_attention");
  Scratch s;
  auto w = bind_multi_head_attention(fx.ws, "", 100, 100, 100, 100, 5, false);
  auto X = fx.f("in.X"), Y = fx.f("in.Y");
  auto vl = fx.ids("in.valid_lens");
  std::vector<float> out(2 * 4 * 100), attn(10 * 4 * 6);
  multi_head_attention(out.data(), AttnOut::dense(attn.data(), 5, 4, 6), w, X.data(), Y.data(),
                       Y.data(), 2, 4, 6, ValidLens::per_batch(vl.data()), s.cx);
  REQUIRE(fx.shape("out.output") == std::vector<int64_t>{2, 4, 100});  // the book's shape
  REQUIRE_CLOSE(out, fx.f("out.output"), kAttentionTol);
  REQUIRE_CLOSE(attn, fx.f("out.attention_weights"), kAttentionTol);
  // valid_lens repeat per head: batch 0 rows see 3 keys, batch 1 rows see 2.
  for (int bh = 0; bh < 10; ++bh)
    for (int q = 0; q < 4; ++q)
      for (int k = bh < 5 ? 3 : 2; k < 6; ++k) REQUIRE(attn[(bh * 4 + q) * 6 + k] == 0.f);
}

TEST_CASE("MultiHeadAttention with biases and distinct sizes", "[attention]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("multi_head_attention_bias");
  Scratch s;
  auto w = bind_multi_head_attention(fx.ws, "", 24, 20, 16, 40, 4, true);
  auto Q = fx.f("in.Q"), K = fx.f("in.K"), V = fx.f("in.V");
  auto vl = fx.ids("in.valid_lens");
  std::vector<float> out(2 * 3 * 40), attn(8 * 3 * 5);
  multi_head_attention(out.data(), AttnOut::dense(attn.data(), 4, 3, 5), w, Q.data(), K.data(),
                       V.data(), 2, 3, 5, ValidLens::per_batch(vl.data()), s.cx);
  REQUIRE_CLOSE(out, fx.f("out.output"), kAttentionTol);
  REQUIRE_CLOSE(attn, fx.f("out.attention_weights"), kAttentionTol);
  // Without an attention output the result is the same.
  std::vector<float> out2(out.size());
  multi_head_attention(out2.data(), AttnOut{}, w, Q.data(), K.data(), V.data(), 2, 3, 5,
                       ValidLens::per_batch(vl.data()), s.cx);
  REQUIRE_CLOSE(out2, out, 0.0);
}

TEST_CASE("PositionalEncoding table and forward", "[attention]") {
  Fixture fx("positional_encoding");
  std::vector<float> P(1000 * 32), P24(1000 * 24);
  positional_encoding_table(P.data(), 1000, 32);
  positional_encoding_table(P24.data(), 1000, 24);
  REQUIRE_CLOSE(P, fx.f("out.P"), kAttentionTol);
  REQUIRE_CLOSE(P24, fx.f("out.P24"), kAttentionTol);
  auto X = fx.f("in.X");
  add_positional_encoding(X.data(), P.data(), 2, 60, 32);
  REQUIRE_CLOSE(X, fx.f("out.Y"), kAttentionTol);
  // Book: column 0 of row 0 is sin(0) = 0, column 1 is cos(0) = 1.
  REQUIRE(P[0] == 0.f);
  REQUIRE(P[1] == 1.f);
}

TEST_CASE("Learnable positional embedding", "[attention]") {
  Fixture fx("positional_embedding");
  const float* pe = fx.ws.get("pos_embedding", {1, 100, 16});
  auto X = fx.f("in.X");
  add_positional_embedding(X.data(), pe, 2, 7, 16);
  REQUIRE_CLOSE(X, fx.f("out.Y"), kAttentionTol);
}

TEST_CASE("Nadaraya-Watson: non-parametric and parametric pooling", "[attention]") {
  FOR_EACH_KERNEL_TABLE();
  Fixture fx("nadaraya_watson");
  auto xt = fx.f("in.x_train"), yt = fx.f("in.y_train"), xs = fx.f("in.x_test");
  std::vector<float> y(50), a(50 * 50);
  nadaraya_watson(y.data(), a.data(), xs.data(), 50, xt.data(), yt.data(), 50, 0, 1.f);
  REQUIRE_CLOSE(y, fx.f("out.y_hat"), kAttentionTol);
  REQUIRE_CLOSE(a, fx.f("out.attention_weights"), kAttentionTol);

  // Train w the book's way: 5 epochs of SGD, lr 0.5, leave-one-out keys and values.
  std::vector<float> keys(50 * 49), vals(50 * 49);
  for (int i = 0; i < 50; ++i)
    for (int j = 0, c = 0; j < 50; ++j)
      if (j != i) { keys[i * 49 + c] = xt[j]; vals[i * 49 + c] = yt[j]; ++c; }
  float w = fx.f("in.w_init")[0];
  std::vector<float> scratch(50 * 49), losses;
  for (int e = 0; e < 5; ++e) {
    float g;
    losses.push_back(nadaraya_watson_loss_grad(&g, scratch.data(), xt.data(), 50, keys.data(),
                                               vals.data(), 49, 49, w, yt.data()));
    w -= 0.5f * g;
  }
  const auto ref_loss = fx.f("out.train_loss");
  for (int e = 0; e < 5; ++e) CHECK(losses[e] == Approx(ref_loss[e]).epsilon(1e-4));
  REQUIRE(w == Approx(fx.f("out.w")[0]).epsilon(1e-4));
  // With the trained w, predictions and weights match to 1e-5.
  const float wref = fx.f("out.w")[0];
  nadaraya_watson(y.data(), a.data(), xs.data(), 50, xt.data(), yt.data(), 50, 0, wref);
  REQUIRE_CLOSE(y, fx.f("out.y_hat_param"), kAttentionTol);
  REQUIRE_CLOSE(a, fx.f("out.attention_weights_param"), kAttentionTol);
}
