#!/usr/bin/env python3
"""Hash-valid lies in a real bundle's metadata are refused, never run.

A small CNN is compiled and checked against onnxruntime; then tests/tools/bundle_lie.cc
rewrites the bundle with one lie at a time and a recomputed content hash (what someone who
can edit the file, but not the code, could do): a buffer resized, a kernel's argument swapped
for a smaller buffer (also with Kernel.args forged to match), a kernel's arguments shortened
together with its commands, an entry point moved, a function index out of the table, the
last command dropped, a kernel's output placed on its input. edgert-run must refuse each with
exit code 1 and a message naming the field; the ones that agree with Kernel.args (forged
extent, shortened arguments) are refused by the contract compiled into the code."""
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
    "forge-extent": ["differs from the contract compiled into its code"],
    "shorten-args": ["its code does not report a contract"],
    "move-entry": ["function", "not a multiple of 16"],
    "bad-function": ["not in section", "function table"],
    "drop-command": ["never written"],
    "overlap-buffers": ["overlap"],
}


def lie_tool():
    path = os.environ.get("EDGE_BUNDLE_LIE")
    if not path or not Path(path).exists():
        raise AssertionError("EDGE_BUNDLE_LIE is not set to the edge-bundle-lie tool (tests/CMakeLists.txt sets it)")
    return path


@suite.case
def every_lie_is_refused_with_a_message():
    work = lib.work_dir("test_bundle_lies")
    model = lib.make_cnn(seed=3)
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    feeds = {model.graph.input[0].name: x}
    expected = lib.ort_run(model, feeds)
    actual = lib.compile_and_run(model, feeds, work, name="cnn")
    lib.assert_close(actual, expected)  # the unaltered bundle runs and is right

    bundle = work / "cnn.bundle"
    inputs = lib.write_inputs(feeds, work / "inputs")
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


if __name__ == "__main__":
    sys.exit(suite.main())
