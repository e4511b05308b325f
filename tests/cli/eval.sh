#!/usr/bin/env bash
# `attnlite eval`: corpus BLEU-4 over references grouped by English sentence (on the book's
# tokens, and sacreBLEU's 13a on the text as written), and the mean of the book's bleu(k=2)
# over the pairs. The expected book-token numbers are tools/splits.py's corpus_bleu and
# tools/attnlite_tools/d2l's bleu on the same translations (book Transformer).
set -uo pipefail
bin=$1
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf "go .\tva !\ni lost .\tj'ai perdu .\nhe's calm .\til est calme .\ni'm home .\tje suis chez moi .\nI'm home.\tJe suis à la maison.\n" > "$tmp/t.tsv"

out=$($bin eval --model transformer-d2l --out "$tmp/hyp.tsv" "$tmp/t.tsv")
check "summary" "4 sentences (5 pairs): BLEU-4 78.51 (book tokens), sacreBLEU 13a 78.51, book bleu(k=2) mean 0.7971" "$(printf '%s\n' "$out" | sed -n 1p)"
check "no <unk> line without <unk>" "2" "$(printf '%s\n' "$out" | wc -l)"
check "--out: one line per English sentence" "4" "$(wc -l < "$tmp/hyp.tsv")"
check "--out: the translation" "i'm home .	je suis chez moi ." "$(sed -n 4p "$tmp/hyp.tsv")"
json=$($bin eval --model transformer-d2l --json - < "$tmp/t.tsv")
check "--json from stdin" "4 5 15 14" "$(printf '%s' "$json" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["sentences"], j["pairs"], j["hyp_len"], j["ref_len"])')"
check "--json: sacrebleu_13a, unk_outputs" "78.51 0" "$(printf '%s' "$json" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.2f" % j["sacrebleu_13a"], j["unk_outputs"])')"

# Cased references, English as written: the model reads "Go." and "I'm home." (it
# lowercases them itself) and prints "va !" and "je suis chez moi .". On the book's tokens
# both match exactly (100); sacreBLEU 13a is case-sensitive: "va" != "Va", "je" != "Je",
# so 5/7, 3/5, 2/3, 1/2 matched, equal lengths: (1/7)^(1/4) = 61.48.
printf "Go.\tVa !\nI'm home.\tJe suis chez moi.\n" > "$tmp/cased.tsv"
out=$($bin eval --model transformer-d2l --out "$tmp/hyp2.tsv" "$tmp/cased.tsv")
check "cased: summary" "2 sentences (2 pairs): BLEU-4 100.00 (book tokens), sacreBLEU 13a 61.48, book bleu(k=2) mean 1.0000" "$(printf '%s\n' "$out" | sed -n 1p)"
check "cased: --out has the English as written" "Go.	va !" "$(sed -n 1p "$tmp/hyp2.tsv")"
# <unk> in a translation: counted ("pharmacist" is not in the book model's vocabulary)
printf "He's a pharmacist.\tIl est pharmacien.\ngo .\tva !\n" > "$tmp/unk.tsv"
out=$($bin eval --model transformer-d2l "$tmp/unk.tsv")
check "<unk>: text summary" "  1 translation contains <unk>" "$(printf '%s\n' "$out" | sed -n 3p)"
check "<unk>: --json" "1" "$($bin eval --model transformer-d2l --json "$tmp/unk.tsv" | python3 -c 'import json,sys; print(json.load(sys.stdin)["unk_outputs"])')"

check "--beam 2 runs" "0" "$($bin eval --model transformer-d2l --beam 2 --alpha 0.5 "$tmp/t.tsv" >/dev/null; echo $?)"

# Batches (default 32, sentences of like source lengths together): the same scores and --out
# as one sentence at a time, on every 20th pair of the corpus model's test split (sources of
# 2 to 20 tokens: several batches of 7, a short last one), greedy in every input style and beam 4
models=$(dirname "$0")/../../models
awk 'NR % 20 == 1' "$models/transformer-fra.test.tsv" > "$tmp/split.tsv"
for opts in "--styles" "--beam 4 --alpha 0.5"; do
  # shellcheck disable=SC2086
  a=$($bin eval --model transformer-fra $opts --json --batch 1 --out "$tmp/b1.tsv" "$tmp/split.tsv" | sed 's/"seconds":[^,]*,//')
  # shellcheck disable=SC2086
  b=$($bin eval --model transformer-fra $opts --json --batch 7 --out "$tmp/b7.tsv" "$tmp/split.tsv" | sed 's/"seconds":[^,]*,//')
  check "--batch 1 $opts: scores" "1" "$(printf '%s' "$a" | grep -c '"corpus_bleu4":')"
  check "--batch 7 $opts: the scores of --batch 1" "$a" "$b"
  check "--batch 7 $opts: the --out of --batch 1" "$(cat "$tmp/b1.tsv")" "$(cat "$tmp/b7.tsv")"
done
check "--out: a line per sentence of the sample (none twice there)" "$(wc -l < "$tmp/split.tsv")" "$(wc -l < "$tmp/b7.tsv")"
$bin eval --model transformer-d2l --batch 0 "$tmp/t.tsv" 2>"$tmp/err" >/dev/null; st=$?
check "--batch 0 is a usage error" "2" "$st"

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
# An English sentence the translator refuses is named by its line, alone or in a batch (where
# the library names it by its place in the batch of like lengths), and in the style typed
{ printf "go .\tva !\ni lost .\tj'ai perdu .\n"; printf 'a%.0s' $(seq 5000); printf "\tx\n"; } > "$tmp/long.tsv"
for b in 1 4; do
  $bin eval --model transformer-d2l --batch $b "$tmp/long.tsv" 2>"$tmp/err" >/dev/null; st=$?
  check "too long, --batch $b: exit status" "1" "$st"
  check "too long, --batch $b: its line" \
    "attnlite eval: error: $tmp/long.tsv:3: the English: sentence is too long: 5000 bytes (limit 4096)" "$(cat "$tmp/err")"
done
printf "go .\tva !\n.\t.\ni lost .\tj'ai perdu .\n" > "$tmp/dot.tsv"
$bin eval --model transformer-d2l --batch 4 --style no-final-punct "$tmp/dot.tsv" 2>"$tmp/err" >/dev/null; st=$?
check "empty once typed: exit status" "1" "$st"
check "empty once typed: its line and style" \
  "attnlite eval: error: $tmp/dot.tsv:2: the English typed no-final-punct: empty sentence" "$(cat "$tmp/err")"
exit $fail
