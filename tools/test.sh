#!/usr/bin/env bash
# Builds and runs every test suite of attnlite. Stages:
#   native   Release build, warnings as errors, ctest (unit, fixtures, CLI, install)
#   python   python/build.sh on build/native (libattnlite_c.so, -DATTNLITE_SHARED_C=ON, and the
#            CLI, which the native stage built), pytest on python/tests (the package against
#            the CLI), then the package installed with pip into a throwaway venv
#            (--system-site-packages for Debian's NumPy, no network) and its tests run again on
#            the installed copy, from outside the source tree
#   asan     the same suite under AddressSanitizer + UndefinedBehaviorSanitizer, but for
#            cli.corpus_model, whose whole-split evaluation runs natively; instead the sanitized
#            CLI evaluates every 8th test sentence of both corpus models (greedy with the input
#            styles, beam 4) and must match the native build's results exactly
#   tsan     ThreadSanitizer build (build/tsan, -DATTNLITE_TSAN=ON) of the library and the
#            thread tests only: attnlite_thread_tests "[threads]" (sessions of every kind on
#            several threads sharing models, the pool, models dropped while in use) and the
#            C API's threads test; TSAN_OPTIONS=halt_on_error=1, so any race fails the stage
#   cuda     first the CUDA backend's sources on the emulated device (tests/cuda_emu,
#            -DATTNLITE_CUDA_EMULATOR=ON, build/cuda-emu; no GPU or nvcc needed): the Catch2
#            cases "[cuda],[ops],[translate]" (every CUDA test, the emulator's own checks, every
#            op set's tests with the CUDA set among them), the kernel and op-set tests again
#            with each block's threads in reverse order, the models' cases again with the GEMV
#            up to 64 rows (ATTNLITE_CUDA_LT=gemv), the CLI's --device cuda against --device
#            cpu on samples of the test splits, greedy, --batch 32 (in that mode) and beam 4,
#            and the C API's and the Python package's CUDA sessions (ATTNLITE_TEST_CUDA=1), as
#            tasks $jobs at a time, longest first (the Catch2 cases in two runs that add up to
#            them), and the GPU cases tools/gpu-check.sh gives compute-sanitizer by name are
#            cases of that program (tests/tools/gpu_check_cases.sh);
#            then, when nvcc is on PATH (else it says so), the -DATTNLITE_CUDA=ON
#            -DATTNLITE_BENCH=ON build (architectures 80;90), warnings as errors, ctest (but
#            for the CLI's whole-split CPU evaluations, which the native stage runs), and
#            bench_cuda --check (its base model builds and translates). GPU cases skip there.
#            Both builds' Catch2 programs hold only the test files with device cases
#            (-DATTNLITE_DEVICE_TESTS_ONLY=ON: [cuda], [ops], [translate], [device]); the
#            native stage compiles and runs the others, on the same CPU code.
#   arm      Cross builds with Debian's toolchains (cmake/toolchains/) for 64-bit Arm (aarch64)
#            and 32-bit Arm (armv7-a hard-float with NEON), run under qemu-user as tasks, $jobs
#            at a time, longest first: on each, `attnlite info` names the NEON kernels; the
#            Catch2 suite in four shards (the PyTorch fixtures at 1e-5 with both kernel tables,
#            the kernel tests at every tail size; the shards' cases add up to the suite's) but
#            for its [threads] cases (qemu on an x86-64 host runs threads with x86's memory
#            order, so they would show nothing the x86-64 and TSan stages do not); the C API
#            tests; tests/arm/e2e.sh: the shipped models through the Arm CLI against this
#            commit's x86-64 CLI (texts identical, --json floats within 1e-5) on every
#            ARM_STRIDE-th distinct sentence (default 150: 13) of each test split, greedy and
#            beam 4, the book's sentences, the language model's greedy and seeded texts, the
#            ViT's test digits; the small core (-DATTNLITE_MINIMAL=ON) built for both, its
#            examples/translate.c equal to the CLI (tests/examples/translate.sh; armv7's
#            built without SIMD: scalar kernels) and, on aarch64, within its size budget
#            (1 MB, stripped and static), with its terminate handler (examples/terminate.cpp:
#            the message and abort, no demangler); and the loader built for s390x, under qemu-s390x,
#            refusing a model on a big-endian machine. Emulation is 15-200x slower than a
#            native run, so the test splits are sampled here: docs/edge.md has the full runs.
#   fuzz     clang + libFuzzer: builds tests/fuzz/fuzz_{loader,tokenizer,translate,image,
#            generate,capi} and runs each for FUZZ_SECONDS (default 25), JOBS at a time, on a
#            copy of its seed corpus (grown by the long runs of tests/fuzz/deep.sh); any crash,
#            leak, timeout or sanitizer report fails the stage (crashing inputs:
#            build/fuzz/artifacts/)
#   web      WASM builds (emcc; the node and web modules from one compile), npm ci, node
#            tests of the module against the native CLI, the page in headless Chromium;
#            checks that the committed web/ build is current; then the node tests again
#            against the node build under ASan + UBSan (wasm/build.sh node-asan), where any
#            sanitizer report fails the test that hit it
# Usage: tools/test.sh [stage ...]   (default: all stages)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(native python asan tsan cuda web arm fuzz)
passed=0

