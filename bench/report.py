"""Tables for bench/RESULTS.md from the files bench/run.sh writes into OUT.

    python3 bench/report.py OUT

Reads OUT/attnlite.json (Google Benchmark, repetitions with median aggregates),
OUT/torch-refblas-1.json, OUT/torch-{1,2}.json (OpenBLAS), OUT/ort-{1,2}.json (bench/peer_torch.py, bench/peer_ort.mjs),
OUT/attnlite-tokens.jsonl (attnlite translate --json on the book's four sentences) and
OUT/rss.txt (/usr/bin/time -f '%M': peak RSS in kB of attnlite translate "i'm home ."), and prints Markdown:
raw numbers, speed-ups of attnlite over each peer (peer time / attnlite time, or attnlite
tokens/s / peer tokens/s), the token check and the targets.

With OUT/round-1, round-2, ... (bench/run.sh with ROUNDS > 1) it reads each round's files
instead: first the issue's goals, each ratio per round and the median of the rounds, then each
round's wall-clock tables; the token check on the last round's, the peak RSS once.
"""
import json
import os
import re
import sys

BOOK = ["go .", "i lost .", "he's calm .", "i'm home ."]


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def gbench_medians(doc, field):
    """run_name -> median of `field` (real_time or cpu_time) in seconds."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    out = {}
    for b in doc.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].replace("/real_time", "")
        out[name] = b[field] * scale[b["time_unit"]]
    return out


def fmt(x, unit):
    if x is None:
        return "–"
    if unit == "us":
        return f"{x * 1e6:,.1f} µs"
    if unit == "ms":
        return f"{x * 1e3:,.2f} ms"
    return f"{x:,.1f} tok/s"




def peer_val(p, key, cpu):
    """A peer's number for a row; None where the row does not apply to this peer (the
    ORT encoder graph includes the cross-attention K/V projection, PyTorch's does not)."""
    kind, what = key[0], key[1]
    if len(key) > 2 and p.get("peer") != key[2]:
        return None
    if kind == "d2l":
        d = p["d2l"].get(what)
        return (d["cpu_us"] if cpu else d["sentence_us"]) * 1e-6 if d else None
    base = p.get("base")
    if not base:
        return None
    field, B = what
    src = base["cpu"] if cpu else base
    v = src[field].get(str(B), src[field].get(B))
    if v is None:
        return None
    return v if field == "decode_tok_s" else v * 1e-3


def decode_rate(g, B, t):
    """attnlite's decode tokens/s: B * 20 steps over (translate - encoder + cross K/V)."""
    tr = g.get(f"base/translate/B:{B}/steps:20/threads:{t}")
    enc = g.get(f"base/encoder+crosskv/B:{B}/threads:{t}")
    return B * 20 / (tr - enc) if tr and enc and tr > enc else None


def rows(g, t):
    """attnlite's rows at t threads: (label, value, peer key, unit, rate)."""
    return [
        ("d2l Transformer, \"i'm home .\"", g.get(f"d2l/transformer/sentence/threads:{t}"),
         ("d2l", "transformer-d2l"), "us", False),
        ("d2l Bahdanau GRU, \"i'm home .\"", g.get(f"d2l/bahdanau/sentence/threads:{t}"),
         ("d2l", "bahdanau-d2l"), "us", False),
        ("base encoder, B=1 (20 tokens)", g.get(f"base/encoder/B:1/threads:{t}"),
         ("base", ("encoder_ms", 1), "pytorch-eager"), "ms", False),
        ("base encoder, B=16", g.get(f"base/encoder/B:16/threads:{t}"),
         ("base", ("encoder_ms", 16), "pytorch-eager"), "ms", False),
        ("base encoder + cross K/V, B=1", g.get(f"base/encoder+crosskv/B:1/threads:{t}"),
         ("base", ("encoder_ms", 1), "onnxruntime-node"), "ms", False),
        ("base encoder + cross K/V, B=16", g.get(f"base/encoder+crosskv/B:16/threads:{t}"),
         ("base", ("encoder_ms", 16), "onnxruntime-node"), "ms", False),
        ("base greedy 20 steps, B=1", g.get(f"base/translate/B:1/steps:20/threads:{t}"),
         ("base", ("translate_ms", 1)), "ms", False),
        ("base greedy 20 steps, B=16", g.get(f"base/translate/B:16/steps:20/threads:{t}"),
         ("base", ("translate_ms", 16)), "ms", False),
        ("base decode, B=1", decode_rate(g, 1, t), ("base", ("decode_tok_s", 1)), "tok", True),
        ("base decode, B=16", decode_rate(g, 16, t), ("base", ("decode_tok_s", 16)), "tok", True),
    ]


