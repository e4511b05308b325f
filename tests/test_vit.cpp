// The Vision Transformer (kind "vit") and its image input: decoding, the digits
// preprocessing, PyTorch fixtures, the shipped digits model, attention rollout, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnlite/classify.h"
#include "attnlite/error.h"
#include "attnlite/image_input.h"
#include "attnlite/model.h"
#include "attnlite/viz/image.h"
#include "fixture.h"

using namespace attnlite;

namespace {

// A digit "7"-like pattern in the dataset's 0..16 range, spanning all 8 rows and 5 columns.
const float kDigit[64] = {
    0, 4, 12, 16, 16, 14, 0, 0,   //
    0, 2, 6, 6, 10, 16, 0, 0,     //
    0, 0, 0, 0, 12, 11, 0, 0,     //
    0, 0, 0, 3, 16, 4, 0, 0,      //
    0, 0, 0, 11, 13, 0, 0, 0,     //
    0, 0, 2, 16, 6, 0, 0, 0,      //
    0, 0, 8, 15, 1, 0, 0, 0,      //
    0, 0, 13, 9, 0, 0, 0, 0};

// The 8x8 values drawn dark on light (255 - v·255/16), each cell k x k pixels, at (x0, y0) of a
// white w x h canvas; returned as PNG bytes.
std::vector<uint8_t> digit_png(const float* v, int k, int w = 0, int h = 0, int x0 = 0, int y0 = 0,
                               bool reversed = false) {
  if (!w) w = 8 * k;
  if (!h) h = 8 * k;
  viz::Image im(w, h, reversed ? viz::kBlack : viz::kWhite);
  for (int y = 0; y < 8 * k; ++y)
    for (int x = 0; x < 8 * k; ++x) {
      const float ink = v[(y / k) * 8 + x / k] / 16.f;
      const uint8_t g = (uint8_t)std::lround(255.f * (reversed ? ink : 1.f - ink));
      uint8_t* p = im.px(x0 + x, y0 + y);
      p[0] = p[1] = p[2] = g;
    }
  return viz::encode_png(im);
}

std::vector<float> prep(const std::vector<uint8_t>& png) {
  std::vector<float> out(64);
  digit_8x8(decode_image(png.data(), png.size()), out.data());
  return out;
}

double max_diff(const std::vector<float>& a, const float* b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (double)std::fabs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("digit preprocessing: a dataset digit drawn at 8x8 or 32x32 comes back", "[vit][image]") {
  // within 0.05 of 16 (the 8-bit grey levels of the PNG)
  REQUIRE(max_diff(prep(digit_png(kDigit, 1)), kDigit) <= 0.05);
  REQUIRE(max_diff(prep(digit_png(kDigit, 4)), kDigit) <= 0.05);
  // light ink on a dark background is read reversed
  REQUIRE(max_diff(prep(digit_png(kDigit, 4, 0, 0, 0, 0, true)), kDigit) <= 0.05);
  // a margin around it changes nothing
  REQUIRE(max_diff(prep(digit_png(kDigit, 4, 60, 50, 14, 9)), kDigit) <= 0.05);
}

TEST_CASE("digit preprocessing: a digit small in a corner reads as centred", "[vit][image]") {
  const std::vector<float> centred = prep(digit_png(kDigit, 4));
  // 3 pixels per cell (24 px high) in the top-left corner of a 300 x 200 canvas
  const std::vector<float> corner = prep(digit_png(kDigit, 3, 300, 200, 2, 3));
  REQUIRE(max_diff(corner, centred.data()) <= 0.05);
  // 7 pixels per cell (a non-integer scale to 32): area averaging blurs edges a little
  const std::vector<float> big = prep(digit_png(kDigit, 7, 400, 400, 330, 300));
  double sum = 0;
  for (int i = 0; i < 64; ++i) sum += std::fabs(big[i] - centred[i]);
  REQUIRE(max_diff(big, centred.data()) <= 3.0);
  REQUIRE(sum / 64 <= 0.6);
  // an empty page has no ink
  viz::Image blank(50, 40);
  const auto png = viz::encode_png(blank);
  std::vector<float> none(64, -1.f);
  digit_8x8(decode_image(png.data(), png.size()), none.data());
  for (float v : none) REQUIRE(v == 0.f);
}

TEST_CASE("image decoding: bad files are clear errors", "[vit][image][robustness]") {
  REQUIRE_THROWS_WITH(decode_image(nullptr, 0), Catch::Contains("empty image file"));
  const std::vector<uint8_t> junk = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'};
  REQUIRE_THROWS_WITH(decode_image(junk.data(), junk.size()), Catch::Contains("not an image"));
  // truncated PNGs: every prefix fails cleanly or decodes
  const auto png = digit_png(kDigit, 4);
  for (size_t n = 1; n < png.size(); n += 7) {
    try {
      GreyImage g = decode_image(png.data(), n);
      REQUIRE(g.width == 32);
    } catch (const Error&) {
    }
  }
  // a PNG header declaring 20000 x 20000 pixels: refused before decoding
  std::vector<uint8_t> huge = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                               0, 0, 0x4e, 0x20, 0, 0, 0x4e, 0x20, 8, 0, 0, 0, 0, 0, 0, 0, 0};
  REQUIRE_THROWS_WITH(decode_image(huge.data(), huge.size()),
                      "PNG image of 20000x20000 pixels is over the limit (8192 per side, 16777216 pixels)");
  // a zero-size image
  std::vector<uint8_t> zero = huge;
  std::memset(zero.data() + 16, 0, 8);
  REQUIRE_THROWS_WITH(decode_image(zero.data(), zero.size()), Catch::Contains("0x0 pixels: it has no pixels"));
  // a valid header and nothing after it
  REQUIRE_THROWS_WITH(decode_image(png.data(), 40), Catch::Contains("corrupt PNG image"));
  REQUIRE_THROWS_WITH(load_image("/nonexistent/digit.png"), Catch::Contains("cannot open"));
  // a BMP of 9000 x 10 (over the side limit) is refused from its header too
  std::vector<uint8_t> bmp(54, 0);
  bmp[0] = 'B';
  bmp[1] = 'M';
  bmp[10] = 54;
  bmp[14] = 40;
  const int32_t w = 9000, h = 10;
  std::memcpy(bmp.data() + 18, &w, 4);
  std::memcpy(bmp.data() + 22, &h, 4);
  bmp[26] = 1;
  bmp[28] = 24;
  REQUIRE_THROWS_WITH(decode_image(bmp.data(), bmp.size()), Catch::Contains("BMP image of 9000x10 pixels is over the limit"));
}
