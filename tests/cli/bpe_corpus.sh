#!/usr/bin/env bash
# The C++ sub-word tokenizer (attnlite tokenize) and tools/bpe.py segment make the same
# pieces of every sentence of the corpus, both sides, normalized as a translator reads it
# (tools/normalize.py), with every merge table the project ships: the sub-word model's and
# the test fixture's. Needs ../shared/data beside the
# checkout (as CI has it); skipped (exit 77) without it.
set -uo pipefail
bin=$1 src=$2
corpus=$src/../shared/data/fra-eng/fra.txt
if [ ! -f "$corpus" ]; then echo "skip: no corpus at $corpus"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ cut -f1 "$corpus"; cut -f2 "$corpus"; printf 'Tom\tbought a Zyxquorp\xc2\xa0!\n  \n\xe6\xbc\xa2\xe5\xad\x97 ok...\n'; } > "$tmp/in.txt"
lines=$(wc -l < "$tmp/in.txt")
fail=0
for model in "$src/models/transformer-fra-bpe.safetensors" "$src/tests/fixtures/bpe_tiny.safetensors"; do
  [ -f "$model" ] || continue
  name=$(basename "$model")
  python3 "$src/tools/bpe.py" segment "$model" < "$tmp/in.txt" > "$tmp/py.txt" || { echo "FAIL python on $name"; fail=1; continue; }
  "$bin" tokenize --model "$model" < "$tmp/in.txt" > "$tmp/cpp.txt" || { echo "FAIL attnlite tokenize on $name"; fail=1; continue; }
  if cmp -s "$tmp/py.txt" "$tmp/cpp.txt" && [ "$(wc -l < "$tmp/cpp.txt")" -eq "$lines" ]; then
    echo "ok   $name: $lines sentences, the same pieces"
  else
    echo "FAIL $name: the pieces differ:"; diff "$tmp/py.txt" "$tmp/cpp.txt" | head -10; fail=1
  fi
  # a <unk> piece only where the sentence has a character no training word has
  res=$(python3 - "$src/tools" "$model" "$tmp/in.txt" "$tmp/cpp.txt" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from attnlite_tools import bpe, normalize
alphabet = set(bpe.load(sys.argv[2])[0])
bad = unseen = 0
with open(sys.argv[3], encoding='utf-8', newline='\n') as fin, open(sys.argv[4], encoding='utf-8') as fout:
    for line, pieces in zip(fin, fout):
        chars = {c for w in bpe.words(normalize.normalize(line.rstrip('\n'))) for c in w}
        has_unseen = not chars <= alphabet
        unseen += has_unseen
        bad += ('<unk>' in pieces.split()) != has_unseen
print(f"{bad} {unseen}")
PY
)
  set -- $res
  if [ "$1" = 0 ]; then echo "ok   $name: <unk> exactly in the $2 sentences with a character never seen in training"
  else echo "FAIL $name: $1 sentences where <unk> and unseen characters disagree"; fail=1; fi
done
exit $fail
