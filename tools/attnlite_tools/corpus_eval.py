"""The whole-corpus model's evaluation: PyTorch's BLEU of an exported model on a split
(tools/eval_corpus.py, main) and the shipped int8 file with its figures
(tools/ship_corpus_model.py, main_ship); their command lines are EVAL_DOC and SHIP_DOC.
"""
import argparse
import json
import os
import subprocess
from collections import OrderedDict

import torch

from . import d2l
from . import export
from . import invented
from . import names
from . import normalize
from . import numerals
from . import quantize
from . import safetensors as st
from . import splits
from . import train_corpus
from .paths import ROOT

EVAL_DOC = """PyTorch's BLEU of an exported model on a split, to check `attnlite eval` against.

    /usr/bin/python3 tools/eval_corpus.py MODEL.safetensors SPLIT.tsv [--compare HYP.tsv]
        [--style written|no-final-punct|lower|lower-no-final-punct]

Greedy decoding in PyTorch (the d2l model rebuilt by tools/export.py, int8 files with
their dequantized weights; decoder positions as attnlite's default; a sub-word model reads
the split as written and its pieces are detokenized, BLEU on the book's tokens), corpus BLEU-4 against
all the references of each English sentence (tools/splits.py) and the mean of the book's
bleu(k=2) over the pairs. Every English sentence is typed in --style (as `attnlite eval
--style`) and normalized as a translator normalizes it (tools/normalize.py). --compare reads
`attnlite eval --out` (with the same --style) and counts the sentences whose translations
are identical.
"""

SHIP_DOC = """Quantize the whole-corpus Transformer and record its BLEU in the shipped file.

    /usr/bin/python3 tools/ship_corpus_model.py ATTNLITE_CLI [--beam 4] [--name NAME]
    /usr/bin/python3 tools/ship_corpus_model.py ATTNLITE_CLI --rescore [--name NAME]

Reads models/NAME.f32.safetensors (NAME transformer-fra: tools/train_corpus.py;
transformer-fra-bpe: tools/train_subword.py), writes models/NAME.safetensors with int8
weights (tools/quantize.py), then scores both files with `attnlite eval` on
models/NAME.{dev,test}.tsv, greedy and with beam
search (beam size --beam, length penalty alpha chosen among 0, 0.5, 1 by fp32 dev BLEU),
and stores the figures in the int8 file's metadata under `attnlite.evaluation`
(JSON: split -> decoding -> {f32, int8} -> corpus BLEU-4 and book bleu(k=2) mean), the
int8 file's BLEU by input style (`attnlite eval --styles`: as written, without final
punctuation, lowercased, both) under "styles" (split -> decoding -> style -> BLEU-4, 13a),
and, where models/NAME.numerals.tsv is (tools/numerals.py write: the test split's pairs that
name one number, in other digits), how many of its sentences come out with their digits
carried over under "numerals" (decoding -> sentences, f32, int8), and likewise, where
models/NAME.names.tsv is (tools/names.py write: the test split's pairs that name Tom or Mary,
with names training never draws), how many come out with their names under "names", and
where models/NAME.titles.tsv is (tools/names.py write --titles: the same pairs with titles
and surnames training never draws, "Mr. Dalton"), how many under "titles"; and how
many test translations hold no word of their own, found neither in the corpus's French nor
in their English (tools/invented.py), under "invented".
The test `tests/cli/corpus_model.sh` re-scores the shipped int8 file against these figures.

--rescore scores the shipped int8 file again (its fp32 figures are kept; the fp32 file need
not be there) with the current `attnlite eval`, as after a change to what the translator
reads (the input normalization), and records the styles; "rescored" says when and why.
"""


