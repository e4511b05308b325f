"""PyTorch eager peer of bench/bench_translate.cpp: the book's own modules and greedy loop.

    /usr/bin/python3 bench/peer_torch.py --threads N [--models DIR] [--base FILE]
                                         [--json OUT] [--quick]

The nets are rebuilt from the same safetensors files with the d2l modules of
tools/attnlite_tools/d2l (dropout 0, eval mode) and run under torch.inference_mode() with
torch.set_num_threads(N).

d2l models: d2l.predict_seq2seq (the book's function) on "i'm home .", with the
Transformer decoder adding the positional encoding of step t (positions_from_cache, what
attnlite does by default); the tokens of the book's four sentences are printed.

Base model: the encoder on a 20-token source (batch 1 and 16), then the book's decoder loop
for 20 steps without early stop: one token per call, the decoder's state[2] concatenating
every block's inputs and re-projecting keys and values (and the encoder output) at each
step, as the book does (no KV cache). decode tok/s = B * 20 / (total - encoder).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from attnlite_tools import d2l  # noqa: E402
from attnlite_tools.export import load_model  # noqa: E402
from attnlite_tools.search import greedy_decode  # noqa: E402


def timeit(fn, min_runs, min_s):
    """Median wall-clock seconds, min wall, runs, median CPU seconds (this process, all
    threads: on a shared machine the 1-thread CPU time leaves out other processes' slices)."""
    ts, cs = [], []
    t0 = time.perf_counter()
    while len(ts) < min_runs or time.perf_counter() - t0 < min_s:
        c = time.process_time()
        a = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - a)
        cs.append(time.process_time() - c)
    return statistics.median(ts), min(ts), len(ts), statistics.median(cs)


def base_sentences(n):
    return [" ".join(f"w{4 + (i * 977 + k * 131) % 31996}" for k in range(19)) for i in range(n)]


def d2l_model(path, quick):
    net, sv, tv, info = load_model(path, positions_from_cache=True)
    S = info["config"]["num_steps"]
    name = os.path.basename(path).replace(".safetensors", "")
    book = {}
    for s in d2l.BOOK_ENGS:
        with torch.inference_mode():
            text, _ = d2l.predict_seq2seq(net, s, sv, tv, S)
        book[s] = [tv.token_to_idx[t] for t in text.split(" ")] if text else []
        print(f"{name}: {s} => {text}  {book[s]}")

    def one():
        with torch.inference_mode():
            d2l.predict_seq2seq(net, "i'm home .", sv, tv, S)

    for _ in range(10):
        one()
    med, mn, runs, cpu = timeit(one, 20 if quick else 100, 0.3 if quick else 2.0)
    print(f"{name}: \"i'm home .\" {med * 1e6:.1f} us (median of {runs}; CPU {cpu * 1e6:.1f} us)")
    return {"sentence_us": med * 1e6, "min_us": mn * 1e6, "runs": runs, "cpu_us": cpu * 1e6,
            "book": book}


def base_model(path, quick, batches, steps=20):
    net, sv, tv, info = load_model(path, positions_from_cache=True)
    S = info["config"]["num_steps"]
    out = {"steps": steps, "encoder_ms": {}, "translate_ms": {}, "decode_tok_s": {},
           "cpu": {"encoder_ms": {}, "translate_ms": {}, "decode_tok_s": {}}}
    for B in batches:
        rows = []
        for s in base_sentences(B):
            ids = sv[s.lower().split(" ")] + [sv["<eos>"]]
            rows.append(d2l.truncate_pad(ids, S, sv["<pad>"]))
        src = torch.tensor(rows, dtype=torch.long)
        vl = torch.full((B,), S, dtype=torch.long)

        def encode():
            with torch.inference_mode():
                return net.encoder(src, vl)

        def translate():
            with torch.inference_mode():  # fixed steps: random weights, no early stop
                return greedy_decode(net, src, vl, tv["<bos>"], steps)

        encode()
        translate()
        te, _, _, ce = timeit(encode, 3 if quick else 10, 0.2 if quick else 2.0)
        tt, _, _, ct = timeit(translate, 2 if quick else 5, 0.5 if quick else 5.0)
        out["encoder_ms"][B] = te * 1e3
        out["translate_ms"][B] = tt * 1e3
        out["decode_tok_s"][B] = B * steps / (tt - te)
        out["cpu"]["encoder_ms"][B] = ce * 1e3
        out["cpu"]["translate_ms"][B] = ct * 1e3
        out["cpu"]["decode_tok_s"][B] = B * steps / (ct - ce)
        print(f"base-transformer B={B}: encoder {te * 1e3:.2f} ms, translate({steps} steps) "
              f"{tt * 1e3:.1f} ms, decode {out['decode_tok_s'][B]:.1f} tok/s "
              f"(CPU: {ce * 1e3:.2f} ms, {ct * 1e3:.1f} ms, {out['cpu']['decode_tok_s'][B]:.1f} tok/s)")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", default=os.path.join(ROOT, "models"))
    ap.add_argument("--base", default=os.path.join(ROOT, "build", "bench",
                                                   "base-transformer.safetensors"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batches", default="1,16", help="base model batch sizes (default 1,16)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    blas = "openblas" if "openblas" in os.environ.get("LD_LIBRARY_PATH", "") else "system libblas.so.3"
    res = {"peer": "pytorch-eager", "version": torch.__version__, "blas": blas,
           "threads": torch.get_num_threads(), "d2l": {}, "base": None}
    for name in ("transformer-d2l", "bahdanau-d2l"):
        p = os.path.join(a.models, name + ".safetensors")
        if os.path.exists(p):
            res["d2l"][name] = d2l_model(p, a.quick)
    if os.path.exists(a.base):
        res["base"] = base_model(a.base, a.quick, [int(b) for b in a.batches.split(",")])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
