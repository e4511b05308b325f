# 64-bit Arm (AArch64, NEON always present) with Debian's cross compiler:
#   apt-get install g++-aarch64-linux-gnu qemu-user
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# The programs run on the build machine under qemu-aarch64 (ctest uses it by itself); on a
# board (Raspberry Pi 3/4/5 with a 64-bit OS, Jetson) they run as they are.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(ATTNLITE_TRIPLE aarch64-linux-gnu)
set(ATTNLITE_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake)
