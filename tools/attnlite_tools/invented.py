"""Invented words: translations holding a word that no French sentence of the corpus holds.

A sub-word translator can write any string, and a word of its output that is in none of the
corpus's 74,050 French sentences, nor in the English it translates (case aside), is most
often a word it made up: "Je sens le co." for "I smell bacon.", "Rouis !" for "Run!". Names
it carries over from the English do not count ("Anna est ma sœur." names Anna), nor do the
corpus's own words in any order or case. A correct French word that the corpus never
writes counts too ("grappes", "marchons"), so the count is an upper bound, for comparing
models on one split. A model that learns to carry names over may also take an ordinary word
for one ("Work slowly." -> "Siach est lentement."): the count of translations free of such
words, on the test split, says whether it does more often than the model before it.

    /usr/bin/python3 tools/invented.py check ATTNLITE_CLI SPLIT.tsv [--model M] [--beam K]
        [--alpha A] [--corpus fra.txt]

`check` translates each English sentence of the split once, prints each translation with a
word of its own and that word, then the share of translations without one.
"""
import argparse
import functools
import os
import re
import sys

from . import carried as _carried
from .paths import DEFAULT_CORPUS

WORD_RE = re.compile(r"[^\W\d_]+")


def words(text):
    """The runs of letters of `text` ("aujourd'hui" -> aujourd, hui)."""
    return WORD_RE.findall(text)


@functools.lru_cache(maxsize=4)
def lexicon(corpus=DEFAULT_CORPUS):
    """Every word of the corpus's French side ('english<TAB>french[<TAB>...]' lines),
    lowercased."""
    lex = set()
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                lex.update(w.lower() for w in words(parts[1]))
    return frozenset(lex)


def invented(english, translation, lex):
    """The words of `translation` found neither in `lex` (lowercased) nor in `english`, in
    order; case aside ("Réveillez" in the corpus, "réveillez" written)."""
    own = {w.lower() for w in words(english)}
    return [w for w in words(translation) if w.lower() not in lex and w.lower() not in own]


def carried(cli, tsv, model=None, beam=1, alpha=0.0, corpus=DEFAULT_CORPUS):
    """Translates each English sentence of `tsv` once with the CLI: ([(english, translation)
    that hold an invented word], number of sentences) -- the shape of numerals.carried."""
    lex = lexicon(corpus)
    return _carried.carried(lambda e, t: not invented(e, t, lex), cli, tsv, model, beam, alpha)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = _carried.add_check(sub, "words",
                           help="the share of translations free of invented words")
    c.add_argument("--corpus", default=DEFAULT_CORPUS)
    args = ap.parse_args()
    if not os.path.isfile(args.corpus):
        raise SystemExit(f"invented.py: no corpus at {args.corpus} (the fra-eng file whose French "
                         "words count as known; --corpus FILE)")
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    lex = lexicon(args.corpus)
    missed, total = carried(args.cli, args.tsv, args.model, args.beam, args.alpha, args.corpus)
    for e, t in missed:
        print(f"invented: {e} => {t}  [{' '.join(invented(e, t, lex))}]")
    kept = total - len(missed)
    print(f"translations without an invented word: {kept} of {total} ({100 * kept / total:.1f}%)")
