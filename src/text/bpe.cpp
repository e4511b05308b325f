// Byte-pair encoding (d2l 15.6): the merge table's checks, the words, the longest-match
// segmentation and the detokenizer (attnlite/bpe.h states the rules).
#include "attnlite/bpe.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "attnlite/error.h"
#include "file/json.h"
#include "text/utf8.h"

namespace attnlite {

namespace {

constexpr char kEnd = '_';

std::string table_string(const nlohmann::json& j, const char* what) {
  if (!j.is_string()) throw Error(std::string("attnlite.bpe: ") + what + " is not a string");
  return j.get<std::string>();
}

bool valid_utf8(std::string_view s, int* chars) {
  int n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    uint32_t cp = 0;
    const int len = utf8_next(s, i, &cp);
    if (!len) return false;
    i += (size_t)len;
  }
  *chars = n;
  return true;
}

// Characters that separate words: ' ', tab, line breaks, U+00A0, U+202F.
bool is_space(uint32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0xA0 || cp == 0x202F;
}

}  // namespace

Bpe::Bpe(std::string_view text, const Vocab& vocab) {
  nlohmann::json j;
  try {
    j = parse_json(text.data(), text.size());
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("attnlite.bpe is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error("attnlite.bpe is not a JSON object");
  for (const char* key : {"end_of_word", "alphabet", "merges"})
    if (!j.contains(key)) throw Error(std::string("attnlite.bpe lacks '") + key + "'");
  if (table_string(j["end_of_word"], "end_of_word") != std::string(1, kEnd))
    throw Error("attnlite.bpe: end_of_word must be \"_\"");
  const auto& alphabet = j["alphabet"];
  const auto& merges = j["merges"];
  if (!alphabet.is_array() || alphabet.empty())
    throw Error("attnlite.bpe: alphabet is not a non-empty JSON array");
  if (!merges.is_array()) throw Error("attnlite.bpe: merges is not a JSON array");
  if (merges.size() > (size_t)vocab.size())
    throw Error("attnlite.bpe: more merges than vocabulary tokens");
  std::set<std::string> symbols;
  is_symbol_.assign((size_t)vocab.size(), 0);
  auto add = [&](const std::string& s, const std::string& what) {
    const int id = vocab.lookup(s);
    if (id == vocab.unk_id)
      throw Error("attnlite.bpe: " + what + " '" + s + "' is not in the vocabulary");
    if (id == vocab.pad_id || id == vocab.bos_id || id == vocab.eos_id)
      throw Error("attnlite.bpe: " + what + " '" + s + "' is a reserved token");
    symbols.insert(s);
    is_symbol_[(size_t)id] = 1;
    longest_ = std::max(longest_, s.size());
  };
  for (const auto& a : alphabet) {
    const std::string c = table_string(a, "an alphabet entry");
    int chars = 0;
    if (!valid_utf8(c, &chars) || chars != 1)
      throw Error("attnlite.bpe: alphabet entry '" + c + "' is not one UTF-8 character");
    uint32_t cp = 0;
    utf8_next(c, 0, &cp);
    if (is_space(cp)) throw Error("attnlite.bpe: the alphabet holds a space");
    if (symbols.count(c)) throw Error("attnlite.bpe: alphabet entry '" + c + "' appears twice");
    add(c, "alphabet entry");
  }
  if (!symbols.count(std::string(1, kEnd)))
    throw Error("attnlite.bpe: the alphabet lacks the end-of-word symbol '_'");
  for (size_t k = 0; k < merges.size(); ++k) {
    const auto& m = merges[k];
    const std::string where = "merge " + std::to_string(k);
    if (!m.is_array() || m.size() != 2) throw Error("attnlite.bpe: " + where + " is not a pair");
    const std::string a = table_string(m[0], "a merge part"), b = table_string(m[1], "a merge part");
    if (!symbols.count(a) || !symbols.count(b))
      throw Error("attnlite.bpe: " + where + " joins '" + a + "' and '" + b +
                  "', not both symbols at that point");
    add(a + b, where + "'s result");
  }
  num_merges_ = (int)merges.size();
  num_symbols_ = (int)symbols.size();
}

size_t Bpe::words(std::string_view s, char* out, size_t cap) {
  size_t n = 0;
  bool in_word = false;
  uint32_t prev = ' ';
  auto put = [&](const char* p, size_t len) {
    if (n + len > cap) throw Error("sentence is too long for the tokenizer's buffer");
    std::memcpy(out + n, p, len);
    n += len;
  };
  auto end_word = [&] {
    if (in_word) put(&kEnd, 1);
    in_word = false;
  };
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const int len = utf8_next(s, i, &cp);
    if (!len) throw Error("input is not valid UTF-8");
    if (is_space(cp)) {
      end_word();
      prev = ' ';
    } else {
      // the book's no_space(): a space before , . ! ? unless a space precedes
      if ((cp == ',' || cp == '.' || cp == '!' || cp == '?') && prev != ' ') end_word();
      if (!in_word && n) put(" ", 1);
      put(s.data() + i, (size_t)len);
      in_word = true;
      prev = cp;
    }
    i += (size_t)len;
  }
  end_word();
  return n;
}

int Bpe::segment(const Vocab& vocab, std::string_view text, int* ids, int max_ids,
                 int* unknown) const {
  int count = 0;
  *unknown = 0;
  auto emit = [&](int id) {
    if (count < max_ids) ids[count] = id;
    ++count;
  };
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') { ++i; continue; }
    size_t word_end = text.find(' ', i);
    if (word_end == std::string_view::npos) word_end = text.size();
    size_t start = i;
    while (start < word_end) {
      size_t end = std::min(word_end, start + longest_);
      int id = -1;
      for (; end > start; --end) {
        const int v = vocab.lookup(text.substr(start, end - start));
        if (v != vocab.unk_id && is_symbol_[(size_t)v]) { id = v; break; }
      }
      if (id < 0) {  // no symbol starts here: '<unk>' for this character
        uint32_t cp = 0;
        const int len = utf8_next(text, start, &cp);
        end = start + (size_t)(len ? len : 1);
        id = vocab.unk_id;
        ++*unknown;
      }
      emit(id);
      start = end;
    }
    i = word_end;
  }
  return count;
}

