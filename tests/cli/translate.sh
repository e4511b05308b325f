#!/usr/bin/env bash
# End-to-end checks of `attnlite translate` (arguments, stdin, --json, --ref, errors).
set -uo pipefail
bin=$1 src=$2
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the book's Transformer: the expected values below are its translations
book="$bin translate --model transformer-d2l"

check "book model by name" "je suis chez moi ." "$($book "i'm home .")"
check "book preprocessing (case, no space before .)" "je suis chez moi ." "$($book "I'm home.")"
out=$(printf "go .\ni'm home .\n" | $book)
check "stdin: one line per sentence" "2" "$(printf '%s\n' "$out" | wc -l)"
check "stdin: second line" "je suis chez moi ." "$(printf '%s\n' "$out" | sed -n 2p)"
check "--ref prints bleu" "$(printf 'je suis chez moi .\t1.000')" "$($book --ref "je suis chez moi ." "i'm home .")"
check "bahdanau model by name" "0" "$($bin translate --model bahdanau-d2l "i'm home ." >/dev/null; echo $?)"
check "--tsv references" "1.000" "$(printf "i'm home .\tJe suis chez moi.\n" | $book --tsv | cut -f2)"

$book --json "i'm home ." > "$tmp/j"
check "--json fields" "je suis chez moi . 5 [2, 4, 10, 10] True" "$(python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
print(j["translation"], len(j["tokens"]), j["attention"]["encoder_self_shape"], all(0<s<=1 for s in j["scores"]))' "$tmp/j")"
$book --json --weights "i'm home ." > "$tmp/w"
check "--json --weights rows sum to 1" "True" "$(python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))["attention"]
rows=[r for l in j["cross"] for t in l for r in t]+[r for l in j["encoder_self"] for h in l for r in h]
print(all(abs(sum(r)-1)<1e-5 for r in rows))' "$tmp/w")"

# --times: one line on stderr after the translations, stdout as without it; the parts add up
# to the total (each printed to 0.1 ms)
printf "go .\ni'm home .\nhe's calm .\n" | $book --batch 2 --times > "$tmp/t.out" 2> "$tmp/t.err"
check "--times: stdout as without it" "$(printf "go .\ni'm home .\nhe's calm .\n" | $book --batch 2)" "$(cat "$tmp/t.out")"
check "--times: one line on stderr" "1" "$(grep -c . "$tmp/t.err")"
check "--times: load, set-up, first call, rest, total" "ok" "$(python3 -c '
import re,sys
m = re.fullmatch(r"attnlite translate: times \(ms\): load (\S+), set-up (\S+), first call (\S+), "
                 r"rest (\S+), total (\S+)\n", open(sys.argv[1]).read())
v = [float(x) for x in m.groups()] if m else []
print("ok" if m and all(x >= 0 for x in v) and v[2] > 0 and abs(sum(v[:4]) - v[4]) <= 0.3 else m and v)' "$tmp/t.err")"
check "no --times: nothing on stderr" "" "$($book "go ." 2>&1 >/dev/null)"

# beam search
check "--beam 1 is the greedy output" "$($book "no way !" "he's calm .")" "$($book --beam 1 --alpha 0.75 "no way !" "he's calm .")"
check "--beam 4 finds a better translation" "c'est hors de question !" "$($book --beam 4 "no way !")"
check "--beam 4 bahdanau" "je suis chez moi ." "$($bin translate --model bahdanau-d2l --beam 4 "i'm home .")"
$book --json --beam 4 --alpha 0.75 "no way !" > "$tmp/b"
check "--json n-best list" "4 True True 4 0.75" "$(python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
nb=j["nbest"]; s=[h["score"] for h in nb]
print(len(nb), s==sorted(s,reverse=True), nb[0]["translation"]==j["translation"], j["beam"], j["length_penalty"])' "$tmp/b")"
check "--verbose lists the n-best" "4" "$($book --verbose --beam 4 "go ." | grep -c '^  [1-4]\. ')"
$book --beam 0 "go ." 2>/dev/null; check "--beam 0 exit status" "2" "$?"
$book --beam 65 "go ." 2>/dev/null; check "--beam 65 exit status" "2" "$?"
$book --alpha -1 "go ." 2>/dev/null; check "--alpha -1 exit status" "2" "$?"
# the scalar reference kernels: the same translations, within float noise the same weights
check "--kernels scalar" "$($book "no way !" "he's calm .")" "$($book --kernels scalar "no way !" "he's calm .")"
$book --kernels scalar --json --weights "i'm home ." > "$tmp/ks"
check "--kernels scalar weights within 1e-5 of simd" "True" "$(python3 -c '
import json,sys
a=json.load(open(sys.argv[1]))["attention"]; b=json.load(open(sys.argv[2]))["attention"]
flat=lambda x: [x] if not isinstance(x, list) else [w for y in x for w in flat(y)]
fa=flat(a["cross"])+flat(a["encoder_self"]); fb=flat(b["cross"])+flat(b["encoder_self"])
print(len(fa)==len(fb)>0 and max(abs(x-y) for x,y in zip(fa,fb))<=1e-5)' "$tmp/ks" "$tmp/w")"
$book --kernels fast "go ." 2>"$tmp/err"; check "--kernels fast exit status" "2" "$?"
check "--kernels fast message" "attnlite translate: --kernels must be simd or scalar, got 'fast' (see \`attnlite translate --help\`)" "$(cat "$tmp/err")"

