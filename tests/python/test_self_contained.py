"""The package needs nothing of the build machine: every ELF file of the staged package (the
extension module, edgert-run, edgert-bench, edgec) needs only libc, libm, libstdc++, libgcc_s
and the like, or libraries the package ships (tests/python/check_self_contained.py, which the
wheel check also runs on the wheel). Checked where the build is EDGE_SELF_CONTAINED (as the
wheel's); the checker's own cases run always, so that it is seen to fail."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import edgert

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_self_contained import problems_in  # noqa: E402

SODIUM = "/usr/lib/x86_64-linux-gnu/libsodium.so.23"


@pytest.mark.skipif(os.environ.get("EDGE_SELF_CONTAINED") != "1",
                    reason="the build links the build machine's LLVM, protobuf and libsodium (EDGE_SELF_CONTAINED=OFF, "
                           "as scripts/build.sh: edgec links in 3 s instead of 25 s); the wheel build is checked by the wheel test")
def test_staged_package_needs_only_allowed_libraries():
    package = Path(edgert.__file__).resolve().parent.parent
    for module in ("edgert", "edgec"):
        problems, n_elf = problems_in(str(package / module))
        assert n_elf > 0, f"no ELF file in {package / module}"
        assert not problems, "\n".join(problems)


def _shared_object(tmp_path, name, *link_args):
    src = tmp_path / "f.c"
    src.write_text("int f(void) { return 0; }\n")
    out = tmp_path / name
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(out), str(src), "-Wl,--no-as-needed", *link_args],
                   check=True)
    return out


@pytest.mark.skipif(not (shutil.which("cc") and os.path.exists(SODIUM)), reason="needs cc and libsodium")
def test_checker_refuses_outside_libraries_and_accepts_shipped_ones(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    _shared_object(bad, "needs_sodium.so", SODIUM, "-Wl,-rpath,/usr/lib/x86_64-linux-gnu")
    problems, n_elf = problems_in(str(bad))
    assert n_elf == 1
    assert any("needs libsodium.so.23" in p for p in problems), problems
    assert any("RUNPATH /usr/lib/x86_64-linux-gnu is outside the package" in p for p in problems), problems

    good = tmp_path / "good"
    (good / "_libs").mkdir(parents=True)
    shutil.copy(SODIUM, good / "_libs" / "libsodium.so.23")
    _shared_object(good, "ships_sodium.so", SODIUM, "-Wl,-rpath,$ORIGIN/_libs")
    assert problems_in(str(good)) == ([], 2)
