// attnlite — cutting a text into the sentences a translator reads one at a time.
//
// Every translator was trained on single sentences of up to num_steps tokens: given "I'm
// home. I'm happy. Where is the station?" as one sentence, a model drops or merges parts of
// it ("Je suis chez moi que je suis heureux."). The front ends (the CLI, the page, the
// bindings) cut a text into sentences with split_sentences, translate each, and join the
// translations with a space. The rules, for English as people type it:
//
//   end        a run of . ! ? and U+2026 (ellipsis), then any closing marks (" ' ) ] }
//              U+00BB U+2019 U+201D), then a space (ASCII white space, U+00A0 or U+202F):
//              "Run! Now." -> "Run!" "Now."; "\"Is she young?\" \"Yes.\"" -> two;
//              "3.5 km" and "U.S.A" are one (no space after the period)
//   not an end a period after a title or a Latin abbreviation (Mr Mrs Ms Dr Prof St Mt Lt
//              Col Gen Capt Sgt Rev vs cf e.g i.e, any case), or after a single capital
//              letter other than I (an initial: "J. K. Rowling")
//   an end only before a capital letter or a digit: a period after etc, Jr, Sr, Inc, Ltd,
//              Co, a.m, p.m or another word with a period inside ("U.S."), and an ellipsis
//              ("Wait... what?" is one; "I waited... Nobody came." two)
//
// Anywhere else a sentence ends at such a run and its space, whatever the case of what
// follows ("i'm home. i'm happy" is two). The spans exclude the spaces between sentences;
// a text of spaces only has no sentence. Input is bytes (UTF-8 or not: only ASCII and the
// UTF-8 forms above are looked at); nothing is allocated.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace attnlite {

// A sentence: text[begin, end), without spaces at either end.
struct SentenceSpan {
  size_t begin, end;
};

// Writes the first min(n, cap) sentences of `text` to out[] and returns n, their number
// (out may be NULL when cap is 0: a counting call).
size_t split_sentences(std::string_view text, SentenceSpan* out, size_t cap);

// The sentences as views into `text`.
std::vector<std::string_view> split_sentences(std::string_view text);

}  // namespace attnlite
