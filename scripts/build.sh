#!/usr/bin/env bash
# Installs dependencies (scripts/setup.sh) and builds everything (Release) into build/.
#   BUILD_DIR=...  build somewhere else;  EDGE_SKIP_SETUP=1  skip setup.sh
#   extra arguments go to the CMake configure step (e.g. -DEDGE_WERROR=OFF)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ${EDGE_SKIP_SETUP:-0} != 1 ]]; then ./scripts/setup.sh; fi

BUILD_DIR=${BUILD_DIR:-build}
PYTHON=${PYTHON:-python3}
# The tests need the interpreter that has onnx/onnxruntime (pyenv shims resolve here).
PYTHON_EXE=$("$PYTHON" -c 'import sys; print(sys.executable)')
GENERATOR=()
if [[ ! -f $BUILD_DIR/CMakeCache.txt ]] && command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi

# EDGE_BUILD_COMPILER=ON explicitly: a cache left by a runtime-only build would otherwise
# silently drop edgec and every end-to-end test.
cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DEDGE_BUILD_COMPILER=ON \
      -DPython3_EXECUTABLE="$PYTHON_EXE" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
