// attnlite — the book's Vocab (index order as stored in the model) and tokenizer.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnlite {

class Vocab {
 public:
  Vocab() = default;
  // Validates: non-empty, unique, non-empty tokens without spaces, '<unk>' at 0 and
  // '<pad>', '<bos>', '<eos>' present. Throws attnlite::Error.
  explicit Vocab(std::vector<std::string> idx_to_token);

  int size() const { return (int)tokens_.size(); }
  const std::string& token(int id) const { return tokens_[(size_t)id]; }
  int lookup(std::string_view tok) const;  // '<unk>' when absent; never allocates
  int unk_id = 0, pad_id = 1, bos_id = 2, eos_id = 3;  // the reserved tokens' ids

 private:
  std::vector<std::string> tokens_;
  std::vector<int> sorted_;  // ids sorted by token, for binary search
};

// d2l preprocess_nmt: U+202F and U+00A0 become spaces, lowercase, and a space goes before
// , . ! ? when the previous character is not a space. Writes at most `cap` bytes to out and
// returns the length. Throws attnlite::Error on invalid UTF-8 or when out is too small.
// Lowercasing covers ASCII, Latin-1, Latin Extended-A and Greek/Cyrillic basics.
size_t preprocess_nmt(std::string_view in, char* out, size_t cap);

// Splits on spaces (runs of spaces count as one; the book's split(' ') would make empty
// tokens of them). Writes up to max_tokens views into `tokens`, returns the total count.
int split_tokens(std::string_view text, std::string_view* tokens, int max_tokens);

// Convenience for tools: preprocess + split into strings.
std::vector<std::string> tokenize(std::string_view sentence);

// d2l bleu(pred_seq, label_seq, k): brevity penalty times the weighted n-gram precisions,
// over space-separated tokens. 0 where the book would divide by zero.
double bleu(std::string_view pred, std::string_view label, int k = 2);

// sacreBLEU's "13a" tokenizer (Tokenizer13a, the mteval-v13a.pl tokenization WMT uses),
// which sacreBLEU's default BLEU() applies to hypotheses and references alike:
//   1. remove "<skipped>", remove "-\n", then "\n" -> " "; if the line has an '&', replace
//      &quot; &amp; &lt; &gt; by " & < > (in that order, each over the whole line);
//   2. put a space on both sides of the line, then four regex substitutions (Python re.sub:
//      left to right, matches do not overlap), in order:
//        ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "  space around each of  { | } ~ [ \ ] ^ _ `
//                                                space ! " # $ % & ( ) * + : ; < = > ? @ /
//        ([^0-9])([\.,]) -> "\1 \2 "   . or , after a non-digit
//        ([\.,])([^0-9]) -> " \1 \2"   . or , before a non-digit
//        ([0-9])(-)      -> "\1 \2 "   - after a digit
//      ([^0-9] is any one code point that is not an ASCII digit);
//   3. split on runs of Unicode whitespace (Python's str.split()) and join with single spaces.
// So "3.14", "1,000" and "well-known" stay one token; "a.b", "5-3", "l'été." do not (the
// apostrophe and letters are never split). Throws attnlite::Error on invalid UTF-8.
std::string tokenize_13a(std::string_view line);

// Corpus BLEU-4 (Papineni et al. 2002), the standard one: n-gram matches clipped by the
// most any one reference has, summed over the corpus for n = 1..4, the geometric mean of
// the four precisions, times the brevity penalty exp(1 - r/c) when the c hypothesis tokens
// are fewer than the r of the closest reference lengths (the shorter on ties). score() is
// in [0, 1].
//
// Default-constructed (the book's tokens): tokens are split on spaces, no smoothing (0 when
// some n has no match at all).
//
// CorpusBleu::sacrebleu() is sacreBLEU's default BLEU() (corpus_bleu / BLEU().corpus_score:
// signature case:mixed|eff:no|tok:13a|smooth:exp): each sentence has its trailing whitespace
// stripped and is tokenized by tokenize_13a(), case-sensitive; empty references ("") are
// dropped (a sentence needs one that is not); and the 'exp' smoothing of mteval-v13a: the
// k-th order n (k = 1, 2, ..) with no match at all counts with precision 1 / (2^k * total_n)
// instead of 0. The score is 0 when no n-gram of any order matches, when the hypotheses have
// no n-grams of some order n <= 4 (too short), or when they are empty.
class CorpusBleu {
 public:
  enum class Tokenize { spaces, v13a };
  enum class Smooth { none, exp };
  CorpusBleu() = default;
  CorpusBleu(Tokenize tokenize, Smooth smooth) : tokenize_(tokenize), smooth_(smooth) {}
  static CorpusBleu sacrebleu() { return CorpusBleu(Tokenize::v13a, Smooth::exp); }

  void add(std::string_view hypothesis, const std::vector<std::string>& references);
  double score() const;
  long hyp_len() const { return hyp_len_; }
  long ref_len() const { return ref_len_; }
  // The clipped matches and the hypothesis n-grams of order n (1..4), summed over the corpus.
  long matches(int n) const { return match_[n - 1]; }
  long total(int n) const { return total_[n - 1]; }
  // matches / total, unsmoothed (0 when total is 0).
  double precision(int n) const { return total_[n - 1] ? (double)match_[n - 1] / total_[n - 1] : 0; }

 private:
  Tokenize tokenize_ = Tokenize::spaces;
  Smooth smooth_ = Smooth::none;
  long match_[4] = {0, 0, 0, 0}, total_[4] = {0, 0, 0, 0};
  long hyp_len_ = 0, ref_len_ = 0;
};

}  // namespace attnlite
