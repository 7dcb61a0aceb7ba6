#!/usr/bin/env python3
"""The device runtime links no LLVM and no protobuf.

Checks edgert-run, edgert-bench, the sample app driving_demo (when built) and every runtime
library in the build (lib*.a / lib*.so under device_runtime/ and ports/):
  - shared objects / executables: DT_NEEDED (readelf -d) and the resolved closure (ldd)
  - all files: symbol names (nm; nm -D for dynamic symbols) containing "llvm" or "protobuf"
  - DT_NEEDED stays within edge_testlib.SYSTEM_LIBRARIES (libc, libm, libpthread, libdl, librt,
    libstdc++, libgcc_s, ld-linux; the list python/check_self_contained.py holds a Python
    package to), and libsodium only in a build with EDGE_SIGNATURES=ON
    (bundle signatures; a build without them must not need it); a port library
    (libedgert_<port>.so) also needs the core, libedgert.so
The same detector must flag edgec and libedgec_core.a, which do use LLVM and protobuf;
that proves the check can fail."""
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_runtime_links")
FORBIDDEN = re.compile(r"llvm|protobuf", re.IGNORECASE)
SODIUM_NEEDED = re.compile(r"^libsodium\.so[.\d]*$")
CORE_NEEDED = re.compile(r"^libedgert\.so[.\d]*$")


def signatures_enabled() -> bool:
    cache = lib.build_dir() / "CMakeCache.txt"
    return cache.is_file() and "EDGE_SIGNATURES:BOOL=ON" in cache.read_text()


def is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def is_archive(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(8) == b"!<arch>\n"


def needed(path: Path):
    out = lib.run_cmd(["readelf", "-d", "-W", path]).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def forbidden_findings(path: Path, max_report=5):
    """Every way `path` pulls in LLVM or protobuf; empty when clean."""
    findings = []
    if is_elf(path):
        for lib_name in needed(path):
            if FORBIDDEN.search(lib_name):
                findings.append(f"NEEDED {lib_name}")
        res = lib.run_cmd(["ldd", path], check=False)
        for line in res.stdout.splitlines():
            if FORBIDDEN.search(line):
                findings.append(f"ldd: {line.strip()}")
    if is_elf(path) or is_archive(path):
        symbols = []
        for args in (["nm", "-A"], ["nm", "-A", "-D"]):
            res = lib.run_cmd([*args, path], check=False)
            symbols += [ln for ln in res.stdout.splitlines() if FORBIDDEN.search(ln.split(":")[-1])]
        if symbols:
            findings.append(f"{len(symbols)} symbols, e.g. " + "; ".join(s.split()[-1] for s in symbols[:max_report]))
    return findings


def runtime_files():
    files = []
    for tool in ("edgert-run", "edgert-bench"):
        p = lib.find_tool(tool, required=False)
        if p is None:
            raise AssertionError(f"{tool} not found")
        files.append(p)
    demo = lib.find_tool("driving_demo", required=False)  # absent with -DEDGE_BUILD_SAMPLES=OFF
    if demo is not None:
        files.append(demo)
    bdir = lib.build_dir()
    libs = []
    for sub in ("device_runtime", "ports"):
        if (bdir / sub).is_dir():
            libs += [p for p in (bdir / sub).rglob("lib*") if p.is_file() and re.search(r"\.(a|so)(\.[\d.]+)?$", p.name)]
    if not any("edgert" in p.name for p in libs):
        libs += [p for p in bdir.rglob("libedgert*") if p.is_file()]
    assert any("edgert" in p.name for p in libs), f"no libedgert* library found under {bdir}"
    return files + sorted(set(libs))


def compiler_files():
    edgec = lib.find_tool("edgec")
    bdir = lib.build_dir()
    core = sorted(p for p in bdir.rglob("libedgec_core*") if p.is_file())
    assert core, f"no libedgec_core library under {bdir}"
    return [edgec, *core]


@suite.case
def tools_available():
    for t in ("readelf", "nm", "ldd"):
        assert shutil.which(t), f"{t} not on PATH (install binutils / libc-bin)"


@suite.case
def runtime_links_no_llvm_or_protobuf():
    bad = {}
    for f in runtime_files():
        found = forbidden_findings(f)
        print(f"    {f.relative_to(lib.build_dir()) if lib.build_dir() in f.parents else f}: "
              f"{'CLEAN' if not found else 'FORBIDDEN'}")
        if found:
            bad[str(f)] = found
    assert not bad, "runtime pulls in LLVM/protobuf:\n" + "\n".join(f"  {k}: {v}" for k, v in bad.items())


@suite.case
def runtime_needed_libraries_minimal():
    bad = {}
    for f in runtime_files():
        if not is_elf(f):
            continue
        libs = needed(f)
        print(f"    {f.name}: NEEDED {libs}")
        extra = [n for n in libs if not lib.SYSTEM_LIBRARIES.match(n)
                 and not (signatures_enabled() and SODIUM_NEEDED.match(n))
                 and not (f.name.startswith("libedgert_") and CORE_NEEDED.match(n))]
        if extra:
            bad[f.name] = extra
    print(f"    EDGE_SIGNATURES: {'ON (libsodium allowed)' if signatures_enabled() else 'OFF'}")
    assert not bad, f"runtime binaries need libraries beyond libc/pthreads/libstdc++: {bad}"


@suite.case
def detector_flags_the_compiler():
    # edgec and libedgec_core.a do use LLVM and protobuf; if the detector passes them,
    # the check above proves nothing.
    for f in compiler_files():
        found = forbidden_findings(f)
        print(f"    {f.name}: {found[:3]}")
        assert found, f"detector did not flag {f}, which uses LLVM and protobuf: the check is broken"


@suite.case
def detector_flags_a_synthetic_archive():
    # Independent of the build: an object that references llvm:: and google::protobuf symbols.
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++-19")
    if not cxx or not shutil.which("ar"):
        raise lib.Skip("no C++ compiler / ar")
    work = lib.work_dir("test_runtime_links")
    src = work / "fake.cc"
    src.write_text("namespace llvm { void f(); }\nnamespace google { namespace protobuf { void g(); } }\n"
                   "void use() { llvm::f(); google::protobuf::g(); }\n"
                   "void clean() {}\n")
    clean_src = work / "clean.cc"
    clean_src.write_text("int clean_function(int x) { return x + 1; }\n")
    lib.run_cmd([cxx, "-c", src, "-o", work / "fake.o"])
    lib.run_cmd([cxx, "-c", clean_src, "-o", work / "clean.o"])
    lib.run_cmd(["ar", "rcs", work / "libfake.a", work / "fake.o"])
    lib.run_cmd(["ar", "rcs", work / "libclean.a", work / "clean.o"])
    assert forbidden_findings(work / "libfake.a"), "detector missed llvm/protobuf symbols in libfake.a"
    assert not forbidden_findings(work / "libclean.a"), "detector flagged a clean archive"


if __name__ == "__main__":
    sys.exit(suite.main())
