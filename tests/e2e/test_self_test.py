#!/usr/bin/env python3
"""On-device self-test: `edgec compile --embed-reference` stores sample inputs and expected
outputs in the bundle; `edgert-run BUNDLE --self-test` runs on them and compares.

The expected values are checked against onnxruntime run here, independently, on the inputs
read back from the bundle file (offsets from `edgec inspect --json`, bytes from the file).
A wrong expected value (onnxruntime's + 1, computed with numpy) must fail the self-test; a
bundle without reference data, an output with no source of expected values (no onnxruntime
and no --reference-output) and mismatched .npy files are clear errors."""
import json
import os
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_self_test")
WORK = None
NO_PYTHON = {"EDGE_PYTHON": "/nonexistent/python3"}  # edgec cannot reach onnxruntime
DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32, "Bool": np.bool_}


def env(extra=None):
    e = dict(os.environ)
    e["EDGE_PYTHON"] = sys.executable  # the interpreter that has onnxruntime
    e.update(extra or {})
    return e


def compile_ref(model, name, args=(), extra_env=None, check=True):
    model_path = lib.save_model(model, WORK / f"{name}.onnx")
    bundle = WORK / f"{name}.bundle"
    res = lib.run_cmd([lib.find_tool("edgec"), "compile", model_path, "-o", bundle, *args], check=check,
                      env=env(extra_env))
    return bundle, res


def self_test(bundle, *args):
    return lib.run_cmd([lib.find_tool("edgert-run"), bundle, "--self-test", *args], check=False)


def npy(name, array):
    path = WORK / f"{name}.npy"
    np.save(path, array)
    return path


def reference_data(bundle):
    """{'inputs': {name: array}, 'outputs': {name: array}, 'rtol', 'atol'} read from the file."""
    info = json.loads(lib.run_cmd([lib.find_tool("edgec"), "inspect", bundle, "--json"]).stdout)
    raw = Path(bundle).read_bytes()
    data_offset = struct.unpack_from("<Q", raw, 32)[0]  # BundleHeader.data_offset
    ref = info["reference"]

    def read(index, tensor):
        b = info["buffers"][index]
        assert b["kind"] == "Weight" and b["dtype"] == tensor["dtype"] and b["shape"] == tensor["shape"], b
        section = info["sections"][b["section"]]
        assert section["kind"] == "ReferenceIO", section
        start = data_offset + section["offset"] + b["offset"]
        return np.frombuffer(raw[start:start + b["size"]], dtype=DTYPES[b["dtype"]]).reshape(b["shape"])

    return {"inputs": {t["name"]: read(i, t) for i, t in zip(ref["inputs"], info["inputs"])},
            "outputs": {t["name"]: read(i, t) for i, t in zip(ref["outputs"], info["outputs"])},
            "rtol": ref["rtol"], "atol": ref["atol"]}


def expect_pass(bundle, *args):
    res = self_test(bundle, *args)
    assert res.returncode == 0, f"self-test failed:\n{res.stdout}\n{res.stderr}"
    assert "self-test passed" in res.stdout, res.stdout
    for line in res.stdout.splitlines():
        print("    " + line)
    return res


def expect_error(res, *words):
    assert res.returncode == 1, f"expected exit 1, got {res.returncode}:\n{res.stdout}\n{res.stderr}"
    text = res.stdout + res.stderr
    for w in words:
        assert w in text, f"message does not mention {w!r}:\n{text}"
    print("    " + (res.stderr.strip().splitlines() or [""])[-1])


