#!/usr/bin/env bash
# The shipped whole-corpus models: the CLI's default, the sub-word translator
# (models/transformer-fra-bpe.safetensors: int8, at most 10 MB, no <unk> in any test
# translation) and the word model before it (models/transformer-fra.safetensors: int8,
# under 8 MB). Each one's BLEU on the held-out test split is what tools/ship_corpus_model.py
# recorded in the file (book-token BLEU-4 and, for the sub-word model, sacreBLEU 13a), int8
# within 0.5 of the fp32 model's, greedy and with beam search; greedy, also the BLEU recorded
# for each input style (as written, without final punctuation, lowercased, both); and how many
# numbers typed in digits and people's names the sub-word model carries over, and how many of
# its test translations are free of invented words (recorded too).
set -uo pipefail
bin=$1 src=$2
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
info=$($bin info)
check "the default model" "transformer-fra-bpe.safetensors True" \
  "$(printf '%s' "$info" | python3 -c 'import json,os,sys; j=json.load(sys.stdin); print(os.path.basename(j["path"]), j["int8"])')"
check "default translation = --model transformer-fra-bpe" \
  "$($bin translate --model transformer-fra-bpe "I'm home." "He's calm.")" "$($bin translate "I'm home." "He's calm.")"

for name in transformer-fra-bpe transformer-fra; do
  model=$src/models/$name.safetensors
  test_tsv=$src/models/$name.test.tsv
  if [ $name = transformer-fra-bpe ]; then limit=10000000; else limit=8000000; fi
  check "$name: at most $limit bytes" "True" "$(python3 -c "import os; print(os.path.getsize('$model') <= $limit)")"
  ev=$($bin info --model "$model" | python3 -c 'import json,sys; print(json.load(sys.stdin)["evaluation"])')
  beam=$(printf '%s' "$ev" | python3 -c 'import json,sys; b=json.load(sys.stdin)["beam"]; print(b["size"], b["alpha"])')
  for dec in greedy beam; do
    if [ $dec = greedy ]; then opts=(--beam 1 --styles); key=greedy; else set -- $beam; opts=(--beam "$1" --alpha "$2"); key="beam$1"; fi
    got=$($bin eval --json --model "$model" "${opts[@]}" "$test_tsv")
    res=$(python3 - "$ev" "$got" "$key" <<'PY'
import json, sys
ev, got, key = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
rec = ev["test"][key]
b4 = got["corpus_bleu4"]
out = ["recorded" if abs(b4 - rec["int8"]["bleu4"]) <= 0.01 else f"{b4:.2f} != recorded {rec['int8']['bleu4']}",
       "within-0.5" if b4 >= rec["f32"]["bleu4"] - 0.5 else f"{b4:.2f} vs fp32 {rec['f32']['bleu4']}",
       "int8" if got["int8"] else "not-int8"]
if "sacrebleu_13a" in rec["int8"]:  # recorded since the sub-word model
    s = got["sacrebleu_13a"]
    out.append("13a-recorded" if abs(s - rec["int8"]["sacrebleu_13a"]) <= 0.01 else f"13a {s:.2f} != {rec['int8']['sacrebleu_13a']}")
    out.append(f"unk={got['unk_outputs']}")
if "styles" in got:
    rec_st = ev["styles"]["test"][key]
    bad = [f"{st} {got['styles'][st]['corpus_bleu4']:.2f} != {r['bleu4']}" for st, r in rec_st.items()
           if abs(got["styles"][st]["corpus_bleu4"] - r["bleu4"]) > 0.01
           or abs(got["styles"][st]["sacrebleu_13a"] - r["sacrebleu_13a"]) > 0.01]
    out.append("styles-recorded" if len(rec_st) == 4 and not bad else "styles: " + "; ".join(bad))
print(" ".join(out))
PY
)
    if [ $name = transformer-fra-bpe ]; then want="recorded within-0.5 int8 13a-recorded unk=0"; else want="recorded within-0.5 int8"; fi
    [ $dec = greedy ] && want="$want styles-recorded"
    check "$name: test BLEU-4, $dec ${opts[*]}" "$want" "$res"
  done
done

# Numbers typed in digits and people's names: of the test split's pairs that name one number,
# written in other digits (models/transformer-fra-bpe.numerals.tsv, tools/numerals.py), and
# of those that name Tom or Mary, with names training never draws
# (models/transformer-fra-bpe.names.tsv, tools/names.py; titles and surnames:
# transformer-fra-bpe.titles.tsv), as many translations carry their digits and names over as
# tools/ship_corpus_model.py recorded, greedy and beam search; and
# as many test translations are free of invented words, words in no French sentence of the
# corpus nor in their English (tools/invented.py; needs the corpus, ../shared/data).
model=$src/models/transformer-fra-bpe.safetensors
ev=$($bin info --model "$model" | python3 -c 'import json,sys; print(json.load(sys.stdin)["evaluation"])')
for key in numerals names titles invented; do
    if [ $key = titles ] && [ ! -f "$src/models/transformer-fra-bpe.titles.tsv" ]; then
        continue  # a model shipped before titles were checked
    fi
    if [ $key = invented ] && [ ! -f "$src/../shared/data/fra-eng/fra.txt" ]; then
        echo "skip transformer-fra-bpe: test translations free of invented words (no corpus at $src/../shared/data)"
        continue
    fi
    res=$(python3 - "$ev" "$bin" "$model" "$src" "$key" <<'PY'
import importlib, json, os, sys
ev, cli, model, src, key = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
sys.path.insert(0, os.path.join(src, "tools"))
module = importlib.import_module("attnlite_tools." + ("names" if key == "titles" else key))
rec = ev.get(key)
if not rec:
    sys.exit(print(f"no {key} recorded"))
tsv = os.path.join(src, "models", f"transformer-fra-bpe.{'test' if key == 'invented' else key}.tsv")
out = []
for name, r in rec.items():
    beam = 1 if name == "greedy" else ev["beam"]["size"]
    alpha = 0.0 if name == "greedy" else ev["beam"]["alpha"]
    missed, n = module.carried(cli, tsv, model, beam, alpha)
    out.append(f"{name}:" + ("recorded" if (n, n - len(missed)) == (r["sentences"], r["int8"])
                             else f"{n - len(missed)} of {n} != recorded {r['int8']} of {r['sentences']}"))
print(" ".join(out))
PY
)
    if [ $key = invented ]; then what="translations free of invented words"; else what="$key carried over"; fi
    check "transformer-fra-bpe: test $what" "greedy:recorded beam4:recorded" "$res"
done
exit $fail