# The sanitizer, CUDA, Arm and fuzz builds compile as unity builds (CMake merges each target's
# C++ files, eight at a time): each file's headers are parsed once per eight files, which
# halves those builds. The native build and the small cores compile every file alone, so a
# file that does not include what it uses still fails. (The WASM builds give each file its
# own optimisation level, which leaves CMake nothing to merge.)
unity=(-DCMAKE_UNITY_BUILD=ON)

run_ctest() {  # run_ctest BUILD_DIR [CTEST_ARGS...]
  (cd "$1" && ctest --output-on-failure -j"$jobs" "${@:2}")
}

# each_parallel FUNCTION ARG...: FUNCTION ARG for every ARG, $jobs at a time (each one thread);
# fails when any of them failed, after all have ended.
each_parallel() {
  local f=$1 a running=0 fail=0
  shift
  for a in "$@"; do
    if [ $running -ge "$jobs" ]; then wait -n || fail=1; running=$((running - 1)); fi
    "$f" "$a" &
    running=$((running + 1))
  done
  while [ $running -gt 0 ]; do wait -n || fail=1; running=$((running - 1)); done
  return $fail
}

# task_report NAME LOG STATUS T0 [WHAT]: a task's line (WHAT: what it says it checked), and
# when it failed, its log's tail (the Catch2 dots and passing lines are long; failures and
# summaries are what matters). Returns STATUS.
task_report() {
  if [ "$3" = 0 ]; then
    echo "--- $1: passed in $((SECONDS - $4))s${5:+: $5}"
  else
    echo "--- $1: FAILED after $((SECONDS - $4))s (log: $2)"
    grep -vE '^\.+$|^ok   ' "$2" | tail -n 80
  fi
  return "$3"
}

# catch_passed LOG: the test cases a Catch2 run's summary in LOG says passed (0: none said)
catch_passed() {
  local n
  n=$(sed -nE 's/^All tests passed \([0-9]+ assertions? in ([0-9]+) test cases?\)$/\1/p' "$1")
  echo "${n:-0}"
}

# This commit's x86-64 CLI in build/native (more cmake -D options may follow): what the
# sanitized, Arm and WASM outputs are compared with.
native_cli() {
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON "$@" >/dev/null
  cmake --build build/native --target attnlite_cli -j"$jobs"
}

stage_native() {
  # libattnlite_c.so too (ATTNLITE_SHARED_C: one more link), which the python stage then uses
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON -DATTNLITE_SHARED_C=ON >/dev/null
  cmake --build build/native -j"$jobs"
  run_ctest build/native
}

stage_python() {
  # Debian's interpreter (python3-numpy, python3-pytest from tools/setup.sh), not whatever
  # python3 comes first on PATH.
  local py=${PYTHON:-/usr/bin/python3}
  [ -x "$py" ] || py=python3
  # The library and the CLI of the native build (after the native stage: nothing left to
  # compile but libattnlite_c.so when that stage did not run), the CLI the tests compare with.
  JOBS=$jobs BUILD_DIR=build/native CMAKE_ARGS="-DATTNLITE_TESTS=ON -DATTNLITE_WERROR=ON" bash python/build.sh
  export ATTNLITE_CLI=$root/build/native/attnlite
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  # The tests on the source tree run in the background (pytest is one thread) while the
  # package installs and its tests run on the installed copy; their log follows at the end.
  "$py" -m pytest python/tests -q -p no:cacheprovider >"$tmp/source-tests.log" 2>&1 &
  local source_tests=$!
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
  local st=0
  echo "python: the tests on the installed package"
  (cd "$tmp" && env -u ATTNLITE_LIBRARY ATTNLITE_TEST_INSTALLED=1 "$tmp/venv/bin/python" -m pytest \
    "$root/python/tests" -q -p no:cacheprovider) || st=1
  wait $source_tests || st=1
  echo "python: the tests on the source tree"
  cat "$tmp/source-tests.log"
  rm -rf "$tmp"
  trap - EXIT
  unset ATTNLITE_CLI
  return $st
}

