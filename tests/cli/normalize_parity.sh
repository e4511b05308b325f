#!/usr/bin/env bash
# The translator's input normalization is the same in C++ (attnlite tokenize --text,
# src/text/normalize.cpp) and Python (tools/normalize.py): on every code point of the Basic
# Multilingual Plane and the first supplementary one (each alone, between letters, doubled and
# beside spaces), on hand-written sentences of every rule, on the test split's English as
# written, in capitals and in Title Case, and, when ../shared/data is beside the checkout, on
# every sentence of the corpus. Then what each rule is meant to do, checked on the C++ output:
# typographic apostrophes and quotes read as the straight ones, in the tokens of both shipped
# translators and in the translations of the default one, a sentence in capitals or in Title
# Case as the lowercased one, and a sentence with emoji as the sentence alone.
set -uo pipefail
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
az=abcdefghijklmnopqrstuvwxyz AZ=ABCDEFGHIJKLMNOPQRSTUVWXYZ  # A-Z only, whatever the locale
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
python3 - "$tmp/in.txt" <<'PY'
import sys
with open(sys.argv[1], "w", encoding="utf-8", newline="\n") as f:
    for cp in list(range(0x01, 0xD800)) + list(range(0xE000, 0x20000)):
        if cp in (0x0A, 0x0D):
            continue  # line ends (attnlite reads lines; \r ending a line is dropped)
        c = chr(cp)
        f.write(f"{c}|a{c}b|{c}{c}| {c} x{c}  y{c}\n")
    for s in ["I\u2019m home.", "Don\u2018t \u201cworry\u201d \u2014 it\u2019s fine\u2026",
              "\u00abHello\u00bb\u2009!", "\uff37\uff48\uff45\uff52\uff45 is it\uff1f",
              "\ufb01ne \ufb02ow", "  lots \u3000 of\u00a0\u202f spaces  ", "\u200bzero\u200dwidth\ufeff",
              "\u2212 5 \u2013 3", "", " ", "\t\t", "I\u2019M HOME.", "\uff28\uff25\uff2c\uff2c\uff2f \u00c9MILE",
              "I", "OK", "TOM is HERE", "\u0391\u0392\u0393 \u041f\u0420\u0418", "Where Is It",
              "I Love NY", "O'Brien Is Here", "Caf\u00e9 Au Lait", "mr smith", "MRS. JONES LEFT",
              "Mr. Smith Is Here", "500 ms later", "hmmr x", "mr mr x", "ms.\u00a0kaya", "mr"]:
        f.write(s + "\n")
PY
# the test split's English as written, in capitals (A-Z) and in Title Case, then the corpus
cut -f1 "$src/models/transformer-fra-bpe.test.tsv" > "$tmp/test.txt"
cat "$tmp/test.txt" >> "$tmp/in.txt"
tr $az $AZ < "$tmp/test.txt" >> "$tmp/in.txt"
python3 - "$tmp/test.txt" "$tmp/in.txt" <<'PY'
import re, sys
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "a", encoding="utf-8", newline="\n") as g:
    for line in f:
        g.write(re.sub(r"[A-Za-z]+", lambda m: m.group(0).capitalize(), line))
PY
corpus=$src/../shared/data/fra-eng/fra.txt
[ -f "$corpus" ] && { cut -f1 "$corpus"; cut -f2 "$corpus"; } >> "$tmp/in.txt"
lines=$(wc -l < "$tmp/in.txt")
python3 "$src/tools/normalize.py" < "$tmp/in.txt" > "$tmp/py.txt" || { echo "FAIL tools/normalize.py"; fail=1; }
"$bin" tokenize --text < "$tmp/in.txt" > "$tmp/cpp.txt" || { echo "FAIL attnlite tokenize --text"; fail=1; }
if cmp -s "$tmp/py.txt" "$tmp/cpp.txt" && [ "$(wc -l < "$tmp/cpp.txt")" -eq "$lines" ]; then
  echo "ok   C++ and Python normalize $lines lines alike"
else
  echo "FAIL C++ and Python normalize differently:"; diff "$tmp/py.txt" "$tmp/cpp.txt" | head -10; fail=1
fi

