#!/usr/bin/env bash
# `attnlite eval`: corpus BLEU-4 over references grouped by English sentence, and the mean
# of the book's bleu(k=2) over the pairs. The expected numbers are tools/splits.py's
# corpus_bleu and tools/attnlite_tools/d2l's bleu on the same translations (book Transformer).
set -uo pipefail
bin=$1
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf "go .\tva !\ni lost .\tj'ai perdu .\nhe's calm .\til est calme .\ni'm home .\tje suis chez moi .\nI'm home.\tJe suis à la maison.\n" > "$tmp/t.tsv"

out=$($bin eval --model transformer-d2l --out "$tmp/hyp.tsv" "$tmp/t.tsv")
check "summary" "4 sentences (5 pairs): corpus BLEU-4 78.51, book bleu(k=2) mean 0.7971" "$(printf '%s\n' "$out" | sed -n 1p)"
check "--out: one line per English sentence" "4" "$(wc -l < "$tmp/hyp.tsv")"
check "--out: the translation" "i'm home .	je suis chez moi ." "$(sed -n 4p "$tmp/hyp.tsv")"
json=$($bin eval --model transformer-d2l --json - < "$tmp/t.tsv")
check "--json from stdin" "4 5 15 14" "$(printf '%s' "$json" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["sentences"], j["pairs"], j["hyp_len"], j["ref_len"])')"
check "--beam 2 runs" "0" "$($bin eval --model transformer-d2l --beam 2 --alpha 0.5 "$tmp/t.tsv" >/dev/null; echo $?)"

printf "no tab here\n" > "$tmp/bad.tsv"
$bin eval --model transformer-d2l "$tmp/bad.tsv" 2>"$tmp/err" >/dev/null; st=$?
check "a line without a tab: exit status" "1" "$st"
check "a line without a tab: message" "1" "$(grep -c "bad.tsv:1: expected 'english<TAB>french'" "$tmp/err")"
: > "$tmp/empty.tsv"
$bin eval --model transformer-d2l "$tmp/empty.tsv" 2>"$tmp/err" >/dev/null; st=$?
check "an empty file: exit status" "1" "$st"
$bin eval --model transformer-d2l "$tmp/missing.tsv" 2>"$tmp/err" >/dev/null; st=$?
check "a missing file: message" "1" "$(grep -c "cannot open" "$tmp/err")"
$bin eval --model transformer-d2l 2>/dev/null >/dev/null; st=$?
check "no file is a usage error" "2" "$st"
exit $fail
