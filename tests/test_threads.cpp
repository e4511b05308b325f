// The optional thread pool: threaded linear layers and translations equal the serial ones.
#include <random>

#include "attnlite/arena.h"
#include "attnlite/model.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/threads.h"
#include "attnlite/translate.h"
#include "cpu/linear.h"  // the CPU op set's linear layer
#include "fixture.h"

using namespace attnlite;

namespace {
using attnlite::test::Threads;
}  // namespace

TEST_CASE("threaded linear equals the serial one", "[threads]") {
  FOR_EACH_KERNEL_TABLE();
  std::mt19937 g(7);
  std::normal_distribution<float> nd;
  const int N = GENERATE(1, 17, 256, 1000), K = 300;
  const int M = GENERATE(1, 3, 64);
  std::vector<float> w(N * K), b(N), x(M * K), y1(M * N), y2(M * N);
  for (auto* v : {&w, &b, &x})
    for (auto& e : *v) e = nd(g);
  Linear l{w.data(), b.data(), N, K};
  ops::linear(y1.data(), l, x.data(), M);
  {
    Threads t(GENERATE(2, 3));
    REQUIRE(num_threads() >= 2);
    ops::linear(y2.data(), l, x.data(), M);
  }
  REQUIRE(num_threads() == 1);
  REQUIRE_CLOSE(y2, y1, 1e-6 * K);
  // The same layer on weights packed at load (kernels with linear_pack): the serial product
  // agrees with the stored layout's; at M = 1 each thread's share of panels (blocks of 16
  // output features) gives exactly the serial packed result, and shares of rows (M > 1) agree
  // with it as closely as the stored layout's (a share of one row takes the GEMV's order).
  if (ops::kernels().linear_pack) {
    AlignedBuffer buf((size_t)ops::linear_packed_floats(N, K) * sizeof(float));
    ops::kernels().linear_pack(static_cast<float*>(buf.data()), w.data(), N, K);
    l.wp = static_cast<const float*>(buf.data());
    std::vector<float> p1(M * N), p2(M * N);
    ops::linear(p1.data(), l, x.data(), M);
    REQUIRE_CLOSE(p1, y1, 1e-6 * K);
    {
      Threads t(GENERATE(2, 3));
      ops::linear(p2.data(), l, x.data(), M);
    }
    if (M == 1)
      REQUIRE(p2 == p1);
    else
      REQUIRE_CLOSE(p2, p1, 1e-6 * K);
  }
}

TEST_CASE("translations with 2 threads equal the serial ones", "[threads]") {
  auto model = Model::load(test::model_path("transformer-d2l"));
  Limits lim;
  lim.max_batch = 4;
  Translator a(model, lim), b(model, lim);
  std::string_view s[4] = {"go .", "i lost .", "he's calm .", "i'm home ."};
  a.translate_batch(s, 4);
  Threads t(2);
  b.translate_batch(s, 4);
  for (int i = 0; i < 4; ++i) {
    REQUIRE(a.result(i).text == b.result(i).text);
    for (int k = 0; k < a.result(i).num_tokens; ++k)
      REQUIRE(a.result(i).probs[k] == Approx(b.result(i).probs[k]).margin(1e-6));
  }
  REQUIRE_THROWS_AS(set_num_threads(0), Error);
  REQUIRE_THROWS_AS(set_num_threads(65), Error);
}
