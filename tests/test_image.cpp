// Images, PNG encoding and bitmap text.
#include <catch2/catch.hpp>

#include <attnlite/error.h>
#include <attnlite/render/image.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <random>
#include <stdexcept>
#include <string>

// The test binary's only stb_image implementation; png_roundtrip() is shared with
// the heatmap and plot tests.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#include <stb_image.h>

using namespace attnlite::render;

// Encodes the image as PNG and decodes it again with stb_image.
Image png_roundtrip(const Image& image) {
  const std::vector<uint8_t> png = encode_png(image);
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load_from_memory(png.data(), static_cast<int>(png.size()), &w, &h, &channels, 4);
  if (!data) throw std::runtime_error(std::string("stb_image: ") + stbi_failure_reason());
  Image out;
  out.width = w;
  out.height = h;
  out.rgba.assign(data, data + static_cast<size_t>(w) * h * 4);
  stbi_image_free(data);
  return out;
}

namespace {

int ink_count(const Image& img) {
  int n = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      if (img.rgb(x, y) != kWhite) ++n;
  return n;
}

constexpr float kPx = 13.88889f;  // 10 pt at 100 dpi

Image text_image(const std::string& s, float px = kPx, TextDirection dir = TextDirection::Horizontal) {
  Image img(static_cast<int>(9 * px), static_cast<int>(2 * px));
  draw_text(img, 2, 2, s, kBlack, px, dir);
  return img;
}

}  // namespace

TEST_CASE("Image is filled and addressed row-major", "[viz][image]") {
  Image img(3, 2, Rgb{1, 2, 3});
  REQUIRE(img.rgba.size() == 3 * 2 * 4);
  img.px(2, 1)[0] = 200;
  CHECK(img.rgba[(1 * 3 + 2) * 4] == 200);
  CHECK(img.rgb(0, 0) == Rgb{1, 2, 3});
  CHECK(img.px(1, 1)[3] == 255);
}

TEST_CASE("encode_png round-trips through stb_image with identical pixels", "[viz][image][png]") {
  std::mt19937 rng(7);
  Image img(37, 23);
  for (auto& b : img.rgba) b = static_cast<uint8_t>(rng());
  for (size_t i = 3; i < img.rgba.size(); i += 4) img.rgba[i] = 255;
  const std::vector<uint8_t> png = encode_png(img);
  REQUIRE(png.size() > 8);
  CHECK(png[0] == 0x89);
  CHECK(png[1] == 'P');
  const Image back = png_roundtrip(img);
  CHECK(back.width == 37);
  CHECK(back.height == 23);
  CHECK(back.rgba == img.rgba);
}

TEST_CASE("encode_png rejects an empty or inconsistent image", "[viz][image][png]") {
  CHECK_THROWS_AS(encode_png(Image{}), attnlite::Error);
  Image bad(4, 4);
  bad.rgba.resize(10);
  CHECK_THROWS_AS(encode_png(bad), attnlite::Error);
}

TEST_CASE("write_png writes the encoded bytes and names the path on failure", "[viz][image][png]") {
  Image img(5, 4, Rgb{10, 20, 30});
  const std::string path = "attnlite_test_write.png";
  write_png(path, img);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f);
  std::vector<uint8_t> bytes;
  for (int c; (c = std::fgetc(f)) != EOF;) bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(f);
  std::remove(path.c_str());
  CHECK(bytes == encode_png(img));

  const std::string bad = "/nonexistent-attnlite-dir/sub/figure.png";
  try {
    write_png(bad, img);
    FAIL("write_png to an unwritable path did not throw");
  } catch (const attnlite::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains(bad));
  }
}

