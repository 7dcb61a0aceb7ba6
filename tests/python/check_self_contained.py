#!/usr/bin/env python3
"""Does a Python package of this project run on a machine that has only the C and C++ runtimes?

    python3 tests/python/check_self_contained.py PATH...   (a package folder, or a .whl)

For every ELF file under PATH, each NEEDED entry of its dynamic section (readelf -d) must be
one of edge_testlib.SYSTEM_LIBRARIES (what every glibc Linux with a C++ runtime has; the list
tests/e2e/test_runtime_links.py holds the runtime to), or a library shipped in the
package itself that the file's RUNPATH/RPATH finds through $ORIGIN. Anything else (libsodium,
LLVM, protobuf from the build machine) is printed and the exit status is 1. An absolute
RPATH/RUNPATH is a failure too: the wheel would load the build machine's libraries where they
exist and break where they do not.
"""
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from edge_testlib import SYSTEM_LIBRARIES  # noqa: E402


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def dynamic_entries(path):
    """(NEEDED names, RUNPATH/RPATH folders) of an ELF file."""
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    paths = []
    for entry in re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", out):
        paths += [p for p in entry.split(":") if p]
    return needed, paths


def problems_in(root):
    """What keeps the package under `root` from loading without the build machine's libraries."""
    problems, n_elf = [], 0
    root = os.path.realpath(root)
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            rel = os.path.relpath(os.path.join(folder, name), root)
            # The staged package of a plain build links its tools (symlinks): check what they
            # point to, whose RUNPATH $ORIGIN is the folder of the real file.
            path = os.path.realpath(os.path.join(folder, name))
            if not is_elf(path):
                continue
            n_elf += 1
            needed, runpaths = dynamic_entries(path)
            shipped = []
            for rp in runpaths:
                if not rp.startswith("$ORIGIN"):
                    problems.append(f"{rel}: RUNPATH {rp} is outside the package")
                    continue
                shipped.append(os.path.realpath(rp.replace("$ORIGIN", os.path.dirname(path), 1)))
            for lib in needed:
                if SYSTEM_LIBRARIES.match(lib):
                    continue
                if any(os.path.isfile(os.path.join(d, lib)) for d in shipped):
                    continue
                problems.append(f"{rel}: needs {lib}, which neither every Linux nor the package has")
    return problems, n_elf


def check(path):
    if path.endswith(".whl"):
        with tempfile.TemporaryDirectory() as tmp:
            with zipfile.ZipFile(path) as z:
                z.extractall(tmp)
            return problems_in(tmp)
    return problems_in(path)


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    failed = False
    for path in argv:
        problems, n_elf = check(path)
        if n_elf == 0:
            problems.append("no ELF file found")
        for p in problems:
            print(f"{path}: {p}")
        failed |= bool(problems)
        if not problems:
            print(f"{path}: {n_elf} ELF files, every NEEDED library allowed or shipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
