// The translator's input normalization (include/attnlite/normalize.h has the rules).
#include "attnlite/normalize.h"

#include <cstdint>

#include "attnlite/error.h"
#include "text/utf8.h"

namespace attnlite {

namespace {

// Emoji and what draws them: pictographs and symbols (U+1F000-U+1FAFF, U+2600-U+27BF,
// U+2B00-U+2BFF, U+231A-U+231B, U+23E9-U+23FA), variation selectors (U+FE00-U+FE0F), the
// combining keycap (U+20E3), tag characters (U+E0020-U+E007F).
bool is_emoji(uint32_t cp) {
  return (cp >= 0x1F000 && cp <= 0x1FAFF) || (cp >= 0x2600 && cp <= 0x27BF) ||
         (cp >= 0x2B00 && cp <= 0x2BFF) || cp == 0x231A || cp == 0x231B ||
         (cp >= 0x23E9 && cp <= 0x23FA) || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0x20E3 ||
         (cp >= 0xE0020 && cp <= 0xE007F);
}

// What code point cp becomes: into out (at most 3 bytes), returning the length.
int fold(uint32_t cp, char* out) {
  if (is_emoji(cp)) return 0;
  switch (cp) {
    case 0x200B: case 0x200C: case 0x200D: case 0x2060: case 0xFEFF: case 0x00AD:
      return 0;
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x85: case 0xA0: case 0x202F:
    case 0x1680: case 0x2028: case 0x2029: case 0x205F: case 0x3000:
      out[0] = ' ';
      return 1;
    case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: case 0x02B9: case 0x02BB:
    case 0x02BC: case 0x0060: case 0x00B4: case 0x2039: case 0x203A:
      out[0] = '\'';
      return 1;
    case 0x201C: case 0x201D: case 0x201E: case 0x201F: case 0x2033: case 0x00AB: case 0x00BB:
      out[0] = '"';
      return 1;
    case 0x2212: case 0xFE58: case 0xFE63:
      out[0] = '-';
      return 1;
    case 0x2026:
      out[0] = out[1] = out[2] = '.';
      return 3;
    default: break;
  }
  if (cp >= 0x2000 && cp <= 0x200A) {
    out[0] = ' ';
    return 1;
  }
  if (cp >= 0x2010 && cp <= 0x2015) {
    out[0] = '-';
    return 1;
  }
  if (cp >= 0xFF01 && cp <= 0xFF5E) return fold(cp - 0xFEE0, out);  // then as ASCII: U+FF40 -> ` -> '
  if (cp >= 0xFB00 && cp <= 0xFB06) {
    static const char* const lig[7] = {"ff", "fi", "fl", "ffi", "ffl", "st", "st"};
    const char* s = lig[cp - 0xFB00];
    int n = 0;
    while (s[n]) { out[n] = s[n]; ++n; }
    return n;
  }
  return utf8_encode(cp, out);
}

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

// Two or more of A-Z, none of a-z.
bool in_capitals(const char* s, size_t n) {
  size_t capitals = 0;
  for (size_t k = 0; k < n; ++k) {
    if (is_lower(s[k])) return false;
    capitals += is_upper(s[k]);
  }
  return capitals >= 2;
}

bool is_word_char(char c) { return is_upper(c) || is_lower(c) || (c >= '0' && c <= '9') || c == '\''; }

// The length of the title at s[k] (mr, mrs or ms in any case, the whole word, not "ms" after
// a number: "500 ms later"), or 0.
size_t title_at(const char* s, size_t n, size_t k) {
  if (k && is_word_char(s[k - 1])) return 0;
  if (k >= 2 && s[k - 1] == ' ' && s[k - 2] >= '0' && s[k - 2] <= '9') return 0;
  auto ci = [&](size_t at, char c) { return at < n && (s[at] | 0x20) == c; };
  if (!ci(k, 'm')) return 0;
  size_t len = 0;
  if (ci(k + 1, 'r') && ci(k + 2, 's')) len = 3;
  else if (ci(k + 1, 'r') || ci(k + 1, 's')) len = 2;
  return len && (k + len == n || !is_word_char(s[k + len])) ? len : 0;
}

// Whether the word at s[j] is a name after a title: a title, "." or not, one space, then a
// letter and a letter in a-z ("mr smith", "Mrs. Brown"; not "mr x" nor "MR SMITH").
bool after_title(const char* s, size_t n, size_t j) {
  if (j + 1 >= n || !(is_upper(s[j]) || is_lower(s[j])) || !is_lower(s[j + 1])) return false;
  if (j < 3 || s[j - 1] != ' ') return false;
  size_t e = j - 1;  // one past the title (and its period)
  if (s[e - 1] == '.') --e;
  for (size_t len = 2; len <= 3 && len <= e; ++len)
    if (title_at(s, n, e - len) == len) return true;
  return false;
}

// Three or more words (runs of A-Z, a-z and apostrophes that start with a letter), each with
// its first letter in A-Z and its others in a-z: "Where Is The Station", "I'm Home Now". A
// name after a title may start in a-z ("Mr smith Is Here": capitalize_after_titles gives it
// its capital after this test, so that the two rules agree when applied again).
bool in_title_case(const char* s, size_t n) {
  size_t words = 0;
  for (size_t k = 0; k < n;) {
    if (!is_upper(s[k]) && !is_lower(s[k])) {
      ++k;
      continue;
    }
    if (is_lower(s[k]) && !after_title(s, n, k)) return false;
    ++words;
    for (++k; k < n && (is_upper(s[k]) || is_lower(s[k]) || s[k] == '\''); ++k)
      if (is_upper(s[k])) return false;
  }
  return words >= 3;
}

// A name after a title gets its capital: "mr smith" reads "mr Smith", the surname a model
// carries over (after_title; the name's second letter in a-z, so that the sentence never
// becomes one in capitals).
void capitalize_after_titles(char* s, size_t n) {
  for (size_t j = 0; j < n; ++j)
    if (is_lower(s[j]) && after_title(s, n, j)) s[j] = (char)(s[j] - 'a' + 'A');
}

}  // namespace

size_t normalize_source(std::string_view in, char* out, size_t cap) {
  size_t n = 0;
  bool pending_space = false;  // a space seen since the last character written
  for (size_t i = 0; i < in.size();) {
    uint32_t cp = 0;
    const int len = utf8_next(in, i, &cp);
    if (!len) throw Error("input is not valid UTF-8 (byte " + std::to_string(i) + ")");
    i += (size_t)len;
    char buf[4];
    const int m = fold(cp, buf);
    for (int k = 0; k < m; ++k) {
      if (buf[k] == ' ') {
        pending_space = n > 0;
        continue;
      }
      if (n + (pending_space ? 1 : 0) + 1 > cap)
        throw Error("input is too long for the normalizer's buffer");
      if (pending_space) out[n++] = ' ';
      pending_space = false;
      out[n++] = buf[k];
    }
  }
  // A sentence typed in capitals or in Title Case is lowercased: its case tells nothing
  // apart, and the corpus never writes the one, and the other twice ("Happy New Year!").
  if (in_capitals(out, n) || in_title_case(out, n))
    for (size_t k = 0; k < n; ++k)
      if (is_upper(out[k])) out[k] = (char)(out[k] - 'A' + 'a');
  capitalize_after_titles(out, n);
  return n;
}

bool blank_source(std::string_view in) {
  for (size_t i = 0; i < in.size();) {
    uint32_t cp = 0;
    const int len = utf8_next(in, i, &cp);
    if (!len) return false;
    i += (size_t)len;
    char buf[4];
    const int m = fold(cp, buf);
    if (m != 1 || buf[0] != ' ') return false;
  }
  return true;
}

std::string normalize_source(std::string_view in) {
  std::string out(in.size(), '\0');
  out.resize(normalize_source(in, out.data(), out.size()));
  return out;
}

}  // namespace attnlite
