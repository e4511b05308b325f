# Translation benchmarks: the shipped d2l models and a base-size random Transformer through
# the public Translator API. bench/run.sh builds, makes the base model, runs the peers.
add_executable(attnlite_bench_translate ${CMAKE_CURRENT_SOURCE_DIR}/bench_translate.cpp)
target_link_libraries(attnlite_bench_translate PRIVATE attnlite benchmark::benchmark)
target_compile_definitions(attnlite_bench_translate PRIVATE
  ATTNLITE_MODELS_DIR="${CMAKE_SOURCE_DIR}/models"
  ATTNLITE_BASE_MODEL="${CMAKE_BINARY_DIR}/bench/base-transformer.safetensors")
attnlite_warnings(attnlite_bench_translate)
