#!/usr/bin/env bash
# Cross-builds the device runtime for the Hexagon DSP with toolchains/hexagon.cmake (clang-19,
# lld-19, freestanding: no C/C++ library): libedgert.a, a static edgert-run that qemu-hexagon
# runs, and libedgert_skel.so, the FastRPC shared object the DSP's loader opens (the runtime a
# device gets; ports/hexagon/README.md) with fastrpc-call, its test under qemu. Prints the
# stripped sizes.
#   HEXAGON_BUILD_DIR=...  default $BUILD_DIR/hexagon (BUILD_DIR default build)
#   EDGE_SKIP_SETUP=1      skip setup.sh
#   EDGE_HEXAGON_GUARD=1   instead, the test-only guard-page edgert-run (ports/cpu/cpu_context.cc,
#                          EDGERT_CPU_GUARD_PAGES: every buffer ends at an inaccessible 64 KB page,
#                          inputs and outputs exactly there), default dir $BUILD_DIR/hexagon-guard
#   extra arguments go to the CMake configure step (e.g. -DEDGE_HEXAGON_CPU=hexagonv66)
# The compiler is a host tool (scripts/build.sh): `edgec compile --target hexagon-v65` makes
# the bundles. scripts/test.sh runs this build and the hexagon_* tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ${EDGE_SKIP_SETUP:-0} != 1 ]]; then ./scripts/setup.sh; fi

GUARD=${EDGE_HEXAGON_GUARD:-0}
DIR=$(realpath -m "${HEXAGON_BUILD_DIR:-${BUILD_DIR:-build}/hexagon$([[ $GUARD == 1 ]] && echo -guard)}")
GENERATOR=()
if [[ ! -f $DIR/CMakeCache.txt ]] && command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
EXTRA=()  # the Release flags of toolchains/hexagon.cmake, plus the guard's
[[ $GUARD == 1 ]] && EXTRA=(-DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG -DEDGERT_CPU_GUARD_PAGES -DEDGERT_CPU_GUARD_MIN_PAGE=65536 -DEDGERT_CPU_GUARD_IO_AT_END")
cmake -S . -B "$DIR" "${GENERATOR[@]}" -DCMAKE_TOOLCHAIN_FILE="$PWD/toolchains/hexagon.cmake" \
      -DCMAKE_BUILD_TYPE=Release -DEDGE_BUILD_COMPILER=OFF -DEDGE_BUILD_TESTS=OFF -DEDGE_BUILD_SAMPLES=OFF \
      -DEDGE_PORTS=hexagon -DEDGE_SIGNATURES=OFF "${EXTRA[@]}" "$@" >/dev/null
if [[ $GUARD == 1 ]]; then
  cmake --build "$DIR" -j"$(nproc)" --target edgert-run
  echo "hexagon guard-page edgert-run (tests only): $DIR/device_runtime/edgert-run"
  exit 0
fi
cmake --build "$DIR" -j"$(nproc)"

strip_size() {  # FILE: bytes once stripped (a copy)
  llvm-strip-19 -o "$DIR/.stripped" "$1" && stat -c %s "$DIR/.stripped" && rm -f "$DIR/.stripped"
}
echo "hexagon runtime in $DIR (stripped sizes):"
printf '  %-34s %8d bytes\n' device_runtime/libedgert.a "$(strip_size "$DIR/device_runtime/libedgert.a")"
printf '  %-34s %8d bytes\n' device_runtime/edgert-run "$(strip_size "$DIR/device_runtime/edgert-run")"
printf '  %-34s %8d bytes  (FastRPC skel: the runtime on the DSP)\n' device_runtime/libedgert_skel.so \
       "$(strip_size "$DIR/device_runtime/libedgert_skel.so")"
# What the budget test (size_budget_hexagon_skel, tests/size/check_size.py) counts.
llvm-size-19 "$DIR/device_runtime/libedgert_skel.so" | sed 's/^/  /'
