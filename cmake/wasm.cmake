# The WebAssembly build: `emcmake cmake` (Debian's Emscripten 3.1.6 is tested). Included by
# CMakeLists.txt when the toolchain is Emscripten's: the options, the third-party headers and
# the compile flags that every WASM target shares. The two modules (the runtime
# attnlite.{mjs,wasm} and the figure renderer attnlite-figures.{mjs,wasm}), the kernel test
# and the JavaScript API beside them are wasm/CMakeLists.txt. wasm/build.sh configures one
# build folder per target (web, node, both of them, node-asan) and builds it.

set(ATTNLITE_WASM_ENVIRONMENT web CACHE STRING
  "Where the modules run: web (-sENVIRONMENT=web, the page), node (-sENVIRONMENT=node, the tests) or both from one compile (\"node;web\": the second's modules in <build>/web/)")
set_property(CACHE ATTNLITE_WASM_ENVIRONMENT PROPERTY STRINGS web node "node;web" "web;node")
set(wasm_envs ${ATTNLITE_WASM_ENVIRONMENT})
list(LENGTH wasm_envs wasm_env_count)
list(REMOVE_DUPLICATES wasm_envs)
list(LENGTH wasm_envs wasm_env_unique)
list(FILTER wasm_envs EXCLUDE REGEX "^(web|node)$")
if(wasm_env_count EQUAL 0 OR NOT wasm_env_count EQUAL wasm_env_unique OR wasm_envs)
  message(FATAL_ERROR "ATTNLITE_WASM_ENVIRONMENT must be web, node or \"node;web\" (got '${ATTNLITE_WASM_ENVIRONMENT}')")
endif()

# Native WebAssembly exceptions (wasm) or Emscripten's JavaScript-based exception handling (js):
# docs/web.md has the size and speed of each. The sanitized build needs js: with native
# WebAssembly exceptions, a C++ throw in Emscripten 3.1.6's ASan build traps ("RuntimeError:
# unreachable") before its catch.
if(ATTNLITE_SANITIZE)
  set(ATTNLITE_WASM_EXCEPTIONS_DEFAULT js)
else()
  set(ATTNLITE_WASM_EXCEPTIONS_DEFAULT wasm)
endif()
set(ATTNLITE_WASM_EXCEPTIONS ${ATTNLITE_WASM_EXCEPTIONS_DEFAULT} CACHE STRING
  "C++ exceptions: wasm (-fwasm-exceptions) or js (-fexceptions, Emscripten's JavaScript-based handling)")
set_property(CACHE ATTNLITE_WASM_EXCEPTIONS PROPERTY STRINGS wasm js)
if(ATTNLITE_WASM_EXCEPTIONS STREQUAL "wasm")
  set(ATTNLITE_WASM_EH_FLAGS -fwasm-exceptions)
elseif(ATTNLITE_WASM_EXCEPTIONS STREQUAL "js")
  set(ATTNLITE_WASM_EH_FLAGS -fexceptions -sDISABLE_EXCEPTION_CATCHING=0)
else()
  message(FATAL_ERROR "ATTNLITE_WASM_EXCEPTIONS must be wasm or js (got '${ATTNLITE_WASM_EXCEPTIONS}')")
endif()
if(ATTNLITE_SANITIZE AND ATTNLITE_WASM_EXCEPTIONS STREQUAL "wasm")
  message(FATAL_ERROR "ATTNLITE_SANITIZE needs ATTNLITE_WASM_EXCEPTIONS=js in the WebAssembly build")
endif()

# Extra link flags of the runtime module, e.g. --profiling-funcs (function names for
# node --cpu-prof); words separated by spaces.
set(ATTNLITE_WASM_LINK_FLAGS "" CACHE STRING "Extra link flags of the runtime module (e.g. --profiling-funcs)")

# The WebAssembly build makes the two modules; the CLI, the tests, benchmarks and examples are
# native programs (the module's own tests are tests/web/, in node and Chromium).
set(ATTNLITE_TOOLS OFF)
set(ATTNLITE_TESTS OFF)
set(ATTNLITE_BENCH OFF)
set(ATTNLITE_EXAMPLES OFF)

