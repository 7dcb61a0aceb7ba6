#!/usr/bin/env python3
"""Is a gap between drive.py and the C demo the Python loop's, or the Python process's?

Builds samples/driving_model/driving_demo.cc as a shared library (main renamed, this build's
static runtime linked in) and runs three kinds of blocks, each between two blocks of the C demo
as a process, in ROUNDS rounds: the C demo as a process again (what the method reads for no
difference), the C demo's loop called through ctypes inside this Python process, and drive.py's
loop (DrivingLoop). Per kind: the median of the per-block CPU-time ratios against the C blocks
either side, and the CPU-time minima of the kind and of its neighbouring C blocks.

    PYTHONPATH=build/python python3 tests/bench/drive_in_process.py BUNDLE [--frames 10] [--rounds 10]
    PYTHONPATH=build/python python3 tests/bench/drive_in_process.py BUNDLE --per-command [--rounds 8]

The build (its static runtime, edgert-bench, driving_demo) is --build, else EDGE_BUILD_DIR, else
build/; --demo (else DRIVING_DEMO) names another driving_demo; CXX the compiler (default g++).

--per-command: where the time goes instead. One frame of the C demo's (its --dump, frame 5)
runs in edgert-bench --profile (a C process) and through ctx.profiling in this process,
alternating, 10 runs each per round; each command's minimum over the rounds of its median, the
sums, and the commands that differ most.

BENCHMARKS.md ("The driving loop in Python against C") has what it found.
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples" / "driving_model"))
sys.path.insert(0, str(ROOT / "tests"))
import drive  # noqa: E402
import edge_testlib as lib  # noqa: E402


def build_library(build, out):
    """driving_demo.cc as a shared library exporting demo_main; -Bsymbolic keeps its runtime
    apart from the one inside the edgert module this process has loaded."""
    rt = Path(build) / "device_runtime"
    # The build's libedgert.a verifies signatures with libsodium where it was built with them.
    cache = Path(build) / "CMakeCache.txt"
    sodium = ["-lsodium"] if cache.is_file() and "EDGE_SIGNATURES:BOOL=ON" in cache.read_text() else []
    cmd = [os.environ.get("CXX", "g++"), "-O3", "-DNDEBUG", "-std=c++17", "-fPIC", "-shared", "-fno-exceptions", "-fno-rtti",
           "-Dmain=demo_main", f"-I{ROOT / 'device_runtime' / 'include'}",
           str(ROOT / "samples" / "driving_model" / "driving_demo.cc"), "-o", out, "-Wl,-Bsymbolic",
           "-Wl,--undefined=edgert_opencl_register", str(rt / "libedgert_opencl.a"), "-ldl",
           str(rt / "libedgert.a"), *sodium]
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(out)
    # -Dmain=demo_main makes it an ordinary C++ function: its mangled name
    return lib["_Z9demo_mainiPPc"]


def per_command(a, demo):
    import numpy as np
    import edgert
    bench = str(Path(a.build) / "device_runtime" / "edgert-bench")
    with tempfile.TemporaryDirectory() as dump:
        subprocess.run([demo, a.bundle, "--frames", "5", "--warmup", "1", "--no-sleep", "--quiet", "--dump", dump],
                       check=True, capture_output=True)
        names = [t.name for t in edgert.Bundle(a.bundle).inputs]
        files = {n: os.path.join(dump, f"frame005_{n}.npy") for n in names}
        inputs = {n: np.load(f) for n, f in files.items()}
        cmd = [bench, a.bundle, "--iters", "10", "--warmup", "1", "--profile", "--json"]
        for n, f in files.items():
            cmd += ["--input", f"{n}={f}"]
        bundle = edgert.Bundle(a.bundle)
        ctx = bundle.context(threads=1)
        out = ctx.empty_outputs()
        ctx.profiling = True
        c, py = {}, {}
        for _ in range(a.rounds):
            for row in json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["profile"]:
                c.setdefault(row["name"], []).append(row["median_ms"])
            if a.reopen:  # a fresh private copy and arena each round, as each edgert-bench process has
                del ctx, bundle
                bundle = edgert.Bundle(a.bundle)
                ctx = bundle.context(threads=1)
                ctx.profiling = True
            ctx.run(inputs, out=out)  # untimed, as edgert-bench's --warmup 1
            per = {}
            for _ in range(10):
                ctx.run(inputs, out=out)
                for row in ctx.profile():
                    per.setdefault(row["name"], []).append(row["ns"] / 1e6)
            for name, v in per.items():
                py.setdefault(name, []).append(statistics.median(v))
    tc, tp = sum(min(v) for v in c.values()), sum(min(py[n]) for n in c)
    print(f"{a.rounds} rounds, the C demo's frame 5: sum of each command's minimum (over rounds of its median of 10 "
          f"runs): edgert-bench {tc:.3f} ms, this process {tp:.3f} ms ({percent_over(tp, tc)})")
    rows = sorted(((min(py[n]) - min(c[n]), n, min(c[n])) for n in c), reverse=True)
    for d, n, ms in rows[:6] + rows[-3:]:
        print(f"  {n:45s} {ms:8.4f} ms in edgert-bench, {1e3 * d:+7.1f} us here")
    print(f"  load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


def percent_over(mine, theirs):
    """'+x.x %', or why not: a tiny model's commands can measure 0 ms."""
    return f"{100 * (mine / theirs - 1):+.1f} %" if theirs > 0 else "n/a: 0 ms to compare with"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle")
    ap.add_argument("--frames", type=int, default=10, help="timed frames per block (default 10)")
    ap.add_argument("--rounds", type=int, default=10, help="rounds of the three kinds (default 10)")
    ap.add_argument("--build", default=str(lib.build_dir()), help="the build with the runtime and edgert-bench "
                    "(default $EDGE_BUILD_DIR or build/)")
    ap.add_argument("--demo", help="the driving_demo to compare with (default $DRIVING_DEMO or the build's)")
    ap.add_argument("--per-command", action="store_true", help="per-command times against edgert-bench instead")
    ap.add_argument("--reopen", action="store_true", help="with --per-command: open the bundle and create the "
                    "context again every round here too")
    a = ap.parse_args()
    demo = a.demo or os.environ.get("DRIVING_DEMO") or str(Path(a.build) / "samples" / "driving_demo")
    if a.per_command:
        return per_command(a, demo)
    # drive.py's own options (its defaults: 1 thread, seed 1, one warm-up frame), as its
    # --compare-with --no-sleep --quiet would set them.
    args = drive.arguments().parse_args([a.bundle, "--frames", str(a.frames), "--no-sleep", "--quiet",
                                         "--compare-with", demo])
    libc = ctypes.CDLL(None)
    with tempfile.TemporaryDirectory() as tmp:
        demo_main = build_library(a.build, os.path.join(tmp, "libdriving_demo.so"))

        def c_in_process(n):
            argv = [b"driving_demo", a.bundle.encode(), b"--frames", str(n).encode(), b"--warmup", b"1",
                    b"--no-sleep", b"--seed", b"1"]
            with tempfile.TemporaryFile() as f:  # its stdout, parsed as drive.py parses the process's
                sys.stdout.flush()
                saved = os.dup(1)
                os.dup2(f.fileno(), 1)
                try:
                    rc = demo_main(len(argv), (ctypes.c_char_p * len(argv))(*argv))
                    libc.fflush(None)
                finally:
                    os.dup2(saved, 1)
                    os.close(saved)
                f.seek(0)
                out = f.read().decode()
            timed = [m for m in drive.C_FRAME.finditer(out) if not m["warm"]]
            if rc != 0 or len(timed) != n:
                sys.exit(f"drive_in_process: the in-process demo failed ({rc}):\n{out}")
            return [float(m["ms"]) for m in timed], [float(m["cpu"]) for m in timed]

        loop = drive.DrivingLoop(args)
        kinds = {
            "C demo, a process": lambda n: drive.run_c_block(args, n)[1:],
            "C demo's loop in this process": c_in_process,
            "drive.py's loop": lambda n: loop.run_frames(1, n)[:2],
        }
        res = {k: [] for k in kinds}
        for _ in range(a.rounds):
            for name, run in kinds.items():
                _, _, before = drive.run_c_block(args, a.frames)
                _, cpu = run(a.frames)
                _, _, after = drive.run_c_block(args, a.frames)
                c = (statistics.median(before) + statistics.median(after)) / 2
                res[name].append((statistics.median(cpu) / c if c > 0 else math.nan, min(cpu), min(before + after)))
    print(f"{a.rounds} rounds of blocks of {a.frames} frames, each between two blocks of the C demo as a process; "
          f"CPU time of the calling thread")
    for name, rows in res.items():
        r = [x[0] for x in rows]
        mine, theirs = min(x[1] for x in rows), min(x[2] for x in rows)
        print(f"  {name:30s} block ratio median {statistics.median(r):.3f} (range {min(r):.3f}-{max(r):.3f}); "
              f"minima {mine:.2f} against {theirs:.2f} ms ({percent_over(mine, theirs)})")
    print(f"  load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