std::vector<std::string> Bpe::pieces(const Vocab& vocab, std::string_view sentence) const {
  std::string text(words_capacity(sentence.size()), '\0');
  text.resize(words(sentence, text.data(), text.size()));
  int unknown = 0;
  std::vector<int> ids((size_t)segment(vocab, text, nullptr, 0, &unknown));
  segment(vocab, text, ids.data(), (int)ids.size(), &unknown);
  std::vector<std::string> out;
  for (int id : ids) out.push_back(vocab.token(id));
  return out;
}

size_t Bpe::detokenize(const Vocab& vocab, const int* ids, int n, char* out, size_t cap) {
  // The word being built sits at out[len + 1 ..], one byte kept for the space before it.
  size_t len = 0, wl = 0;
  auto finish_word = [&] {
    if (!wl) return;
    const char* w = out + len + 1;
    bool punct = true;  // made of '.' and ',' only: no space before it
    for (size_t k = 0; k < wl && punct; ++k) punct = w[k] == '.' || w[k] == ',';
    if (len && !punct) {
      out[len] = ' ';
      len += 1 + wl;
    } else {
      std::memmove(out + len, w, wl);
      len += wl;
    }
    wl = 0;
  };
  for (int k = 0; k < n; ++k) {
    const std::string& t = vocab.token(ids[k]);
    const bool ends = !t.empty() && t.back() == kEnd;
    const size_t take = t.size() - (ends ? 1 : 0);
    if (len + 1 + wl + take > cap) throw Error("detokenize: the output buffer is too small");
    std::memcpy(out + len + 1 + wl, t.data(), take);
    wl += take;
    if (ends) finish_word();
  }
  finish_word();
  return len;
}

}  // namespace attnlite