# Third-party headers: emcc does not search /usr/include, and adding it breaks the build
# (glibc's headers), so each package's folder reaches emcc through its own link in
# <build>/wasm-include/ (simde, nlohmann, stb).
set(ATTNLITE_WASM_INCLUDE ${CMAKE_BINARY_DIR}/wasm-include)
file(MAKE_DIRECTORY ${ATTNLITE_WASM_INCLUDE})
foreach(pkg simde:simde/x86/avx2.h nlohmann:nlohmann/json.hpp stb:stb/stb_image_write.h)
  string(REPLACE ":" ";" pkg ${pkg})
  list(GET pkg 0 name)
  list(GET pkg 1 header)
  string(TOUPPER ${name} NAME)
  find_path(ATTNLITE_WASM_${NAME}_PARENT ${header} PATHS /usr/include /usr/local/include
    NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  if(ATTNLITE_WASM_${NAME}_PARENT)
    file(CREATE_LINK ${ATTNLITE_WASM_${NAME}_PARENT}/${name} ${ATTNLITE_WASM_INCLUDE}/${name} SYMBOLIC)
  elseif(NOT name STREQUAL "simde" OR ATTNLITE_SIMD)
    message(FATAL_ERROR "${header} not found under /usr/include (tools/setup.sh installs it)")
  endif()
endforeach()
set(SIMDE_INCLUDE_DIR ${ATTNLITE_WASM_INCLUDE})
set(STB_INCLUDE_DIR ${ATTNLITE_WASM_INCLUDE}/stb)
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${ATTNLITE_WASM_INCLUDE})

# Every WASM source: SIMD128, the exception mode, no asserts, and no JPEG decoder in the
# module (14 KB of the size budget; the page draws digits on a canvas and the browser decodes
# image files): al_digit_from_file_bytes refuses JPEG with a message that says so
# (src/image/image_input.cpp).
add_compile_options(-msimd128 ${ATTNLITE_WASM_EH_FLAGS})
add_compile_definitions(NDEBUG STBI_NO_JPEG)
# The sanitized build: ASan and UBSan, both fatal (UBSan does not recover; ASan halts on its
# first report): a report ends the node process with status 1, so the test file fails.
set(ATTNLITE_WASM_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined)
if(ATTNLITE_SANITIZE)
  add_compile_options(${ATTNLITE_WASM_SANITIZE_FLAGS})
endif()

# attnlite_wasm_optimize(TARGET): the optimization level of each of TARGET's sources. The
# compute of the translate path at -O3: the SIMD128 kernels (src/cpu/wasm/), the SIMDe kernels
# when built in (src/cpu/simd/), the CPU op set (src/cpu/ops_cpu.cpp) and the attention scores
# and masked softmax (src/attention/dot_product.cpp, masked_softmax.cpp). Everything else at
# -Os, which keeps the .wasm small (docs/web.md): the blocks, which only call ops, and the code
# that runs once per model load, sentence, step, image or figure (the model file and weight
# loaders, the tokenizers, the tasks, searches and drivers, the C API, the image decoder, the
# renderer, the bindings, the thread pool and the kernel dispatch), and the scalar kernels
# (src/cpu/kernels_scalar.cpp): in WebAssembly they are the reference that
# use_kernels(Scalar) selects, the SIMD128 ones translate (-Os gives the same results: no
# float reassociation at any level). The sanitized build (ATTNLITE_SANITIZE, tests only)
# compiles everything at -O1: a sixth less compile time, no slower tests.
function(attnlite_wasm_optimize target)
  get_target_property(sources ${target} SOURCES)
  foreach(src ${sources})
    if(ATTNLITE_SANITIZE)
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS -O1)
    elseif(src MATCHES "/src/cpu/(wasm|simd)/|/src/cpu/ops_cpu[.]cpp$|/src/attention/(dot_product|masked_softmax)[.]cpp$")
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS -O3)
    else()
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS -Os)
    endif()
  endforeach()
endfunction()
