// Cutting a text into sentences: the rules are in include/attnlite/sentences.h.
#include "attnlite/sentences.h"

#include <cstring>

namespace attnlite {

namespace {

using Bytes = std::string_view;

// Whether s[i..] starts with the UTF-8 of a literal (no bounds-checked string_view calls: they
// bring their exceptions into the WebAssembly module).
template <size_t N>
bool bytes_at(Bytes s, size_t i, const char (&what)[N]) {
  return i + (N - 1) <= s.size() && std::memcmp(s.data() + i, what, N - 1) == 0;
}

// Lengths in bytes of what stands at s[i], 0 when it is not one.
size_t space_at(Bytes s, size_t i) {
  const char c = s[i];
  if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') return 1;
  if (bytes_at(s, i, "\u00a0")) return 2;
  if (bytes_at(s, i, "\u202f")) return 3;
  return 0;
}

size_t terminal_at(Bytes s, size_t i) {
  const char c = s[i];
  if (c == '.' || c == '!' || c == '?') return 1;
  return bytes_at(s, i, "\u2026") ? 3 : 0;
}

size_t closer_at(Bytes s, size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']' || c == '}') return 1;
  if (bytes_at(s, i, "\u00bb")) return 2;
  return bytes_at(s, i, "\u2019") || bytes_at(s, i, "\u201d") ? 3 : 0;
}

size_t opener_at(Bytes s, size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == '(' || c == '[' || c == '{') return 1;
  if (bytes_at(s, i, "\u00ab")) return 2;
  return bytes_at(s, i, "\u2018") || bytes_at(s, i, "\u201c") ? 3 : 0;
}

bool ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A capital letter (A-Z, or Latin-1's À-Þ but ×) or a digit at s[i], after any opening marks.
bool capital_or_digit_at(Bytes s, size_t i) {
  while (i < s.size()) {
    const size_t n = opener_at(s, i);
    if (!n) break;
    i += n;
  }
  if (i >= s.size()) return false;
  const char c = s[i];
  if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  if (c == '\xc3' && i + 1 < s.size()) {
    const unsigned char d = (unsigned char)s[i + 1];
    return d >= 0x80 && d <= 0x9e && d != 0x97;
  }
  return false;
}

bool equals_lower(Bytes word, const char* lower) {
  size_t k = 0;
  for (; k < word.size() && lower[k]; ++k) {
    char c = word[k];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != lower[k]) return false;
  }
  return k == word.size() && !lower[k];
}

bool in_list(Bytes word, const char* const* list) {
  for (; *list; ++list)
    if (equals_lower(word, *list)) return true;
  return false;
}

// A period after these never ends a sentence: a name or an example follows.
const char* const kTitles[] = {"mr", "mrs", "ms", "dr",  "prof", "st", "mt",  "lt", "col",
                               "gen", "capt", "sgt", "rev", "vs", "cf", "e.g", "i.e", nullptr};
// After these, only before a capital or a digit.
const char* const kMaybeLast[] = {"etc", "jr", "sr", "inc", "ltd", "co", "a.m", "p.m", nullptr};

enum class End { Never, BeforeCapital, Always };

// Whether the run of terminal marks s[run, run_end) ends a sentence that started at `from`.
End end_kind(Bytes s, size_t from, size_t run, size_t run_end) {
  bool bang = false;
  size_t periods = 0;
  for (size_t i = run; i < run_end; ++i) {
    if (s[i] == '!' || s[i] == '?') bang = true;
    if (s[i] == '.') ++periods;
  }
  if (bang) return End::Always;
  if (periods != run_end - run || periods > 1) return End::BeforeCapital;  // an ellipsis
  // One period: the word before it, without its opening marks.
  size_t w = run;
  while (w > from && space_at(s, w - 1) != 1 && !(w >= 2 && space_at(s, w - 2) == 2) &&
         !(w >= 3 && space_at(s, w - 3) == 3))
    --w;
  while (w < run) {
    const size_t n = opener_at(s, w);
    if (!n) break;
    w += n;
  }
  const Bytes word(s.data() + w, run - w);
  if (in_list(word, kTitles)) return End::Never;
  if (word.size() == 1 && word[0] >= 'A' && word[0] <= 'Z' && word[0] != 'I') return End::Never;
  if (in_list(word, kMaybeLast) || std::memchr(word.data(), '.', word.size())) return End::BeforeCapital;
  return End::Always;
}

}  // namespace

size_t split_sentences(std::string_view text, SentenceSpan* out, size_t cap) {
  const Bytes s = text;
  size_t count = 0;
  size_t begin = 0;     // of the sentence being read (at its first byte that is not a space)
  bool content = false; // it holds a letter, a digit or a character past ASCII
  auto skip_spaces = [&](size_t i) {
    while (i < s.size()) {
      const size_t n = space_at(s, i);
      if (!n) break;
      i += n;
    }
    return i;
  };
  auto emit = [&](size_t end) {  // s[begin, end) without its trailing spaces
    while (end > begin) {
      size_t k = end - 1;  // the space that ends there, if any
      if (space_at(s, k) == 1) { end = k; continue; }
      if (k >= 1 && space_at(s, k - 1) == 2) { end = k - 1; continue; }
      if (k >= 2 && space_at(s, k - 2) == 3) { end = k - 2; continue; }
      break;
    }
    if (end > begin) {
      if (count < cap) out[count] = {begin, end};
      ++count;
    }
  };
  begin = skip_spaces(0);
  size_t i = begin;
  while (i < s.size()) {
    const size_t t = terminal_at(s, i);
    if (!t) {
      const char c = s[i];
      if (ascii_alnum(c) || (unsigned char)c >= 0xc0) content = true;
      ++i;
      continue;
    }
    const size_t run = i;
    while (i < s.size()) {
      const size_t n = terminal_at(s, i);
      if (!n) break;
      i += n;
    }
    const size_t run_end = i;
    while (i < s.size()) {
      const size_t n = closer_at(s, i);
      if (!n) break;
      i += n;
    }
    if (i >= s.size() || !space_at(s, i)) continue;  // "3.5", "U.S.A", or the text's end
    const size_t next = skip_spaces(i);
    if (next >= s.size() || !content) continue;  // nothing after; "!!! Hi" is one
    const End e = end_kind(s, begin, run, run_end);
    if (e == End::Never || (e == End::BeforeCapital && !capital_or_digit_at(s, next))) continue;
    emit(i);
    begin = i = next;
    content = false;
  }
  emit(s.size());
  return count;
}

std::vector<std::string_view> split_sentences(std::string_view text) {
  std::vector<SentenceSpan> spans(split_sentences(text, nullptr, 0));
  split_sentences(text, spans.data(), spans.size());
  std::vector<std::string_view> views;
  views.reserve(spans.size());
  for (const SentenceSpan& sp : spans) views.push_back(text.substr(sp.begin, sp.end - sp.begin));
  return views;
}

}  // namespace attnlite
