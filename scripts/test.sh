#!/usr/bin/env bash
# Setup + build, then every test through ctest: doctest unit tests, the Python end-to-end
# suites (tests/e2e) and the ONNX conformance runner (tests/onnx). Exits non-zero on any failure.
# The aarch64 suite runs too: scripts/build_aarch64.sh cross-builds the runtime into
# $BUILD_DIR/aarch64 and the aarch64_* ctest tests run it under qemu-aarch64.
#   extra arguments go to ctest (e.g. -R e2e_ or -j2)
#   EDGE_AARCH64=0  x86-64 only (no cross build, no aarch64_* tests)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD_DIR=${BUILD_DIR:-build}
if [[ ${EDGE_AARCH64:-1} != 0 ]]; then
  AARCH64_BUILD_DIR=$(realpath -m "${AARCH64_BUILD_DIR:-$BUILD_DIR/aarch64}")
  ./scripts/build.sh -DEDGE_AARCH64_BUILD_DIR="$AARCH64_BUILD_DIR"
  EDGE_SKIP_SETUP=1 AARCH64_BUILD_DIR=$AARCH64_BUILD_DIR ./scripts/build_aarch64.sh
else
  ./scripts/build.sh -DEDGE_AARCH64_BUILD_DIR=
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error "$@"