# errors: clear message, non-zero status, other sentences still translated
out=$($book "go ." "" "i'm home ." 2>"$tmp/err"); st=$?
check "empty sentence exit status" "1" "$st"
check "empty sentence message" "1" "$(grep -c 'sentence 2: empty sentence' "$tmp/err")"
check "others still translated" "2" "$(printf '%s\n' "$out" | grep -c .)"
$bin translate --model /nonexistent.safetensors "go ." 2>"$tmp/err"; st=$?
check "missing model exit status" "1" "$st"
check "missing model message" "1" "$(grep -c "cannot open '/nonexistent.safetensors'" "$tmp/err")"
printf 'not a model' > "$tmp/bad.safetensors"
$bin translate --model "$tmp/bad.safetensors" "go ." 2>"$tmp/err"; st=$?
check "corrupt model exit status" "1" "$st"
check "corrupt model message" "1" "$(grep -c 'invalid safetensors file' "$tmp/err")"
$book --bogus "go ." 2>/dev/null; check "unknown option exit status" "2" "$?"
$book --help >/dev/null; check "--help exit status" "0" "$?"
$book "zyzzyva ." 2>"$tmp/err" >/dev/null
check "unknown word warning" "1" "$(grep -c 'unknown word(s) become <unk>: zyzzyva' "$tmp/err")"
printf '\xff\xfe bad\n' | $book 2>"$tmp/err" >/dev/null; st=$?
check "invalid UTF-8 exit status" "1" "$st"
check "invalid UTF-8 message" "1" "$(grep -c 'not valid UTF-8' "$tmp/err")"
python3 -c 'print(" ".join(["word"]*10000))' | $book 2>"$tmp/err" >/dev/null; st=$?
check "10,000-word sentence exit status" "1" "$st"
check "10,000-word sentence message" "1" "$(grep -c 'sentence is too long' "$tmp/err")"

# A text of several sentences: cut into them, each translated alone, joined by a space (the
# same as translating each alone); --whole translates it as one.
home=$($book "i'm home .") go=$($book "go .")
check "two sentences: each alone, joined" "$home $go" "$($book "i'm home . go .")"
check "two sentences on stdin" "$home $go" "$(printf "i'm home . go .\n" | $book)"
check "--batch: the same" "$home $go|$go" "$(printf "i'm home . go .\ngo .\n" | $book --batch 4 | paste -sd'|')"
parts() {  # each JSON line's input, part, parts and source
  python3 -c '
import json,sys
print("|".join("%s %s %s %s" % (j["input"], j["part"], j["parts"], j["source"]) for j in map(json.loads, sys.stdin)))'
}
check "--json: an object per sentence, input/part/parts" "1 1 2 i'm home .|1 2 2 go .|2 1 1 go ." \
  "$($book --json "i'm home . go ." "go ." | parts)"
check "--whole: one sentence" "1 1 1 i'm home . go ." "$($book --json --whole "i'm home . go ." | parts)"
check "--whole: not the joined sentences" "1" "$([ "$($book --whole "i'm home . go .")" != "$home $go" ] && echo 1)"
check "Mr. is no end" "1 1 1 mr. smith is here ." "$($book --json "mr. smith is here ." 2>/dev/null | parts)"
check "--ref: bleu of the joined translations" "$(printf '%s\t1.000' "$home $go")" "$($book --ref "$home $go" "i'm home . go .")"
check "--verbose: each sentence, then the joined bleu" "i'm home . => $home|go . => $go|  => $home $go, bleu 1.000" \
  "$($book --verbose --ref "$home $go" "i'm home . go ." | paste -sd'|')"
# a sentence of emoji alone is left out; a text of emoji alone is refused, its line kept
out=$(printf "go . \xf0\x9f\x98\x80\n\xf0\x9f\x98\x80\ngo .\n" | $book 2>"$tmp/err")
check "emoji sentence left out" "$go||$go" "$(printf '%s\n' "$out" | paste -sd'|')"
check "emoji text refused" "1" "$(grep -c 'sentence 2: empty sentence: nothing in it' "$tmp/err")"
# a text longer than a sentence may be, made of short sentences
long=$(python3 -c 'print(" ".join(["go ."] * 1000))')
check "4,000-byte text of short sentences" "1000" "$($book "$long" | grep -o "$go" | wc -l)"

exit $fail
