#!/usr/bin/env bash
# `attnlite translate --device`: cpu works; cuda either translates exactly as the CPU (a CUDA
# build with a GPU) or fails with a message naming why (no CUDA build, no device); a bad
# value is a usage error. Works in every build.
set -uo pipefail
bin=$1
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the book's Transformer: the expected values below are its translations
book="$bin translate --model transformer-d2l"

cpu=$($book --device cpu "i'm home ." "go .")
check "--device cpu" "je suis chez moi ." "$(printf '%s\n' "$cpu" | sed -n 1p)"
# A CPU run never loads cuBLAS, in a CUDA build too (the CUDA backend opens it when the GPU is
# first asked for): the dynamic loader's own list of the files it opened.
LD_DEBUG=files $book --device cpu "go ." 2>"$tmp/files" >/dev/null
check "the loader's list of files is there" "1" "$(grep -c -m1 "file=libc\." "$tmp/files")"
check "--device cpu loads no cuBLAS" "0" "$(grep -c "file=libcublas" "$tmp/files")"
$book --device gpu "go ." 2>"$tmp/err" >/dev/null; st=$?
check "--device gpu is a usage error" "2" "$st"
check "--device gpu message" "1" "$(grep -c -- "--device must be cpu or cuda" "$tmp/err")"

out=$($book --device cuda "i'm home ." "go ." 2>"$tmp/err"); st=$?
if [ $st -eq 0 ]; then
  echo "note: --device cuda ran on a GPU"
  check "--device cuda gives the CPU's translations" "$cpu" "$out"
  check "--device cuda --batch 2 on three lines" "$($book "i'm home ." "go ." "i lost .")" \
    "$($book --device cuda --batch 2 "i'm home ." "go ." "i lost ." 2>/dev/null)"
  check "--device cuda --json" "$($book --json --weights "he's calm ." | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')" \
    "$($book --device cuda --json --weights "he's calm ." | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')"
else
  check "--device cuda without a GPU: exit status" "1" "$st"
  msg=$(cat "$tmp/err")
  echo "note: --device cuda: $msg"
  case "$msg" in
    *"attnlite was built without CUDA (configure with -DATTNLITE_CUDA=ON)"*) check "no CUDA build message" ok ok ;;
    *"CUDA was requested but no CUDA device is available ("*) check "no device message" ok ok ;;
    *) check "--device cuda error message" "built without CUDA / no CUDA device" "$msg" ;;
  esac
fi
# Both families and beam search run on CUDA too: the same output as the CPU, or the same
# clear error when there is no CUDA build or device.
for args in "--model bahdanau-d2l" "--model transformer-d2l --beam 4"; do
  cpu=$($bin translate $args "go ." "i lost .")
  out=$($bin translate --device cuda $args "go ." "i lost ." 2>"$tmp/err"); st=$?
  if [ $st = 0 ]; then
    check "--device cuda $args gives the CPU's translations" "$cpu" "$out"
  else
    check "--device cuda $args without a GPU: exit status" "1" "$st"
    check "--device cuda $args: message" "1" \
      "$(grep -c -e "no CUDA device is available" -e "built without CUDA" "$tmp/err")"
  fi
done
# --precision: fp32 is the default; bf16 needs --device cuda (a usage error on the CPU, before
# anything loads), where it runs or fails as --device cuda does; any other name is refused.
check "--precision fp32" "$cpu" "$($bin translate --model transformer-d2l --precision fp32 "go ." "i lost .")"
for args in "--precision bf16" "--device cpu --precision bf16" "--device cuda --precision fp16"; do
  $book $args "go ." 2>"$tmp/err" >/dev/null; st=$?
  check "$args is a usage error" "2" "$st"
done
check "bf16 on the CPU: message" "1" "$(grep -c -- "--precision bf16 needs --device cuda" <($book --precision bf16 "go ." 2>&1))"
check "--precision fp16: message" "1" "$(grep -c -- "--precision must be fp32 or bf16, got 'fp16'" "$tmp/err")"
for cmd in "translate --model transformer-d2l" "generate" "classify"; do
  $bin $cmd --precision bf16 "x" 2>"$tmp/err" >/dev/null; st=$?
  check "$cmd --precision bf16 on the CPU is a usage error" "2 1" \
    "$st $(grep -c -- "--precision bf16 needs --device cuda" "$tmp/err")"
  check "$cmd --help names --precision" "1" "$($bin ${cmd%% *} --help | grep -c -- "--precision P")"
done
out=$($book --device cuda --precision bf16 "i'm home ." "go ." 2>"$tmp/err"); st=$?
if [ $st -eq 0 ]; then
  # the book's four sentences: the same French with bfloat16 weights (tests/test_cuda_models
  # holds every family against the CPU on the rounded weights)
  check "--device cuda --precision bf16" "$($book "i'm home ." "go .")" "$out"
else
  check "--precision bf16 without a GPU: exit status" "1" "$st"
  check "--precision bf16 without a GPU: message" "1" \
    "$(grep -c -e "no CUDA device is available" -e "built without CUDA" "$tmp/err")"
fi
exit $fail
