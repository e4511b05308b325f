#!/usr/bin/env bash
# Reproduces the "Translation latency" and "Base-size Transformer" sections of bench/RESULTS.md.
#
#   bench/run.sh [--quick]
#
# Environment: BUILD (default build-bench), NATIVE (ON|OFF, default OFF: -DATTNLITE_NATIVE),
# MODELS (the shipped models, default models/), JOBS (default 2), ROUNDS (default 1): how many
# times the measurements (attnlite, then every peer) run one after the other, each round into
# its own OUT/round-N. A VM whose speed drifts over minutes moves a peer measured minutes
# after attnlite; with several rounds, bench/report.py gives each goal's ratio per round and
# their median.
# Steps: build attnlite Release with -DATTNLITE_BENCH=ON; make the base-size random
# Transformer (tools/make_random_model.py, ~370 MB, kept in BUILD/bench); export ONNX graphs
# (tools/export_onnx_peers.py); install onnxruntime-node (npm ci --ignore-scripts in bench/); run
# attnlite, PyTorch eager (1 thread with Debian's reference BLAS; 1 and 2 threads with OpenBLAS) and onnxruntime-node (1 and 2 threads); measure
# the peak RSS of `attnlite translate "i'm home ."` (/usr/bin/time); print the tables (bench/report.py).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build-bench}"
NATIVE="${NATIVE:-OFF}"
MODELS="${MODELS:-$ROOT/models}"
JOBS="${JOBS:-2}"
PY=/usr/bin/python3   # the interpreter with torch (see docs: python3-torch)
QUICK=""
REPS=5
ROUNDS="${ROUNDS:-1}"
if [ "${1:-}" == "--quick" ]; then QUICK="--quick"; REPS=1; fi
OUT="$BUILD/bench/results"
ONNX="$BUILD/bench/onnx"
BASE="$BUILD/bench/base-transformer.safetensors"
mkdir -p "$OUT" "$ONNX"

say() { printf '\n== %s\n' "$*" >&2; }

say "build (Release, ATTNLITE_BENCH=ON, ATTNLITE_NATIVE=$NATIVE)"
simd=ON
[ -d "$ROOT/src/cpu/simd" ] || simd=OFF   # before the SIMD kernels exist: scalar only
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DATTNLITE_BENCH=ON \
  -DATTNLITE_TESTS=OFF -DATTNLITE_SIMD=$simd -DATTNLITE_NATIVE="$NATIVE" >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target attnlite_bench_translate attnlite_cli attnlite_cli_static_runtime

say "base-size random Transformer"
[ -f "$BASE" ] || "$PY" "$ROOT/tools/make_random_model.py" "$BASE"

say "ONNX graphs"
for m in "$MODELS/transformer-d2l.safetensors" "$MODELS/bahdanau-d2l.safetensors" "$BASE"; do
  [ -f "$m" ] || { echo "missing $m (skipped)" >&2; continue; }
  name="$(basename "$m" .safetensors)"
  if [ ! -f "$ONNX/$name.json" ] || [ "$m" -nt "$ONNX/$name.json" ]; then
    "$PY" "$ROOT/tools/export_onnx_peers.py" "$m" "$ONNX" 2>&1 | grep -v -i "warn\|_jit_pass\|^ *$" >&2 || true
  fi
done

say "onnxruntime-node"
[ -d "$ROOT/bench/node_modules/onnxruntime-node" ] || (cd "$ROOT/bench" && npm ci --ignore-scripts --no-audit --no-fund)

say "machine"
lscpu | grep -E "^(Model name|CPU\(s\)|Thread|Core)" | tee "$OUT/machine.txt"
echo "load before: $(uptime)" | tee -a "$OUT/machine.txt"

