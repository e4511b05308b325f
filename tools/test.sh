#!/usr/bin/env bash
# Builds and runs every test suite of attnlite. Stages:
#   native   Release build, warnings as errors, ctest (unit, fixtures, CLI, install)
#   asan     the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   cuda     -DATTNLITE_CUDA=ON build (architectures 80;90), warnings as errors, ctest; only
#            when nvcc is on PATH (else it says so and passes). GPU cases skip without a device.
# Usage: tools/test.sh [stage ...]   (default: all stages)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(native asan cuda)
passed=0

run_ctest() {  # run_ctest BUILD_DIR
  (cd "$1" && ctest --output-on-failure -j"$jobs")
}

stage_native() {
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON >/dev/null
  cmake --build build/native -j"$jobs"
  run_ctest build/native
}

stage_asan() {
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLITE_WERROR=ON \
    -DATTNLITE_SANITIZE=ON >/dev/null
  cmake --build build/asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build/asan
}

stage_cuda() {
  if ! command -v nvcc >/dev/null; then
    echo "cuda: nvcc is not on PATH; skipping the CUDA build"
    return 0
  fi
  cmake -S . -B build/cuda -DCMAKE_BUILD_TYPE=Release -DATTNLITE_WERROR=ON -DATTNLITE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="80;90" >/dev/null
  cmake --build build/cuda -j"$jobs"
  run_ctest build/cuda
}

for s in "${stages[@]}"; do
  echo "=== stage: $s"
  "stage_$s"
  passed=$((passed + 1))
done
echo "test stages: $passed passed, 0 failed"
