"""Byte-pair encoding as in the book's subword section (d2l 15.6), on cased text.

Words.  A sentence is split into words the way the book splits it, without lowercasing:
tabs, line breaks and non-breaking spaces (U+202F, U+00A0) become spaces, a space is inserted before ',', '.',
'!' and '?' when the previous character is not a space, and the text is split at runs of
spaces (so no word is empty).  Each word ends with the end-of-word symbol '_' (the book's).

Learning (`learn`).  The symbols start as every character of the training words plus
'_'.  Each step merges the most frequent adjacent pair of symbols, counted over the words
weighted by their frequency, into one new symbol, as the book's `get_max_freq_pair` and
`merge_symbols` do; ties go to the pair that sorts first (by code point), and a merge
applies to the symbol sequences, not to their joined text (the book's `str.replace` on
space-joined text can also join the tail of one symbol with the head of the next).

Segmenting (`segment`).  As the book's `segment_BPE`: from the start of a word, take the
longest piece that is a symbol, then go on after it.  A character that no symbol starts
with becomes the piece '<unk>' on its own and segmentation goes on after it (the book stops
the word there).  Every character seen in training is a symbol, so a word never seen in
training is still spelled with known pieces.

Detokenizing (`detokenize`).  Pieces are joined, '_' ends a word, words are joined with
spaces, and the space before '.' and ',' is removed; the space before '?', '!' and ':'
stays, as the corpus writes French.

The C++ tokenizer (src/text/bpe.cpp) does the same; tests/cli/bpe_corpus.sh checks that the two
agree on every sentence of the corpus.

    /usr/bin/python3 tools/bpe.py learn [CORPUS] --merges 8000 --out FILE.json
    /usr/bin/python3 tools/bpe.py segment FILE.json < text     # one line of pieces per line
    python3 tools/bpe.py segment MODEL.safetensors < text      # the table in a model file

`segment` first normalizes each line as a translator reads it (tools/normalize.py; --raw
segments the line as it is).

`segment` needs nothing but Python's standard library (the tests run it on the corpus).
"""
import collections
import heapq
import json
import sys

from . import normalize

END = '_'
UNK = '<unk>'


def words(line):
    """The words of one sentence, split as described above."""
    text = line
    for sp in ('\u202f', '\xa0', '\t', '\n', '\r'):
        text = text.replace(sp, ' ')
    out = []
    for i, ch in enumerate(text):
        if i > 0 and ch in ',.!?' and text[i - 1] != ' ':
            out.append(' ')
        out.append(ch)
    return [w for w in ''.join(out).split(' ') if w]


def learn(sentences, num_merges):
    """(alphabet, merges): the sorted characters of the training words plus END, and the
    list of merged pairs in the order they were learned."""
    freqs = collections.Counter()
    for s in sentences:
        freqs.update(words(s))
    alphabet = sorted({c for w in freqs for c in w} | {END})
    seqs = [list(w) + [END] for w in freqs]
    counts = [freqs[w] for w in freqs]
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for i, s in enumerate(seqs):
        for p in zip(s, s[1:]):
            pair_count[p] += counts[i]
            where[p].add(i)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    while len(merges) < num_merges and heap:
        c, p = heapq.heappop(heap)
        if pair_count.get(p, 0) != -c or c == 0:
            continue  # stale entry
        merges.append(p)
        a, b = p
        new = a + b
        changed = set()
        for i in sorted(where.pop(p, ())):
            s = seqs[i]
            for q in zip(s, s[1:]):
                pair_count[q] -= counts[i]
                changed.add(q)
            out, k = [], 0
            while k < len(s):
                if k + 1 < len(s) and s[k] == a and s[k + 1] == b:
                    out.append(new)
                    k += 2
                else:
                    out.append(s[k])
                    k += 1
            seqs[i] = out
            for q in zip(out, out[1:]):
                pair_count[q] += counts[i]
                where[q].add(i)
                changed.add(q)
        for q in changed:
            n = pair_count[q]
            if n > 0:
                heapq.heappush(heap, (-n, q))
            else:
                pair_count.pop(q, None)
                where.pop(q, None)
    return alphabet, merges


def symbols(alphabet, merges):
    """The symbols in vocabulary order: the alphabet, then each merge's result (a merge
    whose result is already a symbol adds nothing)."""
    out, seen = [], set()
    for s in list(alphabet) + [a + b for a, b in merges]:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


class Segmenter:
    def __init__(self, syms):
        self.syms = set(syms)
        self.longest = max(len(s) for s in syms)

    def word(self, w):
        """Pieces of one word (END appended)."""
        w = w + END
        out, start = [], 0
        while start < len(w):
            end = min(len(w), start + self.longest)
            while end > start and w[start:end] not in self.syms:
                end -= 1
            if end == start:
                out.append(UNK)
                start += 1
            else:
                out.append(w[start:end])
                start = end
        return out

    def __call__(self, line):
        return [p for w in words(line) for p in self.word(w)]


def detokenize(pieces):
    """Text from pieces (special tokens such as <unk> are kept as written)."""
    ws, cur = [], ''
    for p in pieces:
        if p.endswith(END) and p != UNK:
            ws.append(cur + p[:-len(END)])
            cur = ''
        else:
            cur += p
    if cur:
        ws.append(cur)
    text = ''
    for w in ws:
        if not w:
            continue
        if text and not (w[0] in '.,' and _all_punct(w)):
            text += ' '
        text += w
    return text


def _all_punct(w):
    return all(c in '.,' for c in w)


def save(path, alphabet, merges):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump({"end_of_word": END, "alphabet": alphabet,
                   "merges": [list(m) for m in merges]}, f, ensure_ascii=False)


def load(path):
    """(alphabet, merges) of a table file, or of the attnlite.bpe metadata of a model file."""
    if path.endswith(".safetensors"):
        import struct
        with open(path, 'rb') as f:
            n = struct.unpack('<Q', f.read(8))[0]
            d = json.loads(json.loads(f.read(n))["__metadata__"]["attnlite.bpe"])
    else:
        with open(path, encoding='utf-8') as f:
            d = json.load(f)
    return d["alphabet"], [tuple(m) for m in d["merges"]]


def main():
    import argparse
    from .paths import DEFAULT_CORPUS
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("learn")
    a.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    a.add_argument("--merges", type=int, default=8000)
    a.add_argument("--out", required=True)
    b = sub.add_parser("segment")
    b.add_argument("table")
    b.add_argument("--raw", action="store_true",
                   help="segment each line as it is, not normalized as a translator reads it")
    args = ap.parse_args()
    if args.cmd == "learn":
        from . import splits
        data = splits.load_raw(args.corpus)
        sents = [s for s, _ in data["train"]] + [t for _, t in data["train"]]
        alphabet, merges = learn(sents, args.merges)
        save(args.out, alphabet, merges)
        print(f"{len(alphabet)} characters, {len(merges)} merges, "
              f"{len(symbols(alphabet, merges))} symbols")
    else:
        alphabet, merges = load(args.table)
        seg = Segmenter(symbols(alphabet, merges))
        sys.stdin.reconfigure(encoding='utf-8', newline='\n')
        sys.stdout.reconfigure(encoding='utf-8')
        for line in sys.stdin:
            text = line.rstrip('\n').rstrip('\r')
            print(' '.join(seg(text if args.raw else normalize.normalize(text))))