# Debian's python3-torch does its matrix products with the reference BLAS (libblas3, about
# 2.5 GFLOP/s); the PyTorch rows that matter use OpenBLAS instead, unpacked from the Debian
# package into BUILD (apt-get download; nothing on the system changes) and found through
# LD_LIBRARY_PATH, as a PyTorch wheel with MKL would be.
OBLAS="$BUILD/bench/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread"
if [ ! -f "$OBLAS/libblas.so.3" ]; then
  (mkdir -p "$BUILD/bench/openblas" && cd "$BUILD/bench/openblas" &&
   apt-get download libopenblas0-pthread 2>/dev/null && dpkg -x libopenblas0-pthread_*.deb .) ||
    echo "OpenBLAS not available: PyTorch runs with the reference BLAS only" >&2
fi

measure() {  # one round of measurements into R
  local R="$1"
  mkdir -p "$R"
  say "attnlite"
  ATTNLITE_MODELS_DIR="$MODELS" ATTNLITE_BASE_MODEL="$BASE" "$BUILD/bench/attnlite_bench_translate" \
    --benchmark_repetitions=$REPS --benchmark_report_aggregates_only=true \
    --benchmark_min_time=$([ -n "$QUICK" ] && echo 0.1 || echo 0.5) \
    --benchmark_out="$R/attnlite.json" --benchmark_out_format=json
  : > "$R/attnlite-tokens.jsonl"
  for name in transformer-d2l bahdanau-d2l; do
    [ -f "$MODELS/$name.safetensors" ] || continue
    "$BUILD/attnlite" translate --model "$MODELS/$name.safetensors" --json \
      "go ." "i lost ." "he's calm ." "i'm home ." | sed "s/^/$name\t/" >> "$R/attnlite-tokens.jsonl"
  done
  say "PyTorch eager, 1 thread, reference BLAS (as installed; base model at batch 1 only)"
  "$PY" "$ROOT/bench/peer_torch.py" --threads 1 --models "$MODELS" --base "$BASE" --batches 1 \
    --json "$R/torch-refblas-1.json" $QUICK
  if [ -f "$OBLAS/libblas.so.3" ]; then
    for t in 1 2; do
      say "PyTorch eager, $t thread(s), OpenBLAS"
      OPENBLAS_NUM_THREADS=$t LD_LIBRARY_PATH="$OBLAS" "$PY" "$ROOT/bench/peer_torch.py" \
        --threads $t --models "$MODELS" --base "$BASE" --json "$R/torch-$t.json" $QUICK
    done
  fi
  for t in 1 2; do
    say "onnxruntime-node, $t thread(s)"
    node "$ROOT/bench/peer_ort.mjs" --onnx "$ONNX" --threads $t --json "$R/ort-$t.json" $QUICK
  done
  echo "load after round: $(uptime)" | tee -a "$R/machine.txt"
}

rm -rf "$OUT"/round-*
if [ "$ROUNDS" -le 1 ]; then
  measure "$OUT"
else
  for r in $(seq 1 "$ROUNDS"); do
    say "round $r of $ROUNDS"
    measure "$OUT/round-$r"
  done
fi

# Peak RSS (kB) of one translation with the shipped Transformer, 5 runs each: the CLI as
# built (shared libstdc++) and the same CLI linked with -static-libstdc++ -static-libgcc.
: > "$OUT/rss.txt"
if [ -f "$MODELS/transformer-d2l.safetensors" ]; then
  for cli in attnlite bench/attnlite_cli_static_runtime; do
    for i in 1 2 3 4 5; do
      /usr/bin/time -f "$(basename $cli) %M" "$BUILD/$cli" translate --model "$MODELS/transformer-d2l.safetensors" \
        "i'm home ." 2>> "$OUT/rss.txt" > /dev/null
    done
  done
  cat "$OUT/rss.txt" >&2
fi

echo "load after: $(uptime)" | tee -a "$OUT/machine.txt"

say "results ($OUT)"
"$PY" "$ROOT/bench/report.py" "$OUT" | tee "$OUT/summary.md"
