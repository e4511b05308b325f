#!/usr/bin/env bash
# `attnlite heatmap`: every figure family from one command, and translation maps.
set -uo pipefail
bin=$1 src=$2
fail=0
check() { if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ] && echo png; }

$bin heatmap --all --out "$tmp/figs" >/dev/null; check "--all exit status" "0" "$?"
check "--all writes 16 figures" "16" "$(ls "$tmp/figs"/*.png | wc -l)"
for fam in 01 02 03 04 05 06 07; do
  check "figure family $fam present" "yes" "$(ls "$tmp/figs"/$fam-*.png >/dev/null 2>&1 && echo yes)"
done
check "figures are PNG" "png" "$(png "$tmp/figs/07-transformer-encoder.png")"
$bin heatmap --all --out "$tmp/figs2" >/dev/null
check "reproducible (fixed seeds)" "" "$(diff -r "$tmp/figs" "$tmp/figs2")"
$bin heatmap translate --model transformer-d2l "he's calm ." --kind enc --layer 2 --head all --out "$tmp/t.png" >/dev/null
check "translate map" "png" "$(png "$tmp/t.png")"
$bin heatmap translate --model bahdanau-d2l "i'm home ." --kind cross --cmap viridis --annotate --out "$tmp/b.png" >/dev/null
check "bahdanau map" "png" "$(png "$tmp/b.png")"
$bin heatmap translate "go ." --kind sideways --out "$tmp/x.png" 2>/dev/null; check "bad --kind is a usage error" "2" "$?"
$bin heatmap translate "go ." --head 9 --out "$tmp/x.png" 2>"$tmp/err"; check "head out of range" "1" "$?"
check "head out of range message" "1" "$(grep -c 'head 9 is out of range: the model has 4' "$tmp/err")"
# PNG width: bytes 16-19 of the IHDR chunk, big-endian.
png_width() { od -An -tu1 -j16 -N4 "$1" | awk '{print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4}'; }
$bin heatmap translate --model transformer-d2l "i'm home ." --kind enc --layer 1 --head 1 --out "$tmp/crop.png" >/dev/null
$bin heatmap translate --model transformer-d2l "i'm home ." --kind enc --layer 1 --head 1 --padding \
  --out "$tmp/pad.png" >/dev/null; check "--padding exit status" "0" "$?"
check "--padding keeps the 10 padded positions: a wider map" "yes" \
  "$([ "$(png_width "$tmp/pad.png")" -gt "$(png_width "$tmp/crop.png")" ] && echo yes)"
$bin heatmap --all --padding --out "$tmp/figs3" >/dev/null
check "--all --padding: the maps with source keys or queries change, the others do not" \
  "04-bahdanau-attention.png 07-transformer-cross.png 07-transformer-encoder.png" \
  "$(cd "$tmp/figs" && for f in *.png; do cmp -s "$f" "../figs3/$f" || printf '%s ' "$f"; done | sed 's/ $//')"
$bin heatmap generate "je" --padding --out "$tmp/x.png" 2>/dev/null; check "--padding with generate is a usage error" "2" "$?"
$bin heatmap 01-eye --out /nonexistent/dir 2>/dev/null; check "unwritable output" "1" "$?"
exit $fail
