#include "attnlite/vocab.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "attnlite/error.h"
#include "utf8.h"

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

// Decodes one UTF-8 code point at s[i]; returns its length or 0 if invalid.
int utf8_decode(std::string_view s, size_t i, uint32_t* cp) {
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
    const int n = utf8_decode(in, i, &cp);
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

void CorpusBleu::add(std::string_view hypothesis, const std::vector<std::string>& references) {
  if (references.empty()) throw Error("corpus BLEU: a hypothesis needs at least one reference");
  const auto h = words(hypothesis);
  std::vector<std::vector<std::string_view>> refs;
  for (const auto& r : references) refs.push_back(words(r));
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
  double log_p = 0;
  for (int n = 0; n < 4; ++n) {
    if (match_[n] == 0) return 0.0;
    log_p += std::log((double)match_[n] / total_[n]) / 4;
  }
  const double bp = hyp_len_ > ref_len_ ? 1.0 : std::exp(1.0 - (double)ref_len_ / hyp_len_);
  return bp * std::exp(log_p);
}

}  // namespace attnlite
