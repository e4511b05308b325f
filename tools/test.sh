#!/usr/bin/env bash
# Builds and runs every test suite of attnlite. Stages:
#   native   Release build, warnings as errors, ctest (unit, fixtures, CLI, install)
#   python   python/build.sh (libattnlite_c.so, -DATTNLITE_SHARED_C=ON, and the CLI in
#            build/python), pytest on python/tests (the package against the CLI), then the
#            package installed with pip into a throwaway venv (--system-site-packages for
#            Debian's NumPy, no network) and its tests run again on the installed copy, from
#            outside the source tree
#   asan     the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   tsan     ThreadSanitizer build (build/tsan, -DATTNLITE_TSAN=ON) of the library and the
#            thread tests only: attnlite_thread_tests "[threads]" (sessions of every kind on
#            several threads sharing models, the pool, models dropped while in use) and the
#            C API's threads test; TSAN_OPTIONS=halt_on_error=1, so any race fails the stage
#   cuda     -DATTNLITE_CUDA=ON -DATTNLITE_BENCH=ON build (architectures 80;90), warnings as
#            errors, ctest, and bench_cuda --check (its base model builds and translates); only
#            when nvcc is on PATH (else it says so and passes). GPU cases skip without a device.
#   fuzz     clang + libFuzzer: builds tests/fuzz/fuzz_{loader,tokenizer,translate,image,generate,capi}
#            and runs each for FUZZ_SECONDS (default 25) on a copy of its seed corpus (grown by
#            the long runs of tests/fuzz/deep.sh); any crash, leak, timeout or sanitizer report
#            fails the stage (crashing inputs: build/fuzz/artifacts/)
#   web      WASM builds (emcc), npm ci, node tests of the module against the native CLI,
#            the page in headless Chromium; checks that the committed web/ build is current;
#            then the node tests again against the node build under ASan + UBSan
#            (wasm/build.sh node-asan), where any sanitizer report fails the test that hit it
# Usage: tools/test.sh [stage ...]   (default: all stages)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(native python asan tsan cuda web fuzz)
passed=0

run_ctest() {  # run_ctest BUILD_DIR
  (cd "$1" && ctest --output-on-failure -j"$jobs")
}

stage_native() {
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON >/dev/null
  cmake --build build/native -j"$jobs"
  run_ctest build/native
}

stage_python() {
  # Debian's interpreter (python3-numpy, python3-pytest from tools/setup.sh), not whatever
  # python3 comes first on PATH.
  local py=${PYTHON:-/usr/bin/python3}
  [ -x "$py" ] || py=python3
  JOBS=$jobs bash python/build.sh
  "$py" -m pytest python/tests -q -p no:cacheprovider
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  "$py" -m venv --system-site-packages "$tmp/venv"
  rm -rf python/build python/attnlite.egg-info  # setuptools' in-tree leftovers of earlier installs
  PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/python" -m pip install -q \
    --no-build-isolation --no-deps --no-index python/
  rm -rf python/build python/attnlite.egg-info
  # From outside the source tree, with no variable pointing back into it: the installed
  # package, its own copy of the library, the shipped models by name.
  (cd "$tmp" && env -u ATTNLITE_LIBRARY -u ATTNLITE_MODELS "$tmp/venv/bin/python" - "$tmp/venv" <<'EOF'
import sys, attnlite
venv = sys.argv[1]
assert attnlite.__file__.startswith(venv), attnlite.__file__
assert attnlite.library_path().startswith(venv), attnlite.library_path()
t = attnlite.Translator("transformer-d2l").translate("i'm home .")
assert t.text == "je suis chez moi .", t.text
print("python: installed package at", attnlite.__file__, "translates:", t.text)
EOF
  )
  (cd "$tmp" && env -u ATTNLITE_LIBRARY ATTNLITE_TEST_INSTALLED=1 "$tmp/venv/bin/python" -m pytest \
    "$root/python/tests" -q -p no:cacheprovider)
  rm -rf "$tmp"
  trap - EXIT
}

stage_asan() {
  # -g1: line tables (file:line in every report) without the full debug info, which costs
  # about a third of this stage's compile time.
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DATTNLITE_SANITIZE=ON >/dev/null
  cmake --build build/asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build/asan
}

stage_tsan() {
  cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_WERROR=ON \
    -DATTNLITE_TSAN=ON -DATTNLITE_TOOLS=OFF >/dev/null
  cmake --build build/tsan -j"$jobs" --target attnlite_thread_tests attnlite_c_api_threads_test
  local opts=halt_on_error=1:second_deadlock_stack=1
  TSAN_OPTIONS=$opts build/tsan/tests/attnlite_thread_tests "[threads]"
  TSAN_OPTIONS=$opts build/tsan/tests/attnlite_c_api_threads_test
}

