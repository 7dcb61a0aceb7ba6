# Cross-compiling the runtime for the Hexagon DSP (v65 by default) with Debian's clang-19 and
# lld-19, freestanding: no C library, no C++ library, no threads, no exceptions or RTTI. What
# the runtime and edgert-run need from an OS comes from ports/hexagon/freestanding/ (a libc
# subset over platform.h; under qemu-hexagon, Linux system calls). scripts/build_hexagon.sh
# uses it:
#   cmake -S . -B build-hexagon -DCMAKE_TOOLCHAIN_FILE=toolchains/hexagon.cmake
#   qemu-hexagon build-hexagon/device_runtime/edgert-run BUNDLE --input ... --output-dir DIR
# EDGE_HEXAGON_CPU: hexagonv65 (default) or hexagonv66.
#
# Headers: clang has none for a C++ library on Hexagon, and the FlatBuffers headers the
# verifier uses need <string>, <vector>, <algorithm>, ... The build machine's libstdc++ and
# glibc headers supply those declarations and templates (read for a 32-bit, non-x86 target:
# include/gnu/stubs-32.h and include/edge_hexagon_prelude.h cover the two places that assume i386). No
# code of either library is linked (-nostdlib): anything the runtime would need from them and
# freestanding/ lacks is a link error, not a silent dependency.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR hexagon)
set(EDGE_FREESTANDING ON CACHE BOOL "no C/C++ library: link ports/hexagon/freestanding" FORCE)

if(NOT DEFINED EDGE_HEXAGON_CPU)
  set(EDGE_HEXAGON_CPU hexagonv65)
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGE_HEXAGON_CPU)

set(CMAKE_C_COMPILER clang-19)
set(CMAKE_CXX_COMPILER clang++-19)
set(CMAKE_C_COMPILER_TARGET hexagon-unknown-linux-musl)
set(CMAKE_CXX_COMPILER_TARGET hexagon-unknown-linux-musl)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

file(GLOB _edge_gxx_dirs LIST_DIRECTORIES true /usr/include/c++/[0-9]*)
list(SORT _edge_gxx_dirs COMPARE NATURAL ORDER DESCENDING)
list(GET _edge_gxx_dirs 0 _edge_gxx)
get_filename_component(_edge_gxx_version ${_edge_gxx} NAME)
set(_edge_shim ${CMAKE_CURRENT_LIST_DIR}/../ports/hexagon/freestanding/include)
set(_edge_flags "-mcpu=${EDGE_HEXAGON_CPU} -ffreestanding -fno-stack-protector -include ${_edge_shim}/edge_hexagon_prelude.h \
-isystem ${_edge_shim} -isystem ${_edge_gxx} -isystem /usr/include/x86_64-linux-gnu/c++/${_edge_gxx_version} \
-isystem /usr/include/x86_64-linux-gnu -isystem /usr/include")
set(CMAKE_C_FLAGS_INIT "${_edge_flags}")
set(CMAKE_CXX_FLAGS_INIT "${_edge_flags} -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -static -fuse-ld=lld")
# -O2, not -Os: at -Os LLVM's Hexagon back end saves registers through library routines
# (__save_r16_through_r27) that do not exist here. The runtime's own objects are -Os all the
# same (EDGE_RUNTIME_OPT_FLAGS in device_runtime/CMakeLists.txt): none of them calls such a
# routine (tests/hexagon/test_hexagon.py checks every undefined symbol of the skel).
set(CMAKE_C_FLAGS_RELEASE_INIT "-O2 -DNDEBUG")
set(CMAKE_CXX_FLAGS_RELEASE_INIT "-O2 -DNDEBUG")

# Header-only libraries (FlatBuffers) from the build machine; programs (flatc) too.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

find_program(EDGE_QEMU_HEXAGON qemu-hexagon)
if(EDGE_QEMU_HEXAGON)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EDGE_QEMU_HEXAGON})
endif()