def gather_argmax_model():
    """x f32 [4, 5], idx i64 [3] -> y = Gather(x, idx) f32 [3, 5], z = ArgMax(x, axis 1) i64 [4]."""
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Gather", ["x", "idx"], ["y"], axis=0),
             helper.make_node("ArgMax", ["x"], ["z"], axis=1, keepdims=0)]
    graph = helper.make_graph(nodes, "gather_argmax",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 5]),
                               helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5]),
                               helper.make_tensor_value_info("z", TensorProto.INT64, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@suite.case
def cnn_with_onnxruntime_reference_passes():
    model = lib.make_cnn(seed=3)
    bundle, _ = compile_ref(model, "cnn", ["--embed-reference"])
    res = expect_pass(bundle)
    assert "max abs error" in res.stdout and "rtol 0.001" in res.stdout, res.stdout
    expect_pass(bundle, "--threads", "2")
    ref = reference_data(bundle)
    (x,) = ref["inputs"].values()
    assert x.dtype == np.float32 and x.min() >= -1 and x.max() < 1 and x.std() > 0.3, (x.min(), x.max(), x.std())
    # The embedded expected values are onnxruntime's on the embedded inputs, bit for bit.
    want = lib.ort_run(model, ref["inputs"])
    for name, value in want.items():
        assert np.array_equal(ref["outputs"][name], value), f"{name}: embedded != onnxruntime"
    # The samples are seeded: compiling again gives the same bundle.
    again = WORK / "cnn_again.bundle"
    lib.run_cmd([lib.find_tool("edgec"), "compile", WORK / "cnn.onnx", "-o", again, "--embed-reference"], env=env())
    assert again.read_bytes() == bundle.read_bytes(), "two compiles gave different bundles"


@suite.case
def integer_inputs_and_outputs():
    model = gather_argmax_model()
    bundle, _ = compile_ref(model, "gather", ["--embed-reference"])
    expect_pass(bundle)
    ref = reference_data(bundle)
    idx = ref["inputs"]["idx"]
    assert idx.dtype == np.int64 and idx.min() >= 0 and idx.max() <= 3, idx  # documented range 0..3
    want = lib.ort_run(model, ref["inputs"])
    assert np.array_equal(ref["outputs"]["y"], want["y"]) and np.array_equal(ref["outputs"]["z"], want["z"])
    # An integer output must match exactly: one index off fails however loose the tolerance.
    z_wrong = want["z"].copy()
    z_wrong[0] = (z_wrong[0] + 1) % 5
    bad, _ = compile_ref(model, "gather_bad", ["--embed-reference", "--reference-rtol", "1", "--reference-atol", "10",
                                                "--reference-output", f"z={npy('z_wrong', z_wrong)}"])
    expect_error(self_test(bad), "self-test failed", "'z'")


@suite.case
def frozen_and_fixed_inputs_reach_onnxruntime():
    """--const-input values are fed to onnxruntime too; --input-shape fixes a symbolic dim."""
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6]),
                               helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    bundle, _ = compile_ref(model, "reshape", ["--embed-reference", "--input-shape", "x=2,6",
                                               "--const-input", f"shape={npy('shape', np.array([3, 4], np.int64))}"])
    expect_pass(bundle)
    ref = reference_data(bundle)
    assert list(ref["inputs"]) == ["x"] and ref["inputs"]["x"].shape == (2, 6)
    assert np.array_equal(ref["outputs"]["y"], ref["inputs"]["x"].reshape(3, 4))


@suite.case
def supplied_npy_files_without_onnxruntime():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((1, 3, 4, 5)).astype(np.float32) * 10
    b = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    model = lib.make_simple_model([("a", a.shape), ("b", b.shape)], "Add", name="add")
    args = ["--embed-reference", "--reference-input", f"a={npy('a', a)}", "--reference-input", f"b={npy('b', b)}",
            "--reference-output", f"y={npy('y', a + b)}"]
    bundle, _ = compile_ref(model, "add", args, NO_PYTHON)  # every output given: no onnxruntime needed
    expect_pass(bundle)
    ref = reference_data(bundle)
    assert np.array_equal(ref["inputs"]["a"], a) and np.array_equal(ref["inputs"]["b"], b)
    assert np.array_equal(ref["outputs"]["y"], a + b)
    # Supplied inputs, expected output from onnxruntime.
    bundle2, _ = compile_ref(model, "add_ort", args[:5])
    expect_pass(bundle2)
    assert np.array_equal(reference_data(bundle2)["outputs"]["y"], lib.ort_run(model, {"a": a, "b": b})["y"])


