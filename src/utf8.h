// UTF-8 encoding of one code point (internal; header-only, so that the figure renderer's
// WebAssembly module, which links src/viz/ alone, has it too).
#pragma once
#include <cstdint>
#include <string>

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

// Appends cp to s as UTF-8.
inline void utf8_append(std::string& s, uint32_t cp) {
  char b[4];
  s.append(b, (size_t)utf8_encode(cp, b));
}

}  // namespace attnlite
