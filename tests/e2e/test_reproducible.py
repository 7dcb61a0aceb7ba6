#!/usr/bin/env python3
"""Reproducibility: what ran in the lab is bit-for-bit what runs on the road.

- compiling the same model twice gives byte-identical bundles (also from a copy of the
  model at another path, written to another directory)
- running a bundle twice gives bit-identical outputs; so do --repeat K and --threads N"""
import filecmp
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_reproducible")
WORK = None
MODEL = None
INPUTS = None


def setup():
    global MODEL, INPUTS
    MODEL = lib.make_cnn(seed=7, variant="basic", size=32)
    INPUTS = {"image": np.random.default_rng(7).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    lib.save_model(MODEL, WORK / "model.onnx")


def bundle(name):
    path = WORK / name / "model.bundle"
    if not path.exists():
        lib.compile_model(WORK / "model.onnx", path)
    return path


def assert_bitwise_equal(a: dict, b: dict, what):
    assert sorted(a) == sorted(b), f"{what}: output names differ: {sorted(a)} vs {sorted(b)}"
    for name in a:
        x, y = a[name], b[name]
        assert x.dtype == y.dtype and x.shape == y.shape, f"{what}: {name} {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
        if x.tobytes() != y.tobytes():
            diff = np.flatnonzero(x.view(np.uint8) != y.view(np.uint8))
            raise AssertionError(f"{what}: {name} not bit-identical ({diff.size} bytes differ; "
                                 f"max abs diff {np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))})")
    print(f"    {what}: bit-identical ({', '.join(sorted(a))})")


@suite.case
def compile_twice_byte_identical():
    a, b = bundle("a"), bundle("b")
    assert a.stat().st_size > 0
    assert filecmp.cmp(a, b, shallow=False), f"{a} and {b} differ"
    print(f"    {a.stat().st_size} bytes, identical")


@suite.case
def compile_from_other_path_byte_identical():
    # Same file name, other directory, other output name: no absolute paths in the bundle.
    # (The bundle may record the model's file name, so that stays the same.)
    other = WORK / "elsewhere" / "deeper" / "model.onnx"
    other.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(WORK / "model.onnx", other)
    c = WORK / "c" / "renamed.bundle"
    lib.compile_model(other, c)
    assert filecmp.cmp(bundle("a"), c, shallow=False), \
        "bundle depends on the model's directory or the output path (compare a/model.bundle with c/renamed.bundle)"


@suite.case
def compile_in_fresh_process_after_other_model_byte_identical():
    # A compile of some other model in between must not change the result.
    lib.compile_model(lib.make_cnn(seed=8, variant="grouped"), WORK / "other" / "other.bundle")
    d = WORK / "d" / "model.bundle"
    lib.compile_model(WORK / "model.onnx", d)
    assert filecmp.cmp(bundle("a"), d, shallow=False), "bundle changed after compiling another model"


@suite.case
def run_twice_bit_identical():
    b = bundle("a")
    r1 = lib.run_bundle(b, INPUTS, WORK / "run1")
    r2 = lib.run_bundle(b, INPUTS, WORK / "run2")
    assert_bitwise_equal(r1, r2, "run 1 vs run 2")


@suite.case
def repeat_bit_identical():
    b = bundle("a")
    r1 = lib.run_bundle(b, INPUTS, WORK / "rep1")
    r5 = lib.run_bundle(b, INPUTS, WORK / "rep5", repeat=5)
    assert_bitwise_equal(r1, r5, "--repeat 1 vs --repeat 5")


@suite.case
def two_bundles_same_outputs():
    r_a = lib.run_bundle(bundle("a"), INPUTS, WORK / "ra")
    r_b = lib.run_bundle(bundle("b"), INPUTS, WORK / "rb")
    assert_bitwise_equal(r_a, r_b, "bundle a vs bundle b")


@suite.case
def threads_bit_identical():
    # Kernels are split across cores over independent output iterations, so the
    # thread count must not change a single bit.
    b = bundle("a")
    r1 = lib.run_bundle(b, INPUTS, WORK / "t1", threads=1)
    for n in (2, 3, 4):
        rn = lib.run_bundle(b, INPUTS, WORK / f"t{n}", threads=n, repeat=3)
        assert_bitwise_equal(r1, rn, f"--threads 1 vs --threads {n}")


if __name__ == "__main__":
    WORK = lib.work_dir("test_reproducible")
    setup()
    sys.exit(suite.main())