stage_web() {
  # The native CLI produces the reference outputs of the parity tests.
  local simd=ON
  compgen -G "src/cpu/simd/*.cpp" >/dev/null || simd=OFF
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON -DATTNLITE_SIMD=$simd >/dev/null
  cmake --build build/native --target attnlite_cli -j"$jobs"
  # One compile, two links: the node build for the tests, the web build into build/wasm-web
  # to compare with the committed web/ files.
  JOBS=$jobs WEB_OUT=build/wasm-web bash wasm/build.sh node web
  # The SIMD128 kernels against the scalar ones at every tail size (tests/web/kernels.test.mjs
  # runs it; required here, so a missing program fails instead of skipping).
  JOBS=$jobs bash wasm/build.sh kernel-test
  local f stale=0
  for f in attnlite.mjs attnlite.wasm attnlite-figures.mjs attnlite-figures.wasm attnlite-api.mjs; do
    cmp -s "build/wasm-web/$f" "web/$f" || { echo "web/$f differs from a fresh build"; stale=1; }
  done
  diff -qr build/wasm-web/api web/api || { echo "web/api/ differs from a fresh build"; stale=1; }
  node tools/web_version.mjs --check || stale=1  # the service worker's files and version
  if [ $stale = 1 ]; then
    echo "the committed web build is out of date: run wasm/build.sh web and commit web/attnlite.*, web/attnlite-figures.* and web/api/" >&2
    return 1
  fi
  # npm ci only when package-lock.json changed since the last install.
  local stamp
  stamp=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ "$(cat node_modules/.attnlite-lock 2>/dev/null)" != "$stamp" ]; then
    npm ci --ignore-scripts --no-audit --no-fund
    echo "$stamp" > node_modules/.attnlite-lock
  fi
  ATTNLITE_REQUIRE_BROWSER=1 ATTNLITE_REQUIRE_KERNEL_TEST=1 node --test tests/web/
  # The node tests (not the browser ones, which load web/) against the sanitized node build:
  # an ASan or UBSan report ends the node process with status 1, so the file fails;
  # tests/web/misuse.test.mjs ends with LeakSanitizer's check. Two files at a time.
  local t0=$SECONDS
  JOBS=$jobs bash wasm/build.sh node-asan
  echo "web: sanitized node build in $((SECONDS - t0))s"
  t0=$SECONDS
  local node_tests
  mapfile -t node_tests < <(ls tests/web/*.test.mjs | grep -v 'browser\.test\.mjs$')
  ATTNLITE_WASM_DIR=build/wasm-node-asan node --test --test-concurrency="$jobs" "${node_tests[@]}"
  echo "web: node tests under ASan + UBSan in $((SECONDS - t0))s"
}

stage_cuda() {
  if ! command -v nvcc >/dev/null; then
    echo "cuda: nvcc is not on PATH; skipping the CUDA build"
    return 0
  fi
  cmake -S . -B build/cuda -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON -DATTNLITE_CUDA=ON \
    -DATTNLITE_BENCH=ON -DCMAKE_CUDA_ARCHITECTURES="80;90" >/dev/null
  cmake --build build/cuda -j"$jobs"
  run_ctest build/cuda
  build/cuda/bench/bench_cuda --check  # the base model it times builds and translates (CPU)
}

stage_fuzz() {
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_FUZZ=ON \
    -DATTNLITE_TESTS=OFF -DATTNLITE_TOOLS=OFF -DATTNLITE_WERROR=ON >/dev/null
  local targets=(loader tokenizer translate image generate capi)
  cmake --build build/fuzz -j"$jobs" --target "${targets[@]/#/fuzz_}"
  local t secs=${FUZZ_SECONDS:-25}
  mkdir -p build/fuzz/artifacts
  for t in "${targets[@]}"; do
    echo "--- fuzz_$t: ${secs}s"
    rm -rf "build/fuzz/corpus/$t"
    mkdir -p "build/fuzz/corpus/$t"
    cp tests/fuzz/corpus/"$t"/* "build/fuzz/corpus/$t/"
    local dict=()
    [ -f "tests/fuzz/$t.dict" ] && dict=("-dict=tests/fuzz/$t.dict")
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "build/fuzz/tests/fuzz/fuzz_$t" -max_total_time="$secs" -error_exitcode=1 -timeout=10 \
      -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1 "${dict[@]}" \
      -artifact_prefix="build/fuzz/artifacts/$t-" "build/fuzz/corpus/$t" 2>"build/fuzz/$t.log" || {
      tail -n 60 "build/fuzz/$t.log"
      echo "fuzz_$t failed (log: build/fuzz/$t.log)"
      return 1
    }
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|cov: ' "build/fuzz/$t.log" | tail -n 3
  done
}

times=()
for s in "${stages[@]}"; do
  echo "=== stage: $s"
  t0=$SECONDS
  "stage_$s"
  passed=$((passed + 1))
  times+=("$s $((SECONDS - t0))s")
done
echo "test stages: $passed passed, 0 failed (${times[*]})"