# What the rules do: the C++ output against the expected text (inputs written by Python, so
# that the shell's locale plays no part).
python3 - "$tmp/cases.in" "$tmp/cases.want" "$tmp/names" <<'PY'
import sys
cases = [
    ("apostrophes", "I\u2019m\u2018n\u201a\u201b\u2032\u02b9\u02bb\u02bc`\u00b4\u2039\u203a", "I'm'n" + "'" * 10),
    ("quotes", "\u201ca\u201d \u201eb\u201f \u2033c\u2033 \u00abd\u00bb", '"a" "b" "c" "d"'),
    ("dashes and minus", "a\u2010b\u2011c\u2012d\u2013e\u2014f\u2015g\u2212h\ufe58i\ufe63j", "a-b-c-d-e-f-g-h-i-j"),
    ("ellipsis", "Well\u2026 no", "Well... no"),
    ("full-width forms", "\uff37\uff48\uff45\uff52\uff45 is it\uff1f \uff08\uff21\uff0d\uff3a\u3000\uff10\uff0d\uff19\uff09", "Where is it? (A-Z 0-9)"),
    ("ligatures", "\ufb00 \ufb01 \ufb02 \ufb03 \ufb04 \ufb05 \ufb06", "ff fi fl ffi ffl st st"),
    ("spaces", "  a\u00a0\u202f b\u2009c\u3000\td\u2028e\u0085f\u1680g\u205fh  ", "a b c d e f g h"),
    ("removed", "\u200bzero\u200c\u200d\u2060width\ufeff\u00ad", "zerowidth"),
    ("kept: accents, case, other punctuation", "D\u00e9j\u00e0 VU, \u00e7a va ? \u00bd \u2116 \u2122 \U0001d400 \u00e9",
     "D\u00e9j\u00e0 VU, \u00e7a va ? \u00bd \u2116 \u2122 \U0001d400 \u00e9"),
    ("only spaces and zero-width characters: empty", "\u200b \u3000", ""),
    ("a sentence in capitals: A-Z lowercased", "I\u2019M HOME, \uff34\uff2f\uff2d! \u00c9MILE, 19",
     "i'm home, tom! \u00c9mile, 19"),
    ("kept: capitals beside a-z", "TOM is HERE", "TOM is HERE"),
    ("kept: one capital", "I.", "I."),
    ("a sentence in Title Case: A-Z lowercased", "Where Is The Station\uff1f I\u2019m Lost, Tom!",
     "where is the station? i'm lost, tom!"),
    ("kept: two words in Title Case", "Thank You", "Thank You"),
    ("kept: a word with two capitals", "I Love NY", "I Love NY"),
    ("emoji: removed", "\U0001F3E0 I\u2019m \u2764\ufe0f home \U0001F44B\U0001F3FD\u200d\U0001F469 1\ufe0f\u20e3 \u2b50\u231a",
     "I'm home 1"),
    ("kept: text symbols", "\u00a9 \u00ae \u2122 \u2190 \u25b6", "\u00a9 \u00ae \u2122 \u2190 \u25b6"),
    ("a word in a-z after a title: capitalized", "i met mr smith, MRS. jones and ms\u00a0kaya",
     "i met mr Smith, MRS. Jones and ms Kaya"),
    ("kept: no title, ms after a number", "hmmr smith, 500 ms later", "hmmr smith, 500 ms later"),
]
with open(sys.argv[1], "w", encoding="utf-8", newline="\n") as fi, \
     open(sys.argv[2], "w", encoding="utf-8", newline="\n") as fw, open(sys.argv[3], "w") as fn:
    for name, given, want in cases:
        fi.write(given + "\n"); fw.write(want + "\n"); fn.write(name + "\n")
PY
"$bin" tokenize --text < "$tmp/cases.in" > "$tmp/cases.got"
while IFS= read -r name && IFS= read -r want <&3 && IFS= read -r got <&4; do
  check "$name" "$want" "$got"
done < "$tmp/names" 3< "$tmp/cases.want" 4< "$tmp/cases.got"
[ "$(wc -l < "$tmp/cases.got")" -eq "$(wc -l < "$tmp/names")" ] || { echo "FAIL case count"; fail=1; }

# Typographic apostrophes and quotes are the straight ones to both translators.
typed=$(python3 -c 'print("I\u2019m sure \u201cit\u2019s\u201d fine \u2014 don\u2019t worry\u2026")')
for model in transformer-fra-bpe transformer-fra; do
  check "$model: the tokens of a typed sentence" \
    "$("$bin" tokenize --model $model "I'm sure \"it's\" fine - don't worry...")" \
    "$("$bin" tokenize --model $model "$typed")"
done
# ...and in the default model's translations of every test sentence with an apostrophe or a
# quotation mark (as written, and with each ' made ’ and each "..." made “...”).
grep -P "^[^\t]*['\"]" "$src/models/transformer-fra-bpe.test.tsv" | cut -f1 | sort -u > "$tmp/straight.txt"
python3 - "$tmp/straight.txt" "$tmp/curly.txt" <<'PY'
import re, sys
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as g:
    for line in f:
        s = line.rstrip("\n").replace("'", "\u2019")
        s = re.sub(r'"([^"]*)"', "\u201c\\1\u201d", s)
        g.write(s + "\n")
