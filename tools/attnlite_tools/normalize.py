"""What a translator does to its English input before reading it, and how people type.

`normalize(text)` folds what cannot change the meaning of a sentence into the forms the
corpus writes.  The C++ runtime (src/text/normalize.cpp) applies the same rules to every
translator's source (CLI, C API, WASM, page); tests/cli/normalize_parity.sh checks that the
two agree.  The rules, one code point at a time, then on spaces:

1. Removed: zero-width space, non-joiner, joiner, word joiner (U+200B-U+200D, U+2060),
   the byte-order mark (U+FEFF), the soft hyphen (U+00AD); and emoji: the pictographs,
   symbols and dingbats of U+1F000-U+1FAFF, U+2600-U+27BF, U+2B00-U+2BFF, U+231A-U+231B and
   U+23E9-U+23FA, the variation selectors U+FE00-U+FE0F, the combining keycap U+20E3, the
   tag characters U+E0020-U+E007F (no model ever read one, and one it cannot read derails
   the whole translation).
2. A space: tab, line feed, vertical tab, form feed, carriage return, U+0085, the
   no-break spaces (U+00A0, U+202F), the ogham space U+1680, the typographic spaces
   U+2000-U+200A, U+2028, U+2029, U+205F and the ideographic space U+3000.
3. An apostrophe (') : the single quotation marks U+2018 U+2019 U+201A U+201B, the prime
   U+2032, the modifier letters U+02B9 U+02BC U+02BB, the grave accent U+0060 and the
   acute accent U+00B4 (typed for an apostrophe on some keyboards), the single
   guillemets U+2039 U+203A.
4. A quotation mark ("): the double quotation marks U+201C U+201D U+201E U+201F, the
   double prime U+2033, the guillemets U+00AB U+00BB.
5. A hyphen-minus (-): the hyphens and dashes U+2010-U+2015, the minus sign U+2212,
   the small and full-width hyphen-minus U+FE58 U+FE63.
6. Three full stops (...): the ellipsis U+2026.
7. Full-width ASCII (U+FF01-U+FF5E): the ASCII character (U+0021-U+007E), as NFKC folds it,
   then these rules again (the full-width grave accent U+FF40 is an apostrophe like U+0060).
8. The Latin ligatures U+FB00-U+FB06 (ff fi fl ffi ffl st st), as NFKC folds them.
9. Then runs of spaces become one space, and leading and trailing spaces go.
10. Then a sentence in capitals, two or more of A-Z and none of a-z, has its A-Z
    lowercased ("I'M HOME." reads "i'm home."): all-capital case tells nothing apart, and
    the corpus never writes a sentence so.
11. So has a sentence in Title Case: three or more words (runs of A-Z, a-z and apostrophes
    that start with a letter), each with its first letter in A-Z and its others in a-z
    ("Where Is The Station?" reads "where is the station?"). Such case tells nothing apart
    either, and the corpus writes two sentences so ("Happy New Year!", "Happy Valentine's
    Day.").
12. Then a name after a title gets its capital: a title (mr, mrs or ms in any case, a whole
    word, not "ms" after a number: "500 ms later"), "." or not, one space, then a word of a
    letter and a letter in a-z: "mr smith is here" reads "mr Smith is here", whose surname a
    model carries over (it wrote "M. Sism" for the first). Rule 11 lets such a name start in
    a-z ("Mr smith Is Here" is in Title Case), so that applying the rules again changes
    nothing.

Everything else is kept as it is (letters, accents, the case of any other sentence,
punctuation, symbols, and bytes that are not UTF-8, which the C++ side passes through
unchanged).

`STYLES` are the four ways of typing a sentence that evaluation reports (`attnlite eval
--styles`): as written, without its final punctuation, lowercased, and both.  `casual()` is
the source noise that training adds so that a model reads all of them.

    python3 tools/normalize.py < text      # each line normalized (standard library only)
"""
import re

_REMOVE = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD}
_EMOJI = [(0x1F000, 0x1FAFF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x231A, 0x231B),
          (0x23E9, 0x23FA), (0xFE00, 0xFE0F), (0x20E3, 0x20E3), (0xE0020, 0xE007F)]
_SPACE = ({0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0xA0, 0x202F, 0x1680, 0x2028, 0x2029, 0x205F,
           0x3000} | set(range(0x2000, 0x200B)))
_APOSTROPHE = {0x2018, 0x2019, 0x201A, 0x201B, 0x2032, 0x02B9, 0x02BB, 0x02BC, 0x0060, 0x00B4,
               0x2039, 0x203A}
_QUOTE = {0x201C, 0x201D, 0x201E, 0x201F, 0x2033, 0x00AB, 0x00BB}
_HYPHEN = set(range(0x2010, 0x2016)) | {0x2212, 0xFE58, 0xFE63}
_LIGATURES = {0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl",
              0xFB05: "st", 0xFB06: "st"}


def fold(cp):
    """The text that code point cp becomes under rules 1-8 (before spaces are squeezed)."""
    if cp in _REMOVE or any(a <= cp <= b for a, b in _EMOJI):
        return ""
    if cp in _SPACE:
        return " "
    if cp in _APOSTROPHE:
        return "'"
    if cp in _QUOTE:
        return '"'
    if cp in _HYPHEN:
        return "-"
    if cp == 0x2026:
        return "..."
    if 0xFF01 <= cp <= 0xFF5E:
        return fold(cp - 0xFEE0)  # then as that ASCII character: U+FF40 -> ` -> '
    if cp in _LIGATURES:
        return _LIGATURES[cp]
    return chr(cp)