stage_asan() {
  # -g1: line tables (file:line in every report) without the full debug info, which costs
  # about a third of this stage's compile time. -O1, the sanitizers' usual level: the build
  # took 335 s against 423 s at -O2, the tests and evaluations 252 s against 229 s (the SIMD
  # kernels are compiled at -O2 all the same: CMakeLists.txt).
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DATTNLITE_SANITIZE=ON "${unity[@]}" >/dev/null
  local t0=$SECONDS
  cmake --build build/asan -j"$jobs"
  echo "asan: build in $((SECONDS - t0))s"
  t0=$SECONDS
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # cli.corpus_model (each whole test split, five passes, BLEU against the recorded values:
  # seven minutes under the sanitizers) runs in the native stage. Here the sanitized CLI
  # evaluates every 8th test sentence, greedy with the four input styles and beam search, in
  # eval's batches of 32, and must give the native build's results to the last digit.
  run_ctest build/asan -E '^cli\.corpus_model$'
  echo "asan: ctest in $((SECONDS - t0))s"
  t0=$SECONDS
  native_cli
  # The four sampled evaluations, longest first, $jobs at a time (each is one thread).
  local runs=("transformer-fra-bpe|--beam 1 --styles" "transformer-fra|--beam 1 --styles"
              "transformer-fra-bpe|--beam 4 --alpha 0.5" "transformer-fra|--beam 4 --alpha 0.5")
  local name
  for name in transformer-fra-bpe transformer-fra; do
    awk 'NR % 8 == 1' "models/$name.test.tsv" >"build/asan/$name.sample.tsv"
  done
  # asan_eval "MODEL|OPTIONS": the sampled evaluation, sanitized against native
  asan_eval() {
    local name=${1%%|*} opts=${1#*|}
    local sample=build/asan/$name.sample.tsv
    local args=(eval --json --model "models/$name.safetensors")
    # shellcheck disable=SC2206
    args+=($opts "$sample")
    if cmp -s <(build/native/attnlite "${args[@]}" | sed 's/"seconds":[^,]*,//') \
              <(build/asan/attnlite "${args[@]}" | sed 's/"seconds":[^,]*,//'); then
      echo "asan: $name eval $opts on $(wc -l <"$sample") test pairs: same as the native build"
    else
      echo "asan: FAIL $name eval $opts: differs from the native build," \
        "or the sanitized run failed" >&2
      return 1
    fi
  }
  local fail=0
  each_parallel asan_eval "${runs[@]}" || fail=1
  echo "asan: sampled evaluations in $((SECONDS - t0))s"
  unset ASAN_OPTIONS UBSAN_OPTIONS
  return $fail
}

stage_tsan() {
  cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_WERROR=ON \
    -DATTNLITE_TSAN=ON -DATTNLITE_TOOLS=OFF "${unity[@]}" >/dev/null
  cmake --build build/tsan -j"$jobs" --target attnlite_thread_tests attnlite_c_api_threads_test
  local opts=halt_on_error=1:second_deadlock_stack=1
  TSAN_OPTIONS=$opts build/tsan/tests/attnlite_thread_tests "[threads]"
  TSAN_OPTIONS=$opts build/tsan/tests/attnlite_c_api_threads_test
}

stage_web() {
  # The native CLI produces the reference outputs of the parity tests.
  local simd=ON
  compgen -G "src/cpu/simd/*.cpp" >/dev/null || simd=OFF
  native_cli -DATTNLITE_SIMD=$simd
  # The node build for the tests (build/wasm-node), the kernel test in it (the SIMD128 kernels
  # against the scalar ones at every tail size: tests/web/kernels.test.mjs runs it; required
  # here, so a missing program fails instead of skipping), and the web modules linked from the
  # same objects, left in build/wasm-node/web/ to compare with the committed web/ files.
  local t0=$SECONDS
  JOBS=$jobs WEB_OUT=build/wasm-node/web bash wasm/build.sh node kernel-test web
  echo "web: node and web builds in $((SECONDS - t0))s"
  local f stale=0
  for f in attnlite.mjs attnlite.wasm attnlite-figures.mjs attnlite-figures.wasm; do
    cmp -s "build/wasm-node/web/$f" "web/$f" || { echo "web/$f differs from a fresh build"; stale=1; }
  done
  node tools/web_version.mjs --check || stale=1  # the service worker's files and version
  if [ $stale = 1 ]; then
    echo "the committed web build is out of date: run wasm/build.sh web and node tools/web_version.mjs, and commit web/attnlite.*, web/attnlite-figures.* and web/sw.js" >&2
    return 1
  fi
  # npm ci only when package-lock.json changed since the last install.
  local stamp
  stamp=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ "$(cat node_modules/.attnlite-lock 2>/dev/null)" != "$stamp" ]; then
    npm ci --ignore-scripts --no-audit --no-fund
    echo "$stamp" > node_modules/.attnlite-lock
  fi
  # The node tests $jobs files at a time, then the page's tests in Chromium one file at a time
  # (each drives a browser of several processes).
  local node_tests browser_tests
  mapfile -t node_tests < <(ls tests/web/*.test.mjs | grep -v 'browser\.test\.mjs$')
  mapfile -t browser_tests < <(ls tests/web/*browser.test.mjs)
  export ATTNLITE_REQUIRE_BROWSER=1 ATTNLITE_REQUIRE_KERNEL_TEST=1
  t0=$SECONDS
  node --test --test-concurrency="$jobs" "${node_tests[@]}"
  echo "web: node tests in $((SECONDS - t0))s"
  t0=$SECONDS
  node --test --test-concurrency=1 "${browser_tests[@]}"
  echo "web: Chromium tests in $((SECONDS - t0))s"
  unset ATTNLITE_REQUIRE_BROWSER ATTNLITE_REQUIRE_KERNEL_TEST
  # The node tests (not the browser ones, which load web/) against the sanitized node build:
  # an ASan or UBSan report ends the node process with status 1, so the file fails;
  # tests/web/misuse.test.mjs ends with LeakSanitizer's check. Two files at a time.
  t0=$SECONDS
  JOBS=$jobs bash wasm/build.sh node-asan
  echo "web: sanitized node build in $((SECONDS - t0))s"
  t0=$SECONDS
  ATTNLITE_WASM_DIR=build/wasm-node-asan node --test --test-concurrency="$jobs" "${node_tests[@]}"
  echo "web: node tests under ASan + UBSan in $((SECONDS - t0))s"
}

# The CLI on the emulated device against the CPU on every STEP-th distinct English sentence
# of MODEL's test split: identical lines. (The emulated device runs each kernel thread in turn:
# beam search's 256-line batches are its slowest work, so beam 4 takes a sparser sample.)
emulated_cli_parity() {  # emulated_cli_parity MODEL BEAM STEP [CLI OPTION...]
  local model=$1 beam=$2 step=$3 cli=build/cuda-emu/attnlite dir=build/cuda-emu/cli-parity
  mkdir -p $dir
  local tag=$dir/$model.beam$beam.every$step${4:+.${4#--}$5}
  # (run as a task, `cuda_emu_task ... || st=1`, where set -e does not apply: each command's
  # failure is checked here)
  cut -f1 "models/$model.test.tsv" | awk '!seen[$0]++' | awk -v k="$step" 'NR % k == 1' > "$tag.src" &&
    [ -s "$tag.src" ] || { echo "cuda: FAIL: no sentences of $model's test split" >&2; return 1; }
  $cli translate --model "$model" --beam "$beam" --device cpu "${@:4}" < "$tag.src" > "$tag.cpu" ||
    { echo "cuda: FAIL: $model on the CPU" >&2; return 1; }
  $cli translate --model "$model" --beam "$beam" --device cuda "${@:4}" < "$tag.src" > "$tag.cuda" 2> "$tag.err" ||
    { cat "$tag.err" >&2; echo "cuda: FAIL: $model on the emulated device" >&2; return 1; }
  if ! cmp -s "$tag.cpu" "$tag.cuda"; then
    echo "cuda: FAIL: $model at beam $beam ${*:4}: the emulated device's lines differ from the CPU's" >&2
    diff "$tag.cpu" "$tag.cuda" | head -20 >&2
    return 1
  fi
  echo "cuda: $model, beam $beam${4:+ ${*:4}}: $(wc -l < "$tag.src") sentences identical on the emulated device"
}

# The emulated device's Catch2 cases: every CUDA test, the emulator's own checks, every op
# set's tests with the CUDA set among them.
cuda_emu_cases="[cuda],[ops],[translate]"
cuda_emu_graphs="CUDA graphs: replayed decoder steps give the CPU's results"
# cuda_emu_task TASK: one of the emulated device's tests (stage_cuda lists them)
cuda_emu_task() {
  local task=$1 t0=$SECONDS st=0 b=build/cuda-emu py=${PYTHON:-/usr/bin/python3}
  [ -n "$task" ] || return 0
  {
    case $task in
      # (--warn NoTests: a filter that matches nothing fails)
      catch-graphs) $b/tests/attnlite_tests "$cuda_emu_graphs" --warn NoTests || st=1 ;;
      catch-rest) $b/tests/attnlite_tests "${cuda_emu_cases/\[cuda\]/[cuda]~$cuda_emu_graphs}" --warn NoTests || st=1 ;;
      # the kernels again with each block's threads taking their turns from the last to the
      # first: a thread's read of what another writes between the same two barriers sees the
      # write in one order and not in the other, so a missing barrier fails one of the two runs
      # (not the products' case: the GEMV of few rows, cuBLAS's and the widening kernels share
      # nothing between a block's threads but warp shuffles; the GEMV of many rows, which
      # stages x in shared memory, has its own case)
      reverse)
        ATTNLITE_CUDA_EMU_ORDER=reverse $b/tests/attnlite_tests \
          "[ops],[emulator],CUDA: the GEMV of many rows gives each row the bits that launches of 8 rows give,CUDA kernels match the scalar CPU reference,CUDA translations match the CPU on the random fixture Transformer,CUDA beam search and Bahdanau match the CPU" || st=1 ;;
      parity-bpe) emulated_cli_parity transformer-fra-bpe 1 20 || st=1 ;;
      # (batches of 32 with the GEMV of many rows: the int8 model's products read as stored, in
      # two chunks of 16 rows)
      parity-bpe-batch32) ATTNLITE_CUDA_LT=gemv emulated_cli_parity transformer-fra-bpe 1 40 --batch 32 || st=1 ;;
      # the whole models' and the BLAS-dependent op's cases again with the GEMV up to 64 rows
      # (ATTNLITE_CUDA_LT=gemv): batches past 8 rows, graphs, beams, no device allocation
      gemv)
        ATTNLITE_CUDA_LT=gemv $b/tests/attnlite_tests \
          "ops: linear_add_layer_norm on every op set and as linear then add_layer_norm,CUDA translations match the CPU on the random fixture Transformer,CUDA with bfloat16 weights matches the CPU on the rounded weights,int8 Transformer translations match PyTorch on the dequantized weights,translate on CUDA makes no device allocation,CUDA beam search and Bahdanau match the CPU" || st=1 ;;
      parity-bpe-beam4) emulated_cli_parity transformer-fra-bpe 4 100 || st=1 ;;
      parity-fra) emulated_cli_parity transformer-fra 1 20 || st=1 ;;
      # The C API's and the Python package's CUDA sessions (translators, generators and
      # classifiers, bf16, batches of images), told that CUDA must work here: a refusal fails them.
      capi) ATTNLITE_TEST_CUDA=1 $b/tests/attnlite_c_api_test || st=1 ;;
      python)
        ATTNLITE_TEST_CUDA=1 ATTNLITE_LIBRARY="$root/$b/libattnlite_c.so" ATTNLITE_CLI="$root/$b/attnlite" \
          "$py" -m pytest python/tests -q -p no:cacheprovider -k "cuda or precision" || st=1 ;;
    esac
  } >"$b/logs/$task.log" 2>&1 || st=1
  # what each says it checked: Catch2's and pytest's summaries, the CLI's sentence counts
  local said
  said=$(grep -E '^(All tests passed|test cases:|cuda: |[0-9]+ passed|[0-9]+ passed, [0-9]+ failed)' "$b/logs/$task.log" | tail -n 2 | tr '\n' ' ' || true)
  task_report "cuda-emu $task" "$b/logs/$task.log" $st $t0 "$said"
}

stage_cuda() {
  # 1. The backend's own sources on the emulated device (tests/cuda_emu): every CUDA test case
  # and op-set test, the emulator's own checks, and the CLI on cuda against the CPU. Needs no
  # GPU and no nvcc, so it runs everywhere.
  cmake -S . -B build/cuda-emu -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON \
    -DATTNLITE_CUDA_EMULATOR=ON -DATTNLITE_SHARED_C=ON -DATTNLITE_DEVICE_TESTS_ONLY=ON "${unity[@]}" >/dev/null
  local t0=$SECONDS
  cmake --build build/cuda-emu --target attnlite_tests attnlite_cli attnlite_c_api_test attnlite_c -j"$jobs"
  echo "cuda: emulated device's build in $((SECONDS - t0))s"
  # Its tests are tasks, $jobs at a time, longest first (each is one thread); each task's log
  # is build/cuda-emu/logs/TASK.log. The CUDA graph case, the slowest by far, runs alone.
  t0=$SECONDS
  mkdir -p build/cuda-emu/logs
  local py=${PYTHON:-/usr/bin/python3} st=0
  local tasks=(catch-graphs catch-rest python reverse gemv parity-bpe-beam4 parity-bpe-batch32 parity-bpe parity-fra capi)
  if ! "$py" -c "import numpy, pytest" 2>/dev/null; then
    echo "cuda: no Python with numpy and pytest; the package's CUDA tests did not run"
    tasks=("${tasks[@]/python/}")
  fi
  each_parallel cuda_emu_task "${tasks[@]}" || st=1
  # every listed case ran once: the two runs' summaries add up to the filter's cases
  local listed ran=0 k
  # (Catch2 2's exit status after a listing is the number of cases listed: not an error)
  listed=$({ build/cuda-emu/tests/attnlite_tests "$cuda_emu_cases" --list-test-names-only || true; } |
    sed '/^$/d' | wc -l)
  for k in graphs rest; do ran=$((ran + $(catch_passed "build/cuda-emu/logs/catch-$k.log"))); done
  if [ "$ran" != "$listed" ]; then
    echo "cuda: FAIL: the emulated device's runs passed $ran Catch2 cases of $listed" >&2
    st=1
  fi
  # the cases tools/gpu-check.sh hands compute-sanitizer by name are this program's (also a
  # ctest of the nvcc build below; here for a machine without nvcc)
  bash tests/tools/gpu_check_cases.sh build/cuda-emu/tests/attnlite_tests || st=1
  echo "cuda: emulated device's tests in $((SECONDS - t0))s"
  [ $st = 0 ] || return 1

  # 2. The real CUDA build (nvcc): it must build with warnings as errors, and its GPU cases
  # skip cleanly where there is no device.
  if ! command -v nvcc >/dev/null; then
    echo "cuda: nvcc is not on PATH; skipping the CUDA build"
    return 0
  fi
  cmake -S . -B build/cuda -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON -DATTNLITE_CUDA=ON \
    -DATTNLITE_BENCH=ON -DATTNLITE_DEVICE_TESTS_ONLY=ON -DCMAKE_CUDA_ARCHITECTURES="80;90" "${unity[@]}" >/dev/null
  t0=$SECONDS
  cmake --build build/cuda -j"$jobs"
  echo "cuda: build in $((SECONDS - t0))s"
  # The CLI's whole-split CPU evaluations (corpus model, typed-input parity, sub-word corpus)
  # run the same CPU code as in the native stage, which runs them; everything else runs here.
  run_ctest build/cuda -E '^cli\.(corpus_model|normalize_parity|bpe_corpus)$'
  build/cuda/bench/bench_cuda --check  # the base model it times builds and translates (CPU)
}

# The Arm runs are tasks, scheduled longest first, $jobs at a time (each qemu process is one
# thread): per target, the Catch2 suite in $arm_shards shards (its test cases dealt out by
# name; shorter tasks let the cores end together), the C API tests, the small core's
# examples/translate.c and tests/arm/e2e.sh. Each task's log is build/NAME/TASK.log.
arm_shards=4
arm_qemu() {  # arm_qemu NAME: the command prefix that runs NAME's programs
  case $1 in
    aarch64) echo "qemu-aarch64 -L /usr/aarch64-linux-gnu" ;;
    armv7) echo "qemu-arm -L /usr/arm-linux-gnueabihf" ;;
  esac
}
# arm_task NAME:TASK: one task (TASK: catchK, capi, translate, e2e)
arm_task() {
  local name=${1%%:*} task=${1#*:} b=build/${1%%:*} t0=$SECONDS q st=0
  q=$(arm_qemu "$name")
  local kernels=neon
  [ "$name" = armv7 ] && kernels=scalar  # armv7's small core is built without SIMD
  {
    case $task in
      catch*) $q $b/tests/attnlite_tests --input-file "$b/shard-${task#catch}.txt" || st=1 ;;
      capi) $q $b/tests/attnlite_c_api_test || st=1 ;;
      translate)
        bash tests/examples/translate.sh "$q $b-minimal/examples/translate" build/native/attnlite . $kernels || st=1 ;;
      e2e) bash tests/arm/e2e.sh build/native/attnlite "$q $b/attnlite" . "${ARM_STRIDE:-150}" || st=1 ;;
    esac
  } >"$b/$task.log" 2>&1 || st=1
  task_report "$name $task" "$b/$task.log" $st $t0
}

stage_arm() {
  local tool
  for tool in aarch64-linux-gnu-g++ arm-linux-gnueabihf-g++ s390x-linux-gnu-g++ qemu-aarch64 qemu-arm qemu-s390x; do
    command -v $tool >/dev/null || { echo "arm: $tool is missing (bash tools/setup.sh installs it)" >&2; return 1; }
  done
  local t0=$SECONDS
  native_cli
  local arch
  for arch in aarch64:aarch64-linux-gnu armv7:armv7-linux-gnueabihf; do
    local name=${arch%%:*} tc=cmake/toolchains/${arch#*:}.cmake
    cmake -S . -B build/$name -DCMAKE_TOOLCHAIN_FILE=$tc -DATTNLITE_WERROR=ON "${unity[@]}" >/dev/null
    cmake --build build/$name -j"$jobs" --target attnlite_tests attnlite_c_api_test attnlite_cli
    # the small core (armv7's without SIMD, a board without NEON)
    local simd=ON
    [ $name = armv7 ] && simd=OFF
    cmake -S . -B build/$name-minimal -DCMAKE_TOOLCHAIN_FILE=$tc -DATTNLITE_WERROR=ON \
      -DATTNLITE_MINIMAL=ON -DATTNLITE_SIMD=$simd >/dev/null
    cmake --build build/$name-minimal -j"$jobs"
  done
  local size
  size=$(stat -c %s build/aarch64-minimal/examples/translate)
  # the file grows in steps of 64 KiB (docs/edge.md): how far the code is from the next one
  local room
  room=$(aarch64-linux-gnu-readelf -lW build/aarch64-minimal/examples/translate |
    awk '$1 == "LOAD" { print $2, $5 }' | { read -r _ code; read -r data _; echo $((data - code)); })
  echo "arm: examples/translate on aarch64, the small core, static and stripped: $size bytes" \
    "(the code $room bytes from the file's next 64 KiB step)"
  [ "$size" -le 1000000 ] || { echo "arm: over its budget of 1,000,000 bytes" >&2; return 1; }
  # Big-endian: the loader alone, for s390x.
  s390x-linux-gnu-g++ -std=c++17 -O1 -Wall -Wextra -Werror -Iinclude -Isrc tests/arm/endian_check.cpp \
    src/file/safetensors.cpp src/file/json.cpp -o build/endian_check_s390x
  qemu-s390x -L /usr/s390x-linux-gnu build/endian_check_s390x models/transformer-d2l.safetensors
  # The small core's terminate handler (examples/terminate.cpp) in a program that throws.
  aarch64-linux-gnu-g++ -std=c++17 -Os -static -Wall -Wextra -Werror tests/arm/terminate_check.cpp \
    examples/terminate.cpp -o build/terminate_check_aarch64
  if aarch64-linux-gnu-nm build/terminate_check_aarch64 2>/dev/null | grep -q __cxa_demangle; then
    echo "arm: FAIL: the terminate handler brings the demangler" >&2; return 1
  fi
  local out trc
  out=$(ulimit -c 0; qemu-aarch64 build/terminate_check_aarch64 x 2>&1 >/dev/null) && trc=0 || trc=$?
  [ "$trc" = 134 ] && grep -qx "  what():  a test exception" <<<"$out" ||
    { echo "arm: FAIL: terminate handler: status $trc, said: $out" >&2; return 1; }
  out=$(ulimit -c 0; qemu-aarch64 build/terminate_check_aarch64 2>&1 >/dev/null) && trc=0 || trc=$?
  [ "$trc" = 134 ] && [ "$(head -1 <<<"$out")" = "terminate called after throwing an exception" ] &&
    ! grep -q "what()" <<<"$out" ||
    { echo "arm: FAIL: terminate handler (not a std::exception): status $trc, said: $out" >&2; return 1; }
  echo "arm: examples/terminate.cpp prints what() and aborts"
  echo "arm: builds in $((SECONDS - t0))s"
  t0=$SECONDS
  local name q k
  for name in aarch64 armv7; do
    q=$(arm_qemu $name)
    # the NEON kernels are the ones that run
    $q build/$name/attnlite info --model transformer-d2l >"build/$name/info.json" &&
      grep -q '"kernels": "neon"' "build/$name/info.json" ||
      { cat "build/$name/info.json"; echo "arm: FAIL: $name does not run the NEON kernels" >&2; return 1; }
    echo "arm: $name: $(grep -E '"(arch|kernels)"' "build/$name/info.json" | tr -d ' \n')"
    # The Catch2 suite but its [threads] cases (qemu on an x86-64 host runs threads with x86's
    # memory order, so they would show nothing the x86-64 and TSan stages do not), its test
    # cases dealt by name into $arm_shards lists (names escaped for Catch2's test specs).
    # (Catch2 2's exit status after a listing is the number of cases listed: not an error)
    { $q build/$name/tests/attnlite_tests "~[threads]~[.]" --list-test-names-only || true; } |
      sed '/^$/d' | sort -u >"build/$name/cases.txt"
    [ -s "build/$name/cases.txt" ] || { echo "arm: FAIL: $name's Catch2 suite lists no cases" >&2; return 1; }
    for ((k = 0; k < arm_shards; k++)); do
      awk -v n=$arm_shards -v k=$k 'NR % n == k' "build/$name/cases.txt" |
        sed 's/[][\\,"*]/\\&/g' >"build/$name/shard-$k.txt"
    done
    echo "arm: $name: $(wc -l <"build/$name/cases.txt") Catch2 cases in $arm_shards shards"
  done
  # longest first (armv7 emulates more slowly than aarch64)
  local tasks=(armv7:e2e)
  for ((k = 0; k < arm_shards; k++)); do tasks+=("armv7:catch$k"); done
  tasks+=(aarch64:e2e)
  for ((k = 0; k < arm_shards; k++)); do tasks+=("aarch64:catch$k"); done
  tasks+=(armv7:translate aarch64:translate armv7:capi aarch64:capi)
  local st=0
  each_parallel arm_task "${tasks[@]}" || st=1
  # every Catch2 case ran once: the shards' summaries add up to the listed cases
  for name in aarch64 armv7; do
    local ran=0 listed
    listed=$(wc -l <"build/$name/cases.txt")
    for ((k = 0; k < arm_shards; k++)); do ran=$((ran + $(catch_passed "build/$name/catch$k.log"))); done
    if [ "$ran" != "$listed" ]; then
      echo "arm: FAIL: $name's shards ran $ran Catch2 cases of $listed" >&2
      st=1
    else
      echo "arm: $name: all $ran Catch2 cases passed"
    fi
  done
  echo "arm: runs in $((SECONDS - t0))s"
  return $st
}

stage_fuzz() {
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_FUZZ=ON \
    -DATTNLITE_TESTS=OFF -DATTNLITE_TOOLS=OFF -DATTNLITE_WERROR=ON "${unity[@]}" >/dev/null
  local targets=(loader tokenizer translate image generate capi)
  cmake --build build/fuzz -j"$jobs" --target "${targets[@]/#/fuzz_}"
  local secs=${FUZZ_SECONDS:-25}
  mkdir -p build/fuzz/artifacts
  # fuzz_one TARGET: one target for $secs seconds on a copy of its seed corpus (log:
  # build/fuzz/TARGET.log); $jobs targets run at a time, each on one core.
  fuzz_one() {
    local t=$1
    rm -rf "build/fuzz/corpus/$t"
    mkdir -p "build/fuzz/corpus/$t"
    cp tests/fuzz/corpus/"$t"/* "build/fuzz/corpus/$t/"
    local dict=()
    [ -f "tests/fuzz/$t.dict" ] && dict=("-dict=tests/fuzz/$t.dict")
    if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "build/fuzz/tests/fuzz/fuzz_$t" -max_total_time="$secs" -error_exitcode=1 -timeout=10 \
      -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1 "${dict[@]}" \
      -artifact_prefix="build/fuzz/artifacts/$t-" "build/fuzz/corpus/$t" 2>"build/fuzz/$t.log"; then
      echo "--- fuzz_$t: ${secs}s"
      grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|cov: ' "build/fuzz/$t.log" | tail -n 3
    else
      tail -n 60 "build/fuzz/$t.log"
      echo "fuzz_$t failed (log: build/fuzz/$t.log)"
      return 1
    fi
  }
  each_parallel fuzz_one "${targets[@]}"
}

# cpu_seconds: the CPU time (user + system) of every command this shell has waited for so far
# (bash's `times`, run in this shell: a subshell's count starts at zero)
mkdir -p build
cpu_file=build/.test-times
cpu_seconds() {
  times >"$cpu_file"
  cpu=$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$cpu_file")
}

# Each stage's wall time and CPU time: on $jobs cores, a CPU time under $jobs times the wall
# time is a core left idle.
timing=()
for s in "${stages[@]}"; do
  echo "=== stage: $s"
  t0=$SECONDS
  cpu_seconds
  c0=$cpu
  "stage_$s"
  passed=$((passed + 1))
  cpu_seconds
  timing+=("$s $((SECONDS - t0))s (cpu $((cpu - c0))s)")
done
echo "test stages: $passed passed, 0 failed (${timing[*]})"
