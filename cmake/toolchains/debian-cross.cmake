# Shared by the Arm toolchain files: Debian's cross compilers for ATTNLITE_TRIPLE, their
# target libraries under /usr/<triple>, and qemu-user to run what is built.
set(CMAKE_C_COMPILER ${ATTNLITE_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ATTNLITE_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${ATTNLITE_TRIPLE})
# Programs (cmake, bash) from the build machine; libraries for the target only. The
# dependencies are header-only (nlohmann-json3-dev, libsimde-dev, libstb-dev, catch2) and
# architecture-independent, so their headers and CMake packages come from the build
# machine's /usr as for a native build.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# ctest (and Catch2's test discovery) run the target's programs through qemu-user, with the
# target's C library and loader from /usr/<triple>.
find_program(ATTNLITE_QEMU_PATH ${ATTNLITE_QEMU})
if(ATTNLITE_QEMU_PATH)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ATTNLITE_QEMU_PATH};-L;/usr/${ATTNLITE_TRIPLE})
endif()