def speedup(a, v, rate):
    """peer time / attnlite time (attnlite / peer for a rate), or None."""
    if a is None or v is None or a <= 0 or v <= 0:
        return None
    return a / v if rate else v / a


def tables(out, doc, peers, cpu):
    g = gbench_medians(doc, "cpu_time" if cpu else "real_time")

    r1, r2 = rows(g, 1), rows(g, 2)
    if cpu:  # CPU time is a latency only for one thread
        peers = [(n, p) for n, p in peers if p.get("threads") == 1]
    names = [n for n, _ in peers]
    what = "CPU time (of the process)" if cpu else "wall clock"
    acols = ["attnlite 1t"] + ([] if cpu else ["attnlite 2t"])
    print(f"### {what}: medians")
    print()
    print("| | " + " | ".join(acols + names) + " |")
    print("|---|" + "---:|" * (len(acols) + len(names)))
    for i, (label, a, key, unit, _) in enumerate(r1):
        cells = [fmt(a, unit)] + ([] if cpu else [fmt(r2[i][1], unit)])
        cells += [fmt(peer_val(p, key, cpu), unit) for _, p in peers]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print(f"Speed-up of attnlite, {what}: peer time / attnlite time (for tok/s, attnlite / "
          "peer), attnlite with the same number of threads as the peer:")
    print()
    print("| | " + " | ".join(f"vs {n}" for n in names) + " |")
    print("|---|" + "---:|" * len(names))
    for i, (label, _, key, unit, rate) in enumerate(r1):
        cells = []
        for _, p in peers:
            a = (r2 if p.get("threads") == 2 else r1)[i][1]
            r = speedup(a, peer_val(p, key, cpu), rate)
            cells.append("–" if r is None else f"{r:.2f}x")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    v = g.get("d2l/transformer/sentence_attn/threads:1")
    w = g.get("d2l/bahdanau/sentence_attn/threads:1")
    print(f"- attnlite 1t with attention recording (the CLI's default): Transformer {fmt(v, 'us')}, "
          f"Bahdanau {fmt(w, 'us')}")
    print()


def measurements(out):
    doc = load(os.path.join(out, "attnlite.json")) or {}
    peers = [("PyTorch 1t ref. BLAS", load(os.path.join(out, "torch-refblas-1.json"))),
             ("PyTorch 1t", load(os.path.join(out, "torch-1.json"))),
             ("PyTorch 2t", load(os.path.join(out, "torch-2.json"))),
             ("ORT 1t", load(os.path.join(out, "ort-1.json"))),
             ("ORT 2t", load(os.path.join(out, "ort-2.json")))]
    return doc, [(n, p) for n, p in peers if p]


# The goals, one thread each, wall clock: (row of rows(), peer, goal).
GOALS = [("base decode, B=1", "ORT 1t", 1.3), ("base decode, B=16", "ORT 1t", 1.3),
         ("base encoder + cross K/V, B=1", "ORT 1t", 1.2),
         ("d2l Transformer, \"i'm home .\"", "PyTorch 1t", 100),
         ("d2l Transformer, \"i'm home .\"", "ORT 1t", 20),
         ("d2l Bahdanau GRU, \"i'm home .\"", "PyTorch 1t", 100),
         ("d2l Bahdanau GRU, \"i'm home .\"", "ORT 1t", 20)]


