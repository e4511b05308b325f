# attnlite — the CUDA backend on an emulated device (option ATTNLITE_CUDA_EMULATOR): the
# sources of src/cuda compiled as C++ against tests/cuda_emu's runtime, cuBLAS and cuBLASLt,
# so that a machine without a GPU or nvcc runs every CUDA test on the backend's own code
# (tools/test.sh cuda). Not a backend to ship: its kernels run on fibers, one thread at a time.
# Included from the top-level CMakeLists.txt after the attnlite target exists.
set(EMU_DIR ${CMAKE_CURRENT_SOURCE_DIR}/tests/cuda_emu)
set(EMU_OUT ${CMAKE_CURRENT_BINARY_DIR}/cuda_emu)
file(GLOB EMU_CU CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cu)

# Each .cu file as C++: `kernel<<<config>>>(args)` becomes a call of cuda_emu::launch (the
# kernel's name kept for messages) and `extern __shared__ T name[];` the launch's dynamic
# shared memory. The lines stay where they were (#line), so messages point at src/cuda.
set(EMU_SOURCES)
foreach(cu ${EMU_CU})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${cu})
  file(READ ${cu} text)
  string(REGEX REPLACE
    "([A-Za-z_][A-Za-z0-9_]*(<[^<>;()]*>)?)<<<([^;]*)>>>\\("
    "::cuda_emu::launch(\\1, \"\\1\", ::cuda_emu::Config(\\3))(" text "${text}")
  string(REGEX REPLACE
    "extern __shared__ ([A-Za-z0-9_]+) ([A-Za-z0-9_]+)\\[\\];"
    "\\1* const \\2 = static_cast<\\1*>(::cuda_emu::dynamic_shared_memory());" text "${text}")
  if(text MATCHES "<<<|>>>|extern __shared__")
    message(FATAL_ERROR "cuda_emu: ${cu} has a launch or shared declaration the rewrite missed")
  endif()
  get_filename_component(name ${cu} NAME_WE)
  set(out ${EMU_OUT}/${name}.cpp)
  file(WRITE ${out}.new "#line 1 \"${cu}\"\n${text}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${out}.new ${out})
  list(APPEND EMU_SOURCES ${out})
endforeach()

file(GLOB EMU_CPP CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cpp)
list(FILTER EMU_CPP EXCLUDE REGEX "/cublas_library\\.cpp$")  # the table comes from cublas.cpp
list(APPEND EMU_SOURCES ${EMU_CPP} ${EMU_DIR}/runtime.cpp ${EMU_DIR}/cublas.cpp)
target_sources(attnlite PRIVATE ${EMU_SOURCES})
set_source_files_properties(${EMU_SOURCES} PROPERTIES
  SKIP_UNITY_BUILD_INCLUSION ON
  INCLUDE_DIRECTORIES "${EMU_DIR}/include"
  COMPILE_OPTIONS "-Wno-unknown-pragmas")
target_compile_definitions(attnlite PUBLIC ATTNLITE_HAVE_CUDA=1 ATTNLITE_CUDA_EMULATED=1)
message(STATUS "attnlite: CUDA backend on an emulated device (tests only)")
