// UTF-8 decoding and anti-aliased text with the embedded DejaVu Sans subset, rasterised by
// stb_truetype (the only stb_truetype implementation in the library; private to this file).
#include <algorithm>
#include <cmath>
#include <vector>

#include "attnlite/error.h"
#include "render/draw.h"
#include "render/font_data.h"

#define STB_TRUETYPE_IMPLEMENTATION
#define STBTT_STATIC
#include <stb_truetype.h>

namespace attnlite::render {

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

// The font, parsed once (stb_truetype only reads it afterwards: safe from several threads).
struct Font {
  stbtt_fontinfo info{};
  int ascent = 0, descent = 0;  // font units; descent negative
  int missing = 0;              // glyph of fd::kMissing
  Font() {
    if (!stbtt_InitFont(&info, fd::kDejaVuSans, stbtt_GetFontOffsetForIndex(fd::kDejaVuSans, 0)))
      throw Error("text: the embedded font does not parse");
    int gap = 0;
    stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
    missing = stbtt_FindGlyphIndex(&info, static_cast<int>(fd::kMissing));
  }
  float scale(float px) const { return stbtt_ScaleForMappingEmToPixels(&info, px); }
};

const Font& font() {
  static const Font f;
  return f;
}

float check_size(float px) {
  if (!(px > 0.f && px <= 1000.f)) throw Error("text: the font size must be in (0, 1000] pixels");
  return px;
}

char32_t compose(char32_t base, char32_t mark) {
  for (const auto& c : fd::kCompositions)
    if (c.base == base && c.mark == mark) return c.composed;
  return 0;
}

bool is_combining_mark(char32_t cp) { return cp >= 0x300 && cp < 0x370; }

// The glyphs of the text: combining marks folded into the letter before them when the
// font has that precomposed letter (dropped otherwise); unknown code points -> the box.
std::vector<int> shape(std::string_view utf8) {
  const Font& f = font();
  const std::u32string cps = decode_utf8(utf8);
  std::vector<int> out;
  out.reserve(cps.size());
  char32_t prev = 0;
  for (char32_t cp : cps) {
    if (is_combining_mark(cp)) {
      if (const char32_t c = prev ? compose(prev, cp) : 0) {
        if (const int g = stbtt_FindGlyphIndex(&f.info, static_cast<int>(c))) {
          out.back() = g;
          prev = c;
        }
      }
      continue;
    }
    const int g = cp >= 0x20 ? stbtt_FindGlyphIndex(&f.info, static_cast<int>(cp)) : 0;
    out.push_back(g ? g : f.missing);
    prev = g ? cp : 0;
  }
  return out;
}

// Pen positions (pixels, from the text's origin) of each glyph and the total advance.
std::vector<float> pen_positions(const std::vector<int>& glyphs, float sc, float* width) {
  const Font& f = font();
  std::vector<float> pen(glyphs.size());
  float x = 0.f;
  for (size_t i = 0; i < glyphs.size(); ++i) {
    if (i > 0) x += sc * static_cast<float>(stbtt_GetGlyphKernAdvance(&f.info, glyphs[i - 1], glyphs[i]));
    pen[i] = x;
    int adv = 0, lsb = 0;
    stbtt_GetGlyphHMetrics(&f.info, glyphs[i], &adv, &lsb);
    x += sc * static_cast<float>(adv);
  }
  *width = x;
  return pen;
}

}  // namespace

FontMetrics font_metrics(float size_px) {
  const Font& f = font();
  const float sc = f.scale(check_size(size_px));
  FontMetrics m;
  m.ascent = sc * static_cast<float>(f.ascent);
  m.descent = -sc * static_cast<float>(f.descent);
  m.line_height = static_cast<int>(std::ceil(m.ascent + m.descent - 1e-3f));
  return m;
}

int text_line_height(float size_px) { return font_metrics(size_px).line_height; }

float text_width(std::string_view utf8, float size_px) {
  const float sc = font().scale(check_size(size_px));
  float w = 0.f;
  pen_positions(shape(utf8), sc, &w);
  return w;
}

TextSize text_size(std::string_view utf8, float size_px) {
  const float w = text_width(utf8, size_px);
  if (utf8.empty()) return {0, 0};
  return {static_cast<int>(std::ceil(w - 1e-3f)), text_line_height(size_px)};
}

Rect draw_text(Image& image, int x, int y, std::string_view utf8, Rgb color, float size_px,
               TextDirection direction) {
  const Font& f = font();
  const FontMetrics fm = font_metrics(size_px);
  const float sc = f.scale(size_px);
  const std::vector<int> glyphs = shape(utf8);
  if (glyphs.empty()) return {x, y, 0, 0};
  float width = 0.f;
  const std::vector<float> pen = pen_positions(glyphs, sc, &width);
  const int bw = static_cast<int>(std::ceil(width - 1e-3f)), bh = fm.line_height;
  const Rect box = direction == TextDirection::Horizontal ? Rect{x, y, bw, bh} : Rect{x, y, bh, bw};

  // Coverage of the horizontal text, with a margin for glyphs that reach past their advance
  // (italic-like overhangs, 'j' to the left); then blended into the image, rotated if asked.
  const int margin = static_cast<int>(std::ceil(size_px / 2));
  const int cw = bw + 2 * margin, ch = bh + 2 * margin;
  std::vector<uint8_t> cover(static_cast<size_t>(cw) * ch, 0);
  const float baseline = static_cast<float>(margin) + std::round(fm.ascent);
  std::vector<uint8_t> glyph;
  for (size_t i = 0; i < glyphs.size(); ++i) {
    const float gx = static_cast<float>(margin) + pen[i];
    const int ix = static_cast<int>(std::floor(gx));
    const float fx = gx - static_cast<float>(ix);
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    stbtt_GetGlyphBitmapBoxSubpixel(&f.info, glyphs[i], sc, sc, fx, 0.f, &x0, &y0, &x1, &y1);
    const int gw = x1 - x0, gh = y1 - y0;
    if (gw <= 0 || gh <= 0) continue;
    glyph.assign(static_cast<size_t>(gw) * gh, 0);
    stbtt_MakeGlyphBitmapSubpixel(&f.info, glyph.data(), gw, gh, gw, sc, sc, fx, 0.f, glyphs[i]);
    const int ox = ix + x0, oy = static_cast<int>(baseline) + y0;
    for (int r = 0; r < gh; ++r) {
      const int cy = oy + r;
      if (cy < 0 || cy >= ch) continue;
      for (int c = 0; c < gw; ++c) {
        const int cx = ox + c;
        if (cx < 0 || cx >= cw) continue;
        uint8_t& dst = cover[static_cast<size_t>(cy) * cw + cx];
        dst = static_cast<uint8_t>(std::min(255, dst + glyph[static_cast<size_t>(r) * gw + c]));
      }
    }
  }
  for (int cy = 0; cy < ch; ++cy)
    for (int cx = 0; cx < cw; ++cx) {
      const uint8_t a = cover[static_cast<size_t>(cy) * cw + cx];
      if (!a) continue;
      const int hx = cx - margin, hy = cy - margin;  // in the horizontal box
      const int px = direction == TextDirection::Horizontal ? x + hx : x + hy;
      const int py = direction == TextDirection::Horizontal ? y + hy : y + (bw - 1 - hx);
      detail::blend_pixel(image, px, py, color, static_cast<float>(a) / 255.f);
    }
  return box;
}

}  // namespace attnlite::render
