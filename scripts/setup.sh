#!/usr/bin/env bash
# Installs what the build and the tests need, skipping what is already there.
#   apt: compilers, CMake, LLVM 19, protobuf, FlatBuffers, doctest, mimalloc, libsodium
#        (Ed25519 bundle signatures), fsverity (the reference fs-verity digests of
#        tests/e2e/test_signed_bundles.py); the aarch64
#        cross compiler and qemu-user (scripts/build_aarch64.sh, the aarch64 tests); OpenCL
#        headers, the ICD loader and two CPU implementations (PoCL, Mesa's rusticl) for the
#        opencl port's tests, clinfo
#   pip (for the python3 on PATH): onnx==1.17.0, onnxruntime, numpy, ml_dtypes, tinymesa==25.2.7.2
#        (Mesa's ir3 compiler for edgec --target adreno630); scikit-build-core, nanobind (the
#        Python package: pyproject.toml, python/), pytest (its tests, tests/python/)
#   arm64 root (EDGE_AARCH64=0 skips it): Debian's python3.11 + numpy for arm64, unpacked into
#        build/aarch64-python-root by scripts/setup_aarch64_python.sh (the aarch64 binding's test)
#   --torchvision: also Debian's python3-torchvision (tests/models/: the ctest zoo_vs_onnxruntime
#        exports its models with it; scripts/test.sh passes this flag)
#   --timm: also --torchvision's package and timm 0.9.16 (the pure-Python wheel, --no-deps)
#        unpacked into tests/generated/timm-0.9.16 for Debian's python3 (tests/models/export_timm.py:
#        timm architectures for benchmark.py --zoo --zoo-models; no test needs it)
#   --dev: also ccache and ninja (faster rebuilds across git worktrees; not needed by the tests)
# Quiet when nothing is missing; safe to run any number of times.
set -euo pipefail

WITH_TORCHVISION=0
WITH_DEV=0
WITH_TIMM=0
for arg in "$@"; do
  case "$arg" in
    --torchvision) WITH_TORCHVISION=1 ;;
    --timm) WITH_TORCHVISION=1; WITH_TIMM=1 ;;
    --dev) WITH_DEV=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

APT_PACKAGES=(build-essential cmake llvm-19-dev clang-19 lld-19 libflatbuffers-dev flatbuffers-compiler
              doctest-dev libmimalloc-dev libsodium-dev fsverity libprotobuf-dev protobuf-compiler binutils file
              zlib1g-dev  # libz.a: the wheel's static edgec (EDGE_SELF_CONTAINED); libsodium.a, libprotobuf.a, LLVM's .a come with the -dev packages above
              g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user
              libclang-rt-19-dev opencl-headers ocl-icd-libopencl1 ocl-icd-opencl-dev pocl-opencl-icd mesa-opencl-icd clinfo)
if [[ $WITH_TORCHVISION == 1 ]]; then APT_PACKAGES+=(python3-torchvision); fi
if [[ $WITH_DEV == 1 ]]; then APT_PACKAGES+=(ccache ninja-build); fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  SUDO=()
  if [[ $(id -u) != 0 ]]; then
    if command -v sudo >/dev/null; then SUDO=(sudo); else
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null; then
  echo "setup: $PYTHON not found" >&2; exit 1
fi
pip_missing=()
"$PYTHON" -c 'import onnx, sys; sys.exit(onnx.__version__ != "1.17.0")' 2>/dev/null || pip_missing+=("onnx==1.17.0")
"$PYTHON" -c 'import onnxruntime' 2>/dev/null || pip_missing+=(onnxruntime)
"$PYTHON" -c 'import numpy' 2>/dev/null || pip_missing+=(numpy)
# onnxruntime.quantization (tests/e2e/test_int8.py quantizes its models) imports ml_dtypes,
# which the onnxruntime wheel does not pull in.
"$PYTHON" -c 'import ml_dtypes' 2>/dev/null || pip_missing+=(ml_dtypes)
# edgec --target adreno630 loads Mesa's ir3 compiler from this wheel's libtinymesa.so (x86-64;
# edgec checks its build id: exactly this version). Only that target needs it.
"$PYTHON" -c 'import importlib.metadata as m, sys; sys.exit(m.version("tinymesa") != "25.2.7.2")' 2>/dev/null \
  || pip_missing+=(tinymesa==25.2.7.2)
# The Python package (pip install ., or the build's own extension module): scikit-build-core
# drives CMake, nanobind binds the runtime's C API; pytest runs tests/python/.
"$PYTHON" -c 'import scikit_build_core' 2>/dev/null || pip_missing+=(scikit-build-core)
"$PYTHON" -c 'import nanobind' 2>/dev/null || pip_missing+=(nanobind)
"$PYTHON" -c 'import pytest' 2>/dev/null || pip_missing+=(pytest)
if ((${#pip_missing[@]})); then
  echo "setup: pip installing for $("$PYTHON" -c 'import sys; print(sys.executable)'): ${pip_missing[*]}"
  "$PYTHON" -m pip install -q --disable-pip-version-check "${pip_missing[@]}"
fi
# timm for Debian's torch (no pip install into the system python: the wheel is unpacked where
# export_timm.py looks; its dependencies, huggingface_hub and safetensors, are not needed to build
# models with random weights).
TIMM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/generated/timm-0.9.16"
if [[ $WITH_TIMM == 1 && ! -f $TIMM_DIR/timm/__init__.py ]]; then
  echo "setup: unpacking timm 0.9.16 into $TIMM_DIR"
  timm_wheel_dir=$(mktemp -d)
  "$PYTHON" -m pip download -q --disable-pip-version-check --no-deps -d "$timm_wheel_dir" timm==0.9.16
  mkdir -p "$TIMM_DIR"
  "$PYTHON" -m zipfile -e "$timm_wheel_dir"/timm-0.9.16-py3-none-any.whl "$TIMM_DIR"
  rm -rf "$timm_wheel_dir"
fi
# onnx 1.17.0 is pinned: later wheels no longer ship backend/test/data/node, which the
# conformance runner (tests/onnx/run_node_tests.py) reads.
"$PYTHON" -c 'import onnx, os, sys; d = os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"); sys.exit(not os.path.isdir(d))' \
  || { echo "setup: the installed onnx wheel has no backend node test data" >&2; exit 1; }
# Debian's arm64 Python 3.11 + numpy unpacked into build/aarch64-python-root (nothing installed
# system-wide): the aarch64 Python binding is built against it and tested in it under qemu.
# Not fatal (e.g. offline): without the root the module is not cross-built and that test fails,
# saying how to make it.
if [[ ${EDGE_AARCH64:-1} != 0 ]]; then
  "$(dirname "${BASH_SOURCE[0]}")/setup_aarch64_python.sh" ||
    echo "setup: no arm64 Python root (scripts/setup_aarch64_python.sh failed): the ctest aarch64_python_binding will fail" >&2
fi
