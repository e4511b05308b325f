// UTF-8 encoding of one code point (internal; header-only, so that the figure renderer's
// WebAssembly module, which links src/render/ alone, has it too).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace attnlite {

// Writes cp (at most U+10FFFF) as UTF-8 into out[0..3]; returns the number of bytes.
inline int utf8_encode(uint32_t cp, char* out) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F)); return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F)); return 4;
}

// Decodes the code point at s[i] into *cp; returns its length in bytes, or 0 when the bytes
// there are not valid UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
inline int utf8_next(std::string_view s, size_t i, uint32_t* cp) {
  const unsigned char c = (unsigned char)s[i];
  int n;
  uint32_t v;
  if (c < 0x80) { *cp = c; return 1; }
  if ((c & 0xE0) == 0xC0) { n = 2; v = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 3; v = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 4; v = c & 0x07; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (int k = 1; k < n; ++k) {
    const unsigned char d = (unsigned char)s[i + k];
    if ((d & 0xC0) != 0x80) return 0;
    v = (v << 6) | (d & 0x3F);
  }
  static const uint32_t min_for[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < min_for[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// Appends cp to s as UTF-8.
inline void utf8_append(std::string& s, uint32_t cp) {
  char b[4];
  s.append(b, (size_t)utf8_encode(cp, b));
}

}  // namespace attnlite
