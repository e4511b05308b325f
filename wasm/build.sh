#!/usr/bin/env bash
# Builds attnlite for WebAssembly with Emscripten (Debian's emscripten 3.1.6 is tested).
#
#   wasm/build.sh            both builds
#   wasm/build.sh web        web/attnlite.mjs + web/attnlite.wasm and web/attnlite-figures.mjs +
#                            .wasm (-sENVIRONMENT=web, committed)
#   wasm/build.sh node       build/wasm-node/: the same two modules (-sENVIRONMENT=node, for tests)
#   wasm/build.sh node-asan  build/wasm-node-asan/: the node build under AddressSanitizer and
#                            UndefinedBehaviorSanitizer (its own objects, build/wasm-obj-*-asan/);
#                            any report ends the node process with status 1
#   wasm/build.sh kernel-test  build/wasm-kernel-test/kernel_parity.mjs: tests/wasm/kernel_parity.cpp
#                            (every kernel of the SIMD128 table against the scalar reference, tails
#                            and strides included; `node build/wasm-kernel-test/kernel_parity.mjs`
#                            exits non-zero on a mismatch), linked from the node build's objects
# LINK_FLAGS adds link flags to the runtime module (NODE_OUT=build/wasm-prof LINK_FLAGS=--profiling-funcs
# wasm/build.sh node: function names for node --cpu-prof).
# WEB_OUT / NODE_OUT / ASAN_OUT put a build elsewhere (the test stage rebuilds the web files into
# build/wasm-web to check that the committed ones are up to date). Each build folder also
# gets the JavaScript API: attnlite-api.mjs and its classes in api/ (wasm/attnlite-api.mjs,
# wasm/api/*.mjs).
#
# Two modules per build: the runtime, attnlite.{mjs,wasm}: the same core sources as the native
# library (src/**/*.cpp without src/cuda and src/viz, the C API src/c_api/ included but for its
# native-only figures section, src/c_api/figures.cpp, which draws with the model-driven figures
# of src/viz) plus wasm/bindings.cpp; and the figure renderer, attnlite-figures.{mjs,wasm}: the src/viz/ sources
# that draw (those that do not include the model-driven figures.h / figure_parts.h, which only
# the native tools use) plus wasm/figures_bindings.cpp. The runtime has a size budget
# (docs/web.md) and the translation worker never draws, so the renderer is a module of its own
# that the page loads beside the runtime. Compiled into build/wasm-obj-<exceptions>-<kernels>/
# and linked per target. Objects are rebuilt when a source or one of the headers it includes
# changes.
# JOBS (default 2) compiles in parallel.
#
# Kernels: every build has the native SIMD128 kernels of src/cpu/wasm/ (the "simd128" table)
# and the scalar reference. The SIMDe kernels (src/cpu/simd/, AVX2 emulated on SIMD128,
# -DATTNLITE_HAVE_SIMD=1) replace the simd128 table when built in: SIMD=auto builds them when
# present, SIMD=on insists, SIMD=off leaves them out; SIMD_WEB / SIMD_NODE set one target.
# Default off for every target: under SIMD128 they are slower than even the scalar kernels and
# push the .wasm over its size budget (docs/web.md, bench/RESULTS-wasm.md), and the node
# builds that the tests load carry the same kernels as the shipped web build.
# EXCEPTIONS=js selects Emscripten's JavaScript-based exception handling instead of
# native WebAssembly exceptions (see docs/web.md for the size and speed of each).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(web node)
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}  # emcc's optimizer needs Debian's acorn

eh_mode=${EXCEPTIONS:-wasm}
inc=build/wasm-include  # third-party headers, each through its own link (never /usr/include)
mkdir -p "$inc"
for pair in simde:/usr/include/simde nlohmann:/usr/include/nlohmann stb:/usr/include/stb; do
  name=${pair%%:*} dir=${pair#*:}
  [ -d "$dir" ] || { echo "wasm/build.sh: $dir is missing (tools/setup.sh installs it)" >&2; exit 1; }
  [ -L "$inc/$name" ] || ln -sfn "$dir" "$inc/$name"
done

case $eh_mode in
  wasm | js) ;;
  *) echo "wasm/build.sh: EXCEPTIONS must be wasm or js" >&2; exit 2 ;;
