#!/usr/bin/env bash
# The GPU cases that tools/gpu-check.sh names in its step 7 (compute-sanitizer's memcheck and
# racecheck, the runs in each BLAS mode) exist in the test program, under those names: each
# spec that `gpu-check.sh --cases` prints, given to the program, lists exactly the cases it
# names, one for each name. A case renamed or gone would otherwise leave the sanitizers with
# less to go over, or nothing, and nobody told, on the only machine where they run.
#
#   bash tests/tools/gpu_check_cases.sh ATTNLITE_TESTS      (ctest: tools.gpu_check_cases)
#
# Needs a CUDA build (the emulated device's too): the [cuda] cases are compiled only there.
set -uo pipefail
tests="${1:?usage: gpu_check_cases.sh ATTNLITE_TESTS}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
specs=$(bash "$root/tools/gpu-check.sh" --cases) || { echo "FAIL: gpu-check.sh --cases: status $?" >&2; exit 1; }
fail=0 sets=0
while IFS=$'\t' read -r label spec; do
  sets=$((sets + 1))
  want=$(tr ',' '\n' <<<"$spec" | sed 's/^ *//; s/ *$//' | sort)
  # (Catch2 2's exit status after a listing is the number of cases listed: not an error)
  got=$({ "$tests" "$spec" --list-test-names-only || true; } | sed '/^$/d; s/^ *//; s/ *$//' | sort)
  if [ -z "$want" ] || [ "$want" != "$got" ]; then
    echo "FAIL: $label: the spec names $(grep -c . <<<"$want") cases, the program lists $(grep -c . <<<"$got")" >&2
    comm -23 <(echo "$want") <(echo "$got") | sed 's/^/  not a case of the program: /' >&2
    comm -13 <(echo "$want") <(echo "$got") | sed 's/^/  listed, not named: /' >&2
    fail=1
  else
    echo "$label: cases named: $(grep -c . <<<"$got"), each one of the program's"
  fi
done <<<"$specs"
[ "$sets" -eq 4 ] || { echo "FAIL: gpu-check.sh --cases printed $sets specs, not 4" >&2; fail=1; }
exit $fail
