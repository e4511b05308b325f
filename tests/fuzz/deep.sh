#!/usr/bin/env bash
# Long fuzzing runs outside CI. Each target runs in the background (nice 10) until it has
# executed its number of inputs or the time is up, growing its own corpus under
# build/fuzz-deep/corpus/<target>/ (kept between runs: a second run goes on from the first).
#
#   tests/fuzz/deep.sh start [-t SECONDS] [-w WORKERS] [TARGET[=RUNS] ...]
#                                                               build, then start the runs;
#       -w N starts N processes per target on the same corpus (each up to RUNS executions)
#   tests/fuzz/deep.sh status                                   executions so far, findings
#   tests/fuzz/deep.sh stop                                     stop every run
#   tests/fuzz/deep.sh merge [TARGET ...]                       add the grown corpus's entries
#       that reach new coverage to tests/fuzz/corpus/<target>/ (libFuzzer -merge=1, so the
#       seeds CI starts from stay small)
#
# Default runs: loader and tokenizer 10,000,000; translate, image, generate and capi
# 2,000,000. Logs: build/fuzz-deep/<target>.log; crashes: build/fuzz-deep/artifacts/.
# A crash replays with: build/fuzz/tests/fuzz/fuzz_<target> build/fuzz-deep/artifacts/<file>
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/build/fuzz-deep
all=(loader tokenizer translate image generate capi)
declare -A default_runs=([loader]=10000000 [tokenizer]=10000000 [translate]=2000000
  [image]=2000000 [generate]=2000000 [capi]=2000000)

build() {
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_FUZZ=ON \
    -DATTNLITE_TESTS=OFF -DATTNLITE_TOOLS=OFF -DATTNLITE_WERROR=ON >/dev/null
  cmake --build build/fuzz -j"${JOBS:-2}" --target "${@/#/fuzz_}"
}

start() {
  local secs= workers=1 specs=()
  while [ $# -gt 0 ]; do
    case $1 in
      -t) secs=$2; shift 2 ;;
      -w) workers=$2; shift 2 ;;
      *) specs+=("$1"); shift ;;
    esac
  done
  [ ${#specs[@]} -gt 0 ] || specs=("${all[@]}")
  local names=() s
  for s in "${specs[@]}"; do names+=("${s%%=*}"); done
  build "${names[@]}"
  mkdir -p "$out/artifacts"
  for s in "${specs[@]}"; do
    local t=${s%%=*} runs=${default_runs[${s%%=*}]:-}
    [ "$s" != "$t" ] && runs=${s#*=}
    [ -n "$runs" ] || { echo "unknown target: $t (targets: ${all[*]})" >&2; exit 2; }
    if [ -f "$out/$t.pid" ] && kill -0 "$(cat "$out/$t.pid")" 2>/dev/null; then
      echo "fuzz_$t is already running (pid $(cat "$out/$t.pid"))"; continue
    fi
    mkdir -p "$out/corpus/$t"
    cp -n tests/fuzz/corpus/"$t"/* "$out/corpus/$t/"
    local args=(-runs="$runs" -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1
      -artifact_prefix="$out/artifacts/$t-")
    [ -n "$secs" ] && args+=(-max_total_time="$secs")
    [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="tests/fuzz/$t.dict")
    # Earlier runs' logs are kept as <target>.log.1, .log.2 ... (status adds them up); the
    # extra workers of this run write the next free ones.
    local log=$out/$t.log pidf=$out/$t.pid w k=1
    for ((w = 1; w <= workers; w++)); do
      if [ "$w" -gt 1 ]; then
        pidf=$out/$t.$w.pid
        while [ -f "$out/$t.log.$k" ]; do k=$((k + 1)); done
        log=$out/$t.log.$k
      elif [ -f "$log" ]; then
        while [ -f "$out/$t.log.$k" ]; do k=$((k + 1)); done
        mv "$log" "$out/$t.log.$k"
      fi
      echo "$(date -u +%FT%TZ) fuzz_$t ${args[*]}" >> "$out/runs.txt"
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        nohup nice -n 10 "build/fuzz/tests/fuzz/fuzz_$t" "${args[@]}" "$out/corpus/$t" \
        > "$log" 2>&1 &
      echo $! > "$pidf"
      echo "fuzz_$t: started (pid $!, up to $runs executions${secs:+, $secs s}), log $log"
    done
  done
}

status() {
  local t
  for t in "${all[@]}"; do
    [ -f "$out/$t.log" ] || continue
    local state=finished
    for f in "$out/$t.pid" "$out/$t".*.pid; do
      [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && state=running
    done
    local last execs total=0 f n
    last=$(grep -aE '^#[0-9]+' "$out/$t.log" | tail -n 1 || true)
    execs=$(grep -a '^stat::number_of_executed_units' "$out/$t.log" | awk '{print $2}' || true)
    # All runs: each log's final count, or its last progress line while it runs.
    for f in "$out/$t.log" "$out/$t.log".*; do
      [ -f "$f" ] || continue
      n=$(grep -a '^stat::number_of_executed_units' "$f" | awk '{print $2}' || true)
      [ -n "$n" ] || n=$(grep -aoE '^#[0-9]+' "$f" | tail -n 1 | tr -d '#' || true)
      total=$((total + ${n:-0}))
    done
    printf '%-10s %-8s all runs %-10s %s%s\n' "$t" "$state" "$total" "${execs:+this run $execs  }" "${last:0:110}"
  done
  ls "$out/artifacts" 2>/dev/null | sed 's/^/finding: /' || true
}

stop() {
  local f
  for f in "$out"/*.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
  done
}

merge() {
  local t targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
  for t in "${targets[@]}"; do
    [ -d "$out/corpus/$t" ] || continue
    local before after
    before=$(ls tests/fuzz/corpus/"$t" | wc -l)
    "build/fuzz/tests/fuzz/fuzz_$t" -merge=1 -timeout=10 -rss_limit_mb=2048 \
      tests/fuzz/corpus/"$t" "$out/corpus/$t" > "$out/$t.merge.log" 2>&1
    after=$(ls tests/fuzz/corpus/"$t" | wc -l)
    echo "fuzz_$t: $((after - before)) entries added to tests/fuzz/corpus/$t ($after now)"
  done
}

cmd=${1:-status}
shift || true
case $cmd in
  start|status|stop|merge) "$cmd" "$@" ;;
  *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
