"""Quantize the whole-corpus Transformer and record its BLEU in the shipped file.

    /usr/bin/python3 tools/ship_corpus_model.py ATTNLITE_CLI [--beam 4]

Reads models/transformer-fra.f32.safetensors (tools/train_corpus.py), writes
models/transformer-fra.safetensors with int8 weights (tools/quantize.py), then scores both
files with `attnlite eval` on models/transformer-fra.{dev,test}.tsv, greedy and with beam
search (beam size --beam, length penalty alpha chosen among 0, 0.5, 1 by fp32 dev BLEU),
and stores the figures in the int8 file's metadata under `attnlite.evaluation`
(JSON: split -> decoding -> {f32, int8} -> corpus BLEU-4 and book bleu(k=2) mean). The
test `tests/cli/corpus_model.sh` re-scores the shipped int8 file against these figures.
"""
import argparse
import json
import os
import subprocess
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import quantize  # noqa: E402
import safetensors_io as st  # noqa: E402


def evaluate(cli, model, split, beam, alpha):
    out = subprocess.run([cli, "eval", "--json", "--model", model, "--beam", str(beam),
                          "--alpha", str(alpha), split], check=True, capture_output=True,
                         text=True).stdout
    j = json.loads(out)
    return OrderedDict(bleu4=round(j["corpus_bleu4"], 2), bleu2=round(j["book_bleu2_mean"], 4))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cli")
    ap.add_argument("--beam", type=int, default=4)
    args = ap.parse_args()
    f32 = os.path.join(ROOT, "models", "transformer-fra.f32.safetensors")
    i8 = os.path.join(ROOT, "models", "transformer-fra.safetensors")
    tensors, meta = st.load(f32)
    meta = OrderedDict(meta)
    meta["attnlite.quantization"] = quantize.SCHEME
    qt = quantize.quantize(tensors)
    st.save(i8, qt, meta)
    dev = os.path.join(ROOT, "models", "transformer-fra.dev.tsv")
    alphas = {a: evaluate(args.cli, f32, dev, args.beam, a)["bleu4"] for a in (0.0, 0.5, 1.0)}
    args.alpha = max(alphas, key=lambda a: (alphas[a], -a))
    print("dev BLEU-4 by alpha (fp32, beam", args.beam, "):", alphas, "-> alpha", args.alpha)
    ev = OrderedDict()
    for split in ("dev", "test"):
        path = os.path.join(ROOT, "models", f"transformer-fra.{split}.tsv")
        ev[split] = OrderedDict()
        for name, beam, alpha in (("greedy", 1, 0.0), (f"beam{args.beam}", args.beam, args.alpha)):
            ev[split][name] = OrderedDict(
                f32=evaluate(args.cli, f32, path, beam, alpha),
                int8=evaluate(args.cli, i8, path, beam, alpha))
            print(split, name, json.dumps(ev[split][name]))
    ev["beam"] = OrderedDict(size=args.beam, alpha=args.alpha,
                             dev_bleu4_by_alpha={str(a): b for a, b in alphas.items()})
    ev["tool"] = "attnlite eval (corpus BLEU-4 x 100, book bleu(k=2) mean over the pairs)"
    meta["attnlite.evaluation"] = json.dumps(ev)
    n = st.save(i8, qt, meta)
    print(f"{os.path.relpath(i8, ROOT)}: {n} bytes")


if __name__ == "__main__":
    main()
