#!/usr/bin/env bash
# Setup + build, then every test through ctest: doctest unit tests, the Python end-to-end
# suites (tests/e2e) and the ONNX conformance runner (tests/onnx). Exits non-zero on any failure.
#   extra arguments go to ctest (e.g. -R e2e_ or -j2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error "$@"
