// attnlite — what a translator does to its English input before tokenizing it: it folds
// what cannot change a sentence's meaning into the forms the training corpus writes, so that
// a phone's typographic apostrophe reads as the straight one. tools/attnlite_tools/normalize.py
// is the definition this follows (the same rules, checked on the corpus and on every rule by
// tests/cli/normalize_parity.sh), one code point at a time, then on spaces:
//
//   removed      U+200B-U+200D, U+2060, U+FEFF, U+00AD (zero-width characters, soft hyphen)
//   removed      emoji: U+1F000-U+1FAFF, U+2600-U+27BF, U+2B00-U+2BFF, U+231A-U+231B,
//                U+23E9-U+23FA (pictographs, symbols, dingbats), U+FE00-U+FE0F (variation
//                selectors), U+20E3 (keycap), U+E0020-U+E007F (tags); no model ever read
//                one, and one it cannot read derails the whole translation
//   ' '          \t \n \v \f \r, U+0085, U+00A0, U+202F, U+1680, U+2000-U+200A, U+2028,
//                U+2029, U+205F, U+3000 (control and Unicode spaces)
//   '\''         U+2018 U+2019 U+201A U+201B U+2032 U+02B9 U+02BB U+02BC U+0060 U+00B4
//                U+2039 U+203A (single quotation marks, prime, modifier letters, accents)
//   '"'          U+201C U+201D U+201E U+201F U+2033 U+00AB U+00BB (double quotation marks,
//                double prime, guillemets)
//   '-'          U+2010-U+2015, U+2212, U+FE58, U+FE63 (hyphens, dashes, minus)
//   "..."        U+2026 (ellipsis)
//   ASCII        U+FF01-U+FF5E, the full-width forms (as NFKC folds them; then as that
//                ASCII character: U+FF40 is an apostrophe as U+0060 is)
//   ff fi fl ... U+FB00-U+FB06, the Latin ligatures (as NFKC folds them)
//   spaces       runs of spaces become one; leading and trailing spaces go.
//   capitals     then a sentence in capitals, two or more of A-Z and none of a-z, has its
//                A-Z lowercased ("I'M HOME." reads "i'm home."): all-capital case tells
//                nothing apart, and the corpus never writes a sentence so.
//   Title Case   so has a sentence of three or more words (runs of A-Z, a-z and apostrophes
//                that start with a letter), each with its first letter in A-Z and its others
//                in a-z ("Where Is The Station?" reads "where is the station?"); a name
//                after a title (below) may start in a-z.
//   titles       then a name after a title gets its capital: a title (mr, mrs or ms in any
//                case, a whole word, not "ms" after a number), "." or not, one space, then
//                a word of a letter and a letter in a-z: "mr smith is here" reads "mr Smith
//                is here", whose surname a model carries over. Applying the rules again
//                changes nothing.
//
// Everything else is kept: letters, accents, the case of any other sentence, punctuation.
// The result is never longer than the input. Every translator applies it (Translator, the
// C API, the page); tokenize and Model::source_tokens show what the model reads after it.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace attnlite {

// Writes the normalized form of `in` into out[0 .. cap) and returns its length; allocates
// nothing. cap >= in.size() always suffices. Throws attnlite::Error for input that is not
// valid UTF-8, or when cap is too small.
size_t normalize_source(std::string_view in, char* out, size_t cap);

// The same, into a new string.
std::string normalize_source(std::string_view in);

// Whether `in` normalizes to nothing because it holds only spaces (of any kind): false when
// it also held what normalization removes (emoji, zero-width characters), so that an error
// can say why a sentence that was not blank reads as empty. `in` is valid UTF-8.
bool blank_source(std::string_view in);

}  // namespace attnlite
