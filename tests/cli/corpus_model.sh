#!/usr/bin/env bash
# The shipped whole-corpus model (models/transformer-fra.safetensors): the CLI's default,
# int8, under 8 MB, and its BLEU on the held-out test split is what tools/ship_corpus_model.py
# recorded in the file, within 0.5 of the fp32 model's, greedy and with beam search.
set -uo pipefail
bin=$1 src=$2
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
model=$src/models/transformer-fra.safetensors
test_tsv=$src/models/transformer-fra.test.tsv
info=$($bin info)
check "the default model" "transformer-fra.safetensors True" \
  "$(printf '%s' "$info" | python3 -c 'import json,os,sys; j=json.load(sys.stdin); print(os.path.basename(j["path"]), j["int8"])')"
check "under 8 MB" "True" "$(python3 -c "import os; print(os.path.getsize('$model') < 8_000_000)")"
check "default translation = --model transformer-fra" "$($bin translate --model transformer-fra "i'm home ." "he's calm .")" \
  "$($bin translate "i'm home ." "he's calm .")"

ev=$(printf '%s' "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["evaluation"])')
beam=$(printf '%s' "$ev" | python3 -c 'import json,sys; b=json.load(sys.stdin)["beam"]; print(b["size"], b["alpha"])')
for dec in greedy beam; do
  if [ $dec = greedy ]; then opts=(--beam 1); key=greedy; else set -- $beam; opts=(--beam "$1" --alpha "$2"); key="beam$1"; fi
  got=$($bin eval --json "${opts[@]}" "$test_tsv")
  res=$(python3 - "$ev" "$got" "$key" <<'PY'
import json, sys
ev, got, key = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
rec = ev["test"][key]
b4 = got["corpus_bleu4"]
print("recorded" if abs(b4 - rec["int8"]["bleu4"]) <= 0.01 else f"{b4:.2f} != recorded {rec['int8']['bleu4']}",
      "within-0.5" if b4 >= rec["f32"]["bleu4"] - 0.5 else f"{b4:.2f} vs fp32 {rec['f32']['bleu4']}",
      "int8" if got["int8"] else "not-int8")
PY
)
  check "test BLEU-4, $dec ${opts[*]}" "recorded within-0.5 int8" "$res"
done
exit $fail
