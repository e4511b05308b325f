"""PyTorch's BLEU of an exported model on a split, to check `attnlite eval` against.

    /usr/bin/python3 tools/eval_corpus.py MODEL.safetensors SPLIT.tsv [--compare HYP.tsv]

Greedy decoding in PyTorch (the d2l model rebuilt by tools/export.py, int8 files with
their dequantized weights; decoder positions as attnlite's default), corpus BLEU-4 against
all the references of each English sentence (tools/splits.py) and the mean of the book's
bleu(k=2) over the pairs. --compare reads `attnlite eval --out` and counts the sentences
whose translations are identical.
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import d2l_ref as d2l  # noqa: E402
import export  # noqa: E402
import splits  # noqa: E402
import train_corpus  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("split")
    ap.add_argument("--compare")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    net, src_vocab, tgt_vocab, info = export.load_model(args.model)
    pairs = []
    with open(args.split, encoding="utf-8") as f:
        for line in f:
            en, fr = line.rstrip("\n").split("\t")
            pairs.append((en.split(" "), fr.split(" ")))
    engs, refs = splits.grouped(pairs)
    ids = train_corpus.encode([e.split(" ") for e in engs], src_vocab)
    hyps = train_corpus.greedy_batch(net, ids, src_vocab, tgt_vocab)
    b4 = 100 * splits.corpus_bleu(hyps, refs)
    book = sum(d2l.bleu(h, r, 2) for h, rs in zip(hyps, refs) for r in rs) / len(pairs)
    print(f"{len(engs)} sentences ({len(pairs)} pairs): corpus BLEU-4 {b4:.2f}, "
          f"book bleu(k=2) mean {book:.4f}")
    if args.compare:
        with open(args.compare, encoding="utf-8") as f:
            theirs = dict(line.rstrip("\n").split("\t") for line in f)
        same = sum(1 for e, h in zip(engs, hyps) if theirs.get(e) == h)
        print(f"identical to {args.compare}: {same} of {len(engs)}")
        for e, h in zip(engs, hyps):
            if theirs.get(e) != h:
                print(f"  differs: {e!r}: torch {h!r}, attnlite {theirs.get(e)!r}")


if __name__ == "__main__":
    main()
