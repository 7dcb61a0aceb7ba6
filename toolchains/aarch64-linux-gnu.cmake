# Cross-compiling for 64-bit ARM Linux (glibc) with Debian's GNU toolchain:
#   apt-get install g++-aarch64-linux-gnu      (run the results with qemu-user: qemu-aarch64)
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake \
#         -DEDGE_BUILD_COMPILER=OFF
# Another GNU cross toolchain works by setting EDGE_CROSS_PREFIX (default
# aarch64-linux-gnu-) and EDGE_SYSROOT (default /usr/aarch64-linux-gnu).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT DEFINED EDGE_CROSS_PREFIX)
  set(EDGE_CROSS_PREFIX aarch64-linux-gnu-)
endif()
if(NOT DEFINED EDGE_SYSROOT)
  set(EDGE_SYSROOT /usr/aarch64-linux-gnu)
endif()
# try_compile projects see these too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGE_CROSS_PREFIX EDGE_SYSROOT)

set(CMAKE_C_COMPILER ${EDGE_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${EDGE_CROSS_PREFIX}g++)

# Libraries, headers and packages come from the target's root (plus any roots given with
# -DCMAKE_FIND_ROOT_PATH=..., e.g. where edgert is installed); programs (flatc) from the
# build machine.
list(APPEND CMAKE_FIND_ROOT_PATH ${EDGE_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Lets ctest (and CMake's own checks) run aarch64 binaries on the build machine.
find_program(EDGE_QEMU_AARCH64 qemu-aarch64)
if(EDGE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EDGE_QEMU_AARCH64} -L ${EDGE_SYSROOT})
endif()
