#!/usr/bin/env bash
# The shipped models through an Arm build of the CLI (run under qemu-user) against the x86-64
# CLI of the same commit: every output compared byte for byte, except the probabilities and
# attention weights of --json, which are compared number by number within a bound.
#
#   tests/arm/e2e.sh NATIVE_CLI ARM_CLI SRC [STRIDE [BEAM_STRIDE]]
#
# NATIVE_CLI, ARM_CLI: commands (ARM_CLI may be "qemu-aarch64 -L /usr/aarch64-linux-gnu
# build/aarch64/attnlite"); SRC: the repository; STRIDE: translate every STRIDE-th distinct
# English sentence of each test split (default 1: all of them), and every BEAM_STRIDE-th
# (default STRIDE) with beam search. What it checks:
#   - transformer-fra-bpe (the default, int8) and transformer-fra (the word model) on their
#     test splits (models/*.test.tsv): greedy and beam 4 with alpha 0.5, the texts;
#   - the book's transformer-d2l and bahdanau-d2l on the book's sentences, greedy and beam 4;
#   - the language model (lm-fra): greedy and seeded texts (temperature, top-k, top-p);
#   - the ViT (vit-digits): the label and probability line of each test digit picture
#     (tests/fixtures/digits);
#   - --json of the default translator, the language model and the ViT: same fields, same
#     tokens and labels, every float within 1e-5 of x86-64's (they differ by rounding:
#     libm's exp and tanh and the SIMD kernels' summation order are not the same instructions
#     on the two architectures; the printed value of each is checked against PyTorch at 1e-5
#     by the Catch2 fixtures on both).
set -uo pipefail
native=$1 arm=$2 src=$3 stride=${4:-1} beam_stride=${5:-${4:-1}}
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# same NAME ARGS... <input: both CLIs, same arguments and standard input; byte-identical output
same() {
  local name=$1; shift
  cat >"$tmp/in"
  $native "$@" <"$tmp/in" >"$tmp/x86" 2>"$tmp/x86.err"; local rn=$?
  $arm "$@" <"$tmp/in" >"$tmp/arm" 2>"$tmp/arm.err"; local ra=$?
  local lines; lines=$(wc -l <"$tmp/x86" | tr -d ' ')
  if [ $rn != $ra ]; then
    echo "FAIL $name: exit status $ra on Arm, $rn on x86-64"; head -3 "$tmp/arm.err"; fail=1
  elif ! cmp -s "$tmp/x86" "$tmp/arm"; then
    echo "FAIL $name: outputs differ ($lines lines on x86-64)"
    diff "$tmp/x86" "$tmp/arm" | head -10
    fail=1
  else
    echo "ok   $name: $lines lines identical"
  fi
}

# close NAME ARGS...: --json outputs, one JSON value per line; everything but floats equal,
# floats within 1e-5 (absolute)
close() {
  local name=$1; shift
  cat >"$tmp/in"
  $native "$@" <"$tmp/in" >"$tmp/x86" 2>/dev/null
  $arm "$@" <"$tmp/in" >"$tmp/arm" 2>/dev/null
  local out
  out=$(python3 - "$tmp/x86" "$tmp/arm" <<'EOF'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
b = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
worst = [0.0, ""]
def walk(x, y, path):
    if isinstance(x, float) or isinstance(y, float):
        if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
            raise SystemExit(f"type differs at {path}")
        d = abs(x - y)
        if d > worst[0]: worst[:] = [d, path]
    elif isinstance(x, dict):
        if x.keys() != y.keys(): raise SystemExit(f"keys differ at {path}")
        for k in x: walk(x[k], y[k], f"{path}.{k}")
    elif isinstance(x, list):
        if len(x) != len(y): raise SystemExit(f"length differs at {path}")
        for i, (u, v) in enumerate(zip(x, y)): walk(u, v, f"{path}[{i}]")
    elif x != y:
        raise SystemExit(f"{path}: {x!r} on x86-64, {y!r} on Arm")
if len(a) != len(b) or not a: raise SystemExit(f"{len(a)} values on x86-64, {len(b)} on Arm")
for i, (x, y) in enumerate(zip(a, b)): walk(x, y, f"[{i}]")
print(f"{len(a)} values, largest float difference {worst[0]:.3g} at {worst[1] or '-'}")
if worst[0] > 1e-5: raise SystemExit("over the bound of 1e-5: " + f"{worst[0]:.3g} at {worst[1]}")
EOF
  ) && echo "ok   $name: $out" || { echo "FAIL $name: $out"; fail=1; }
}

# The distinct English sentences of a test split, every S-th: split MODEL [S]
split() { cut -f1 "$src/models/$1.test.tsv" | awk '!seen[$0]++' | awk -v s="${2:-$stride}" 'NR % s == 1 || s == 1'; }

for m in transformer-fra-bpe transformer-fra; do
  n=$(split $m | wc -l | tr -d ' ')
  split $m | same "$m: greedy, $n test sentences" translate --model $m
  n=$(split $m "$beam_stride" | wc -l | tr -d ' ')
  split $m "$beam_stride" | same "$m: beam 4, alpha 0.5, $n test sentences" \
    translate --model $m --beam 4 --alpha 0.5
done
book="go .
i lost .
he's calm .
i'm home ."
for m in transformer-d2l bahdanau-d2l; do
  echo "$book" | same "$m: the book's sentences, greedy" translate --model $m
  echo "$book" | same "$m: the book's sentences, beam 4" translate --model $m --beam 4
done
split transformer-fra-bpe | head -20 | close "transformer-fra-bpe: --json --weights, 20 sentences" \
  translate --json --weights
for p in "je" "il est" "nous avons" "elle ne"; do
  same "lm-fra: greedy from '$p'" generate "$p" </dev/null
  same "lm-fra: seed 3 from '$p'" generate "$p" --seed 3 </dev/null
  same "lm-fra: top-k 5, seed 4 from '$p'" generate "$p" --top-k 5 --seed 4 </dev/null
  same "lm-fra: temperature 0.8, top-p 0.95, seed 6 from '$p'" \
    generate "$p" --temperature 0.8 --top-p 0.95 --seed 6 </dev/null
done
close "lm-fra: --json --weights" generate "je suis" --json --weights </dev/null
same "vit-digits: the test digits' labels" classify "$src"/tests/fixtures/digits/*.png </dev/null
close "vit-digits: --json --weights" classify --json --weights \
  "$src"/tests/fixtures/digits/idx0006_label6_8x8.png "$src"/tests/fixtures/digits/idx0014_label4_32x32.png </dev/null
exit $fail
