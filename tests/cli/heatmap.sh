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
$bin heatmap translate --model transformer-d2l "he's calm ." --beam 4 --alpha 0.75 --out "$tmp/beam.png" >"$tmp/beam.txt"
check "--beam: the maps of beam search's translation" "1" \
  "$(grep -c "=> '$($bin translate --model transformer-d2l --beam 4 --alpha 0.75 "he's calm .")'" "$tmp/beam.txt")"
$bin heatmap translate "go ." --beam 4 --view alignment --out "$tmp/x.png" 2>/dev/null; check "--beam with another view is a usage error" "2" "$?"
$bin heatmap translate "go ." --beam 0 --out "$tmp/x.png" 2>/dev/null; check "--beam 0 is a usage error" "2" "$?"
# PNG height: bytes 20-23 of the IHDR chunk, big-endian.
png_height() { od -An -tu1 -j20 -N4 "$1" | awk '{print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4}'; }
$bin heatmap translate --model transformer-d2l "i'm home ." --kind enc --layer 1 --head 1 --out "$tmp/crop.png" >/dev/null
$bin heatmap translate --model transformer-d2l "i'm home ." --kind enc --layer 1 --head 1 --padding \
  --out "$tmp/pad.png" >/dev/null; check "--padding exit status" "0" "$?"
check "--padding keeps the 10 padded positions: a taller map (10 queries, not 4)" "yes" \
  "$([ "$(png_height "$tmp/pad.png")" -gt "$(png_height "$tmp/crop.png")" ] && echo yes)"
$bin heatmap --all --padding --out "$tmp/figs3" >/dev/null
check "--all --padding: the maps with source keys or queries change, the others do not" \
  "04-bahdanau-attention.png 07-transformer-cross.png 07-transformer-encoder.png" \
  "$(cd "$tmp/figs" && for f in *.png; do cmp -s "$f" "../figs3/$f" || printf '%s ' "$f"; done | sed 's/ $//')"
$bin heatmap generate "je" --padding --out "$tmp/x.png" 2>/dev/null; check "--padding with generate is a usage error" "2" "$?"
# SVG: every figure, parsed by an XML parser (Python's xml.etree): the PNG's size, a group of
# cells per panel with a rect per cell, the labels as text elements.
$bin heatmap --all --format svg --out "$tmp/svg" >/dev/null; check "--all --format svg exit status" "0" "$?"
check "--all --format svg writes 16 SVG files" "16" "$(ls "$tmp/svg"/*.svg | wc -l)"
check "SVG files parse, with the PNGs' sizes, cells and labels" "ok" "$(python3 - "$tmp/svg" "$tmp/figs" <<'PY'
import glob, os, struct, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
svg_dir, png_dir = sys.argv[1], sys.argv[2]
problems = []
for path in sorted(glob.glob(os.path.join(svg_dir, "*.svg"))):
    name = os.path.basename(path)[:-4]
    root = ET.parse(path).getroot()
    with open(os.path.join(png_dir, name + ".png"), "rb") as f:
        w, h = struct.unpack(">II", f.read(24)[16:24])
    if root.tag != ns + "svg" or (root.get("width"), root.get("height")) != (str(w), str(h)):
        problems.append(name + ": size")
    if not root.findall(".//" + ns + "text"):
        problems.append(name + ": no text")
enc = ET.parse(os.path.join(svg_dir, "07-transformer-encoder.svg")).getroot()
cells = [g for g in enc.iter(ns + "g") if g.get("class") == "cells"]
if len(cells) != 8 or any(len(g.findall(ns + "rect")) != 16 for g in cells):
    problems.append("encoder: expected 2 x 4 panels of 4 x 4 cells")
texts = [t.text for t in enc.iter(ns + "text")]
for want in ["Head 1", "Head 4", "Layer 1", "Layer 2", "<eos>", "i'm",
             "transformer-d2l, encoder self-attention: i'm home . \u2192 je suis chez moi ."]:
    if want not in texts:
        problems.append("encoder: no text " + repr(want))