def normalize(text):
    """text with the rules above applied."""
    folded = "".join(fold(ord(c)) for c in text)
    out = " ".join(w for w in folded.split(" ") if w)
    if in_capitals(out) or in_title_case(out):
        out = ascii_lower(out)
    return capitalize_after_titles(out)


def in_capitals(text):
    """Two or more of A-Z, none of a-z."""
    return not any("a" <= c <= "z" for c in text) and sum("A" <= c <= "Z" for c in text) >= 2


_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


def in_title_case(text):
    """Three or more words (runs of A-Z, a-z and apostrophes that start with a letter), each
    with its first letter in A-Z and its others in a-z; a name after a title (`after_title`)
    may start in a-z, as `capitalize_after_titles` then gives it its capital."""
    words = list(_WORD.finditer(text))
    return len(words) >= 3 and all(
        ("A" <= w.group(0)[0] <= "Z" or after_title(text, w.start()))
        and not any("A" <= c <= "Z" for c in w.group(0)[1:]) for w in words)


def _word_char(c):
    return "A" <= c <= "Z" or "a" <= c <= "z" or "0" <= c <= "9" or c == "'"


def _letter(c):
    return "A" <= c <= "Z" or "a" <= c <= "z"


def title_at(s, k):
    """The length of the title at s[k] (mr, mrs or ms in any case, the whole word, not "ms"
    after a number: "500 ms later"), or 0."""
    if k and _word_char(s[k - 1]):
        return 0
    if k >= 2 and s[k - 1] == " " and "0" <= s[k - 2] <= "9":
        return 0
    t = ascii_lower("".join(s[k:k + 3]))
    n = 3 if t == "mrs" else 2 if t[:2] in ("mr", "ms") else 0
    return n if n and (k + n == len(s) or not _word_char(s[k + n])) else 0


def after_title(s, j):
    """Whether the word at s[j] is a name after a title: a title, "." or not, one space, then
    a letter and a letter in a-z ("mr smith", "Mrs. Brown"; not "mr x" nor "MR SMITH")."""
    if j + 1 >= len(s) or not _letter(s[j]) or not "a" <= s[j + 1] <= "z":
        return False
    if j < 3 or s[j - 1] != " ":
        return False
    e = j - 1
    if s[e - 1] == ".":
        e -= 1
    return any(title_at(s, e - n) == n for n in (2, 3) if n <= e)


def capitalize_after_titles(text):
    """Rule 12: a name after a title (`after_title`) gets its capital: "mr smith" reads
    "mr Smith"."""
    s = list(text)
    for j in range(len(s)):
        if "a" <= s[j] <= "z" and after_title(s, j):
            s[j] = chr(ord(s[j]) - 32)
    return "".join(s)


FINAL_PUNCTUATION = ".!?"


def drop_final_punctuation(text):
    """text without the run of '.', '!' and '?' (and spaces) that ends it."""
    return text.rstrip(" " + FINAL_PUNCTUATION)


def ascii_lower(text):
    """text with A-Z lowercased (the corpus's English is ASCII; the C++ side does the same)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


STYLES = {
    "written": lambda s: s,
    "no-final-punct": drop_final_punctuation,
    "lower": ascii_lower,
    "lower-no-final-punct": lambda s: ascii_lower(drop_final_punctuation(s)),
}


def casual(text, rng):
    """One way a person might type the (normalized) English sentence `text`, drawn with the
    random.Random rng: half the time as written; otherwise lowercased and/or without the
    final punctuation, sometimes all capitals, sometimes without apostrophes ("im", "dont")."""
    r = rng.random()
    if r < 0.5:
        return text
    if r < 0.62:
        out = drop_final_punctuation(text)
    elif r < 0.76:
        out = ascii_lower(text)
    elif r < 0.95:
        out = ascii_lower(drop_final_punctuation(text))
    else:
        out = text.upper() if rng.random() < 0.5 else drop_final_punctuation(text.upper())
    if "'" in out and rng.random() < 0.15:
        out = out.replace("'", "")
    return out or text


def capitalize_one(text, rng):
    """text with the first letter of one of its lowercase words (drawn with rng) in capitals:
    "I saw a wonderful film." -> "I saw a Wonderful film.".  A word a model read only in
    lowercase is then also read capitalized, as it comes at the start of a sentence, so that
    a sentence starting with it ("Wonderful!") is not taken for one starting with a name.
    text unchanged where no word starts with a-z."""
    starts = [m.start() for m in _WORD.finditer(text) if "a" <= text[m.start()] <= "z"
              and not (m.start() and text[m.start() - 1].isalnum())]
    if not starts:
        return text
    at = starts[rng.randrange(len(starts))]
    return text[:at] + text[at].upper() + text[at + 1:]


def main():
    import sys
    sys.stdin.reconfigure(encoding="utf-8", newline="\n")
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    for line in sys.stdin:
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        print(normalize(line))
