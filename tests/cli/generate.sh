#!/usr/bin/env bash
# `attnlite generate` and `attnlite eval --perplexity` with the shipped French language model.
# Expected texts: tests/fixtures/lm_fra_samples.json (tools/lm_sample.py, the Python reference
# of the sampling rule); the perplexity: tests/fixtures/lm_fra_ppl.json (PyTorch).
set -uo pipefail
bin=$1
src=$2
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check "greedy" "je ne suis pas en train de pleurer ." "$($bin generate "je")"
check "greedy, preprocessed prompt" "il est venu à la maison ." "$($bin generate "Il est")"
check "sampled: seed 1" "je pense que ma femme est jolie et un peu ." "$($bin generate je --seed 1)"
check "sampled: top-k 5, seed 4" "tu as fait tout le temps ." "$($bin generate tu --top-k 5 --seed 4)"
check "sampled: temperature, top-k, top-p" "il s'est fait <unk> ." \
  "$($bin generate il --temperature 0.8 --top-k 40 --top-p 0.95 --seed 6)"
check "--max-tokens" "il est prêt à s'amuser ." "$($bin generate "il est" --temperature 1.5 --max-tokens 4 --seed 11)"
json=$($bin generate "je xyzzy" --json 2>"$tmp/err")
check "--json" "je xyzzy à la maison . | 2 5 1 True | [3, 4, 7, 7]" "$(printf '%s' "$json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["text"], "|", j["num_prompt"], j["num_generated"], j["num_unknown"], j["eos"], "|", j["attention_shape"])' 2>&1)"
check "unknown words: a warning" "1" "$(grep -c "1 prompt word is not in the vocabulary" "$tmp/err")"
wjson=$($bin generate je --max-tokens 2 --json --weights)
check "--weights: causal rows" "1.0 0.0 ok" "$(printf '%s' "$wjson" | python3 -c '
import json, sys
a = json.load(sys.stdin)["attention"]
rows_ok = all(abs(sum(r) - 1) < 1e-5 for l in a for h in l for r in h)
print(round(a[0][0][0][0], 4), a[0][0][0][1], "ok" if rows_ok else "bad")')"

run_fails() {  # run_fails NAME MESSAGE ARGS... : exit status 1 and MESSAGE on stderr
  local name=$1 msg=$2; shift 2
  $bin generate "$@" >/dev/null 2>"$tmp/err"; local st=$?
  check "$name: exit 1" "1" "$st"
  check "$name: message" "1" "$(grep -c "$msg" "$tmp/err")"
}
$bin generate je --temperature 0 >/dev/null 2>"$tmp/err"; check "temperature 0" "2" "$?"
$bin generate je --temperature nan >/dev/null 2>"$tmp/err"; check "temperature nan" "2" "$?"
$bin generate je --top-k 0 >/dev/null 2>"$tmp/err"; check "top-k 0" "2" "$?"
$bin generate je --top-p 0 >/dev/null 2>"$tmp/err"; check "top-p 0" "2" "$?"
$bin generate je --top-p 1.01 >/dev/null 2>"$tmp/err"; check "top-p 1.01" "2" "$?"
$bin generate >/dev/null 2>"$tmp/err"; check "no prompt" "2" "$?"
run_fails "empty prompt" "empty prompt" ""
run_fails "long prompt" "longer than the limit" "$(printf 'je %.0s' $(seq 40))"
run_fails "a translator model" "needs a language model" --model transformer-d2l je
run_fails "a missing model" "cannot" --model "$tmp/none.safetensors" je

# perplexity
out=$($bin eval --perplexity "$src/tests/fixtures/lm_fra_ppl.txt" 2>"$tmp/err")
check "eval --perplexity: PyTorch's within 1e-6 relative" "ok" "$(python3 -c "
import json, sys
ref = json.load(open('$src/tests/fixtures/lm_fra_ppl.json'))['perplexity']
word, value = '$out'.split()
print('ok' if word == 'perplexity' and abs(float(value) / ref - 1) < 1e-6 else 'bad: $out vs %r' % ref)")"
check "eval --perplexity: skipped lines" "1" "$(grep -c "skipped 2 lines" "$tmp/err")"
printf "je suis là .\n" | $bin eval --perplexity - --json > "$tmp/p.json"
check "eval --perplexity - --json" "1 5" "$(python3 -c "import json; j=json.load(open('$tmp/p.json')); print(j['sentences'], j['tokens'])")"
: > "$tmp/empty.txt"
$bin eval --perplexity "$tmp/empty.txt" >/dev/null 2>&1; check "perplexity of an empty file: exit 1" "1" "$?"
$bin eval --perplexity "$src/tests/fixtures/lm_fra_ppl.txt" --model transformer-d2l >/dev/null 2>"$tmp/err"
check "perplexity with a translator: exit 1" "1" "$?"
# --times: stdout as without it, and one line on stderr with the five times
$bin generate --times "je suis" > "$tmp/times.out" 2> "$tmp/times.err"
check "--times: stdout as without it" "$($bin generate "je suis")" "$(cat "$tmp/times.out")"
check "--times: its line on stderr" "1 1" "$(grep -c . "$tmp/times.err") $(grep -cE \
  '^attnlite generate: times \(ms\): load [0-9.]+, set-up [0-9.]+, first call [0-9.]+, rest [0-9.]+, total [0-9.]+$' "$tmp/times.err")"
exit $fail
