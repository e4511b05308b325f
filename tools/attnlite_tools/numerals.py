"""Numbers written in digits: pairs that teach a translator to carry them over, and a check.

The corpus writes few numbers in digits (184 of its 74,050 pairs), and a model trained on it
mangles the ones people type ("I'm 19." -> "Je suis en 19noté.", "he is 25 years old" ->
"Il a trois ans."). A pair *names one number* when each side names the same number once:
the same runs of digits on both sides, or one number word on each side with the same value
(the numbers French writes in one word: 2-16, 20, 30, 40, 50, 60, 100, 1000; "one" is left
out, "un"/"une" being an article too; a word inside a hyphenated compound such as
"twenty-five" or "dix-sept" counts for neither side, and an English number that French
writes as a compound, "seventeen", still counts as a second number). `respell` writes that
number as other digits, the same on both sides ("I have two children." / "J'ai deux
enfants." -> "I have 47 children." / "J'ai 47 enfants."): with such pairs drawn anew each
epoch (tools/train_subword.py --numbers K: K copies of each training pair that names one
number), the model learns to carry digits over.

    /usr/bin/python3 tools/numerals.py write [--split test] [--variants 3] [--seed 0] > FILE.tsv
    /usr/bin/python3 tools/numerals.py check ATTNLITE_CLI FILE.tsv [--model M] [--beam K]
        [--alpha A]

`write` prints 'english<TAB>french' for every pair of a split (as written) that names one
number, respelled --variants times. `check` translates each English sentence once and counts
the translations that carry its digits: every number of the English (a run of digits that
stands as a word), and no other, in the translation, as many times; it prints the share and
the sentences that missed.
"""
import argparse
import collections
import re
import sys

from . import carried as _carried

EN_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90, "hundred": 100, "thousand": 1000}
FR_WORDS = {
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9,
    "dix": 10, "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "quinze": 15,
    "seize": 16, "vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60,
    "cent": 100, "mille": 1000}


def _word_re(words):
    # A whole word, not a part of a hyphenated compound ("twenty-five", "dix-sept").
    alts = "|".join(sorted(words, key=len, reverse=True))
    return re.compile(r"(?<![\w-])(" + alts + r")(?![\w-])", re.IGNORECASE)


EN_RE, FR_RE = _word_re(EN_WORDS), _word_re(FR_WORDS)
DIGITS_RE = re.compile(r"\d+")
WORD_RE = re.compile(r"[^\W_]+")


def digit_runs(text):
    return DIGITS_RE.findall(text)


def names_one_number(en, fr):
    """'word' or 'digits' when the pair names one number on each side, else None."""
    de, df = digit_runs(en), digit_runs(fr)
    if de or df:
        return "digits" if de and sorted(de) == sorted(df) else None
    we, wf = EN_RE.findall(en), FR_RE.findall(fr)
    if len(we) == 1 and len(wf) == 1 and EN_WORDS[we[0].lower()] == FR_WORDS[wf[0].lower()]:
        return "word"
    return None


def draw_number(rng):
    """A number as people type one: mostly 2..99, else hundreds, years or thousands."""
    r = rng.random()
    if r < 0.55:
        return str(rng.randint(2, 99))
    if r < 0.75:
        return str(rng.randint(100, 999))
    if r < 0.9:
        return str(rng.randint(1900, 2099))
    return str(rng.randint(1000, 99999))


def _draw_like(run, rng):
    """Other digits of the same length (no leading zero unless the run is one digit)."""
    if len(run) == 1:
        return str(rng.randint(0, 9))
    return str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in run[1:])


def respell(en, fr, rng):
    """The pair with its one number written as other digits on both sides (random.Random rng),
    or None when the pair does not name one number."""
    kind = names_one_number(en, fr)
    if kind == "word":
        n = draw_number(rng)
        return EN_RE.sub(n, en, count=1), FR_RE.sub(n, fr, count=1)
    if kind == "digits":
        new = {run: _draw_like(run, rng) for run in sorted(set(digit_runs(en)))}
        swap = lambda m: new[m.group(0)]  # noqa: E731
        return DIGITS_RE.sub(swap, en), DIGITS_RE.sub(swap, fr)
    return None


def numbers(text):
    """The runs of digits of `text` that stand as words (not glued to letters: "19noté")."""
    return [w for w in WORD_RE.findall(text) if w.isascii() and w.isdigit()]


def carries_digits(english, translation):
    """Every number of the English, and no other, in the translation (as many times)."""
    return collections.Counter(numbers(english)) == collections.Counter(numbers(translation))


def carried(cli, tsv, model=None, beam=1, alpha=0.0):
    """Translates each English sentence of `tsv` ('english<TAB>french' lines) once with the
    CLI: ([(english, translation) that did not carry the digits], number of sentences)."""
    return _carried.carried(carries_digits, cli, tsv, model, beam, alpha)


def main():
    import random

    from .paths import DEFAULT_CORPUS
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="a split's pairs that name one number, respelled")
    w.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    w.add_argument("--split", default="test", choices=["train", "dev", "test"])
    w.add_argument("--variants", type=int, default=3)
    w.add_argument("--seed", type=int, default=0)
    _carried.add_check(sub, "digits")
    args = ap.parse_args()
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    if args.cmd == "write":
        from . import splits  # PyTorch, for the book's preprocessing
        rng = random.Random(args.seed)
        for en, fr in splits.load_raw(args.corpus)[args.split]:
            if names_one_number(en, fr):
                for _ in range(args.variants):
                    print("\t".join(respell(en, fr, rng)))
        return
    _carried.check(carries_digits, args, "digits")
