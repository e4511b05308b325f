#!/usr/bin/env bash
# `attnlite classify` with the shipped digits Vision Transformer: the test digits' labels
# (tests/fixtures/vit_digits_test.json "png": PyTorch classifies every one correctly), --json,
# --heatmap, and bad input.
set -uo pipefail
bin=$1 src=$2
fail=0
check() { if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
digits=$src/tests/fixtures/digits
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ] && echo png; }
size() { od -An -tu1 -j16 -N8 "$1" | awk '{printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}'; }
said() { sed -n 's/.*panels, \([0-9]*x[0-9]*\) pixels)$/\1/p' "$1"; }
panels() { sed -n 's/.*(\([0-9]*x[0-9]*\) panels, .*/\1/p' "$1"; }

# Every test digit (8x8 and 32x32 drawings): the label in its file name.
$bin classify "$digits"/*.png >"$tmp/all.txt"; check "20 digits: exit status" "0" "$?"
check "20 digits: 20 lines" "20" "$(wc -l <"$tmp/all.txt" | tr -d ' ')"
check "20 digits: each label as in its file name" "" "$(awk -F'\t' '{
  f = $1; sub(/.*_label/, "", f); sub(/_.*/, "", f)
  if (f != $2 || $3 <= 0 || $3 > 1) print "wrong: " $0 }' "$tmp/all.txt")"
check "the same digits in the PyTorch fixture" "ok" "$(python3 -c "
import json, sys
j = json.load(open('$src/tests/fixtures/vit_digits_test.json'))
got = {l.split('\t')[0].split('/')[-1]: l.split('\t')[1] for l in open('$tmp/all.txt').read().splitlines()}
want = {}
for e in j['png']:
    for k in ('file_8x8', 'file_32x32'):
        want[e[k].split('/')[-1]] = str(e['label'])
        assert e['predicted'] == e['label']
print('ok' if got == want else 'bad: %r vs %r' % (got, want))")"

# --json: the top K sorted, probabilities summing to 1, the 8x8 input.
$bin classify --json --top 4 "$digits/idx0022_label2_32x32.png" "$digits/idx0139_label9_8x8.png" >"$tmp/j.txt"
check "--json: exit status" "0" "$?"
check "--json fields" "2 9 | 4 4 | sorted sorted | 1 1 | 8x8 8x8 | [3, 4, 17, 17]" "$(python3 -c "
import json
js = [json.loads(l) for l in open('$tmp/j.txt')]
print(*[j['label'] for j in js], '|', *[len(j['top']) for j in js], '|',
      *['sorted' if [t['prob'] for t in j['top']] == sorted((t['prob'] for t in j['top']), reverse=True)
        and j['top'][0]['label'] == j['label'] and j['top'][0]['prob'] == j['prob'] else 'unsorted' for j in js], '|',
      *[1 if abs(sum(j['probs']) - 1) < 1e-5 else sum(j['probs']) for j in js], '|',
      *['%dx%d' % (len(j['input']), len(j['input'][0])) if all(len(r) == 8 and all(0 <= v <= 16 for v in r) for r in j['input']) else 'bad' for j in js], '|',
      js[0]['attention_shape'])")"

# --heatmap: a PNG of the size printed; the label line is printed too.
$bin classify "$digits/idx0022_label2_32x32.png" --heatmap "$tmp/h.png" >"$tmp/h.txt"; check "--heatmap: exit status" "0" "$?"
check "--heatmap: a PNG" "png" "$(png "$tmp/h.png")"
check "--heatmap: size as printed" "$(said "$tmp/h.txt")" "$(size "$tmp/h.png")"
check "--heatmap: layers x (heads + rollout)" "3x5" "$(panels "$tmp/h.txt")"
check "--heatmap: caption" "1" "$(grep -c "predicted '2'.*Rollout" "$tmp/h.txt")"
check "--heatmap: the label line" "2" "$(grep -P '\t' "$tmp/h.txt" | cut -f2)"
$bin classify "$digits/idx0022_label2_32x32.png" --heatmap "$tmp/r.png" --layer 3 --head rollout >"$tmp/r.txt"
check "--head rollout: one panel" "1x1" "$(panels "$tmp/r.txt")"
check "--head rollout: size as printed" "$(said "$tmp/r.txt")" "$(size "$tmp/r.png")"
$bin classify "$digits/idx0022_label2_32x32.png" --heatmap "$tmp/m.png" --layer 2 --head all --maps --cmap viridis >"$tmp/m.txt"
check "--maps: heads + rollout" "1x5" "$(panels "$tmp/m.txt")"
check "--maps: size as printed" "$(said "$tmp/m.txt")" "$(size "$tmp/m.png")"
check "--maps: caption" "1" "$(grep -c "17 tokens" "$tmp/m.txt")"
$bin classify "$digits/idx0022_label2_32x32.png" --heatmap "$tmp/o.png" --layer 1 --head 2 >"$tmp/o.txt"
check "--layer 1 --head 2: one panel" "1x1" "$(panels "$tmp/o.txt")"
$bin classify "$digits/idx0022_label2_32x32.png" --heatmap "$tmp/h.svg" >"$tmp/s.txt"; check "--heatmap OUT.svg: exit status" "0" "$?"
check "--heatmap OUT.svg: an SVG of the size printed, parsed as XML" "$(said "$tmp/s.txt")" \
  "$(python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); print(r.get("width") + "x" + r.get("height"))' "$tmp/h.svg")"
$bin classify "$digits/idx0022_label2_32x32.png" --format svg 2>/dev/null; check "--format without --heatmap: usage error" "2" "$?"

