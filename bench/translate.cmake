# Translation benchmarks: the shipped d2l models and a base-size random Transformer through
# the public Translator API. bench/run.sh builds, makes the base model, runs the peers.
add_executable(attnlite_bench_translate ${CMAKE_CURRENT_SOURCE_DIR}/bench_translate.cpp)
target_link_libraries(attnlite_bench_translate PRIVATE attnlite benchmark::benchmark)
target_compile_definitions(attnlite_bench_translate PRIVATE
  ATTNLITE_MODELS_DIR="${CMAKE_SOURCE_DIR}/models"
  ATTNLITE_BASE_MODEL="${CMAKE_BINARY_DIR}/bench/base-transformer.safetensors")
target_include_directories(attnlite_bench_translate PRIVATE ${CMAKE_SOURCE_DIR}/src)  # model_impl.h
attnlite_warnings(attnlite_bench_translate)

# The command line again, linked with static libstdc++/libgcc, to measure how much of the
# peak RSS of `attnlite translate` is the shared C++ runtime (bench/run.sh, RESULTS.md).
if(ATTNLITE_TOOLS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT EMSCRIPTEN)
  add_executable(attnlite_cli_static_runtime ${ATTNLITE_CLI_SOURCES})
  target_link_libraries(attnlite_cli_static_runtime PRIVATE attnlite nlohmann_json::nlohmann_json)
  target_link_options(attnlite_cli_static_runtime PRIVATE -static-libstdc++ -static-libgcc)
  target_compile_definitions(attnlite_cli_static_runtime PRIVATE
    ATTNLITE_SOURCE_MODELS_DIR="${CMAKE_SOURCE_DIR}/models"
    ATTNLITE_INSTALL_MODELS_DIR="${CMAKE_INSTALL_FULL_DATADIR}/attnlite/models")
endif()