esac
# eh_flags MODE: the exception flags of a mode (wasm or js) into `eh`, for compiling and linking.
eh_flags() {
  case $1 in
    wasm) eh=(-fwasm-exceptions) ;;
    js) eh=(-fexceptions -sDISABLE_EXCEPTION_CATCHING=0) ;;
  esac
}
# -DSTBI_NO_JPEG: no JPEG decoder in the module (14 KB of the size budget; the page draws
# digits on a canvas and the browser decodes image files): al_digit_from_file_bytes refuses
# JPEG with a message that says so (src/image_input.cpp).
cxxflags=(-msimd128 -std=c++17 -Iinclude -Isrc -I"$inc" -I"$inc/stb" -DNDEBUG -DSTBI_NO_JPEG
  -Wall -Wextra -Wno-unused-parameter)
# The compute of the translate path (the kernels, the CPU op set, masked softmax) at -O3; the
# blocks, which only call ops, and code that runs once per model load, sentence, step or
# figure (the safetensors/JSON loader, the tokenizers (the book's words, the byte-pair pieces of
# src/bpe.cpp with its merge table's JSON, the input normalization of src/normalize.cpp),
# translate.cpp, the searches and the
# drivers, the C API, the renderer, the bindings; the image decoder and digit preprocessing
# and the classifier's bookkeeping, which run once per image) at -Os, which keeps the .wasm
# small (docs/web.md). The scalar kernels too: in WebAssembly they are the reference that
# set_backend(Scalar) selects, the SIMD128 ones translate (-Os gives the same results: no
# float reassociation at any level).
opt_for() {
  case $1 in
    src/render/* | src/model/* | src/file/* | src/families/* | wasm/bindings.cpp | wasm/figures_bindings.cpp | src/text/* | \
      src/ops/* | src/cpu/thread_pool.cpp | src/cpu/dispatch.cpp | \
      src/attention/positional_encoding.cpp | src/attention/nadaraya_watson.cpp | \
      src/tasks/* | src/search/* | src/drivers/* | src/c_api/* | src/image/* | \
      src/cpu/kernels_scalar.cpp | src/models/* | src/attention/multi_head.cpp | \
      src/attention/additive.cpp) echo -Os ;;
    *) echo -O3 ;;
  esac
}

mapfile -t runtime_sources < <(find src -name '*.cpp' -not -path 'src/cuda/*' -not -path 'src/render/*' \
  -not -path 'src/figures/*' \
  -not -path src/c_api/figures.cpp | sort)
runtime_sources+=(wasm/bindings.cpp)
mapfile -t figures_sources < <(ls src/render/*.cpp)
figures_sources+=(wasm/figures_bindings.cpp)
all_sources=("${runtime_sources[@]}" "${figures_sources[@]}")
have_simd=0
compgen -G "src/cpu/simd/*.cpp" >/dev/null && have_simd=1

stale() {  # stale SOURCE OBJECT DEPFILE: does the object need compiling?
  [ -f "$2" ] && [ -f "$3" ] || return 0
  [ "$1" -nt "$2" ] && return 0
  local dep
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$3"); do
    [ -e "$dep" ] || return 0
    [ "$dep" -nt "$2" ] && return 0
  done
  return 1
}

# simd_mode SETTING: auto (the SIMD kernels when src/cpu/simd/ has them), on, off -> simd|scalar
simd_mode() {
  case $1 in
    auto) [ $have_simd = 1 ] && echo simd || echo scalar ;;
    on) [ $have_simd = 1 ] || { echo "wasm/build.sh: SIMD=on but src/cpu/simd/ is empty" >&2; exit 2; }
      echo simd ;;
    off) echo scalar ;;
    *) echo "wasm/build.sh: SIMD settings are auto, on or off (got '$1')" >&2; exit 2 ;;
  esac
}

# compile MODE [asan]: compiles (when stale) the objects of one kernel set into
# build/wasm-obj-<exceptions>-<MODE>[-asan]/ and lists the runtime's in `objects`, the
# renderer's in `figures_objects`.
compile() {
  eh_flags "$eh_now"
  local mode=$1 obj=build/wasm-obj-$eh_now-$1${2:+-$2} flags=("${cxxflags[@]:0:2}" "${eh[@]}" "${cxxflags[@]:2}")
  local sources=() s o
  mkdir -p "$obj"
  for s in "${all_sources[@]}"; do
    if [[ $s == src/cpu/simd/* ]]; then [ "$mode" = simd ] || continue; fi
    sources+=("$s")
  done
  [ "$mode" = simd ] && flags+=(-DATTNLITE_HAVE_SIMD=1)
  [ "${2:-}" = asan ] && flags+=("${sanitize[@]}")
  # Flags change the objects: rebuild everything when they differ from the last build.
  { echo "${flags[*]}"; declare -f opt_for; } > "$obj/flags.new"
  if ! cmp -s "$obj/flags.new" "$obj/flags"; then rm -f "$obj"/*.o "$obj"/*.d; mv "$obj/flags.new" "$obj/flags"; fi
  local todo=() f is_fig
  objects=()
  figures_objects=()
  for s in "${sources[@]}"; do
    o=$obj/$(echo "${s%.cpp}" | tr / _).o
    is_fig=0
    for f in "${figures_sources[@]}"; do [ "$f" = "$s" ] && is_fig=1; done
    if [ $is_fig = 1 ]; then figures_objects+=("$o"); else objects+=("$o"); fi
    if stale "$s" "$o" "${o%.o}.d"; then todo+=("$s:$o:$(opt_for "$s")"); fi
  done
  if [ ${#todo[@]} -gt 0 ]; then
    echo "wasm/build.sh: compiling ${#todo[@]} of ${#sources[@]} sources ($mode kernels, -j$jobs)"
    CXXFLAGS_LIST="${flags[*]}" xargs -P "$jobs" -I{} bash -c '
      IFS=: read -r s o opt <<< "$1"
      em++ $opt $CXXFLAGS_LIST -MMD -MF "${o%.o}.d" -c "$s" -o "$o" || { rm -f "$o"; exit 255; }' _ {} \
      < <(printf '%s\n' "${todo[@]}")
  fi
}

# Every function of the C API (include/attnlite/c_api.h) is exported, except al_model_load:
# the module has no file system (models come as bytes, al_model_adopt_bytes); and the
# figures section (al_figure_*, src/c_api/figures.cpp), native only: it would bring the
# renderer, the SVG writer and the model-driven figures into the runtime, whose size has a
# budget, while the page draws its maps with the renderer module (al_render_translation_map).
# The web-only functions of wasm/bindings.cpp are exported by EMSCRIPTEN_KEEPALIVE.
c_api=$(grep -oE '\bal_[a-z0-9_]+\(' include/attnlite/c_api.h | tr -d '(' | sort -u |
  grep -vx al_model_load | grep -v '^al_figure_' | sed 's/^/_/' | paste -sd, -)
ldflags=(-O3 -msimd128 -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createAttnlite
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=8MB -sTOTAL_STACK=1MB -sFILESYSTEM=0
  -sEXPORTED_FUNCTIONS=_malloc,_free,"$c_api"
  -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8)
# The figure renderer: the same settings under its own factory name; its exports are the
# EMSCRIPTEN_KEEPALIVE functions of wasm/figures_bindings.cpp (the same al_* names as the C API's
# errors and the former figure functions of the runtime) and the allocator.
figures_ldflags=(-O3 -msimd128 -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createAttnliteFigures
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=8MB -sTOTAL_STACK=1MB -sFILESYSTEM=0
  -sEXPORTED_FUNCTIONS=_malloc,_free
  -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8)

# The sanitized build: ASan and UBSan, both fatal (UBSan does not recover; ASan halts on its
# first report): a report ends the node process with status 1, so the test file fails.
# Function names in the reports come from --profiling-funcs. Linked at -O1: wasm-opt at -O3
# takes a minute over the 3 MB module (-O1: 10 s) for no measurable speed in the tests.
# Memory is fixed at 1 GB (ASan's shadow and quarantine included): without growth, the tests
# that compare the memory size before and after still hold.
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
asan_ldflags=("${sanitize[@]}" --profiling-funcs -sALLOW_MEMORY_GROWTH=0 -sINITIAL_MEMORY=1GB -O1)

link() {  # link ENVIRONMENT OUTDIR [EXTRA FLAGS]: both modules and the JavaScript API
  mkdir -p "$2"
  eh_flags "$eh_now"
  # shellcheck disable=SC2086  # LINK_FLAGS: extra link flags, word-split (e.g. --profiling-funcs)
  em++ "${ldflags[@]}" "${eh[@]}" -sENVIRONMENT="$1" "${@:3}" ${LINK_FLAGS:-} "${objects[@]}" -o "$2/attnlite.mjs"
  em++ "${figures_ldflags[@]}" "${eh[@]}" -sENVIRONMENT="$1" "${@:3}" "${figures_objects[@]}" \
    -o "$2/attnlite-figures.mjs"
  cp wasm/attnlite-api.mjs "$2/attnlite-api.mjs"
  rm -rf "$2/api" && mkdir -p "$2/api" && cp wasm/api/*.mjs "$2/api/"
  local m
  for m in attnlite attnlite-figures; do
    echo "wasm/build.sh: $2/$m.mjs + $m.wasm ($(stat -c %s "$2/$m.wasm") bytes," \
      "gzip -9 $(gzip -9c "$2/$m.wasm" | wc -c))"
  done
}

for t in "${targets[@]}"; do
  eh_now=$eh_mode  # the exception handling of this target (compile and link)
  case $t in
    web)
      compile "$(simd_mode "${SIMD_WEB:-${SIMD:-off}}")"
      link web "${WEB_OUT:-web}" ;;
    node)
      compile "$(simd_mode "${SIMD_NODE:-${SIMD:-off}}")"
      link node "${NODE_OUT:-build/wasm-node}" --extern-pre-js wasm/node-prelude.mjs ;;
    node-asan)
      # Always JavaScript-based exceptions: with native WebAssembly exceptions, a C++ throw in
      # Emscripten 3.1.6's ASan build traps ("RuntimeError: unreachable") before its catch.
      eh_now=js
      compile "$(simd_mode "${SIMD_NODE:-${SIMD:-off}}")" asan
      link node "${ASAN_OUT:-build/wasm-node-asan}" --extern-pre-js wasm/node-prelude.mjs "${asan_ldflags[@]}" ;;
    kernel-test)
      # The node build's objects and flags; the test's own object next to them. Only the
      # kernels and their table are linked (the rest of the library is not needed).
      compile "$(simd_mode "${SIMD_NODE:-${SIMD:-off}}")"
      out=${KERNEL_TEST_OUT:-build/wasm-kernel-test}
      kobj=build/wasm-obj-$eh_now-kernel-test
      mkdir -p "$out" "$kobj"
      eh_flags "$eh_now"
      em++ -O3 "${cxxflags[@]:0:2}" "${eh[@]}" "${cxxflags[@]:2}" -c tests/wasm/kernel_parity.cpp \
        -o "$kobj/kernel_parity.o"
      # A program: tests/wasm/run-main.mjs calls the module's factory on load, main() runs and
      # its status is node's (EXIT_RUNTIME); synchronous compilation reads the .wasm from disk
      # (the glue's asynchronous path would fetch() it, which node cannot do for a file).
      em++ -O3 -msimd128 "${eh[@]}" -sENVIRONMENT=node -sEXIT_RUNTIME=1 -sALLOW_MEMORY_GROWTH=1 \
        -sWASM_ASYNC_COMPILATION=0 -sEXPORT_ES6=1 --extern-pre-js wasm/node-prelude.mjs \
        --extern-post-js tests/wasm/run-main.mjs \
        "$kobj/kernel_parity.o" \
        $(printf '%s\n' "${objects[@]}" | grep -E '/src_cpu_(dispatch|kernels_scalar|wasm_|simd_)') \
        -o "$out/kernel_parity.mjs"
      echo "wasm/build.sh: $out/kernel_parity.mjs (node $out/kernel_parity.mjs)" ;;
    *) echo "wasm/build.sh: unknown target '$t' (web, node, node-asan, kernel-test)" >&2; exit 2 ;;
  esac
done
