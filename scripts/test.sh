#!/usr/bin/env bash
# Setup + build, then every test through ctest: doctest unit tests, the Python end-to-end
# suites (tests/e2e) and the ONNX conformance runner (tests/onnx). Exits non-zero on any failure.
# The aarch64 suite runs too: scripts/build_aarch64.sh cross-builds the runtime into
# $BUILD_DIR/aarch64 and the aarch64_* ctest tests run it under qemu-aarch64.
#   extra arguments go to ctest (e.g. -R e2e_ or -j2)
# The sanitizer builds too: scripts/build_sanitizers.sh builds the runtime with ASan+UBSan
# (and the libFuzzer targets) and with TSan into $BUILD_DIR/sanitizers; the asan_*, tsan_* and
# fuzz_* ctest tests run them (the fuzzers for $EDGE_FUZZ_SECONDS each, default 30).
#   EDGE_AARCH64=0     x86-64 only (no cross build, no aarch64_* tests)
# The Hexagon suite runs too: scripts/build_hexagon.sh cross-builds the runtime freestanding
# into $BUILD_DIR/hexagon and hexagon_* tests run it under qemu-hexagon.
#   EDGE_HEXAGON=0     no Hexagon cross build, no hexagon_* tests
#   EDGE_SANITIZERS=0  no sanitizer builds, no asan_* / tsan_* / fuzz_* tests
# ctest runs $EDGE_TEST_JOBS tests at a time (default: the number of cores; the conformance
# runs and other tests that use two cores say so with PROCESSORS 2), names every failing
# test with its output, and the slowest ten are printed at the end.
#   --quick            the developer's tier (under 5 minutes): no sanitizer builds; the unit
#                      tests, one model per target and the size budgets (ctest label `quick`).
#                      CI runs the full command.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

QUICK=0
if [[ ${1-} == --quick ]]; then
  QUICK=1
  shift
  EDGE_SANITIZERS=0
fi

BUILD_DIR=${BUILD_DIR:-build}
args=()
if [[ ${EDGE_AARCH64:-1} != 0 ]]; then
  AARCH64_BUILD_DIR=$(realpath -m "${AARCH64_BUILD_DIR:-$BUILD_DIR/aarch64}")
  args+=(-DEDGE_AARCH64_BUILD_DIR="$AARCH64_BUILD_DIR")
else
  args+=(-DEDGE_AARCH64_BUILD_DIR=)
fi
if [[ ${EDGE_HEXAGON:-1} != 0 ]]; then
  HEXAGON_BUILD_DIR=$(realpath -m "${HEXAGON_BUILD_DIR:-$BUILD_DIR/hexagon}")
  args+=(-DEDGE_HEXAGON_BUILD_DIR="$HEXAGON_BUILD_DIR")
else
  args+=(-DEDGE_HEXAGON_BUILD_DIR=)
fi
if [[ ${EDGE_SANITIZERS:-1} != 0 ]]; then
  SANITIZER_BUILD_DIR=$(realpath -m "${SANITIZER_BUILD_DIR:-$BUILD_DIR/sanitizers}")
  args+=(-DEDGE_SANITIZER_BUILD_DIR="$SANITIZER_BUILD_DIR")
else
  args+=(-DEDGE_SANITIZER_BUILD_DIR=)
fi
# The zoo test (tests/models/zoo_vs_onnxruntime.py) exports its models with Debian's torch.
if [[ ${EDGE_SKIP_SETUP:-0} != 1 ]]; then ./scripts/setup.sh --torchvision; fi
./scripts/build.sh "${args[@]}"
if [[ ${EDGE_AARCH64:-1} != 0 ]]; then
  EDGE_SKIP_SETUP=1 AARCH64_BUILD_DIR=$AARCH64_BUILD_DIR ./scripts/build_aarch64.sh
fi
if [[ ${EDGE_HEXAGON:-1} != 0 ]]; then
  EDGE_SKIP_SETUP=1 HEXAGON_BUILD_DIR=$HEXAGON_BUILD_DIR ./scripts/build_hexagon.sh
  EDGE_SKIP_SETUP=1 HEXAGON_BUILD_DIR=$HEXAGON_BUILD_DIR-guard EDGE_HEXAGON_GUARD=1 ./scripts/build_hexagon.sh
fi
if [[ ${EDGE_SANITIZERS:-1} != 0 ]]; then
  EDGE_SKIP_SETUP=1 SANITIZER_BUILD_DIR=$SANITIZER_BUILD_DIR ./scripts/build_sanitizers.sh
fi
ctest_args=(--test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j"${EDGE_TEST_JOBS:-$(nproc)}")
if [[ $QUICK == 1 ]]; then ctest_args+=(-L quick); fi
# The compile cache the x86 suites and their guard-page runs share lives for one run.
rm -rf "$BUILD_DIR/test-work/compile-cache"
junit=$(realpath -m "$BUILD_DIR/ctest-results.xml")
status=0
ctest "${ctest_args[@]}" --output-junit "$junit" "$@" || status=$?
# This run's full log (every case's time), kept where no later ctest call overwrites it:
# tests/update_test_costs.py reads it.
cp "$BUILD_DIR/Testing/Temporary/LastTest.log" "$BUILD_DIR/ctest-last-run.log" 2>/dev/null || true
"${PYTHON:-python3}" tests/ctest_times.py "$junit" --top 10
exit $status
