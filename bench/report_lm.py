"""Table for the "Language model" section of bench/RESULTS.md from bench/lm.sh's runs.

    python3 bench/report_lm.py OUT LM_JSON

OUT/runs.jsonl holds one line per measurement: label, round, threads, /proc/loadavg before
and after, and the runtime's own JSON line (bench_generate.cpp, peer_torch_lm.py,
peer_ort_lm.mjs: tok_s from the median wall clock of the workload, cpu_tok_s from the
median process CPU time, ids). Prints, per runtime and thread count, the median over rounds
of tok_s and cpu_tok_s with the range over rounds, the ratios of attnlite to each peer at the
same thread count (ratio of the medians, and the median of the per-round ratios, which
cancels part of the load drift since the peers of a round ran within a minute of each
other), the load, and the token check. Exits 1 when any runtime's ids differ from LM_JSON's
expected (full forward) ids.
"""
import json
import os
import statistics
import sys

LABELS = {
    "attnlite-int8": "attnlite, int8 file",
    "attnlite-f32": "attnlite, fp32 file",
    "pytorch": "PyTorch eager (OpenBLAS, addmv)",
    "pytorch-linear": "PyTorch eager (OpenBLAS, nn.Linear)",
    "pytorch-refblas": "PyTorch eager as installed (ref. BLAS, addmv)",
    "ort": "onnxruntime-node",
}
PEERS = ["pytorch", "ort", "pytorch-linear", "pytorch-refblas"]
GOALS = {"pytorch": 10.0, "ort": 2.0}


def main():
    out, lm_json = sys.argv[1], sys.argv[2]
    with open(lm_json) as f:
        info = json.load(f)
    expected = info["prompt_ids"] + info["expected"]
    runs = []
    with open(os.path.join(out, "runs.jsonl")) as f:
        for line in f:
            if line.strip():
                runs.append(json.loads(line))
    by = {}
    for r in runs:
        by.setdefault((r["label"], r["threads"]), []).append(r)
    loads = [float(r[k].split()[0]) for r in runs for k in ("load_before", "load_after")]
    rounds = max(r["round"] for r in runs)
    res0 = runs[0]["result"]
    print(f"Workload: {res0['gens']} generations x {res0['tokens']} tokens = "
          f"{res0['tokens_per_run']} generated tokens per run (prompt: {len(info['prompt_ids'])} "
          f"tokens, \"{info['prompt']}\"); {rounds} round(s); 1-minute load average during "
          f"the measurements {min(loads):.2f} to {max(loads):.2f} (median "
          f"{statistics.median(loads):.2f}).")
    print()
    print("| runtime | threads | tok/s, wall (median; range over rounds) | tok/s, CPU time "
          "(median) | load (median 1-min) |")
    print("|---|---:|---:|---:|---:|")
    med = {}
    for label in LABELS:
        for t in (1, 2):
            rs = by.get((label, t))
            if not rs:
                continue
            w = [r["result"]["tok_s"] for r in rs]
            c = [r["result"]["cpu_tok_s"] for r in rs]
            ld = [float(r["load_before"].split()[0]) for r in rs]
            med[(label, t)] = (statistics.median(w), statistics.median(c))
            print(f"| {LABELS[label]} | {t} | **{statistics.median(w):,.0f}** "
                  f"({min(w):,.0f}–{max(w):,.0f}) | {statistics.median(c):,.0f} | "
                  f"{statistics.median(ld):.2f} |")
    print()
    print("Ratios of attnlite's tokens/s to each peer's at the same thread count: wall clock "
          "(ratio of the medians / median of the per-round ratios), and CPU time (ratio of "
          "the medians):")
    print()
    print("| attnlite | peer | threads | wall | wall, per round | CPU | goal |")
    print("|---|---|---:|---:|---:|---:|---|")
    for a in ("attnlite-int8", "attnlite-f32"):
        for p in PEERS:
            for t in (1, 2):
                if (a, t) not in med or (p, t) not in med:
                    continue
                per_round = []
                for r in by[(a, t)]:
                    q = [x for x in by[(p, t)] if x["round"] == r["round"]]
                    if q:
                        per_round.append(r["result"]["tok_s"] / q[0]["result"]["tok_s"])
                ratio_w = med[(a, t)][0] / med[(p, t)][0]
                ratio_c = med[(a, t)][1] / med[(p, t)][1]
                g = GOALS.get(p)
                goal = "" if g is None else (f">= {g:g}x: " + ("met" if ratio_w >= g else "missed"))
                print(f"| {a.split('-')[1]} | {LABELS[p]} | {t} | **{ratio_w:.2f}x** | "
                      f"{statistics.median(per_round):.2f}x | {ratio_c:.2f}x | {goal} |")
    print()
    bad = [(r["label"], r["threads"], r["round"]) for r in runs if r["result"]["ids"] != expected]
    names = ", ".join(sorted({r["label"] for r in runs}))
    if bad:
        print(f"- token check: MISMATCH in {bad}")
    else:
        print(f"- token check: every measurement ({len(runs)}: {names}) produced the full "
              f"forward's ids {expected} ({info['expected_text']})")
    print(f"- smallest top-2 logit margin of the reference run: {info['min_margin']:.3f}; "
          f"ONNX graph module vs full forward: {info['graph_max_abs_diff']:.2g}; PyTorch's "
          f"cached loop vs full forward: "
          f"{max(r['result'].get('max_abs_diff_vs_full_forward', 0) for r in runs):.2g}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
