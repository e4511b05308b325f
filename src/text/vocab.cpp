#include "attnlite/vocab.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "attnlite/error.h"
#include "text/utf8.h"

namespace attnlite {

Vocab::Vocab(std::vector<std::string> idx_to_token) : tokens_(std::move(idx_to_token)) {
  if (tokens_.size() < 4) throw Error("vocabulary has " + std::to_string(tokens_.size()) + " tokens, needs at least the 4 reserved ones");
  if (tokens_.size() > (1u << 24)) throw Error("vocabulary is too large");
  for (const auto& t : tokens_)
    if (t.empty() || t.find(' ') != std::string::npos)
      throw Error("vocabulary token '" + t + "' is empty or contains a space");
  sorted_.resize(tokens_.size());
  for (size_t i = 0; i < sorted_.size(); ++i) sorted_[i] = (int)i;
  std::sort(sorted_.begin(), sorted_.end(), [&](int a, int b) { return tokens_[a] < tokens_[b]; });
  for (size_t i = 1; i < sorted_.size(); ++i)
    if (tokens_[sorted_[i]] == tokens_[sorted_[i - 1]])
      throw Error("vocabulary token '" + tokens_[sorted_[i]] + "' appears twice");
  if (tokens_[0] != "<unk>") throw Error("vocabulary must start with '<unk>'");
  auto need = [&](const char* t) {
    int id = lookup(t);
    if (id == 0) throw Error(std::string("vocabulary lacks the reserved token '") + t + "'");
    return id;
  };
  pad_id = need("<pad>");
  bos_id = need("<bos>");
  eos_id = need("<eos>");
}

int Vocab::lookup(std::string_view tok) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), tok,
                             [&](int id, std::string_view t) { return std::string_view(tokens_[id]) < t; });
  if (it != sorted_.end() && tokens_[*it] == tok) return *it;
  return unk_id;
}

namespace {

uint32_t to_lower(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;               // Latin-1
  if (c >= 0x100 && c <= 0x17F) {                                           // Latin Extended-A
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2) ? c + 1 : c;
    if (c == 0x130) return 'i';
    if (c == 0x178) return 0xFF;
    return (c % 2 == 0 && c != 0x138 && c != 0x149) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;             // Greek
  if (c >= 0x410 && c <= 0x42F) return c + 32;                             // Cyrillic
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

}  // namespace

size_t preprocess_nmt(std::string_view in, char* out, size_t cap) {
  size_t o = 0;
  uint32_t prev = 0;
  bool first = true;
  for (size_t i = 0; i < in.size();) {
    uint32_t cp;
    const int n = utf8_next(in, i, &cp);
    if (!n) throw Error("input is not valid UTF-8 (byte " + std::to_string(i) + ")");
    i += (size_t)n;
    if (cp == 0x202F || cp == 0xA0) cp = ' ';
    cp = to_lower(cp);
    const bool punct = cp == ',' || cp == '.' || cp == '!' || cp == '?';
    char buf[5];
    int len = 0;
    if (!first && punct && prev != ' ') buf[len++] = ' ';
    len += utf8_encode(cp, buf + len);
    if (o + (size_t)len > cap) throw Error("input is too long (over " + std::to_string(cap) + " bytes after preprocessing)");
    for (int k = 0; k < len; ++k) out[o++] = buf[k];
    prev = cp;
    first = false;
  }
  return o;
}

int split_tokens(std::string_view text, std::string_view* tokens, int max_tokens) {
  int n = 0;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t b = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > b) {
      if (n < max_tokens) tokens[n] = text.substr(b, i - b);
      ++n;
    }
  }
  return n;
}

std::vector<std::string> tokenize(std::string_view sentence) {
  std::string buf(sentence.size() * 2 + 16, '\0');
  buf.resize(preprocess_nmt(sentence, buf.data(), buf.size()));
  int n = split_tokens(buf, nullptr, 0);
  std::vector<std::string_view> views((size_t)n);
  split_tokens(buf, views.data(), n);
  return std::vector<std::string>(views.begin(), views.end());
}

double bleu(std::string_view pred, std::string_view label, int k) {
  auto split = [](std::string_view s) {
    // The book's str.split(' '): empty strings between consecutive spaces are tokens too.
    std::vector<std::string_view> r;
    size_t b = 0;
    for (size_t i = 0; i <= s.size(); ++i)
      if (i == s.size() || s[i] == ' ') { r.push_back(s.substr(b, i - b)); b = i + 1; }
    return r;
  };
  const auto p = split(pred), l = split(label);
  const int lp = (int)p.size(), ll = (int)l.size();
  double score = std::exp(std::min(0.0, 1.0 - (double)ll / lp));
  for (int n = 1; n <= k; ++n) {
    if (lp - n + 1 <= 0) return 0.0;
    std::map<std::vector<std::string_view>, int> subs;
    for (int i = 0; i + n <= ll; ++i) subs[std::vector<std::string_view>(l.begin() + i, l.begin() + i + n)]++;
    int matches = 0;
    for (int i = 0; i + n <= lp; ++i) {
      auto it = subs.find(std::vector<std::string_view>(p.begin() + i, p.begin() + i + n));
      if (it != subs.end() && it->second > 0) { ++matches; --it->second; }
    }
    score *= std::pow((double)matches / (lp - n + 1), std::pow(0.5, n));
  }
  return score;
}

