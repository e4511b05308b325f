// attnlite — byte-pair encoding (d2l 15.6) on cased text: the sub-word tokenizer of models
// whose file carries a merge table (metadata attnlite.bpe). tools/attnlite_tools/bpe.py
// learns the table and is the definition this follows:
//
//   words      tabs, line breaks and the non-breaking spaces U+202F, U+00A0 become spaces; a
//              space goes before , . ! ? when the previous character is not a space; the
//              text splits at runs of spaces. Each word ends with the end-of-word symbol '_'.
//   symbols    the alphabet (single characters, '_' among them), then the result of each
//              merge in order: every merge joins two existing symbols.
//   segment    the book's segment_BPE: from the start of a word the longest piece that is a
//              symbol, then on after it; a character no symbol starts with becomes '<unk>'
//              and segmentation goes on after it.
//   detokenize pieces are joined, '_' ends a word, words are joined by spaces, and no space
//              goes before a word made of '.' and ',' only (the space before ? ! : stays, as
//              the corpus writes French).
//
// Segmenting and detokenizing write into caller buffers and allocate nothing.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/vocab.h"

namespace attnlite {

class Bpe {
 public:
  Bpe() = default;
  // From the JSON of attnlite.bpe: {"end_of_word": "_", "alphabet": [...], "merges":
  // [[a, b], ...]}. Validates: the end-of-word symbol is "_", alphabet entries are single
  // characters (valid UTF-8, no space), unique and include "_"; each merge joins two
  // symbols that exist at that point; every symbol is a token of `vocab` (its id is what
  // segment() produces). Throws attnlite::Error naming the problem.
  Bpe(std::string_view json, const Vocab& vocab);

  bool empty() const { return longest_ == 0; }
  int num_merges() const { return num_merges_; }
  int num_symbols() const { return num_symbols_; }
  size_t longest() const { return longest_; }  // bytes of the longest symbol

  // The words of `sentence`, each followed by '_', separated by single spaces, written to
  // out (cap bytes); returns the length. Throws on invalid UTF-8 or when out is too small.
  static size_t words(std::string_view sentence, char* out, size_t cap);
  static size_t words_capacity(size_t input_bytes) { return input_bytes * 4 + 1; }

  // Pieces of the text words() wrote, by `vocab` (the one given at construction): their
  // ids go to ids[0 .. max_ids); returns the total number of pieces (which may exceed
  // max_ids); *unknown counts the '<unk>' pieces.
  int segment(const Vocab& vocab, std::string_view words_text, int* ids, int max_ids,
              int* unknown) const;

  // Convenience for tools (allocates): the pieces of a sentence as strings.
  std::vector<std::string> pieces(const Vocab& vocab, std::string_view sentence) const;

  // Text of the pieces `ids` (vocab tokens) into out (cap bytes, at least the pieces' total
  // length + n); returns the length. Tokens not ending in '_' that are special (<unk>, ...)
  // are written as they are.
  static size_t detokenize(const Vocab& vocab, const int* ids, int n, char* out, size_t cap);

 private:
  std::vector<unsigned char> is_symbol_;  // by vocab id
  size_t longest_ = 0;
  int num_merges_ = 0, num_symbols_ = 0;
};

}  // namespace attnlite
