#!/usr/bin/env bash
# Beam search against greedy decoding on the default model (models/transformer-fra-bpe,
# int8), side by side in one run: `attnlite eval` over the test split, one sentence at a
# time, one thread, greedy and beam 4 (length penalty ALPHA, default 0.5: the value chosen on
# the dev split) alternating, 5 runs each; sentences/s (median), the beam/greedy ratio, and
# the load average before and after. A second build directory (OTHER, e.g. an older
# commit's) runs interleaved with the first, for a before/after in the same run.
#
#   [MODEL=NAME] [ALPHA=A] bench/beam.sh [BUILD [OTHER]]     (default: build/native)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILDS=("${1:-$ROOT/build/native}")
[ $# -ge 2 ] && BUILDS+=("$2")
NAME=${MODEL:-transformer-fra-bpe}
ALPHA=${ALPHA:-0.5}
MODEL=$ROOT/models/$NAME.safetensors
TEST=$ROOT/models/$NAME.test.tsv
for b in "${BUILDS[@]}"; do [ -x "$b/attnlite" ] || { echo "bench/beam.sh: $b/attnlite is missing" >&2; exit 2; }; done

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
declare -A secs=() bleu=()
n=0
for rep in 1 2 3 4 5; do
  for i in "${!BUILDS[@]}"; do
    for beam in 1 4; do
      # one sentence at a time: --batch 1 where the build's eval has it (its default batches)
      one=()
      "${BUILDS[$i]}/attnlite" eval --help | grep -q -- '--batch' && one=(--batch 1)
      j=$("${BUILDS[$i]}/attnlite" eval --json "${one[@]}" --model "$MODEL" --beam $beam --alpha $ALPHA "$TEST")
      secs[$i,$beam]+="$(field "$j" seconds) "
      bleu[$i,$beam]=$(field "$j" corpus_bleu4)
      n=$(field "$j" sentences)
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); model $NAME, beam 4 with alpha $ALPHA"
echo
echo "| build | decoding | test BLEU-4 | sentences/s (median of 5, $n sentences) | beam 4 / greedy |"
echo "|---|---|---:|---:|---:|"
for i in "${!BUILDS[@]}"; do
  g=$(median ${secs[$i,1]}); b=$(median ${secs[$i,4]})
  name=$(basename "${BUILDS[$i]}")
  python3 - "$name" "$n" "$g" "$b" "${bleu[$i,1]}" "${bleu[$i,4]}" <<'PY'
import sys
name, n, g, b, bg, bb = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
print(f"| {name} | greedy | {float(bg):.2f} | {n / g:.0f} | |")
print(f"| {name} | beam 4 | {float(bb):.2f} | {n / b:.0f} | {g / b:.2f}x |")
PY
done