namespace {
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> r;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const size_t b = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > b) r.push_back(s.substr(b, i - b));
  }
  return r;
}
using Ngrams = std::map<std::vector<std::string_view>, int>;
Ngrams ngrams(const std::vector<std::string_view>& t, int n) {
  Ngrams g;
  for (size_t i = 0; i + n <= t.size(); ++i) g[std::vector<std::string_view>(t.begin() + i, t.begin() + i + n)]++;
  return g;
}
}  // namespace

namespace {

// Python's str.isspace(), which str.split() and str.rstrip() split and strip on.
bool py_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

std::u32string decode_utf8(std::string_view s) {
  std::u32string r;
  r.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    const int n = utf8_next(s, i, &cp);
    if (!n) throw Error("input is not valid UTF-8 (byte " + std::to_string(i) + ")");
    r.push_back((char32_t)cp);
    i += (size_t)n;
  }
  return r;
}

// Python's str.replace(from, to): every occurrence, left to right, not overlapping.
void replace_all(std::u32string& s, std::u32string_view from, std::u32string_view to) {
  std::u32string r;
  size_t i = 0;
  for (size_t at; (at = s.find(from.data(), i, from.size())) != std::u32string::npos; i = at + from.size())
    r.append(s, i, at - i).append(to);
  if (i == 0) return;  // no occurrence
  r.append(s, i, std::u32string::npos);
  s.swap(r);
}

bool digit(char32_t c) { return c >= U'0' && c <= U'9'; }
bool period_comma(char32_t c) { return c == U'.' || c == U','; }
// The class of the first substitution: [\{-\~\[-\` -\&\(-\+\:-\@\/], i.e. the ranges
// { .. ~ (0x7B-0x7E), [ .. ` (0x5B-0x60), space .. & (0x20-0x26), ( .. + (0x28-0x2B),
// : .. @ (0x3A-0x40) and '/'. Not ' (0x27), , - . (0x2C-0x2E), digits or letters.
bool punct_13a(char32_t c) {
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == U'/';
}

// re.sub(r'(A)(B)', repl, s) for single-character classes A and B: at each position, from the
// left, a match takes two characters and the scan resumes after both, so the second of
// them cannot be the first of another match: rule 2 makes "a.,b" "a . ,b" (the "." taken
// with the "a" cannot pair with the ",").
template <class A, class B, class Emit>
std::u32string sub_pairs(const std::u32string& s, A a, B b, Emit emit) {
  std::u32string r;
  r.reserve(s.size() + s.size() / 2);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && a(s[i]) && b(s[i + 1])) {
      emit(r, s[i], s[i + 1]);
      i += 2;
    } else {
      r.push_back(s[i++]);
    }
  }
  return r;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  std::u32string s = decode_utf8(line);  // what Python would hold: code points
  // Tokenizer13a.__call__, the language-independent part.
  replace_all(s, U"<skipped>", U"");
  replace_all(s, U"-\n", U"");
  replace_all(s, U"\n", U" ");
  if (s.find(U'&') != std::u32string::npos) {
    replace_all(s, U"&quot;", U"\"");
    replace_all(s, U"&amp;", U"&");
    replace_all(s, U"&lt;", U"<");
    replace_all(s, U"&gt;", U">");
  }
  s = U" " + s + U" ";
  // TokenizerRegexp: 1. ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 ': one character per match,
  // so every such character gets a space on both sides.
  {
    std::u32string r;
    r.reserve(s.size() * 2);
    for (char32_t c : s) {
      if (punct_13a(c)) r.append({U' ', c, U' '});
      else r.push_back(c);
    }
    s.swap(r);
  }
  const auto not_digit = [](char32_t c) { return !digit(c); };
  // 2. ([^0-9])([\.,]) -> '\1 \2 '
  s = sub_pairs(s, not_digit, period_comma,
                [](std::u32string& r, char32_t x, char32_t y) { r.append({x, U' ', y, U' '}); });
  // 3. ([\.,])([^0-9]) -> ' \1 \2'
  s = sub_pairs(s, period_comma, not_digit,
                [](std::u32string& r, char32_t x, char32_t y) { r.append({U' ', x, U' ', y}); });
  // 4. ([0-9])(-) -> '\1 \2 '
  s = sub_pairs(s, digit, [](char32_t c) { return c == U'-'; },
                [](std::u32string& r, char32_t x, char32_t y) { r.append({x, U' ', y, U' '}); });
  // ' '.join(line.split()): runs of Unicode whitespace become one space, none at the ends.
  std::string out;
  out.reserve(s.size() + 8);
  bool pending = false;
  for (char32_t c : s) {
    if (py_space((uint32_t)c)) {
      pending = !out.empty();
      continue;
    }
    if (pending) out.push_back(' ');
    pending = false;
    char buf[4];
    out.append(buf, (size_t)utf8_encode((uint32_t)c, buf));
  }
  return out;
}