def goals(doc, peers):
    """[(label, goal, ratio or None)] for GOALS."""
    by_label = {r[0]: r for r in rows(gbench_medians(doc, "real_time"), 1)}
    by_peer = dict(peers)
    out = []
    for label, peer, goal in GOALS:
        _, a, key, _, rate = by_label[label]
        p = by_peer.get(peer)
        out.append((f"{label} vs {peer}", goal, speedup(a, peer_val(p, key, False) if p else None, rate)))
    return out


def rounds_summary(dirs):
    """Each goal's ratio in every round and the median of the rounds."""
    per = [goals(*measurements(d)) for d in dirs]
    print(f"### Goals over {len(dirs)} rounds (wall clock, one thread; each round attnlite, "
          "then every peer)")
    print()
    print("| goal | " + " | ".join(f"round {i + 1}" for i in range(len(dirs))) + " | median | |")
    print("|---|" + "---:|" * (len(dirs) + 1) + "---|")
    for i, (label, goal, _) in enumerate(per[0]):
        vals = [p[i][2] for p in per]
        got = sorted(v for v in vals if v is not None)
        med = got[len(got) // 2] if len(got) % 2 else (got[len(got) // 2 - 1] + got[len(got) // 2]) / 2 if got else None
        cells = [f"{v:.2f}x" if v is not None else "–" for v in vals]
        verdict = "–" if med is None else ("met" if med >= goal else "missed")
        print(f"| {label} ≥ {goal:g}x | " + " | ".join(cells) +
              f" | {'–' if med is None else f'{med:.2f}x'} | {verdict} |")
    print()


def main():
    out = sys.argv[1]
    rounds = sorted((d for d in os.listdir(out) if re.fullmatch(r"round-\d+", d)),
                    key=lambda d: int(d.split("-")[1]))
    if rounds:
        dirs = [os.path.join(out, d) for d in rounds]
        rounds_summary(dirs)
        for d in dirs:
            print(f"## {os.path.basename(d)}")
            print()
            doc, peers = measurements(d)
            tables(d, doc, peers, cpu=False)
        out = dirs[-1]  # the token check below: the last round's
    doc, peers = measurements(out)
    if not rounds:
        tables(out, doc, peers, cpu=False)
        tables(out, doc, peers, cpu=True)

    # token check on the book's four sentences
    print("### Same tokens (the book's four sentences, greedy, position t at step t)")
    print()
    toks = {}
    path = os.path.join(out, "attnlite-tokens.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                name, js = line.split("\t", 1)
                d = json.loads(js)
                toks[(name, d["source"])] = d["token_ids"]
    ok = True
    for name in ("transformer-d2l", "bahdanau-d2l"):
        for s in BOOK:
            a = toks.get((name, s))
            if a is None:
                continue
            cells = []
            for pn, p in peers:
                d = p["d2l"].get(name)
                if d is None:
                    continue
                same = d["book"].get(s) == a
                ok &= same
                cells.append(f"{pn} {'=' if same else '≠ ' + str(d['book'].get(s))}")
            print(f"- {name}: `{s}` → {a} ({', '.join(cells)})")
    print(f"- token check: {'all peers produce the same tokens as attnlite' if ok else 'MISMATCH'}")

    rss_path = os.path.join(sys.argv[1], "rss.txt")
    if os.path.exists(rss_path):
        print()
        print("### Peak RSS")
        print()
        runs = {}
        with open(rss_path) as f:
            for line in f:
                m = re.match(r"(\S+) (\d+)$", line.strip())
                if m:
                    runs.setdefault(m.group(1), []).append(int(m.group(2)))
        for cli, label in (("attnlite", "as built (shared libstdc++)"),
                           ("attnlite_cli_static_runtime", "-static-libstdc++ -static-libgcc")):
            if cli in runs:
                v = sorted(runs[cli])
                print(f"- peak RSS of `attnlite translate \"i'm home .\"`, {label}: median "
                      f"{v[len(v) // 2]} kB (min {v[0]}, max {v[-1]}, {len(v)} runs)")

if __name__ == "__main__":
    main()
