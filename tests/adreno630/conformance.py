#!/usr/bin/env python3
"""adreno630 conformance, compile-only: every ONNX node test on the CPU's must-pass list
(tests/onnx/passing_tests.txt) compiled for `--target adreno630` (Mesa's ir3 through
libtinymesa.so), and each program checked: it decodes with zero errors through Mesa's
disassembler, ends with `end`, and the runtime's verifier accepts its launch fields (the
a630 register / constant / shared-memory limits). Nothing is run: there is no executor of
a6xx shaders here, so this says the kernels compile within limits, not that they compute
the right values.

    python3 tests/adreno630/conformance.py [--filter REGEX] [--report FILE] [--jobs 2]

Models run through `edgec compile-batch` (many per process: loading the 64 MB library once).
A model edgec says needs an input frozen (`'x' must be a constant`) is compiled again with
that input from the test's data (--const-input, as the CPU runner does). Exit status 1 when
a test fails that tests/adreno630/expected_failures.txt does not list (with its reason), or
when a listed one passes (the list must then shrink)."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402


def node_root() -> Path:
    import onnx
    return Path(onnx.__file__).parent / "backend/test/data/node"


def read_list(path: Path) -> dict[str, str]:
    """name -> reason (text after ' # ' on the line, or '')."""
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" # ")
        out[name.strip()] = reason.strip()
    return out


def input_values(test_dir: Path) -> dict:
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(test_dir / "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    ds = test_dir / "test_data_set_0"
    values = {}
    for i, name in enumerate(names):
        f = ds / f"input_{i}.pb"
        if f.exists():
            t = onnx.TensorProto()
            t.ParseFromString(f.read_bytes())
            values[name] = numpy_helper.to_array(t)
    return values


def run_batch(edgec: Path, entries: list[tuple[str, list[str]]], timeout: float) -> dict[str, dict]:
    """Compiles entries (model, [NAME=FILE.npy]) with one edgec process, restarting it after a
    crash; returns model -> result dict."""
    results: dict[str, dict] = {}
    pending = list(entries)
    while pending:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            for model, consts in pending:
                f.write(" ".join([model, *consts]) + "\n")
            listing = f.name
        started = None
        try:
            p = subprocess.run([str(edgec), "compile-batch", listing, "--target", "adreno630"], capture_output=True,
                               text=True, timeout=timeout)
            out, rc, err = p.stdout, p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            out, rc, err = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), None, ""
        finally:
            os.unlink(listing)
        for line in out.splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "begin" in r:
                started = r["begin"]
            elif "model" in r:
                results[r["model"]] = r
                started = None
        done = {m for m, _ in pending if m in results}
        if started is not None:  # the process died (assertion in Mesa, timeout) compiling it
            why = "timeout" if rc is None else f"crash (exit {rc}): " + (err.strip().splitlines() or [""])[-1][:200]
            results[started] = {"model": started, "ok": False, "error": why}
            done.add(started)
        elif rc not in (0,) and not done:
            raise RuntimeError(f"edgec compile-batch failed: {err[-2000:]}")
        pending = [(m, c) for m, c in pending if m not in done]
    return results


def verdict(r: dict) -> str:
    """'' when the test passes, else the reason."""
    if not r.get("ok"):
        return r.get("error", "no result")
    if not r.get("verified"):
        return "verifier: " + r.get("verifier", "")
    if r.get("decode_errors"):
        return f"{r['decode_errors']} decode errors"
    if r.get("unterminated"):
        return f"{r['unterminated']} programs do not end with end"
    return ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--filter", help="regex on test names")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="edgec processes (default 2)")
    ap.add_argument("--report", help="write a markdown table of the failures here")
    ap.add_argument("--expect-failures", default=str(HERE / "expected_failures.txt"))
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args(argv)
    t0 = time.time()
    edgec = lib.find_tool("edgec")
    root = node_root()
    tests = list(read_list(HERE.parent / "onnx" / "passing_tests.txt"))
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, t)]
    expected = read_list(Path(args.expect_failures))
    work = Path(tempfile.mkdtemp(prefix="adreno630_conf_"))
    models = {str(root / t / "model.onnx"): t for t in tests}
    entries = {t: [] for t in tests}
    results: dict[str, dict] = {}

    def batches(names):
        chunks = [names[i::args.jobs] for i in range(args.jobs)]
        with ThreadPoolExecutor(args.jobs) as pool:
            outs = pool.map(lambda c: run_batch(edgec, [(str(root / t / "model.onnx"), entries[t]) for t in c],
                                                args.timeout), [c for c in chunks if c])
        for out in outs:
            for model, r in out.items():
                results[models[model]] = r

    batches(tests)
    # Inputs edgec needs as constants: freeze them from the test data and compile again.
    for _ in range(8):
        again = []
        for t in tests:
            r = results.get(t, {})
            m = re.search(r"\('([^']*)'\) must be a constant", r.get("error", ""))
            if r.get("ok") or not m:
                continue
            values = input_values(root / t)
            frozen = {c.split("=")[0] for c in entries[t]}
            names = [m.group(1)] if m.group(1) in values and m.group(1) not in frozen else \
                [n for n, v in values.items() if n not in frozen and np.asarray(v).dtype.kind in "iu"]
            if not names:
                continue
            for n in names:
                path = work / f"{t}__{re.sub(r'[^A-Za-z0-9_]', '_', n)}.npy"
                np.save(path, values[n])
                entries[t].append(f"{n}={path}")
            again.append(t)
        if not again:
            break
        batches(again)

    failures = {t: verdict(results.get(t, {})) for t in tests}
    failures = {t: why for t, why in failures.items() if why}
    unexpected = {t: why for t, why in failures.items() if t not in expected}
    fixed = [t for t in expected if t in tests and t not in failures]
    passed = len(tests) - len(failures)
    kernels = sum(r.get("kernels", 0) for r in results.values() if r.get("ok"))
    regs = max((r.get("max_full_regs", 0) for r in results.values()), default=0)
    print(f"adreno630 conformance (compile-only): {passed} of {len(tests)} must-pass tests compile, "
          f"{kernels} kernels, every one decoded with 0 errors and ending with end"
          f" (largest footprint {regs} full registers); {len(failures)} fail, {len(unexpected)} unexpectedly; "
          f"{time.time() - t0:.0f} s")
    for t, why in sorted(unexpected.items()):
        print(f"  UNEXPECTED FAILURE {t}: {why}")
    for t in fixed:
        print(f"  now passes (remove from {Path(args.expect_failures).name}): {t}")
    if args.report:
        with open(args.report, "w") as f:
            f.write(f"# adreno630 conformance (compile-only)\n\n{passed} of {len(tests)} tests of "
                    "tests/onnx/passing_tests.txt compile for adreno630 and pass the decode and limit checks.\n\n"
                    "| test | reason |\n| --- | --- |\n")
            for t, why in sorted(failures.items()):
                f.write(f"| {t} | {why.replace('|', '/')} |\n")
    return 1 if unexpected or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
