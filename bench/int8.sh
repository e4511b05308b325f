#!/usr/bin/env bash
# fp32 against int8 weights of the whole-corpus Transformer, side by side in one run:
# test-split BLEU and translation speed (attnlite eval: one sentence at a time, one thread,
# greedy and beam 4), peak memory of the CLI, and the same model in the WASM build (node).
#
#   bench/int8.sh [BUILD]        (BUILD: a native build directory, default build)
#
# Models: models/transformer-fra.f32.safetensors (tools/train_corpus.py) and
# models/transformer-fra.safetensors (tools/quantize.py of it). Each timing is the median
# of 5 alternating runs. Writes a markdown table to stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
CLI=$BUILD/attnlite
F32=$ROOT/models/transformer-fra.f32.safetensors
I8=$ROOT/models/transformer-fra.safetensors
TEST=$ROOT/models/transformer-fra.test.tsv
for f in "$CLI" "$F32" "$I8" "$TEST"; do [ -e "$f" ] || { echo "bench/int8.sh: $f is missing" >&2; exit 2; }; done

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "| weights | file bytes | decoding | test BLEU-4 | book bleu(k=2) | sentences/s (median of 5) | int8 speed-up |"
echo "|---|---:|---|---:|---:|---:|---:|"
for beam in 1 4; do
  declare -A secs=() bleu4=() bleu2=()
  for rep in 1 2 3 4 5; do
    for w in f32 int8; do
      m=$F32; [ $w = int8 ] && m=$I8
      j=$("$CLI" eval --json --batch 1 --model "$m" --beam $beam "$TEST")
      secs[$w]+="$(field "$j" seconds) "
      bleu4[$w]=$(field "$j" corpus_bleu4); bleu2[$w]=$(field "$j" book_bleu2_mean)
      n=$(field "$j" sentences)
    done
  done
  f32s=$(median ${secs[f32]}); i8s=$(median ${secs[int8]})
  for w in f32 int8; do
    m=$F32; [ $w = int8 ] && m=$I8
    s=$(median ${secs[$w]})
    up=$([ $w = int8 ] && python3 -c "print(f'{$f32s / $i8s:.2f}x')" || echo "1")
    dec=$([ $beam = 1 ] && echo greedy || echo "beam $beam")
    printf "| %s | %s | %s | %.2f | %.4f | %.0f | %s |\n" $w "$(stat -c %s "$m")" "$dec" \
      "${bleu4[$w]}" "${bleu2[$w]}" "$(python3 -c "print($n / $s)")" "$up"
  done
  unset secs bleu4 bleu2
done

echo
echo "| weights | peak RSS of \`attnlite translate\` (KB) |"
echo "|---|---:|"
for w in f32 int8; do
  m=$F32; [ $w = int8 ] && m=$I8
  kb=$( { /usr/bin/time -f "%M" "$CLI" translate --model "$m" "i'm home ." >/dev/null; } 2>&1 | tail -1)
  echo "| $w | $kb |"
done
