#!/usr/bin/env bash
# Builds attnlite for WebAssembly: `emcmake cmake` (Debian's Emscripten 3.1.6 is tested) over
# the project's CMakeLists.txt, one build folder per target. CMake owns the sources, the flags
# and the dependencies (cmake/wasm.cmake, wasm/CMakeLists.txt); this only picks the options.
#
#   wasm/build.sh              web and node
#   wasm/build.sh web          build/wasm-web/ (-sENVIRONMENT=web), its attnlite.{mjs,wasm} and
#                              attnlite-figures.{mjs,wasm} then copied into web/ (committed)
#   wasm/build.sh node         build/wasm-node/: the same two modules (-sENVIRONMENT=node, for tests)
#   wasm/build.sh node web     both from one compile (the two differ only in their link flags):
#                              build/wasm-node/ with the web modules in build/wasm-node/web/,
#                              copied into web/ as above
#   wasm/build.sh node-asan    build/wasm-node-asan/: the node build under AddressSanitizer and
#                              UndefinedBehaviorSanitizer (JavaScript-based exceptions); any
#                              report ends the node process with status 1
#   wasm/build.sh kernel-test  build/wasm-node/kernel_parity.mjs: tests/wasm/kernel_parity.cpp
#                              against the node build's kernels (exits non-zero on a mismatch)
# Each build folder also holds the JavaScript API (web/attnlite-api.mjs, web/api/).
#
# Environment:
#   SIMD=auto|on|off   the SIMDe kernels (src/cpu/simd/, -DATTNLITE_SIMD); auto: when present.
#                      Default off (docs/web.md: slower than the SIMD128 kernels, over the budget)
#   EXCEPTIONS=wasm|js native WebAssembly exceptions (default) or Emscripten's JavaScript-based ones
#   LINK_FLAGS         extra link flags of the runtime module (e.g. --profiling-funcs)
#   NODE_OUT, ASAN_OUT the node and node-asan build folders
#   WEB_OUT            where the web modules are copied (default web/; WEB_OUT=build/wasm-web,
#                      the web build folder, leaves web/ as it is)
#   JOBS               parallel compiles (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}  # emcc's optimizer needs Debian's acorn
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(web node)
case ${SIMD:-off} in
  on) simd=ON ;;
  off) simd=OFF ;;
  auto) simd=OFF; compgen -G "src/cpu/simd/*.cpp" >/dev/null && simd=ON ;;
  *) echo "wasm/build.sh: SIMD is auto, on or off (got '$SIMD')" >&2; exit 2 ;;
esac

build() {  # build DIR TARGET [CMAKE OPTIONS...]: configure DIR and build TARGET (all: the modules)
  local dir=$1 target=$2
  shift 2
  emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTNLITE_SIMD=$simd \
    -DATTNLITE_WASM_LINK_FLAGS="${LINK_FLAGS:-}" "$@" >/dev/null
  cmake --build "$dir" -j "${JOBS:-2}" --target "$target"
}
sizes() {  # sizes DIR: the two modules' sizes
  local m
  for m in attnlite attnlite-figures; do
    echo "wasm/build.sh: $1/$m.wasm: $(stat -c %s "$1/$m.wasm") bytes, gzip -9 $(gzip -9c "$1/$m.wasm" | wc -c)"
  done
}

# web and node together: one build folder, build/wasm-node, that links both environments
has() { local t; for t in "${targets[@]}"; do [ "$t" = "$1" ] && return 0; done; return 1; }
both=0 node_env=node
has web && has node && both=1 node_env="node;web"
node_out=${NODE_OUT:-build/wasm-node}

for t in "${targets[@]}"; do
  case $t in
    web)
      if [ $both = 1 ]; then
        build "$node_out" all -DATTNLITE_WASM_ENVIRONMENT="$node_env" -DATTNLITE_WASM_EXCEPTIONS="${EXCEPTIONS:-wasm}"
        from=$node_out/web
      else
        build build/wasm-web all -DATTNLITE_WASM_ENVIRONMENT=web -DATTNLITE_WASM_EXCEPTIONS="${EXCEPTIONS:-wasm}"
        from=build/wasm-web
      fi
      out=${WEB_OUT:-web}
      if [ "$(realpath -m "$out")" != "$(realpath "$from")" ]; then
        mkdir -p "$out"
        cp "$from"/attnlite.{mjs,wasm} "$from"/attnlite-figures.{mjs,wasm} "$out/"
      fi
      sizes "$out" ;;
    node | kernel-test)
      target=all
      [ "$t" = kernel-test ] && target=attnlite_kernel_parity
      build "$node_out" $target -DATTNLITE_WASM_ENVIRONMENT="$node_env" -DATTNLITE_WASM_EXCEPTIONS="${EXCEPTIONS:-wasm}"
      if [ "$t" = node ]; then sizes "$node_out"; else echo "wasm/build.sh: node $node_out/kernel_parity.mjs"; fi ;;
    node-asan)
      out=${ASAN_OUT:-build/wasm-node-asan}
      build "$out" all -DATTNLITE_WASM_ENVIRONMENT=node -DATTNLITE_WASM_EXCEPTIONS=js -DATTNLITE_SANITIZE=ON
      sizes "$out" ;;
    *) echo "wasm/build.sh: unknown target '$t' (web, node, node-asan, kernel-test)" >&2; exit 2 ;;
  esac
done
