#!/usr/bin/env bash
# Cross-builds the device runtime for aarch64 with toolchains/aarch64-linux-gnu.cmake
# (Debian's g++-aarch64-linux-gnu; nothing else): libedgert.a + libedgert.so, static
# edgert-run / edgert-bench, the runtime unit tests, and the Python module (DIR/python/edgert,
# _edgert.so; needs the arm64 Python root of scripts/setup_aarch64_python.sh). Then installs
# it into DIR/install and builds tests/aarch64/consumer against the installed package
# (find_package(edgert)), as an application would. Prints the sizes of what a device gets.
#   AARCH64_BUILD_DIR=...  default $BUILD_DIR/aarch64 (BUILD_DIR default build)
#   EDGE_SKIP_SETUP=1      skip setup.sh
#   EDGE_AARCH64_PYTHON_ROOT=...  the arm64 Python root, default build/aarch64-python-root
#   extra arguments go to the CMake configure step of the runtime
# The compiler (edgec) is a host tool: scripts/build.sh builds it; `edgec compile
# --target aarch64` makes the bundles. scripts/test.sh runs both builds and all tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ${EDGE_SKIP_SETUP:-0} != 1 ]]; then ./scripts/setup.sh; fi

DIR=$(realpath -m "${AARCH64_BUILD_DIR:-${BUILD_DIR:-build}/aarch64}")
TOOLCHAIN=$PWD/toolchains/aarch64-linux-gnu.cmake
GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi

configure() {  # SRC BIN ARGS...: a fresh generator only for a fresh build dir
  local src=$1 bin=$2
  shift 2
  local gen=()
  if [[ ! -f $bin/CMakeCache.txt ]]; then gen=("${GENERATOR[@]}"); fi
  cmake -S "$src" -B "$bin" "${gen[@]}" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
}

# The Python module (_edgert.so, staged in DIR/python with the package's .py files) is built
# against the arm64 Python root that scripts/setup_aarch64_python.sh makes; nanobind comes from
# the build machine's Python (its sources are the same for every architecture).
PY_ROOT=$(realpath -m "${EDGE_AARCH64_PYTHON_ROOT:-build/aarch64-python-root}")
PYTHON=${PYTHON:-python3}
if [[ -f $PY_ROOT/.edge-sysroot-packages ]] && "$PYTHON" -c 'import nanobind' 2>/dev/null; then
  python_args=(-DEDGE_BUILD_PYTHON=ON -DEDGE_PYTHON_TARGET_ROOT="$PY_ROOT"
               -DPython_EXECUTABLE="$("$PYTHON" -c 'import sys; print(sys.executable)')")
else
  echo "build_aarch64: no arm64 Python root in $PY_ROOT (scripts/setup_aarch64_python.sh) or no nanobind: the Python module is not built" >&2
  python_args=(-DEDGE_BUILD_PYTHON=OFF)
fi
# EDGE_BUILD_COMPILER=OFF explicitly: the compiler is never cross-built.
configure . "$DIR" -DEDGE_BUILD_COMPILER=OFF -DEDGE_STATIC_TOOLS=ON -DCMAKE_INSTALL_PREFIX="$DIR/install" \
  "${python_args[@]}" "$@"
cmake --build "$DIR" -j"$(nproc)"
rm -rf "$DIR/install"
cmake --install "$DIR" --strip >/dev/null

# An application's build: the toolchain file plus where edgert is installed (edgert_DIR:
# toolchain files confine find_package to the target root, so CMAKE_PREFIX_PATH is not
# searched; adding the prefix to CMAKE_FIND_ROOT_PATH works too).
configure tests/aarch64/consumer "$DIR/consumer" -Dedgert_DIR="$DIR/install/lib/cmake/edgert"
cmake --build "$DIR/consumer" -j"$(nproc)"

size_of() { stat -c %s "$1"; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$DIR/CMakeCache.txt")
echo "aarch64 runtime in $DIR/install (executables and the shared libraries stripped):"
for f in bin/edgert-run bin/edgert-bench lib/libedgert.a "lib/libedgert.so.$version" lib/libedgert_opencl.a \
         "lib/libedgert_opencl.so.$version"; do
  if [[ -f $DIR/install/$f ]]; then printf '  %-28s %8d bytes\n' "$f" "$(size_of "$DIR/install/$f")"; fi
done
# What the budget test (size_budget_aarch64, tests/size/check_size.py) counts: the text of the
# core with the cpu port.
aarch64-linux-gnu-size "$DIR/device_runtime/libedgert.so.$version" | sed 's/^/  /'