@suite.case
def wrong_expected_output_fails():
    model = lib.make_cnn(seed=4)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    (name,) = lib.output_names(model)
    wrong = lib.ort_run(model, {"image": x})[name] + np.float32(1)
    bundle, _ = compile_ref(model, "cnn_wrong", ["--embed-reference", "--reference-input", f"image={npy('x', x)}",
                                                 "--reference-output", f"{name}={npy('wrong', wrong)}"])
    res = self_test(bundle)
    expect_error(res, "self-test failed", f"'{name}'")
    assert "FAILED" in res.stdout and "max abs error 1" in res.stdout, res.stdout


@suite.case
def bundle_without_reference_is_an_error():
    bundle = WORK / "plain.bundle"
    lib.compile_model(lib.make_simple_model([("a", (2, 3)), ("b", (2, 3))]), bundle)
    expect_error(self_test(bundle), "no reference data", "--embed-reference")
    res = lib.run_cmd([lib.find_tool("edgert-run"), bundle, "--self-test", "--input", "a=x.npy"], check=False)
    expect_error(res, "--self-test", "--input")


@suite.case
def missing_sources_and_mismatches_are_errors():
    model = lib.make_simple_model([("a", (2, 3)), ("b", (2, 3))], "Mul", name="mul")
    _, res = compile_ref(model, "noort", ["--embed-reference"], NO_PYTHON, check=False)
    expect_error(res, "'y'", "--reference-output y=FILE.npy", "onnxruntime")
    # An interpreter that cannot import onnxruntime (a module of that name that fails).
    fake = WORK / "fake_ort"
    fake.mkdir(exist_ok=True)
    (fake / "onnxruntime.py").write_text("raise ImportError('no onnxruntime in this test')\n")
    _, res = compile_ref(model, "noimport", ["--embed-reference"], {"PYTHONPATH": str(fake)}, check=False)
    expect_error(res, "'y'", "cannot import", "EDGE_PYTHON", "--reference-output y=FILE.npy")
    _, res = compile_ref(model, "badtype", ["--embed-reference", "--reference-input",
                                            f"a={npy('a64', np.zeros((2, 3)))}"], check=False)
    expect_error(res, "--reference-input", "'a'", "is f64", "bundle's is f32")
    _, res = compile_ref(model, "badshape", ["--embed-reference", "--reference-output",
                                             f"y={npy('y23', np.zeros((3, 2), np.float32))}"], check=False)
    expect_error(res, "--reference-output", "'y'", "[3,2]", "[2,3]")
    _, res = compile_ref(model, "badname", ["--embed-reference", "--reference-output",
                                            f"nope={npy('y0', np.zeros((2, 3), np.float32))}"], check=False)
    expect_error(res, "no output 'nope'", "y")
    _, res = compile_ref(model, "noflag", ["--reference-rtol", "0.1"], check=False)
    expect_error(res, "--embed-reference")


@suite.case
def fp16_model_gets_the_fp16_tolerance():
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "add16",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT16, [8]) for n in "ab"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    bundle, _ = compile_ref(model, "add16", ["--embed-reference"])
    res = expect_pass(bundle)
    assert "rtol 0.01, atol 0.02" in res.stdout, res.stdout
    ref = reference_data(bundle)
    assert np.array_equal(ref["outputs"]["y"], ref["inputs"]["a"] + ref["inputs"]["b"])
    # --reference-rtol/-atol override the defaults.
    bundle, _ = compile_ref(model, "add16_tol", ["--embed-reference", "--reference-rtol", "0.5",
                                                 "--reference-atol", "0"])
    assert "rtol 0.5, atol 0" in expect_pass(bundle).stdout


if __name__ == "__main__":
    WORK = lib.work_dir("test_self_test")
    sys.exit(suite.main())
