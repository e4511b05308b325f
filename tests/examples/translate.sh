#!/usr/bin/env bash
# examples/translate.c against the CLI: the same translations of the shipped translators,
# greedy and beam 4, its kernel table, and its errors.
#   tests/examples/translate.sh EXAMPLE CLI SRC KERNELS
# EXAMPLE and CLI are commands (EXAMPLE may be "qemu-aarch64 -L /usr/aarch64-linux-gnu
# build/aarch64-minimal/examples/translate", the small core under emulation; CLI an x86-64
# build of the same commit); KERNELS: the table EXAMPLE must report.
set -uo pipefail
ex=$1 cli=$2 src=$3 kernels=$4
fail=0
check() { if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

got=$($ex --kernels)
[ "$kernels" == avx2-fma ] && [ "$got" == scalar ] && kernels=scalar  # an x86-64 CPU without AVX2
# an x86-64 CPU with AVX-512 F, DQ and VL: the AVX-512 table, unless ATTNLITE_AVX512=0
if [ "$kernels" == avx2-fma ] && [ "${ATTNLITE_AVX512:-}" != 0 ] &&
   flags=$(grep -m1 '^flags' /proc/cpuinfo) && [[ " $flags " == *" avx512f "* ]] &&
   [[ " $flags " == *" avx512dq "* ]] && [[ " $flags " == *" avx512vl "* ]]; then
  kernels=avx512
fi
check "kernel table" "$kernels" "$got"
# Typed input (no final full stop, a typographic apostrophe) and the book's sentences.
printf '%s\n' "I'm home." "where is the station" "Don’t worry" "He is a good person." \
  "i can't believe it" "We need to talk." >"$tmp/en"
for m in transformer-fra-bpe transformer-fra transformer-d2l bahdanau-d2l; do
  for beam in 1 4; do
    $cli translate --model $m --beam $beam --alpha 0.5 <"$tmp/en" >"$tmp/want" 2>/dev/null
    $ex "$src/models/$m.safetensors" $beam 0.5 <"$tmp/en" >"$tmp/got" 2>/dev/null
    check "$m, beam $beam: the CLI's translations" "$(cat "$tmp/want")" "$(cat "$tmp/got")"
  done
done
$ex /nonexistent.safetensors <"$tmp/en" >/dev/null 2>"$tmp/err"
check "missing model: exit status" "1" "$?"
check "missing model: message" "1" "$(grep -c "cannot open '/nonexistent.safetensors'" "$tmp/err")"
$ex >/dev/null 2>&1
check "no arguments: usage, exit status 2" "2" "$?"
$ex "$src/models/transformer-d2l.safetensors" 0 </dev/null >/dev/null 2>&1
check "beam 0: exit status 2" "2" "$?"
# An over-long line: refused (an empty output line and a message), the next one translated.
{ head -c 9000 /dev/zero | tr '\0' 'a'; echo; echo "i'm home ."; } |
  $ex "$src/models/transformer-d2l.safetensors" >"$tmp/out" 2>"$tmp/err"
check "over-long line: exit status" "1" "$?"
check "over-long line: empty line, then the next translation" "|je suis chez moi ." "$(paste -sd'|' "$tmp/out")"
check "over-long line: message" "1" "$(grep -c "line 1: longer than" "$tmp/err")"
# A line under the example's buffer but over the translator's 4096-byte limit.
{ head -c 5000 /dev/zero | tr '\0' 'a'; echo; } |
  $ex "$src/models/transformer-d2l.safetensors" >"$tmp/out" 2>"$tmp/err"
check "line over the translator's limit: exit status" "1" "$?"
check "line over the translator's limit: message" "1" "$(grep -c "^line 1: " "$tmp/err")"
exit $fail
