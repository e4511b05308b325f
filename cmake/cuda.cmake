# attnlite — the CUDA backend (option ATTNLITE_CUDA). Included from the top-level
# CMakeLists.txt after the attnlite target exists. The CPU build never reads this file.
#
#   -DATTNLITE_CUDA=ON                       build src/cuda/* into libattnlite
#   -DCMAKE_CUDA_ARCHITECTURES="80;90"       the default here (A100, H100/H200); override freely
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures for the attnlite kernels")
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

# The target exists already, so its CUDA properties are set here rather than through the
# CMAKE_CUDA_* defaults (which only apply to targets created later).
set_target_properties(attnlite PROPERTIES
  CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF)

file(GLOB ATTNLITE_CUDA_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cpp)
target_sources(attnlite PRIVATE ${ATTNLITE_CUDA_SOURCES})
# A unity build (CMAKE_UNITY_BUILD, tools/test.sh) merges the C++ files only: each .cu file has
# file-local helpers of the same names as the others'.
set_source_files_properties(${ATTNLITE_CUDA_SOURCES} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
# cuBLAS and cuBLASLt are not linked: src/cuda/cublas_library.cpp opens them when the GPU is
# first asked for (a CPU run of a CUDA build never maps their ~600 MB), looking beside the CUDA
# runtime and then in this toolkit's library folder when the system's search does not find them.
target_link_libraries(attnlite PUBLIC CUDA::cudart ${CMAKE_DL_LIBS})
set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/cublas_library.cpp APPEND PROPERTY
  COMPILE_DEFINITIONS "ATTNLITE_CUDA_LIBRARY_DIR=\"${CUDAToolkit_LIBRARY_DIR}\"")
target_compile_definitions(attnlite PUBLIC ATTNLITE_HAVE_CUDA=1)

# nvcc: the host compiler gets the project's warnings; with ATTNLITE_WERROR, every nvcc
# and host-compiler warning in the .cu files is an error too.
target_compile_options(attnlite PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>)
if(ATTNLITE_WERROR)
  target_compile_options(attnlite PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings>)
endif()

# The package config asks consumers' CMake for CUDAToolkit (CUDA::cudart).
set(ATTNLITE_PACKAGE_NEEDS_CUDA ON)
message(STATUS "attnlite: CUDA backend on (architectures ${CMAKE_CUDA_ARCHITECTURES}, CUDA ${CUDAToolkit_VERSION})")
