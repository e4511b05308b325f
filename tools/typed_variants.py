"""Casual input two ways: restoring the written form before translating, or a model trained on
casual input; each model on a split, by input style, with and without the restoration.

    /usr/bin/python3 tools/typed_variants.py ATTNLITE_CLI MODEL [MODEL ...]
        [--split models/transformer-fra-bpe.dev.tsv] [--beam 1]

Restoration ("truecasing"): a rule that puts back what casual typing drops, as far as it can
be guessed: a capital first letter, the pronoun I ("i", "i'm", "i'll", "i've", "i'd"), and a
final "?" when the sentence starts with a question word or an auxiliary ("where", "do",
"can", ...), else "." when it ends without . ! ?. Each English sentence of the split is typed
in each style of `attnlite eval --styles` (tools/attnlite_tools/normalize.py's STYLES), then
translated as typed (`attnlite eval --style`) and as restored (the split rewritten; where two
restored sentences coincide, `attnlite eval` scores them as one with both references);
prints corpus BLEU-4 (book tokens) in a Markdown table.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attnlite_tools import normalize  # noqa: E402
from attnlite_tools.paths import ROOT  # noqa: E402

QUESTION_WORDS = {
    "who", "whom", "whose", "what", "which", "where", "when", "why", "how", "is", "are", "am",
    "was", "were", "do", "does", "did", "can", "could", "will", "would", "shall", "should",
    "may", "might", "must", "have", "has", "had", "isn't", "aren't", "wasn't", "weren't",
    "don't", "doesn't", "didn't", "can't", "couldn't", "won't", "wouldn't", "shouldn't",
    "haven't", "hasn't"}


def restore(text):
    """The written form guessed back from a casually typed sentence."""
    s = normalize.normalize(text)
    if not s:
        return s
    s = re.sub(r"\bi\b(?=('m|'ll|'ve|'d)?\b)", "I", s)
    s = s[0].upper() + s[1:]
    if s[-1] not in ".!?":
        first = s.split(" ")[0].lower()
        s += "?" if first in QUESTION_WORDS else "."
    return s


def bleu(cli, model, tsv, beam, style="written"):
    out = subprocess.run([cli, "eval", "--json", "--model", model, "--beam", str(beam),
                          "--style", style, tsv],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["corpus_bleu4"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cli")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--split", default=os.path.join(ROOT, "models", "transformer-fra-bpe.dev.tsv"))
    ap.add_argument("--beam", type=int, default=1)
    args = ap.parse_args()
    with open(args.split, encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for st, typed in normalize.STYLES.items():
            path = os.path.join(tmp, f"{st}.restored.tsv")
            with open(path, "w", encoding="utf-8") as f:
                for en, fr in pairs:
                    f.write(f"{restore(typed(en))}\t{fr}\n")
            files[st] = path
        print(f"{os.path.relpath(args.split, ROOT)}, beam {args.beam}: corpus BLEU-4 (book tokens), "
              "as typed / restored")
        print()
        print("| model | " + " | ".join(normalize.STYLES) + " |")
        print("|---|" + "---:|" * len(normalize.STYLES))
        for m in args.models:
            cells = [f"{bleu(args.cli, m, args.split, args.beam, st):.2f} / "
                     f"{bleu(args.cli, m, files[st], args.beam):.2f}"
                     for st in normalize.STYLES]
            print(f"| {os.path.basename(m)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