print("ok" if not problems else "; ".join(problems))
PY
)"
$bin heatmap translate --model transformer-d2l "i'm home ." --out "$tmp/one.svg" >/dev/null
check "an --out FILE.svg is written as SVG" "<?xml" "$(head -c 5 "$tmp/one.svg")"
$bin heatmap translate --model transformer-d2l "i'm home ." --format png --out "$tmp/one.svg" >/dev/null
check "--format png wins over the extension" "png" "$(png "$tmp/one.svg")"
$bin heatmap --all --format pdf --out "$tmp/x" 2>"$tmp/err"; check "--format pdf is a usage error" "2" "$?"
check "--format message" "1" "$(grep -c "format must be png or svg, got 'pdf'" "$tmp/err")"
$bin heatmap translate --model transformer-d2l "i'm home ." --view alignment --out "$tmp/al.png" >"$tmp/al.txt"
check "--view alignment: a PNG" "png" "$(png "$tmp/al.png")"
check "--view alignment: caption" "1" "$(grep -c "layer 2, heads averaged for 'i'm home .' => 'je suis chez moi .'" "$tmp/al.txt")"
$bin heatmap translate --model transformer-d2l "i'm home ." --view alignment --head 3 --out "$tmp/al.svg" >/dev/null
check "--view alignment as SVG: source and target tokens as text" "ok" "$(python3 - "$tmp/al.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
groups = {g.get("class"): g for g in root.iter(ns + "g") if g.get("class")}
keys = [t.text for t in groups["keys"].iter(ns + "text")]
queries = [t.text for t in groups["queries"].iter(ns + "text")]
lines = groups["lines"].findall(ns + "polyline")
ok = keys == ["i'm", "home", ".", "<eos>"] and queries == ["je", "suis", "chez", "moi", ".", "<eos>"] and 0 < len(lines) <= 24
print("ok" if ok else "keys %s queries %s lines %d" % (keys, queries, len(lines)))
PY
)"
$bin heatmap translate --model transformer-d2l "i'm home ." --view rollout --out "$tmp/ro.png" >"$tmp/ro.txt"
check "--view rollout: a PNG of 1 x 2 panels (the d2l model's 2 layers)" "png 1x2" "$(png "$tmp/ro.png") $(grep -o '(1x2 panels)' "$tmp/ro.txt" | tr -d '()' | cut -d' ' -f1)"
$bin heatmap translate --model transformer-d2l "i'm home ." --view overview --out "$tmp/ov.svg" >/dev/null
check "--view overview as SVG: 3 kinds x 2 layers x 4 heads of cells" "24" "$(python3 -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(sum(1 for g in r.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "cells"))' "$tmp/ov.svg")"
$bin heatmap translate "go ." --view rollout --layer 1 --out "$tmp/x.png" 2>/dev/null; check "--view rollout --layer is a usage error" "2" "$?"
$bin heatmap translate "go ." --view overview --kind cross --out "$tmp/x.png" 2>/dev/null; check "--view overview --kind is a usage error" "2" "$?"
$bin heatmap translate --model bahdanau-d2l "go ." --view rollout --out "$tmp/x.png" 2>"$tmp/err"; check "--view rollout of the Bahdanau model fails" "1" "$?"
check "--view rollout of the Bahdanau model: message" "1" "$(grep -c 'needs a Transformer' "$tmp/err")"
$bin heatmap translate "go ." --view sideways --out "$tmp/x.png" 2>/dev/null; check "bad --view is a usage error" "2" "$?"
$bin heatmap translate "go ." --view alignment --annotate --out "$tmp/x.png" 2>/dev/null; check "--annotate with the alignment view is a usage error" "2" "$?"
$bin heatmap translate --model transformer-d2l "i'm home . go ." --out "$tmp/two.png" >/dev/null 2>"$tmp/err"
check "a text of two sentences: drawn as one, with a warning" "0 1" "$? $(grep -c 'the text holds 2 sentences; the maps are of it read as one' "$tmp/err")"
$bin heatmap translate --model transformer-d2l "i'm home ." --out "$tmp/one.png" >/dev/null 2>"$tmp/err"
check "one sentence: no warning" "0" "$(grep -c . "$tmp/err")"
$bin heatmap 01-eye --out /nonexistent/dir 2>/dev/null; check "unwritable output" "1" "$?"
$bin heatmap 01-eye --format svg --out /nonexistent/dir 2>/dev/null; check "unwritable SVG output" "1" "$?"
exit $fail
