#!/usr/bin/env bash
# Reproduces the "Language model" section of bench/RESULTS.md: greedy generation tokens/s at
# batch 1 of lm-fra in attnlite (int8 and fp32 files), PyTorch eager (KV-cached loop) and
# onnxruntime-node, side by side, 1 and 2 threads, repeated rounds.
#
#   bench/lm.sh [--quick] [--rounds R]
#
# Environment: BUILD (default build-bench), MODEL (default models/lm-fra.safetensors),
# PROMPT (7 words; default the exporter's), TOKENS (16) and GENS (4): the workload is GENS
# generations of TOKENS tokens (prompt pass + TOKENS - 1 steps each), MIN_TIME (seconds per
# measurement, default 3), JOBS (2).
# Steps: build attnlite_bench_generate (Release); write the benchmark files
# (tools/export_lm_bench.py: int8 and fp32 weights with <eos> never chosen, lm.onnx with past
# keys/values, the expected tokens); install onnxruntime-node (bench/, npm ci --ignore-scripts);
# unpack OpenBLAS for PyTorch (as bench/run.sh); then ROUNDS rounds, each running every
# runtime at 1 and 2 threads one after the other (order reversed every other round), each
# measurement recorded with /proc/loadavg before and after; bench/report_lm.py prints the
# table and fails if any runtime's tokens differ from the full-forward reference's.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build-bench}"
MODEL="${MODEL:-$ROOT/models/lm-fra.safetensors}"
TOKENS="${TOKENS:-16}"
GENS="${GENS:-4}"
MIN_TIME="${MIN_TIME:-3}"
JOBS="${JOBS:-2}"
PY=/usr/bin/python3   # the interpreter with torch
ROUNDS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) ROUNDS=1; MIN_TIME=0.5 ;;
    --rounds) ROUNDS="$2"; shift ;;
    *) echo "usage: bench/lm.sh [--quick] [--rounds R]" >&2; exit 2 ;;
  esac
  shift
done
DIR="$BUILD/bench/lm"
OUT="$BUILD/bench/results-lm"
mkdir -p "$DIR" "$OUT"

say() { printf '\n== %s\n' "$*" >&2; }

say "build (Release, attnlite_bench_generate)"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DATTNLITE_BENCH=ON \
  -DATTNLITE_TESTS=OFF -DATTNLITE_NATIVE=OFF >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target attnlite_bench_generate

say "benchmark files ($DIR)"
exp_args=(--tokens "$TOKENS")
[ -n "${PROMPT:-}" ] && exp_args+=(--prompt "$PROMPT")
"$PY" "$ROOT/tools/export_lm_bench.py" "$MODEL" "$DIR" "${exp_args[@]}" 2>&1 |
  grep -v -i "warn\|_jit_pass\|^ *$\|reshape(n, 3" >&2 || true
[ -f "$DIR/lm.json" ] || { echo "export failed" >&2; exit 1; }
PROMPT_TEXT="$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['prompt'])" "$DIR/lm.json")"

say "onnxruntime-node"
[ -d "$ROOT/bench/node_modules/onnxruntime-node" ] || (cd "$ROOT/bench" && npm ci --ignore-scripts --no-audit --no-fund)

OBLAS="$BUILD/bench/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread"
if [ ! -f "$OBLAS/libblas.so.3" ]; then
  (mkdir -p "$BUILD/bench/openblas" && cd "$BUILD/bench/openblas" &&
   apt-get download libopenblas0-pthread 2>/dev/null && dpkg -x libopenblas0-pthread_*.deb .) ||
    echo "OpenBLAS not available: PyTorch runs with the reference BLAS only" >&2
fi

say "machine"
{ lscpu | grep -E "^(Model name|CPU\(s\)|Thread|Core)"; echo "load before: $(uptime)"; } | tee "$OUT/machine.txt"

RUNS="$OUT/runs.jsonl"
: > "$RUNS"
common=(--tokens "$TOKENS" --gens "$GENS" --min-time "$MIN_TIME")
# record LABEL ROUND THREADS CMD...: one measurement, its JSON line wrapped with the load.
record() {
  local label="$1" round="$2" threads="$3"; shift 3
  local before after res
  before="$(cut -d' ' -f1-3 /proc/loadavg)"
  res="$("$@" | tail -1)"
  after="$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '{"label": "%s", "round": %d, "threads": %d, "load_before": "%s", "load_after": "%s", "result": %s}\n' \
    "$label" "$round" "$threads" "$before" "$after" "$res" >> "$RUNS"
  printf '%-22s %dt round %d  load %s -> %s  %s\n' "$label" "$threads" "$round" "$before" "$after" \
    "$(printf '%s' "$res" | grep -o '"tok_s": *[0-9.e+]*\|"tok_s":[0-9.e+]*' | head -1)" >&2
}
one_round() {
  local r="$1" t="$2"
  local -a labels=(attnlite-int8 attnlite-f32 pytorch pytorch-linear pytorch-refblas ort)
  if [ $((r % 2)) -eq 0 ]; then labels=(ort pytorch-refblas pytorch-linear pytorch attnlite-f32 attnlite-int8); fi
  for l in "${labels[@]}"; do
    case "$l" in
      attnlite-int8|attnlite-f32)
        local w=int8; [ "$l" = attnlite-f32 ] && w=f32
        record "$l" "$r" "$t" "$BUILD/bench/attnlite_bench_generate" --model "$DIR/lm.$w.safetensors" \
          --prompt "$PROMPT_TEXT" --threads "$t" "${common[@]}" ;;
      pytorch|pytorch-linear)
        [ -f "$OBLAS/libblas.so.3" ] || continue
        [ "$l" = pytorch-linear ] && [ "$t" != 1 ] && continue
        local li=mv; [ "$l" = pytorch-linear ] && li=linear
        record "$l" "$r" "$t" env OPENBLAS_NUM_THREADS="$t" OMP_NUM_THREADS="$t" LD_LIBRARY_PATH="$OBLAS" \
          "$PY" "$ROOT/bench/peer_torch_lm.py" --dir "$DIR" --threads "$t" --linear $li --label "$l" "${common[@]}" ;;
      pytorch-refblas)
        [ "$t" != 1 ] && continue
        record "$l" "$r" "$t" env OMP_NUM_THREADS="$t" \
          "$PY" "$ROOT/bench/peer_torch_lm.py" --dir "$DIR" --threads "$t" --label "$l" "${common[@]}" ;;
      ort)
        record "$l" "$r" "$t" node "$ROOT/bench/peer_ort_lm.mjs" --dir "$DIR" --threads "$t" "${common[@]}" ;;
    esac
  done
}
for r in $(seq 1 "$ROUNDS"); do
  for t in 1 2; do
    say "round $r/$ROUNDS, $t thread(s)"
    one_round "$r" "$t"
  done
done
echo "load after: $(uptime)" | tee -a "$OUT/machine.txt"

say "results ($OUT)"
"$PY" "$ROOT/bench/report_lm.py" "$OUT" "$DIR/lm.json" | tee "$OUT/summary.md"
