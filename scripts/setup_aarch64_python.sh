#!/usr/bin/env bash
# Makes an arm64 root with Debian's Python 3.11 and numpy in it, for the aarch64 Python binding:
# scripts/build_aarch64.sh compiles the runtime module (_edgert) against its headers, and the
# ctest aarch64_python_binding runs `qemu-aarch64 -L ROOT ROOT/usr/bin/python3.11` on it.
#   ROOT: $EDGE_AARCH64_PYTHON_ROOT, default build/aarch64-python-root (in the repository)
# Nothing is installed on this machine: apt runs with a private state folder and arm64 as its
# only architecture (the system's dpkg architectures and package lists are left as they are),
# downloads the .debs and `dpkg -x` unpacks them into ROOT. The package list is resolved with
# apt-cache depends from the roots below. A marker file makes a second run a no-op (delete ROOT
# to redo it). Called by scripts/setup.sh unless EDGE_AARCH64=0.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROOT=$(realpath -m "${EDGE_AARCH64_PYTHON_ROOT:-build/aarch64-python-root}")
MARKER=$ROOT/.edge-sysroot-packages
if [[ -f $MARKER ]]; then exit 0; fi

# Roots: the interpreter (python3.11-minimal: the binary and the core of the standard library),
# numpy, and libstdc++ (the C++ extension module links it). Their Depends/Pre-Depends are
# followed (the first of alternatives), except:
SKIP=" python3 python3.11 python3-pkg-resources dpkg tar "
#   python3, python3.11: metapackages (the python3 symlink, pydoc, ...); numpy names them
#   python3-pkg-resources: setuptools' pkg_resources, never imported by numpy at run time
#   dpkg, tar: needed by maintainer scripts, which dpkg -x never runs
ROOTS=(python3.11-minimal python3-numpy libstdc++6)
# Taken without their dependencies: the pure-Python standard library (its Depends are the C
# libraries of optional modules: sqlite3, readline, dbm, ...), and the C headers for the cross
# build (only usr/include is unpacked from it; its static libpython is not).
SHALLOW=(libpython3.11-stdlib libpython3.11-dev)

WORK=$(mktemp -d)
chmod 755 "$WORK"  # apt downloads as its own user (_apt), which must reach the folder
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/debs"
: >"$WORK/status"
APT_OPTS=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64
          -o Dir::State::Lists="$WORK/lists" -o Dir::State::Status="$WORK/status"
          -o Dir::Cache="$WORK/cache" -o Debug::NoLocking=1)
start=$SECONDS
apt-get "${APT_OPTS[@]}" -qq update
update_s=$((SECONDS - start))

depends_of() {  # PKG...: their Depends and Pre-Depends, the first of each group of alternatives
  apt-cache "${APT_OPTS[@]}" depends --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$@" |
    awk '/^[^ ]/ { in_or = 0; next }
         $1 ~ /^\|?(Pre)?Depends:$/ { if (!in_or && $2 !~ /^</) print $2; in_or = ($1 ~ /^\|/) }'
}
declare -A seen=()
level=("${ROOTS[@]}")
while ((${#level[@]})); do  # one apt-cache call per level of the dependency tree
  new=()
  for pkg in "${level[@]}"; do
    if [[ -z ${seen[$pkg]-} && $SKIP != *" $pkg "* ]]; then seen[$pkg]=1; new+=("$pkg"); fi
  done
  level=()
  if ((${#new[@]})); then mapfile -t level < <(depends_of "${new[@]}" | sort -u); fi
done
packages=("${!seen[@]}" "${SHALLOW[@]}")

start=$SECONDS
(cd "$WORK/debs" && apt-get "${APT_OPTS[@]}" -o APT::Sandbox::User=root -qq download "${packages[@]}" >/dev/null)
download_s=$((SECONDS - start))
rm -rf "$ROOT"
mkdir -p "$ROOT"
bytes=0
for deb in "$WORK"/debs/*.deb; do
  bytes=$((bytes + $(stat -c %s "$deb")))
  if [[ $(basename "$deb") == libpython3.11-dev_* ]]; then
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$ROOT" --wildcards './usr/include/*'
  else
    dpkg -x "$deb" "$ROOT"
  fi
done
# What update-alternatives would make at install time: numpy loads libblas.so.3 and
# liblapack.so.3 (the reference implementations, libblas3 / liblapack3, live in subfolders).
for lib in blas lapack; do
  ln -sf "$lib/lib$lib.so.3" "$ROOT/usr/lib/aarch64-linux-gnu/lib$lib.so.3"
done

# Byte-compile the standard library and numpy, as Debian's postinst scripts (py3compile) would:
# without .pyc files (dpkg -x runs no scripts) every start under qemu compiles numpy again,
# 4.0 s of CPU per `import numpy` instead of 1.1 s (README has the command). .pyc files depend
# on the Python minor version only, so the build machine's python compiles them when it is
# 3.11 (else: skipped).
PYTHON=${PYTHON:-python3}
if "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  "$PYTHON" -m compileall -q -j0 "$ROOT/usr/lib/python3.11" "$ROOT/usr/lib/python3/dist-packages" >/dev/null || true
fi
# Check the root before marking it done: the interpreter starts and imports numpy.
if command -v qemu-aarch64 >/dev/null; then
  qemu-aarch64 -L "$ROOT" "$ROOT/usr/bin/python3.11" -c 'import numpy, platform; assert platform.machine() == "aarch64"'
fi
(cd "$WORK/debs" && ls) >"$MARKER"
printf 'setup: arm64 Python root in %s: %d packages, %.1f MB downloaded; %d s (apt update %d s, download %d s)\n' \
  "$ROOT" "${#packages[@]}" "$(awk "BEGIN { print $bytes / 1e6 }")" "$SECONDS" "$update_s" "$download_s"
