# 32-bit Arm, ARMv7-A hard-float with NEON (Raspberry Pi 2/3 with a 32-bit OS, most 32-bit
# phones and boards), with Debian's cross compiler:
#   apt-get install g++-arm-linux-gnueabihf qemu-user
#   cmake -S . -B build/armv7 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/armv7-linux-gnueabihf.cmake
# Debian's armhf default is ARMv7 with VFPv3-D16 and no NEON; the flags below ask for NEON
# (VFPv4, so fused multiply-add too), which every Cortex-A7 and later has. -Wno-psabi: GCC's
# note that GCC 7.1 changed how some arguments are passed on 32-bit Arm concerns only code
# linked with objects of GCC 6 or older; everything here is built by one compiler.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(ATTNLITE_TRIPLE arm-linux-gnueabihf)
set(ATTNLITE_QEMU qemu-arm)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -Wno-psabi")
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake)