PY
n=$(wc -l < "$tmp/straight.txt")
"$bin" translate < "$tmp/straight.txt" > "$tmp/t1.txt" 2>/dev/null
"$bin" translate < "$tmp/curly.txt" > "$tmp/t2.txt" 2>/dev/null
if [ "$n" -gt 100 ] && cmp -s "$tmp/t1.txt" "$tmp/t2.txt" && [ "$(wc -l < "$tmp/t1.txt")" -eq "$n" ]; then
  echo "ok   $n test sentences: typographic apostrophes and quotes translate exactly as straight ones"
else
  echo "FAIL typographic and straight forms translate differently ($n sentences):"
  diff "$tmp/t1.txt" "$tmp/t2.txt" | head -6; fail=1
fi
# A sentence typed in capitals or in Title Case reads as the lowercased one (A-Z), and one
# with emoji after it as the sentence alone: every test sentence with two or more letters
# (three or more words in Title Case), normalized, and every 16th one translated by the
# default model (the whole split, twice, would add three minutes under the sanitizers; every
# 8th added 40 s).
cut -f1 "$src/models/transformer-fra-bpe.test.tsv" | sort -u | grep '[A-Za-z].*[A-Za-z]' > "$tmp/sentences.txt"
tr $az $AZ < "$tmp/sentences.txt" > "$tmp/capitals.txt"
tr $AZ $az < "$tmp/sentences.txt" > "$tmp/lower.txt"
# in Title Case: those of three or more words (a letter, then letters and apostrophes, ' or ’)
python3 - "$tmp/sentences.txt" "$tmp/title.txt" "$tmp/title-lower.txt" <<'PY'
import re, sys
word = re.compile("[A-Za-z][A-Za-z'\u2019]*")
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8", newline="\n") as t, \
     open(sys.argv[3], "w", encoding="utf-8", newline="\n") as lo:
    for line in f:
        if len(word.findall(line)) >= 3:
            title = word.sub(lambda m: m.group(0)[0].upper() + m.group(0)[1:].lower(), line)
            t.write(title)
            lo.write(re.sub(r"[A-Z]+", lambda m: m.group(0).lower(), title))
PY
python3 - "$tmp/sentences.txt" "$tmp/emoji.txt" <<'PY'
import sys
emoji = ["\U0001F60A", "\u2764\ufe0f", "\U0001F44D\U0001F3FD", " \U0001F602\U0001F602", "\u2728"]
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8", newline="\n") as g:
    for i, line in enumerate(f):
        g.write(line.rstrip("\n") + " " + emoji[i % len(emoji)] + "\n")
PY
same() {  # same HOW FILE1 FILE2 AS: FILE1 normalizes as FILE2, and every 16th line translates alike
  local n
  n=$(wc -l < "$3")
  "$bin" tokenize --text < "$2" > "$tmp/n1.txt"
  "$bin" tokenize --text < "$3" > "$tmp/n2.txt"
  if [ "$n" -gt 1000 ] && cmp -s "$tmp/n1.txt" "$tmp/n2.txt" && [ "$(wc -l < "$tmp/n1.txt")" -eq "$n" ] &&
    ! cmp -s "$2" "$tmp/n1.txt"; then
    echo "ok   $n test sentences: $1 they normalize as $4"
  else
    echo "FAIL $1 and $4 normalize differently ($n sentences):"
    diff "$tmp/n1.txt" "$tmp/n2.txt" | head -6; fail=1
  fi
  awk 'NR % 16 == 1' "$2" | "$bin" translate > "$tmp/t1.txt" 2>/dev/null
  awk 'NR % 16 == 1' "$3" | "$bin" translate > "$tmp/t2.txt" 2>/dev/null
  local m
  m=$(wc -l < "$tmp/t2.txt")
  if [ "$m" -eq $(((n + 15) / 16)) ] && cmp -s "$tmp/t1.txt" "$tmp/t2.txt"; then
    echo "ok   $m of them: $1 they translate exactly as $4"
  else
    echo "FAIL $1 and $4 translate differently ($m sentences):"
    diff "$tmp/t1.txt" "$tmp/t2.txt" | head -6; fail=1
  fi
}
same "in capitals" "$tmp/capitals.txt" "$tmp/lower.txt" lowercased
same "in Title Case" "$tmp/title.txt" "$tmp/title-lower.txt" lowercased
same "with emoji" "$tmp/emoji.txt" "$tmp/sentences.txt" "the words alone"
exit $fail
