#!/usr/bin/env python3
"""Hash-valid lies in a real bundle's metadata are refused, never run.

A small CNN is compiled and checked against onnxruntime; then tests/tools/bundle_lie.cc
rewrites the bundle with one lie at a time and a recomputed content hash (what someone who
can edit the file, but not the code, could do): a buffer resized, a kernel's argument swapped
for a smaller buffer (also with Kernel.args forged to match), a kernel's arguments shortened
together with its commands, an entry point moved, a function index out of the table, the
last command dropped, a kernel's output placed on its input, the Target's feature list
lowered, the weights section placed over the code. edgert-run must refuse each with
exit code 1 and a message naming the field; the ones that agree with Kernel.args (forged
extent, shortened arguments) are refused by the contract in the code directory.

A lie in the code itself (a weight shrunk with its contract lowered in Kernel.args and in the
code directory's contract words) is accepted: only a signature covers the code. With
EDGE_GUARD_PAGES=1 (EDGERT_RUN built with -DEDGERT_CPU_GUARD_PAGES, every buffer ending at an
inaccessible page) that bundle must fault instead, and the valid bundles must run as before:
no kernel touches memory outside its buffers."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import os  # noqa: E402

import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_bundle_lies")

# lie -> words the refusal names (lower case compare)
LIES = {
    "resize-buffer": ["command", "4 bytes), but kernel", "f32 over"],
    "swap-arg": ["command", "reads f32 over"],
    "forge-extent": ["differs from the contract of its code"],
    "shorten-args": ["kernel.args has", "arguments, but the code of function"],
    "move-entry": ["function", "is not the function the compiler emitted there"],
    "bad-function": ["not in section", "function table"],
    "drop-command": ["never written"],
    "overlap-buffers": ["overlap"],
    "lower-features": ["its code needs cpu feature", "which target.features does not list"],
    "weights-on-code": ["[64, +", "overlaps section"],
}


def lie_tool():
    path = os.environ.get("EDGE_BUNDLE_LIE")
    if not path or not Path(path).exists():
        raise AssertionError("EDGE_BUNDLE_LIE is not set to the edge-bundle-lie tool (tests/CMakeLists.txt sets it)")
    return path


def compiled_cnn():
    """The CNN's bundle and its input arguments, after checking it against onnxruntime."""
    work = lib.work_dir("test_bundle_lies")
    model = lib.make_cnn(seed=3)
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    feeds = {model.graph.input[0].name: x}
    expected = lib.ort_run(model, feeds)
    actual = lib.compile_and_run(model, feeds, work, name="cnn")
    lib.assert_close(actual, expected)  # the unaltered bundle runs and is right
    return work, work / "cnn.bundle", lib.write_inputs(feeds, work / "inputs")


@suite.case
def every_lie_is_refused_with_a_message():
    work, bundle, inputs = compiled_cnn()

    run = lib.find_tool("edgert-run")
    for lie, words in LIES.items():
        liar = work / f"{lie}.bundle"
        made = lib.run_cmd([lie_tool(), bundle, liar, lie], check=False)
        assert made.returncode == 0, f"{lie}: the tool found no place for it:\n{made.stderr}"
        assert liar.read_bytes() != bundle.read_bytes(), f"{lie}: the bundle did not change"
        res = lib.run_cmd([run, liar, *inputs, "--output-dir", work / f"{lie}_out"], check=False)
        assert res.returncode == 1, f"{lie}: expected exit 1 (refused), got {res.returncode}\n{res.stderr[-2000:]}"
        for w in words:
            assert w in res.stderr.lower(), f"{lie}: the refusal does not mention {w!r}:\n{res.stderr[-2000:]}"
        print(f"    {lie}: {res.stderr.strip().splitlines()[-1]}")


@suite.case
def a_lie_in_the_code_is_for_signatures_and_guard_pages():
    work, bundle, inputs = compiled_cnn()
    liar = work / "forge-code-contract.bundle"
    lib.run_cmd([lie_tool(), bundle, liar, "forge-code-contract"])
    res = lib.run_cmd([lib.find_tool("edgert-run"), liar, *inputs, "--output-dir", work / "forged_out"], check=False)
    if os.environ.get("EDGE_GUARD_PAGES") == "1":
        # a signal, or AddressSanitizer's SEGV report (it exits 1) in a sanitizer build
        faulted = res.returncode < 0 or "SEGV" in res.stderr
        assert faulted, f"the kernel read past its shrunk weight unseen (exit {res.returncode}):\n{res.stderr[-2000:]}"
        print(f"    guard pages: the forged kernel faulted (exit {res.returncode})")
    else:
        assert res.returncode == 0, f"expected the forged bundle to run (exit {res.returncode}):\n{res.stderr[-2000:]}"
        print("    accepted without guard pages: the code itself is what signing protects")


if __name__ == "__main__":
    sys.exit(suite.main())
