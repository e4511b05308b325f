#!/usr/bin/env bash
# Reproduces the "Vision Transformer" section of bench/RESULTS.md: images/s of the digits ViT
# (models/vit-digits.safetensors) on the 359 test digits at batch 1 and 64 in attnlite
# (attention off, and on at batch 1), PyTorch eager (the lab's module) and onnxruntime-node,
# side by side, 1 and 2 threads, repeated rounds.
#
#   bench/vit.sh [--quick] [--rounds R] [--threads "1 2"]
#
# Environment: BUILD (default build-bench), MODEL (default models/vit-digits.safetensors),
# FIXTURE (tests/fixtures/vit_digits_test.json), MIN_TIME (seconds per measurement, default
# 2), JOBS (2).
# Steps: build attnlite_bench_classify (Release); write the benchmark files
# (tools/export_vit_bench.py: digits.f32, ref_logits.f32, vit.onnx, vit.json); install
# onnxruntime-node (bench/, npm ci --ignore-scripts); unpack OpenBLAS for PyTorch (as
# bench/run.sh); then ROUNDS rounds, each running every runtime at batch 1 and 64 and each
# thread count one after the other (order reversed every other round), each measurement
# recorded with /proc/loadavg before and after; bench/report_vit.py prints the tables and
# fails if any runtime's labels differ from the reference's or its logits by more than 1e-4.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build-bench}"
MODEL="${MODEL:-$ROOT/models/vit-digits.safetensors}"
FIXTURE="${FIXTURE:-$ROOT/tests/fixtures/vit_digits_test.json}"
MIN_TIME="${MIN_TIME:-2}"
JOBS="${JOBS:-2}"
PY=/usr/bin/python3   # the interpreter with torch
ROUNDS=5
THREADS="1 2"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) ROUNDS=1; MIN_TIME=0.5 ;;
    --rounds) ROUNDS="$2"; shift ;;
    --threads) THREADS="$2"; shift ;;
    *) echo "usage: bench/vit.sh [--quick] [--rounds R] [--threads \"1 2\"]" >&2; exit 2 ;;
  esac
  shift
done
DIR="$BUILD/bench/vit"
OUT="$BUILD/bench/results-vit"
mkdir -p "$DIR" "$OUT/logits"

say() { printf '\n== %s\n' "$*" >&2; }

say "build (Release, attnlite_bench_classify)"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DATTNLITE_BENCH=ON \
  -DATTNLITE_TESTS=OFF -DATTNLITE_NATIVE=OFF >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target attnlite_bench_classify

say "benchmark files ($DIR)"
"$PY" "$ROOT/tools/export_vit_bench.py" "$MODEL" "$FIXTURE" "$DIR" 2>&1 |
  grep -v -i "warn\|_jit_pass\|^ *$" >&2 || true
[ -f "$DIR/vit.json" ] || { echo "export failed" >&2; exit 1; }

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
# record LABEL ROUND THREADS BATCH CMD...: one measurement, its JSON line wrapped with the load.
record() {
  local label="$1" round="$2" threads="$3" batch="$4"; shift 4
  local before after res
  before="$(cut -d' ' -f1-3 /proc/loadavg)"
  res="$("$@" | tail -1)"
  after="$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '{"label": "%s", "round": %d, "threads": %d, "batch": %d, "load_before": "%s", "load_after": "%s", "result": %s}\n' \
    "$label" "$round" "$threads" "$batch" "$before" "$after" "$res" >> "$RUNS"
  printf '%-16s b%-3d %dt round %d  load %s -> %s  %s\n' "$label" "$batch" "$threads" "$round" "$before" "$after" \
    "$(printf '%s' "$res" | grep -o '"img_s": *[0-9.e+]*\|"img_s":[0-9.e+]*' | head -1)" >&2
}
one_round() {
  local r="$1" t="$2" b="$3"
  local -a labels=(attnlite attnlite-attn pytorch pytorch-refblas ort)
  if [ $((r % 2)) -eq 0 ]; then labels=(ort pytorch-refblas pytorch attnlite-attn attnlite); fi
  for l in "${labels[@]}"; do
    local lg="$OUT/logits/$l.b$b.t$t.r$r.f32"
    case "$l" in
      attnlite|attnlite-attn)
        local att=0; [ "$l" = attnlite-attn ] && att=1
        [ "$att" = 1 ] && [ "$b" != 1 ] && continue
        record "$l" "$r" "$t" "$b" "$BUILD/bench/attnlite_bench_classify" --model "$MODEL" \
          --images "$DIR/digits.f32" --batch "$b" --attention "$att" --threads "$t" \
          --min-time "$MIN_TIME" --logits "$lg" ;;
      pytorch)
        [ -f "$OBLAS/libblas.so.3" ] || continue
        record "$l" "$r" "$t" "$b" env OPENBLAS_NUM_THREADS="$t" OMP_NUM_THREADS="$t" LD_LIBRARY_PATH="$OBLAS" \
          "$PY" "$ROOT/bench/peer_torch_vit.py" --dir "$DIR" --threads "$t" --batch "$b" --label "$l" \
          --min-time "$MIN_TIME" --logits "$lg" ;;
      pytorch-refblas)
        [ "$t" != 1 ] && continue
        record "$l" "$r" "$t" "$b" env OMP_NUM_THREADS="$t" \
          "$PY" "$ROOT/bench/peer_torch_vit.py" --dir "$DIR" --threads "$t" --batch "$b" --label "$l" \
          --min-time "$MIN_TIME" --logits "$lg" ;;
      ort)
        record "$l" "$r" "$t" "$b" node "$ROOT/bench/peer_ort_vit.mjs" --dir "$DIR" --threads "$t" \
          --batch "$b" --min-time "$MIN_TIME" --logits "$lg" ;;
    esac
  done
}
for r in $(seq 1 "$ROUNDS"); do
  for t in $THREADS; do
    for b in 1 64; do
      say "round $r/$ROUNDS, $t thread(s), batch $b"
      one_round "$r" "$t" "$b"
    done
  done
done
echo "load after: $(uptime)" | tee -a "$OUT/machine.txt"

say "results ($OUT)"
"$PY" "$ROOT/bench/report_vit.py" "$OUT" "$DIR" | tee "$OUT/summary.md"
