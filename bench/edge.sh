#!/usr/bin/env bash
# The small core (cmake -DATTNLITE_MINIMAL=ON) per target: the static library stripped of
# its debugging and local symbols, and examples/translate.c linked statically and stripped;
# then peak RSS (/usr/bin/time's maximum resident set size) with each shipped model, run
# natively on this x86-64 machine: the translators through examples/translate (the small
# core), the language model and the ViT through the CLI (build/native). Prints Markdown
# tables for docs/edge.md.
#   bench/edge.sh [SENTENCES]   (SENTENCES: how many test sentences to translate, default 300)
# Needs: the Arm cross compilers (tools/setup.sh), /usr/bin/time, a native build of the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
n=${1:-300}
targets=("x86-64::" "aarch64:aarch64-linux-gnu:aarch64-linux-gnu" "armv7:armv7-linux-gnueabihf:arm-linux-gnueabihf"
         "armv7, no SIMD:armv7-linux-gnueabihf:arm-linux-gnueabihf:OFF")
echo "| target | kernels | libattnlite.a, stripped | examples/translate, static, stripped |"
echo "|---|---|---:|---:|"
for t in "${targets[@]}"; do
  IFS=: read -r name tc triple simd <<<"$t"
  dir="build/edge-${name//[ ,]/}"
  args=(-DATTNLITE_MINIMAL=ON -DATTNLITE_SIMD="${simd:-ON}")
  [ -n "$tc" ] && args+=(-DCMAKE_TOOLCHAIN_FILE="cmake/toolchains/$tc.cmake")
  cmake -S . -B "$dir" "${args[@]}" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  strip=${triple:+$triple-}strip
  $strip --strip-unneeded -o "$dir/libattnlite.stripped.a" "$dir/libattnlite.a"
  kernels=neon
  [ -z "$triple" ] && kernels=$("$dir/examples/translate" --kernels)
  [ "${simd:-ON}" = OFF ] && kernels=scalar
  printf '| %s | %s | %s | %s |\n' "$name" "$kernels" \
    "$(stat -c %s "$dir/libattnlite.stripped.a" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" \
    "$(stat -c %s "$dir/examples/translate" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')"
done

echo
echo "Peak RSS on x86-64 ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)), $n test sentences:"
echo
echo "| model | file | program | peak RSS |"
echo "|---|---:|---|---:|"
ex=build/edge-x86-64/examples/translate
cli=build/native/attnlite
[ -x "$cli" ] || { cmake -S . -B build/native >/dev/null; cmake --build build/native --target attnlite_cli -j"$jobs" >/dev/null; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n1; }
mb() { echo "$(($1 / 1024)).$((($1 % 1024) * 10 / 1024)) MB"; }  # kilobytes, as MB with one decimal
dir_tmp=$(mktemp -d); trap 'rm -rf "$dir_tmp"' EXIT
size() { stat -c %s "models/$1.safetensors" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
for m in transformer-fra-bpe transformer-fra transformer-d2l bahdanau-d2l; do
  split=models/$m.test.tsv
  [ -f "$split" ] || split=models/transformer-fra.test.tsv
  awk -F'\t' -v n="$n" 'NR <= n { print $1 }' "$split" >"$dir_tmp/en"
  kb=$(rss "$ex" "models/$m.safetensors" <"$dir_tmp/en")
  echo "| $m | $(size $m) | examples/translate (small core) | $(mb "$kb") |"
  kb=$(rss "$ex" "models/$m.safetensors" 4 0.5 <"$dir_tmp/en")
  echo "| $m, beam 4 | $(size $m) | examples/translate (small core) | $(mb "$kb") |"
done
kb=$(rss "$cli" generate "je suis" --max-tokens 30 --seed 1 </dev/null)
echo "| lm-fra | $(size lm-fra) | attnlite generate (CLI) | $(mb "$kb") |"
kb=$(rss "$cli" classify tests/fixtures/digits/*.png </dev/null)
echo "| vit-digits | $(size vit-digits) | attnlite classify, 20 pictures (CLI) | $(mb "$kb") |"
