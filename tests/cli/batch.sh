#!/usr/bin/env bash
# `attnlite translate --batch N`: lines decoded N at a time give the translations of one line
# at a time, in input order (the default model's held-out lines, greedy and beam 3; JSON
# tokens equal, scores within float rounding); a refused line in a batch fails alone, the
# others printed as without --batch (also when every line of a batch, or all but one, is
# refused); a bad N is a usage error.
set -uo pipefail
bin=$1
root=$2
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3; [ -x "$py" ] || py=python3
head -300 "$root/models/transformer-fra-bpe.test.tsv" | cut -f1 > "$tmp/src"

for beam in 1 3; do
  "$bin" translate --beam $beam < "$tmp/src" > "$tmp/one"
  "$bin" translate --beam $beam --batch 32 < "$tmp/src" > "$tmp/b32"
  check "beam $beam: 300 lines" 300 "$(wc -l < "$tmp/b32")"
  check "beam $beam: --batch 32 translates as one line at a time" "" "$(diff "$tmp/one" "$tmp/b32" | head -3)"
done
# More lines than one window (--batch 2 sorts 32 lines at a time by source length): the same
# lines, in input order
head -100 "$tmp/src" > "$tmp/hundred"
check "--batch 2 on 100 lines (four windows)" "$("$bin" translate < "$tmp/hundred")" \
  "$("$bin" translate --batch 2 < "$tmp/hundred")"
# warnings (characters the model has never seen) come before their own line, in input order
printf 'go .\nthe 漢 is cold .\ni lost my keys yesterday .\nhi 字 .\nhe is calm .\n' > "$tmp/warn"
"$bin" translate < "$tmp/warn" > "$tmp/w1" 2>&1
"$bin" translate --batch 4 < "$tmp/warn" > "$tmp/w4" 2>&1
check "--batch 4: warnings and lines interleaved as one line at a time" "$(cat "$tmp/w1")" "$(cat "$tmp/w4")"
check "--batch 4: two warnings, sentences 2 and 4" "2 4" \
  "$(sed -n 's/.*warning: sentence \([0-9]*\):.*/\1/p' "$tmp/w4" | tr '\n' ' ' | sed 's/ $//')"
# 7 lines in batches of 3: the last batch is short
head -7 "$tmp/src" > "$tmp/seven"
check "--batch 3 on 7 lines" "$("$bin" translate < "$tmp/seven")" "$("$bin" translate --batch 3 < "$tmp/seven")"

head -40 "$tmp/src" > "$tmp/forty"
"$bin" translate --json < "$tmp/forty" > "$tmp/j1"
"$bin" translate --json --batch 16 < "$tmp/forty" > "$tmp/j16"
check "--json --batch 16: tokens equal, scores within 1e-5" "ok" "$("$py" - "$tmp/j1" "$tmp/j16" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
ok = len(a) == len(b) == 40
for x, y in zip(a, b):
    ok = ok and x["source"] == y["source"] and x["token_ids"] == y["token_ids"]
    ok = ok and all(abs(p - q) <= 1e-5 for p, q in zip(x["scores"], y["scores"]))
print("ok" if ok else "differ")
PY
)"

# an empty line and an over-long one inside batches: they fail alone, the lines stay aligned
long=$(head -c 5000 /dev/zero | tr '\0' 'a')
printf 'go .\n\ni lost .\n%s\nhe is calm .\n' "$long" > "$tmp/bad"
"$bin" translate < "$tmp/bad" > "$tmp/o1" 2> "$tmp/e1"; s1=$?
"$bin" translate --batch 8 < "$tmp/bad" > "$tmp/o8" 2> "$tmp/e8"; s8=$?
check "refused lines: exit status 1" "1 1" "$s1 $s8"
check "refused lines: the same output" "$(cat "$tmp/o1")" "$(cat "$tmp/o8")"
check "refused lines: the same errors" "$(cat "$tmp/e1")" "$(cat "$tmp/e8")"
check "refused lines: 5 output lines, 2 empty" "5 2" "$(wc -l < "$tmp/o8") $(grep -c '^$' "$tmp/o8")"
check "refused lines: errors name sentences 2 and 4" "2 4" \
  "$(sed -n 's/.*error: sentence \([0-9]*\):.*/\1/p' "$tmp/e8" | tr '\n' ' ' | sed 's/ $//')"
# a batch whose lines are all refused, and one with a single line left after its refusals
# (each refusal takes its line out and the batch goes again): as one line at a time
printf '\n\n\n\n' > "$tmp/none"
"$bin" translate --batch 4 < "$tmp/none" > "$tmp/n4" 2> "$tmp/ne4"; s4=$?
check "a batch of refused lines only: 4 empty lines, 4 errors, status 1" "4 4 1" \
  "$(grep -c '^$' "$tmp/n4") $(grep -c 'error: sentence [1-4]: empty sentence' "$tmp/ne4") $s4"
printf '\n\ngo .\n\n' > "$tmp/lone"
"$bin" translate < "$tmp/lone" > "$tmp/l1" 2> "$tmp/le1"
"$bin" translate --batch 4 < "$tmp/lone" > "$tmp/l4" 2> "$tmp/le4"
check "one line left of its batch: as one line at a time" "$(cat "$tmp/l1"; cat "$tmp/le1")" \
  "$(cat "$tmp/l4"; cat "$tmp/le4")"
check "one line left of its batch: translated" "1" "$(grep -c . "$tmp/l4")"
# a line of invalid UTF-8 among others: it fails alone, as one line at a time
printf 'go .\n\377\376 bad .\ni lost .\nhe is calm .\n' > "$tmp/utf8"
"$bin" translate < "$tmp/utf8" > "$tmp/u1" 2>&1; s1=$?
"$bin" translate --batch 4 < "$tmp/utf8" > "$tmp/u4" 2>&1; s4=$?
check "invalid UTF-8 in a batch: exit status 1" "1 1" "$s1 $s4"
check "invalid UTF-8 in a batch: output and errors as one line at a time" "$(cat "$tmp/u1")" "$(cat "$tmp/u4")"
check "invalid UTF-8 in a batch: 4 lines out, sentence 2 named" "4 1" \
  "$(grep -vc 'error:' "$tmp/u4") $(grep -c 'error: sentence 2: input is not valid UTF-8' "$tmp/u4")"
# --tsv: a line without a tab between batches keeps its place
printf 'go .\tva !\nno tab here\ni lost .\tj'"'"'ai perdu .\n' > "$tmp/tsv"
check "--tsv --batch 2 with a bad line" "$("$bin" translate --tsv < "$tmp/tsv" 2>/dev/null)" \
  "$("$bin" translate --tsv --batch 2 < "$tmp/tsv" 2>/dev/null)"

for n in 0 257 x; do
  "$bin" translate --batch $n "go ." > /dev/null 2> "$tmp/err"; st=$?
  check "--batch $n is a usage error" 2 "$st"
done
exit $fail
