// UTF-8 decoding and bitmap text drawing with the embedded font.
#include <algorithm>
#include <iterator>

#include "viz/draw.h"
#include "viz/font_data.h"

namespace attnlite::viz {

namespace fd = font_data;

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char b = byte(i);
    if (b < 0x80) {
      out.push_back(b);
      ++i;
      continue;
    }
    int need = 0;
    char32_t cp = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the first continuation byte
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
      cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      cp = b & 0x0F;
      if (b == 0xE0) lo = 0xA0;  // no overlong forms
      if (b == 0xED) hi = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      cp = b & 0x07;
      if (b == 0xF0) lo = 0x90;  // no overlong forms
      if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    }
    bool ok = need > 0;
    if (ok) {
      for (int k = 1; k <= need; ++k) {
        if (i + static_cast<size_t>(k) >= s.size()) {  // truncated sequence
          ok = false;
          break;
        }
        const unsigned char c = byte(i + static_cast<size_t>(k));
        const unsigned char clo = k == 1 ? lo : 0x80, chi = k == 1 ? hi : 0xBF;
        if (c < clo || c > chi) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (c & 0x3F);
      }
    }
    if (ok) {
      out.push_back(cp);
      i += static_cast<size_t>(need) + 1;
    } else {
      out.push_back(U'?');
      ++i;
    }
  }
  return out;
}

namespace {

struct Placed {
  const uint8_t* rows;  // kCellHeight rows
  int left;
  int advance;
};

const fd::Glyph* find_glyph(char32_t cp) {
  const auto* first = std::begin(fd::kGlyphs);
  const auto* last = std::end(fd::kGlyphs);
  const auto* it = std::lower_bound(first, last, cp,
                                    [](const fd::Glyph& g, char32_t c) { return g.code_point < c; });
  return it != last && it->code_point == cp ? it : nullptr;
}

char32_t compose(char32_t base, char32_t mark) {
  for (const auto& c : fd::kCompositions)
    if (c.base == base && c.mark == mark) return c.composed;
  return 0;
}

bool is_combining_mark(char32_t cp) { return cp >= 0x300 && cp < 0x370; }

std::vector<Placed> shape(std::string_view utf8) {
  const std::u32string cps = decode_utf8(utf8);
  std::vector<Placed> out;
  out.reserve(cps.size());
  char32_t prev = 0;
  for (char32_t cp : cps) {
    if (is_combining_mark(cp)) {
      // Decomposed text: replace the previous glyph by the precomposed one if the
      // font has it; otherwise drop the mark.
      if (const char32_t c = prev ? compose(prev, cp) : 0) {
        if (const fd::Glyph* g = find_glyph(c)) {
          out.back() = {fd::kBitmap + g->offset, g->left, g->advance};
          prev = c;
        }
      }
      continue;
    }
    if (const fd::Glyph* g = find_glyph(cp)) {
      out.push_back({fd::kBitmap + g->offset, g->left, g->advance});
      prev = cp;
    } else {
      out.push_back({fd::kMissingRows, 0, fd::kMissingAdvance});
      prev = 0;
    }
  }
  return out;
}

int width_units(const std::vector<Placed>& glyphs) {
  int w = 0;
  for (const Placed& g : glyphs) w += g.advance;
  return std::max(0, w - 1);  // no spacing column after the last glyph
}

}  // namespace

int text_line_height(int scale) { return fd::kCellHeight * std::max(1, scale); }

TextSize text_size(std::string_view utf8, int scale) {
  scale = std::max(1, scale);
  const auto glyphs = shape(utf8);
  if (glyphs.empty()) return {0, 0};
  return {width_units(glyphs) * scale, fd::kCellHeight * scale};
}

Rect draw_text(Image& image, int x, int y, std::string_view utf8, Rgb color, int scale,
               TextDirection direction) {
  scale = std::max(1, scale);
  const auto glyphs = shape(utf8);
  if (glyphs.empty()) return {x, y, 0, 0};
  const int wu = width_units(glyphs), hu = fd::kCellHeight;
  const Rect box = direction == TextDirection::Horizontal ? Rect{x, y, wu * scale, hu * scale}
                                                          : Rect{x, y, hu * scale, wu * scale};
  int pen = 0;
  for (const Placed& g : glyphs) {
    for (int r = 0; r < hu; ++r) {
      const uint8_t bits = g.rows[r];
      if (!bits) continue;
      for (int c = g.left; c < fd::kCellWidth; ++c) {
        if (!(bits & (0x80 >> c))) continue;
        const int fx = pen + c - g.left, fy = r;  // font pixel in the horizontal box
        if (fx >= wu) continue;
        Rect block = direction == TextDirection::Horizontal
                         ? Rect{x + fx * scale, y + fy * scale, scale, scale}
                         : Rect{x + fy * scale, y + (wu - 1 - fx) * scale, scale, scale};
        detail::fill_rect(image, block, color);
      }
    }
    pen += g.advance;
  }
  return box;
}

}  // namespace attnlite::viz
