#!/usr/bin/env bash
# Sanitizer builds of the runtime with clang-19 (scripts/test.sh runs it; the tests that use
# them are registered in the main build by -DEDGE_SANITIZER_BUILD_DIR=this folder):
#   $SANITIZER_BUILD_DIR/asan  ASan + UBSan (-fno-sanitize-recover=all): the runtime, its tools,
#                              its unit tests and the libFuzzer targets (tests/fuzz/), all with
#                              fuzzer coverage (-fsanitize=fuzzer-no-link)
#   $SANITIZER_BUILD_DIR/tsan  TSan: the runtime, its tools and its unit tests
#   $SANITIZER_BUILD_DIR/guard ASan + UBSan with -DEDGERT_CPU_GUARD_PAGES: edgert-run and
#                              edgert-bench, every buffer ending at an inaccessible page
# Only the cpu port: the OpenCL drivers are not built with sanitizers and the fuzzers should
# not reach into them. The compiler (LLVM) is not built here: fuzz_onnx compiles the
# importer's sources itself, without LLVM.
#   SANITIZER_BUILD_DIR=...  (default build/sanitizers);  EDGE_SKIP_SETUP=1  skip setup.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ${EDGE_SKIP_SETUP:-0} != 1 ]]; then ./scripts/setup.sh; fi
SANITIZER_BUILD_DIR=${SANITIZER_BUILD_DIR:-build/sanitizers}

build() {  # dir flags targets [cmake args...]
  local dir=$SANITIZER_BUILD_DIR/$1 flags=$2 generator=()
  shift 2
  if [[ ! -f $dir/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" -DEDGE_BUILD_COMPILER=OFF -DEDGE_BUILD_SAMPLES=OFF -DEDGE_BUILD_PYTHON=OFF \
        -DEDGE_RUNTIME_SHARED=OFF -DEDGE_PORTS=cpu \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" "${@:2}" >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target $1
}
# -O1 with line tables and asserts on: quicker to build than -O2 -g (2 CI cores), and symbolized.
opt="-O1 -gline-tables-only"
# -fno-sanitize=function: UBSan's check of indirect calls reads a type signature just before
# the callee, which the kernels (machine code from the bundle) do not have.
# clang warns on libstdc++ 12's own use of std::get_temporary_buffer (std::stable_sort).
common="-fno-omit-frame-pointer -fno-sanitize-recover=all -fno-sanitize=function -Wno-deprecated-declarations"
build asan "-fsanitize=address,undefined -fsanitize=fuzzer-no-link $common" \
      "edgert_unit_tests edgert-run edgert-bench fuzz_bundle fuzz_onnx" -DEDGE_BUILD_FUZZERS=ON
build tsan "-fsanitize=thread $common" "edgert_unit_tests edgert-run edgert-bench"
# ASan + guard pages (ports/cpu/cpu_context.cc): the kernels are machine code that ASan never
# instrumented; every buffer ending at an inaccessible page is what checks their accesses.
build guard "-fsanitize=address,undefined -DEDGERT_CPU_GUARD_PAGES $common" "edgert-run edgert-bench"
