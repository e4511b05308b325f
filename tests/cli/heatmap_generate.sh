#!/usr/bin/env bash
# `attnlite heatmap generate`: causal self-attention maps of the language model's generations,
# and the same option rules as `attnlite generate`.
set -uo pipefail
bin=$1 src=$2
fail=0
check() { if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ] && echo png; }
# Width x height from the PNG's IHDR chunk (big-endian at bytes 16 and 20).
size() { od -An -tu1 -j16 -N8 "$1" | awk '{printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}'; }
# The size the command reports: "(R x C panels, WxH pixels)".
said() { sed -n 's/.*panels, \([0-9]*x[0-9]*\) pixels)$/\1/p' "$1"; }

# Greedy "je", one layer and head: the default model is lm-fra.
$bin heatmap generate "je" --layer 1 --head 1 --out "$tmp/one.png" >"$tmp/one.txt"; check "greedy map exit status" "0" "$?"
check "greedy map is a PNG" "png" "$(png "$tmp/one.png")"
check "greedy map size as reported" "$(said "$tmp/one.txt")" "$(size "$tmp/one.png")"
# 10 positions read (<bos> je ne suis pas en train de pleurer .), 0.22 in per cell at 100 dpi.
check "greedy map size" "420x390" "$(size "$tmp/one.png")"
check "caption names the masked cells" "1" "$(grep -c "masked" "$tmp/one.txt")"
check "caption says greedy" "1" "$(grep -c "(greedy)" "$tmp/one.txt")"
check "1x1 panels" "1" "$(grep -c "(1x1 panels" "$tmp/one.txt")"

# Every layer and head (the default): a 3 x 4 grid, larger than one panel.
$bin heatmap generate --model lm-fra "je" --layer all --head all --out "$tmp/all.png" >"$tmp/all.txt"; check "grid exit status" "0" "$?"
check "grid is a PNG" "png" "$(png "$tmp/all.png")"
check "grid has 3x4 panels" "1" "$(grep -c "(3x4 panels" "$tmp/all.txt")"
check "grid size as reported" "$(said "$tmp/all.txt")" "$(size "$tmp/all.png")"
w1=$(size "$tmp/one.png" | cut -dx -f1) w12=$(size "$tmp/all.png" | cut -dx -f1)
check "grid wider than one panel" "yes" "$([ "$w12" -gt $((2 * w1)) ] && echo yes)"

# Sampled, reproducible with the same seed.
$bin heatmap generate "nous allons" --temperature 0.8 --top-k 50 --top-p 0.9 --seed 3 --max-tokens 6 --cmap viridis --out "$tmp/s1.png" >"$tmp/s1.txt"
check "sampled map exit status" "0" "$?"
check "caption names the sampling" "1" "$(grep -c "sampled: temperature 0.8, top-k 50, top-p 0.9, seed 3" "$tmp/s1.txt")"
$bin heatmap generate "nous allons" --temperature 0.8 --top-k 50 --top-p 0.9 --seed 3 --max-tokens 6 --cmap viridis --out "$tmp/s2.png" >/dev/null
check "same seed, same PNG" "" "$(cmp "$tmp/s1.png" "$tmp/s2.png")"
$bin heatmap generate "nous allons" --positions --annotate --dpi 150 --out "$tmp/p.png" >/dev/null
check "--positions --annotate --dpi" "png" "$(png "$tmp/p.png")"
(cd "$tmp" && $bin heatmap generate "je" --layer 2 --head 3 >/dev/null); check "default output file" "png" "$(png "$tmp/attention.png")"

# Bad options: exit status 2 and a message naming the option; nothing written.
bad() {
  local want=$1; shift
  $bin heatmap generate "$@" --out "$tmp/bad.png" >/dev/null 2>"$tmp/err"
  check "bad: $* exits 2" "2" "$?"
  check "bad: $* names it" "1" "$(grep -c -- "$want" "$tmp/err")"
}
bad "--temperature must be a number > 0" "je" --temperature 0
bad "--temperature must be a number > 0" "je" --temperature -1
bad "--temperature must be a number > 0" "je" --temperature warm
bad "--temperature must be a number > 0" "je" --temperature nan
bad "--top-k must be an integer >= 1" "je" --top-k 0
bad "--top-k must be an integer >= 1" "je" --top-k 2.5
bad "--top-p must be a number in (0, 1]" "je" --top-p 0
bad "--top-p must be a number in (0, 1]" "je" --top-p 1.5
bad "--seed must be a non-negative integer" "je" --seed -1
bad "--max-tokens must be an integer" "je" --max-tokens 0
bad "--layer must be a positive number or 'all'" "je" --layer 0
bad "--head must be a positive number or 'all'" "je" --head x
bad "unknown colormap" "je" --cmap jet
bad "give exactly one prompt"
bad "give exactly one prompt" "je" "tu"
bad "unknown option '--beam'" "je" --beam 4
bad "--d2l-compat is for Transformer translations" "je" --d2l-compat
check "no PNG written for bad options" "" "$(ls "$tmp"/bad.png 2>/dev/null)"

# Errors that need the model: exit status 1 with a message.
$bin heatmap generate "je" --layer 9 --out "$tmp/x.png" 2>"$tmp/err"; check "layer out of range" "1" "$?"
check "layer out of range message" "1" "$(grep -c 'layer 9 is out of range: the model has 3' "$tmp/err")"
$bin heatmap generate --model transformer-d2l "je" --out "$tmp/x.png" 2>"$tmp/err"; check "translation model" "1" "$?"
check "translation model message" "1" "$(grep -c 'language model' "$tmp/err")"

# The help text documents the subcommand.
check "help lists heatmap generate" "1" "$($bin heatmap --help | grep -c 'attnlite heatmap generate \[--model M\] PROMPT')"
exit $fail
