#!/usr/bin/env bash
# Builds bench/wasm_linear_i8.cpp with the web build's flags for the kernel (-O3 -msimd128)
# into build/wasm-bench-i8/ and runs it in node with V8's optimizing compiler from the start
# (--no-liftoff: a benchmark's main function runs once and would stay in the baseline tier).
#   bash bench/wasm_linear_i8.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}  # emcc's optimizer needs Debian's acorn
out=build/wasm-bench-i8
mkdir -p "$out"
em++ -O3 -msimd128 -std=c++17 -Iinclude -Isrc -Isrc/cpu/wasm bench/wasm_linear_i8.cpp \
  src/cpu/wasm/linear_i8_simd128.cpp -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1 \
  -sSINGLE_FILE=1 -o "$out/wasm_linear_i8.cjs"
echo "node $(node --version); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
node --no-liftoff "$out/wasm_linear_i8.cjs"