TEST_CASE("decode_utf8 decodes valid text and replaces every bad byte by '?'", "[viz][text][utf8]") {
  CHECK(decode_utf8("mouill\xC3\xA9") == U"mouill\u00E9");
  CHECK(decode_utf8("\xC3\xA0 \xC3\xA7" "a \xC5\x93" "uf \xE2\x80\x99 \xF0\x9F\x98\x80") ==
        U"\u00E0 \u00E7a \u0153uf \u2019 \U0001F600");
  CHECK(decode_utf8("") == U"");
  CHECK(decode_utf8("a\xFF" "b") == U"a?b");            // never valid
  CHECK(decode_utf8("\x80\xBF") == U"??");               // stray continuation bytes
  CHECK(decode_utf8("\xC3") == U"?");                    // truncated at the end
  CHECK(decode_utf8("\xE2\x82") == U"??");               // truncated 3-byte sequence
  CHECK(decode_utf8("\xC0\x80") == U"??");               // overlong NUL
  CHECK(decode_utf8("\xE0\x80\xAF") == U"???");          // overlong '/'
  CHECK(decode_utf8("\xED\xA0\x80") == U"???");          // UTF-16 surrogate
  CHECK(decode_utf8("\xF4\x90\x80\x80") == U"????");     // above U+10FFFF
  CHECK(decode_utf8("\xC3(") == U"?(");                  // bad continuation is kept
}