def main():
    """tools/eval_corpus.py"""
    ap = argparse.ArgumentParser(description=EVAL_DOC,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("split")
    ap.add_argument("--compare")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--style", default="written", choices=list(normalize.STYLES))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    net, src_vocab, tgt_vocab, info = export.load_model(args.model)
    if "bpe" in info:
        return eval_subword(args, net, src_vocab, info)
    pairs = []
    with open(args.split, encoding="utf-8") as f:
        for line in f:
            en, fr = line.rstrip("\n").split("\t")
            pairs.append((en.split(" "), fr.split(" ")))
    engs, refs = splits.grouped(pairs)
    engs = [normalize.STYLES[args.style](e) for e in engs]
    ids = train_corpus.encode([d2l.preprocess_nmt(normalize.normalize(e)).split(" ")
                               for e in engs], src_vocab)
    hyps = train_corpus.greedy_batch(net, ids, src_vocab, tgt_vocab)
    b4 = 100 * splits.corpus_bleu(hyps, refs)
    book = sum(d2l.bleu(h, r, 2) for h, rs in zip(hyps, refs) for r in rs) / len(pairs)
    print(f"{len(engs)} sentences ({len(pairs)} pairs): corpus BLEU-4 {b4:.2f}, "
          f"book bleu(k=2) mean {book:.4f}")
    if args.compare:
        compare(args.compare, engs, hyps)


def compare(path, engs, hyps):
    """Counts (and lists) the sentences whose translation in `attnlite eval --out`'s file
    differs from PyTorch's."""
    with open(path, encoding="utf-8") as f:
        theirs = dict(line.rstrip("\n").split("\t") for line in f)
    same = sum(1 for e, h in zip(engs, hyps) if theirs.get(e) == h)
    print(f"identical to {path}: {same} of {len(engs)}")
    for e, h in zip(engs, hyps):
        if theirs.get(e) != h:
            print(f"  differs: {e!r}: torch {h!r}, attnlite {theirs.get(e)!r}")


def eval_subword(args, net, vocab, info):
    """A sub-word model on a split as written: greedy pieces, detokenized; BLEU-4 on the
    book's tokens; --compare against `attnlite eval --out` (English as written, translation)."""
    from . import bpe
    from .train_subword import book_tokens, grouped_raw, source_ids, translate_pieces
    table = info["bpe"]
    seg = bpe.Segmenter(bpe.symbols(table["alphabet"], [tuple(m) for m in table["merges"]]))
    pairs = []
    with open(args.split, encoding="utf-8") as f:
        for line in f:
            en, fr = line.rstrip("\n").split("\t")
            pairs.append((en, fr))
    engs, refs = grouped_raw(pairs)
    engs = [normalize.STYLES[args.style](e) for e in engs]
    S = info["config"]["num_steps"]
    ids = [source_ids(seg(normalize.normalize(e)), vocab, S) for e in engs]
    hyps = [bpe.detokenize(p) for p in translate_pieces(net, ids, vocab, S)]
    b4 = 100 * splits.corpus_bleu([' '.join(book_tokens(h)) for h in hyps],
                                  [[' '.join(book_tokens(r)) for r in rs] for rs in refs])
    unk = sum('<unk>' in h for h in hyps)
    print(f"{len(engs)} sentences ({len(pairs)} pairs): corpus BLEU-4 {b4:.2f} (book tokens), "
          f"{unk} translations with <unk>")
    if args.compare:
        compare(args.compare, engs, hyps)


def evaluate(cli, model, split, beam, alpha, styles=None):
    """`attnlite eval`'s figures; with a dict `styles`, also BLEU-4 and 13a by input style
    (--styles) into it."""
    out = subprocess.run([cli, "eval", "--json", "--model", model, "--beam", str(beam),
                          "--alpha", str(alpha), split] + (["--styles"] if styles is not None
                                                           else []),
                         check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    if styles is not None:
        for st in normalize.STYLES:
            styles[st] = OrderedDict(bleu4=round(j["styles"][st]["corpus_bleu4"], 2),
                                     sacrebleu_13a=round(j["styles"][st]["sacrebleu_13a"], 2))
    return OrderedDict(bleu4=round(j["corpus_bleu4"], 2), bleu2=round(j["book_bleu2_mean"], 4),
                       sacrebleu_13a=round(j["sacrebleu_13a"], 2), unk_outputs=j["unk_outputs"])


def rescore(args, i8):
    """--rescore: the int8 file's figures again, its fp32 ones kept."""
    qt, meta = st.load(i8)
    ev = json.loads(meta["attnlite.evaluation"], object_pairs_hook=OrderedDict)
    size, alpha = ev["beam"]["size"], ev["beam"]["alpha"]
    ev["styles"] = OrderedDict()
    for split in ("dev", "test"):
        path = os.path.join(ROOT, "models", f"{args.name}.{split}.tsv")
        ev["styles"][split] = OrderedDict()
        for name, beam, a in (("greedy", 1, 0.0), (f"beam{size}", size, alpha)):
            by = ev["styles"][split][name] = OrderedDict()
            new = evaluate(args.cli, i8, path, beam, a, by)
            old = ev[split][name]["int8"]
            if "sacrebleu_13a" not in old:  # recorded before 13a: keep the same keys
                new = OrderedDict((k, v) for k, v in new.items() if k in old)
            print(split, name, "int8", json.dumps(old), "->", json.dumps(new))
            ev[split][name]["int8"] = new
    ev["rescored"] = ("int8 figures re-measured with the translator's input normalization "
                      "(typographic apostrophes and quotes, Unicode spaces...); fp32 as shipped")
    meta["attnlite.evaluation"] = json.dumps(ev)
    n = st.save(i8, qt, meta)
    print(f"{os.path.relpath(i8, ROOT)}: {n} bytes")


def main_ship():
    """tools/ship_corpus_model.py"""
    ap = argparse.ArgumentParser(description=SHIP_DOC,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cli")
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--name", default="transformer-fra")
    ap.add_argument("--rescore", action="store_true")
    args = ap.parse_args()
    f32 = os.path.join(ROOT, "models", args.name + ".f32.safetensors")
    i8 = os.path.join(ROOT, "models", args.name + ".safetensors")
    if args.rescore:
        return rescore(args, i8)
    qt, meta = quantize.quantize_model(*st.load(f32))
    st.save(i8, qt, meta)
    dev = os.path.join(ROOT, "models", args.name + ".dev.tsv")
    alphas = {a: evaluate(args.cli, f32, dev, args.beam, a)["bleu4"] for a in (0.0, 0.5, 1.0)}
    args.alpha = max(alphas, key=lambda a: (alphas[a], -a))
    print("dev BLEU-4 by alpha (fp32, beam", args.beam, "):", alphas, "-> alpha", args.alpha)
    ev = OrderedDict()
    styles = OrderedDict()
    for split in ("dev", "test"):
        path = os.path.join(ROOT, "models", f"{args.name}.{split}.tsv")
        ev[split] = OrderedDict()
        styles[split] = OrderedDict()
        for name, beam, alpha in (("greedy", 1, 0.0), (f"beam{args.beam}", args.beam, args.alpha)):
            by = styles[split][name] = OrderedDict()
            ev[split][name] = OrderedDict(
                f32=evaluate(args.cli, f32, path, beam, alpha),
                int8=evaluate(args.cli, i8, path, beam, alpha, by))
            print(split, name, json.dumps(ev[split][name]), "int8 by style", json.dumps(by))
    ev["beam"] = OrderedDict(size=args.beam, alpha=args.alpha,
                             dev_bleu4_by_alpha={str(a): b for a, b in alphas.items()})
    for key, module, part in (("numerals", numerals, "numerals"), ("names", names, "names"),
                              ("titles", names, "titles"), ("invented", invented, "test")):
        tsv = os.path.join(ROOT, "models", f"{args.name}.{part}.tsv")
        if not os.path.exists(tsv):
            continue
        ev[key] = OrderedDict()
        for name, beam, alpha in (("greedy", 1, 0.0), (f"beam{args.beam}", args.beam, args.alpha)):
            rec = ev[key][name] = OrderedDict()
            for kind, path in (("f32", f32), ("int8", i8)):
                missed, rec["sentences"] = module.carried(args.cli, tsv, path, beam, alpha)
                rec[kind] = rec["sentences"] - len(missed)
            print(key, name, json.dumps(rec))
    ev["styles"] = styles
    ev["tool"] = ("attnlite eval (corpus BLEU-4 x 100 on the book's tokens, book bleu(k=2) mean "
                  "over the pairs, sacreBLEU 13a x 100, translations holding <unk>)")
    meta["attnlite.evaluation"] = json.dumps(ev)
    n = st.save(i8, qt, meta)
    print(f"{os.path.relpath(i8, ROOT)}: {n} bytes")
