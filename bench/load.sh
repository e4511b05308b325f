#!/usr/bin/env bash
# Loading cost of each shipped model (and the base-size Transformer when it exists): peak RSS
# and wall time of one whole CLI run (load + one short job), two attnlite builds side by side,
# runs interleaved, medians.
#
#   bench/load.sh BEFORE_CLI AFTER_CLI [RUNS]      (RUNS default 7)
#
# BASE (default build-bench/bench/base-transformer.safetensors, made by bench/run.sh or
# tools/make_random_model.py) is measured too when present. Prints a markdown table with
# /proc/loadavg before and after.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: bench/load.sh BEFORE_CLI AFTER_CLI [RUNS]}
B=${2:?usage: bench/load.sh BEFORE_CLI AFTER_CLI [RUNS]}
RUNS=${3:-7}
BASE=${BASE:-$ROOT/build-bench/bench/base-transformer.safetensors}
M=$ROOT/models
DIGIT=$ROOT/tests/fixtures/digits/idx0006_label6_32x32.png

jobs=(
  "transformer-fra (int8, default)|translate --model $M/transformer-fra.safetensors i'm home ."
  "transformer-d2l|translate --model $M/transformer-d2l.safetensors i'm home ."
  "bahdanau-d2l|translate --model $M/bahdanau-d2l.safetensors i'm home ."
  "lm-fra (int8)|generate --model $M/lm-fra.safetensors --max-tokens 5 je"
  "vit-digits|classify --model $M/vit-digits.safetensors $DIGIT"
)
[ -f "$BASE" ] && jobs+=("base-size Transformer (fp32, $(($(stat -c %s "$BASE") / 1000000)) MB)|translate --model $BASE w4 w5 w6")

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# One run: "peak_kB wall_us" (GNU time's %M; wall from date in ns around the run).
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
one() {
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$tmp" "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo "$(tail -1 "$tmp") $(( (t1 - t0) / 1000 ))"
}

echo "load before: $(cat /proc/loadavg)"
echo
echo "| model | peak RSS before | peak RSS after | after / before | wall before | wall after |"
echo "|---|---:|---:|---:|---:|---:|"
for j in "${jobs[@]}"; do
  name=${j%%|*}
  read -r -a args <<< "${j#*|}"
  # the sentence words are separate arguments, as a shell would pass them
  ka=() kb=() ta=() tb=()
  "$A" "${args[@]}" >/dev/null 2>&1 || { echo "bench/load.sh: $A ${args[*]} failed" >&2; exit 1; }
  "$B" "${args[@]}" >/dev/null 2>&1 || { echo "bench/load.sh: $B ${args[*]} failed" >&2; exit 1; }
  for ((r = 0; r < RUNS; r++)); do
    read -r k t < <(one "$A" "${args[@]}"); ka+=("$k"); ta+=("$t")
    read -r k t < <(one "$B" "${args[@]}"); kb+=("$k"); tb+=("$t")
  done
  a=$(median "${ka[@]}"); b=$(median "${kb[@]}")
  printf '| %s | %s kB | %s kB | %.2f | %.1f ms | %.1f ms |\n' "$name" "$a" "$b" \
    "$(echo "$b / $a" | bc -l)" "$(echo "$(median "${ta[@]}") / 1000" | bc -l)" \
    "$(echo "$(median "${tb[@]}") / 1000" | bc -l)"
done
echo
echo "load after: $(cat /proc/loadavg)"