# A missing, an empty and a text file: reported, the other images still classified, exit 1.
: >"$tmp/empty.png"
echo "not an image" >"$tmp/text.png"
$bin classify "$tmp/none.png" "$digits/idx0047_label1_8x8.png" "$tmp/empty.png" "$tmp/text.png" \
  "$digits/idx0137_label7_32x32.png" >"$tmp/bad.txt" 2>"$tmp/err"
check "bad files: exit 1" "1" "$?"
check "bad files: the good ones classified" "1 7" "$(cut -f2 "$tmp/bad.txt" | tr '\n' ' ' | sed 's/ $//')"
check "bad files: one message each" "3" "$(grep -c "attnlite classify: .*\(none.png\|empty.png\|text.png\)" "$tmp/err")"
$bin classify "$tmp/none.png" --heatmap "$tmp/none_h.png" >/dev/null 2>&1; check "--heatmap of a missing file: exit 1" "1" "$?"
check "--heatmap of a missing file: no PNG" "" "$(ls "$tmp/none_h.png" 2>/dev/null)"

# Bad usage: exit status 2 and a message; nothing written.
bad() {
  local want=$1; shift
  $bin classify "$@" >/dev/null 2>"$tmp/err"
  check "bad: $* exits 2" "2" "$?"
  check "bad: $* says why" "1" "$(grep -c -- "$want" "$tmp/err")"
}
one=$digits/idx0022_label2_32x32.png
bad "--top" --top 0 "$one"
bad "--top" --top x "$one"
bad "--heatmap draws one image" --heatmap "$tmp/two.png" "$one" "$digits/idx0036_label0_8x8.png"
bad "give at least one image" --heatmap "$tmp/two.png"
bad "--layer must be a positive number or 'all'" --heatmap "$tmp/two.png" --layer 0 "$one"
bad "--head must be a positive number, 'all' or 'rollout'" --heatmap "$tmp/two.png" --head roll "$one"
bad "--layer, --head, --maps" --maps "$one"
bad "--layer, --head, --maps" --layer 2 "$one"
bad "unknown colormap" --heatmap "$tmp/two.png" --cmap jet "$one"
bad "unknown option '--beam'" --beam 2 "$one"
check "no PNG written for bad usage" "" "$(ls "$tmp"/two.png 2>/dev/null)"

# Errors that need the model: exit status 1 with a message.
$bin classify --heatmap "$tmp/x.png" --layer 4 "$one" >/dev/null 2>"$tmp/err"; check "layer out of range" "1" "$?"
check "layer out of range message" "1" "$(grep -c 'layer 4 is out of range: the model has 3' "$tmp/err")"
$bin classify --model lm-fra "$one" >/dev/null 2>"$tmp/err"; check "a language model: exit 1" "1" "$?"
check "a language model: message" "1" "$(grep -c 'needs a vision transformer' "$tmp/err")"

# --batch N: the images classified N at a time, the same lines in order; an unreadable image
# between batches is reported and the others still printed; a bad N is a usage error.
$bin classify --batch 7 "$digits"/*.png >"$tmp/b7.txt"; check "--batch 7: exit status" "0" "$?"
check "--batch 7: the lines of one image at a time" "$(cat "$tmp/all.txt")" "$(cat "$tmp/b7.txt")"
$bin classify --json --weights "$digits"/*_8x8.png >"$tmp/j1.txt"
$bin classify --json --weights --batch 4 "$digits"/*_8x8.png >"$tmp/j4.txt"
check "--json --weights --batch 4: labels equal, numbers within 1e-5" "ok" "$(python3 -c "
import json
a = [json.loads(l) for l in open('$tmp/j1.txt')]
b = [json.loads(l) for l in open('$tmp/j4.txt')]
def flat(x):
    return [v for y in x for v in flat(y)] if isinstance(x, list) else [x]
ok = len(a) == len(b) == 10
for x, y in zip(a, b):
    ok = ok and x['path'] == y['path'] and x['label'] == y['label'] and x['input'] == y['input']
    for k in ('probs', 'attention', 'rollout'):
        ok = ok and all(abs(p - q) <= 1e-5 for p, q in zip(flat(x[k]), flat(y[k])))
print('ok' if ok else 'differ')")"
printf 'not an image' > "$tmp/bad.png"
$bin classify --batch 2 "$digits/idx0022_label2_32x32.png" "$digits/idx0139_label9_8x8.png" "$tmp/bad.png" \
  "$digits/idx0036_label0_8x8.png" >"$tmp/b2.txt" 2>"$tmp/err"; check "--batch 2 with a bad image: exit 1" "1" "$?"
check "--batch 2 with a bad image: the other three labels" "2 9 0" "$(cut -f2 "$tmp/b2.txt" | tr '\n' ' ' | sed 's/ $//')"
check "--batch 2 with a bad image: one error" "1" "$(grep -c 'attnlite classify: ' "$tmp/err")"
bad "--batch" --batch 0 "$one"

check "help documents --heatmap" "1" "$($bin classify --help | grep -c -- '--head H|all|rollout')"
# --times: stdout as without it, and one line on stderr with the five times
$bin classify --times "$digits"/idx0006_label6_8x8.png "$digits"/idx0139_label9_8x8.png > "$tmp/times.out" 2> "$tmp/times.err"
check "--times: stdout as without it" "$($bin classify "$digits"/idx0006_label6_8x8.png "$digits"/idx0139_label9_8x8.png)" "$(cat "$tmp/times.out")"
check "--times: its line on stderr" "1 1" "$(grep -c . "$tmp/times.err") $(grep -cE \
  '^attnlite classify: times \(ms\): load [0-9.]+, set-up [0-9.]+, first call [0-9.]+, rest [0-9.]+, total [0-9.]+$' "$tmp/times.err")"
exit $fail