namespace {
// sacreBLEU's BLEU._preprocess_segment (lowercase=False): tokenizer(sentence.rstrip()).
std::string sacrebleu_segment(std::string_view s) {
  size_t end = s.size();
  // rstrip: drop trailing code points that are Python whitespace (decoded from the end; an
  // invalid sequence stops it and tokenize_13a() reports it).
  while (end > 0) {
    size_t b = end - 1;
    while (b > 0 && ((unsigned char)s[b] & 0xC0) == 0x80 && end - b < 4) --b;
    uint32_t cp = 0;
    if (utf8_next(s, b, &cp) != (int)(end - b) || !py_space(cp)) break;
    end = b;
  }
  return tokenize_13a(s.substr(0, end));
}
}  // namespace

void CorpusBleu::add(std::string_view hypothesis, const std::vector<std::string>& references) {
  if (references.empty()) throw Error("corpus BLEU: a hypothesis needs at least one reference");
  // With 13a the tokenized strings must outlive the token views.
  std::string hyp_tok;
  std::vector<std::string> refs_tok;
  const std::vector<std::string>* ref_text = &references;
  if (tokenize_ == Tokenize::v13a) {
    hyp_tok = sacrebleu_segment(hypothesis);
    hypothesis = hyp_tok;
    for (const auto& r : references)
      if (!r.empty()) refs_tok.push_back(sacrebleu_segment(r));  // sacreBLEU drops "" references
    if (refs_tok.empty()) throw Error("corpus BLEU: a hypothesis has only empty references");
    ref_text = &refs_tok;
  }
  const auto h = words(hypothesis);
  std::vector<std::vector<std::string_view>> refs;
  for (const auto& r : *ref_text) refs.push_back(words(r));
  const long c = (long)h.size();
  long best = -1, best_diff = 0;
  for (const auto& r : refs) {
    const long len = (long)r.size(), diff = std::labs(len - c);
    if (best < 0 || diff < best_diff || (diff == best_diff && len < best)) best = len, best_diff = diff;
  }
  hyp_len_ += c;
  ref_len_ += best;
  for (int n = 1; n <= 4; ++n) {
    Ngrams most;
    for (const auto& r : refs)
      for (const auto& [g, k] : ngrams(r, n)) most[g] = std::max(most[g], k);
    for (const auto& [g, k] : ngrams(h, n)) {
      auto it = most.find(g);
      if (it != most.end()) match_[n - 1] += std::min(k, it->second);
    }
    total_[n - 1] += std::max(c - n + 1, 0L);
  }
}

double CorpusBleu::score() const {
  if (hyp_len_ == 0) return 0.0;
  if (smooth_ == Smooth::none) {
    double log_p = 0;
    for (int n = 0; n < 4; ++n) {
      if (match_[n] == 0) return 0.0;
      log_p += std::log((double)match_[n] / total_[n]) / 4;
    }
    const double bp = hyp_len_ > ref_len_ ? 1.0 : std::exp(1.0 - (double)ref_len_ / hyp_len_);
    return bp * std::exp(log_p);
  }
  // sacreBLEU's BLEU.compute_bleu with smooth_method='exp', effective_order=False, in its
  // order of operations (precisions in percent).
  const double bp = hyp_len_ < ref_len_ ? std::exp(1.0 - (double)ref_len_ / (double)hyp_len_) : 1.0;
  if (!match_[0] && !match_[1] && !match_[2] && !match_[3]) return 0.0;
  double smooth = 1, log_sum = 0;
  for (int n = 0; n < 4; ++n) {
    if (total_[n] == 0) return 0.0;  // sacreBLEU stops; the missing precisions make it 0
    double p;
    if (match_[n] == 0) {
      smooth *= 2;
      p = 100.0 / (smooth * (double)total_[n]);
    } else {
      p = 100.0 * (double)match_[n] / (double)total_[n];
    }
    log_sum += std::log(p);
  }
  return bp * std::exp(log_sum / 4) / 100;
}

}  // namespace attnlite
