"""The train/dev/test split of the whole corpus, and corpus BLEU-4.

Every pair is preprocessed and tokenized as in the book.  A pair's split is decided by
its English sentence alone: h = int(sha1(preprocessed english)) % 100; h in {0, 1} is dev
(2%), h in {2, 3, 4, 5} is test (4%), the rest is train.  So every French translation of
an English sentence falls in the same split, and no dev or test English sentence occurs
in training.

    /usr/bin/python3 tools/splits.py [CORPUS] --write DIR [--raw]   # DIR/{dev,test}.tsv

The .tsv files hold one line per pair, 'english<TAB>french', preprocessed (with --raw: as
written in the corpus).
"""
import collections
import hashlib
import math
import os

from . import d2l
from .paths import DEFAULT_CORPUS

DEV, TEST = range(0, 2), range(2, 6)


def split_of(english):
    h = int(hashlib.sha1(english.encode('utf-8')).hexdigest(), 16) % 100
    return 'dev' if h in DEV else 'test' if h in TEST else 'train'


def load(path):
    """{'train'|'dev'|'test': [(english tokens, french tokens), ...]} in corpus order."""
    text = d2l.preprocess_nmt(d2l.read_data_nmt(path))
    src, tgt = d2l.tokenize_nmt(text)
    out = {'train': [], 'dev': [], 'test': []}
    for s, t in zip(src, tgt):
        out[split_of(' '.join(s))].append((s, t))
    return out


def load_raw(path):
    """{'train'|'dev'|'test': [(english, french), ...]}: the corpus's sentences as written
    (cased, unsplit), each pair in the split `load` puts it in."""
    raw = d2l.read_data_nmt(path)
    out = {'train': [], 'dev': [], 'test': []}
    for line in raw.split('\n'):
        parts = line.split('\t')
        if len(parts) != 2:
            continue
        key = ' '.join(d2l.preprocess_nmt(parts[0]).split(' '))
        out[split_of(key)].append((parts[0], parts[1]))
    return out


def describe(data):
    parts = []
    for k in ('train', 'dev', 'test'):
        n_src = len({' '.join(s) for s, _ in data[k]})
        parts.append(f"{k} {len(data[k])} pairs / {n_src} English sentences")
    return ', '.join(parts)


def grouped(pairs):
    """(unique English sentences in first-seen order, list of reference lists)."""
    refs = collections.OrderedDict()
    for s, t in pairs:
        refs.setdefault(' '.join(s), []).append(' '.join(t))
    return list(refs.keys()), list(refs.values())


def _ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(hyps, refs_list, max_n=4):
    """Standard corpus BLEU (Papineni et al. 2002): clipped n-gram precisions summed over
    the corpus, geometric mean over n = 1..4 with uniform weights, brevity penalty against
    the closest reference length (shorter on ties).  hyps: strings; refs_list: lists of
    strings.  Tokens are split on spaces.  Returns a value in [0, 1]."""
    match, total = [0] * max_n, [0] * max_n
    hyp_len = ref_len = 0
    for hyp, refs in zip(hyps, refs_list):
        h = hyp.split() if hyp else []
        rs = [r.split() for r in refs]
        hyp_len += len(h)
        ref_len += min((abs(len(r) - len(h)), len(r)) for r in rs)[1]
        for n in range(1, max_n + 1):
            hc = _ngrams(h, n)
            maxref = collections.Counter()
            for r in rs:
                for g, c in _ngrams(r, n).items():
                    maxref[g] = max(maxref[g], c)
            match[n - 1] += sum(min(c, maxref[g]) for g, c in hc.items())
            total[n - 1] += max(len(h) - n + 1, 0)
    if hyp_len == 0 or min(match) == 0:
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(match, total)) / max_n
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(log_p)


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--write", required=True)
    ap.add_argument("--raw", action="store_true",
                    help="the sentences as written (cased, unsplit), for sub-word models")
    args = ap.parse_args()
    if args.raw:
        data = load_raw(args.corpus)
        os.makedirs(args.write, exist_ok=True)
        for k in ('dev', 'test'):
            with open(os.path.join(args.write, k + '.tsv'), 'w', encoding='utf-8') as f:
                for s, t in data[k]:
                    f.write(s + '\t' + t + '\n')
        return
    data = load(args.corpus)
    print(describe(data))
    os.makedirs(args.write, exist_ok=True)
    for k in ('dev', 'test'):
        with open(os.path.join(args.write, k + '.tsv'), 'w', encoding='utf-8') as f:
            for s, t in data[k]:
                f.write(' '.join(s) + '\t' + ' '.join(t) + '\n')