TEST_CASE("text drawing survives arbitrary bytes", "[viz][text][utf8]") {
  std::mt19937 rng(11);
  Image img(64, 64);
  for (int i = 0; i < 2000; ++i) {
    std::string s(static_cast<size_t>(rng() % 12), '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    const TextSize t = text_size(s, kPx);
    CHECK(t.w >= 0);
    const Rect box = draw_text(img, static_cast<int>(rng() % 80) - 8, static_cast<int>(rng() % 80) - 8, s, kBlack, kPx,
                               i % 2 ? TextDirection::Up : TextDirection::Horizontal);
    CHECK(box.w >= 0);
  }
}

TEST_CASE("accented letters differ from the plain letter by their accent", "[viz][text]") {
  const std::pair<const char*, const char*> pairs[] = {
      {"e", "\xC3\xA9"}, {"e", "\xC3\xA8"}, {"e", "\xC3\xAA"}, {"a", "\xC3\xA0"},
      {"u", "\xC3\xB9"}, {"i", "\xC3\xAF"}, {"o", "\xC3\xB4"}, {"c", "\xC3\xA7"},
      {"E", "\xC3\x89"}, {"A", "\xC3\x80"}, {"C", "\xC3\x87"}, {"y", "\xC3\xBF"},
  };
  for (const auto& [plain, accented] : pairs) {
    INFO(plain << " vs " << accented);
    const Image a = text_image(plain), b = text_image(accented);
    int only_plain = 0, only_accented = 0;
    for (int y = 0; y < a.height; ++y)
      for (int x = 0; x < a.width; ++x) {
        const bool ia = a.rgb(x, y) != kWhite, ib = b.rgb(x, y) != kWhite;
        only_plain += ia && !ib;
        only_accented += ib && !ia;
      }
    CHECK(only_accented > 0);  // the accent (or cedilla) pixels
    // Lower-case letters keep their shape (capitals are squeezed under the accent).
    if (plain[0] >= 'a' && plain[0] <= 'z') CHECK(only_plain <= 3);
  }
}

TEST_CASE("French words render, and decomposed accents compose", "[viz][text]") {
  for (const char* word : {"mouill\xC3\xA9", "\xC3\xA0", "\xC3\xA7" "a", "\xC5\x93" "uvre", "\xC2\xAB oui \xC2\xBB",
                           "l\xE2\x80\x99" "eau", "NO\xC3\x8B" "L", "\xC3\x87" "A"}) {
    INFO(word);
    CHECK(ink_count(text_image(word)) > 0);
    CHECK(decode_utf8(word).find(U'?') == std::u32string::npos);
  }
  CHECK(text_image("\xC3\xA7" "a").rgba != text_image("ca").rgba);
  CHECK(text_image("mouill\xC3\xA9").rgba != text_image("mouille").rgba);
  CHECK(text_image("e\xCC\x81").rgba == text_image("\xC3\xA9").rgba);  // e + COMBINING ACUTE
  CHECK(text_image("c\xCC\xA7").rgba == text_image("\xC3\xA7").rgba);  // c + COMBINING CEDILLA
}

TEST_CASE("unknown code points draw a box, bad bytes a question mark", "[viz][text]") {
  const Image box = text_image("\xE4\xB8\xAD");  // U+4E2D, not in the font
  CHECK(ink_count(box) > 0);
  CHECK(box.rgba != text_image("?").rgba);
  CHECK(text_image("\xFF").rgba == text_image("?").rgba);
}

TEST_CASE("text is DejaVu Sans at its size: metrics, kerning, anti-aliasing", "[viz][text]") {
  // DejaVu Sans: 2048 units per em, ascent 1901, descent 483, 'H' 1493 units high.
  const FontMetrics fm = font_metrics(kPx);
  CHECK(fm.ascent == Approx(1901.0 / 2048 * kPx).epsilon(1e-4));
  CHECK(fm.descent == Approx(483.0 / 2048 * kPx).epsilon(1e-4));
  CHECK(fm.line_height == static_cast<int>(std::ceil((1901.0 + 483.0) / 2048 * kPx)));
  CHECK(text_line_height(kPx) == fm.line_height);
  CHECK(points_to_px(10.f, 100) == Approx(kPx));
  // Advance widths: 'i' 569 units, 'W' 2025 units; proportional, not a fixed cell.
  CHECK(text_width("i", kPx) == Approx(569.0 / 2048 * kPx).epsilon(1e-4));
  CHECK(text_width("W", kPx) == Approx(2025.0 / 2048 * kPx).epsilon(1e-4));
  CHECK(text_width("AV", kPx) < text_width("A", kPx) + text_width("V", kPx));  // kerned pair
  CHECK(text_width("Keys", 2 * kPx) == Approx(2 * text_width("Keys", kPx)).epsilon(1e-4));
  const TextSize t = text_size("Keys", kPx);
  CHECK(t.w == static_cast<int>(std::ceil(text_width("Keys", kPx))));
  CHECK(t.h == fm.line_height);
  CHECK(text_size("", kPx).w == 0);
  CHECK_THROWS_AS(text_size("x", 0.f), attnlite::Error);
  CHECK_THROWS_AS(text_size("x", std::nanf("")), attnlite::Error);

  // 'H' inked from the cap height down to the baseline, with grey edge pixels.
  const Image h = text_image("Hx");
  int top = h.height, bottom = -1;
  std::set<int> greys;
  for (int y = 0; y < h.height; ++y)
    for (int x = 0; x < h.width; ++x) {
      const Rgb c = h.rgb(x, y);
      if (c == kWhite) continue;
      top = std::min(top, y), bottom = std::max(bottom, y);
      greys.insert(c[0]);
    }
  const int baseline = 2 + static_cast<int>(std::round(fm.ascent));
  CHECK(bottom == baseline - 1);
  CHECK(std::abs((bottom - top + 1) - 1493.0 / 2048 * kPx) <= 1.0);
  CHECK(greys.size() > 8);  // anti-aliased: many grey levels, not black and white
}

TEST_CASE("text rotates", "[viz][text]") {
  const TextSize t1 = text_size("Keys", kPx);
  // Up: rotated 90 degrees counter-clockwise; the box is h wide and w high.
  Image up(40, 60);
  const Rect box = draw_text(up, 5, 3, "Keys", kBlack, kPx, TextDirection::Up);
  CHECK(box.w == t1.h);
  CHECK(box.h == t1.w);
  Image flat(60, 40);
  draw_text(flat, 0, 0, "Keys", kBlack, kPx);
  CHECK(ink_count(flat) > 20);
  for (int fy = 0; fy < t1.h; ++fy)
    for (int fx = 0; fx < t1.w; ++fx) CHECK(up.rgb(5 + fy, 3 + (t1.w - 1 - fx)) == flat.rgb(fx, fy));
}
