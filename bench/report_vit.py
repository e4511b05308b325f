"""Tables for the "Vision Transformer" section of bench/RESULTS.md from bench/vit.sh's runs.

    python3 bench/report_vit.py OUT VIT_DIR

OUT/runs.jsonl holds one line per measurement: label, round, threads, batch, /proc/loadavg
before and after, and the runtime's own JSON line (bench_classify.cpp, peer_torch_vit.py,
peer_ort_vit.mjs: img_s from the median wall clock of the workload, cpu_img_s from the median
process CPU time, pred, and the file of its logits). Prints, per runtime, batch and thread
count, the median over rounds of img_s and cpu_img_s with the range over rounds; the ratios
of attnlite (attention off) to each peer at the same batch and thread count (ratio of the
medians, and the median of the per-round ratios); the load; and the check.

The check (exit 1 on failure): every measurement's labels equal VIT_DIR/vit.json's
"predicted" (the lab's module, which equal tests/fixtures/vit_digits_test.json's), and every
logits file is within 1e-4 of VIT_DIR/ref_logits.f32.
"""
import json
import os
import statistics
import sys

import numpy as np

LABELS = {
    "attnlite": "attnlite",
    "attnlite-attn": "attnlite, attention recorded",
    "pytorch": "PyTorch eager (OpenBLAS)",
    "pytorch-refblas": "PyTorch eager as installed (ref. BLAS)",
    "ort": "onnxruntime-node",
}
PEERS = ["pytorch", "ort", "pytorch-refblas"]
GOALS = {("pytorch", 1): 10.0, ("ort", 1): 2.0, ("ort", 64): 2.0}
TOL = 1e-4


def main():
    out, vdir = sys.argv[1], sys.argv[2]
    with open(os.path.join(vdir, "vit.json")) as f:
        info = json.load(f)
    K = info["num_classes"]
    ref = np.fromfile(os.path.join(vdir, info["ref_logits"]), dtype=np.float32).reshape(-1, K)
    runs = []
    with open(os.path.join(out, "runs.jsonl")) as f:
        for line in f:
            if line.strip():
                runs.append(json.loads(line))
    by = {}
    for r in runs:
        by.setdefault((r["label"], r["batch"], r["threads"]), []).append(r)
    loads = [float(r[k].split()[0]) for r in runs for k in ("load_before", "load_after")]
    rounds = max(r["round"] for r in runs)
    n = info["count"]
    print(f"Workload: the {n} test digits once, in batches of B (B = 64: 5 x 64 + 39); "
          f"{rounds} round(s); 1-minute load average during the measurements "
          f"{min(loads):.2f} to {max(loads):.2f} (median {statistics.median(loads):.2f}).")
    print()
    print("| runtime | batch | threads | images/s, wall (median; range over rounds) | "
          "images/s, CPU time (median) | load (median 1-min) |")
    print("|---|---:|---:|---:|---:|---:|")
    med = {}
    keys = sorted(by, key=lambda k: (k[1], k[2], list(LABELS).index(k[0])))
    for key in keys:
        rs = by[key]
        w = [r["result"]["img_s"] for r in rs]
        c = [r["result"]["cpu_img_s"] for r in rs]
        ld = [float(r["load_before"].split()[0]) for r in rs]
        med[key] = (statistics.median(w), statistics.median(c))
        print(f"| {LABELS[key[0]]} | {key[1]} | {key[2]} | **{statistics.median(w):,.0f}** "
              f"({min(w):,.0f}–{max(w):,.0f}) | {statistics.median(c):,.0f} | "
              f"{statistics.median(ld):.2f} |")
    print()
    print("Ratios of attnlite's images/s (attention off) to each peer's at the same batch and "
          "thread count: wall clock (ratio of the medians / median of the per-round ratios), "
          "and CPU time (ratio of the medians):")
    print()
    print("| peer | batch | threads | wall | wall, per round | CPU | goal |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for b in (1, 64):
        for t in (1, 2):
            for p in PEERS:
                a, q = ("attnlite", b, t), (p, b, t)
                if a not in med or q not in med:
                    continue
                per_round = []
                for r in by[a]:
                    s = [x for x in by[q] if x["round"] == r["round"]]
                    if s:
                        per_round.append(r["result"]["img_s"] / s[0]["result"]["img_s"])
                rw = med[a][0] / med[q][0]
                rc = med[a][1] / med[q][1]
                g = GOALS.get((p, b)) if t == 1 else None
                goal = "" if g is None else (f">= {g:g}x: " + ("met" if rw >= g else "missed"))
                print(f"| {LABELS[p]} | {b} | {t} | **{rw:.2f}x** | "
                      f"{statistics.median(per_round):.2f}x | {rc:.2f}x | {goal} |")
    print()
    bad, worst = [], 0.0
    for r in runs:
        res = r["result"]
        if res["pred"] != info["predicted"]:
            bad.append((r["label"], r["batch"], r["threads"], r["round"], "labels"))
        if res.get("logits"):
            z = np.fromfile(res["logits"], dtype=np.float32).reshape(-1, K)
            err = float(np.abs(z - ref).max()) if z.shape == ref.shape else float("inf")
            worst = max(worst, err)
            if err > TOL:
                bad.append((r["label"], r["batch"], r["threads"], r["round"], f"logits {err:.3g}"))
    checked = sum(1 for r in runs if r["result"].get("logits"))
    names = ", ".join(sorted({r["label"] for r in runs}))
    if bad:
        print(f"- check: FAILED {bad}")
    else:
        print(f"- check: every measurement ({len(runs)}: {names}) gave the reference labels "
              f"of all {n} digits (those of tests/fixtures/vit_digits_test.json); largest "
              f"|logit - reference| over the {checked} logits files {worst:.2g} (tolerance "
              f"{TOL:g})")
    fp = sorted({(r["batch"], r["result"]["fast_path_calls"], r["result"]["batches"])
                 for r in runs if "fast_path_calls" in r["result"]})
    for b, calls, nb in fp:
        print(f"- PyTorch fused encoder-layer fast path at batch {b}: {calls} calls for "
              f"{nb} batches ({calls / nb:g} per forward = depth {info['config']['depth']})")
    print(f"- reference (lab module, no_grad, fast path {info['fast_path']}) vs regular path: "
          f"{info['fast_vs_regular_max_abs_diff']:.2g}; smallest top-2 margin "
          f"{info['min_margin']:.3f}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
