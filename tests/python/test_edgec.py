"""edgec, the compiler module: model as path, bytes or ModelProto; output= path; errors naming
the node; targets(); the console entry point. Plus the opt-in wheel check."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import edgec
import edgert
from conftest import OPSET, cnn_inputs, ort_run

ROOT = Path(__file__).resolve().parents[2]


def test_targets():
    t = edgec.targets()
    assert "x86_64" in t and "opencl" in t and "aarch64" in t
    assert all(t.values())


def test_model_as_proto_bytes_and_path(tmp_path, cnn, cnn_bundle_bytes):
    model_path = tmp_path / "cnn.onnx"
    model_path.write_bytes(cnn.SerializeToString())
    from_proto = edgec.compile(cnn)
    from_bytes = edgec.compile(cnn.SerializeToString())
    out = edgec.compile(model_path, target="x86_64", output=tmp_path / "cnn.bundle")
    assert out == str(tmp_path / "cnn.bundle")
    from_path = (tmp_path / "cnn.bundle").read_bytes()
    # Reproducible builds: the same model gives the same bundle whichever way it came.
    assert from_proto == from_bytes
    assert len(from_path) > 0 and from_path[:16] == from_proto[:16]
    inputs = cnn_inputs(5)
    want = ort_run(cnn, inputs)
    for data in (from_proto, from_path):
        got = edgert.Bundle(data).context().run(inputs)
        for n in want:
            np.testing.assert_allclose(got[n], want[n], rtol=1e-4, atol=1e-5)


def test_options_reach_the_compiler(tmp_path):
    # input_shape fixes a symbolic dim; -O0 and dump_kernels pass through.
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])])
    model = helper.make_model(graph, opset_imports=OPSET)
    dump = tmp_path / "kernels.txt"
    data = edgec.compile(model, input_shape={"x": [3, 4]}, opt_level=0, dump_kernels=dump)
    b = edgert.Bundle(data)
    assert b.inputs[0].shape == (3, 4)
    assert dump.stat().st_size > 0
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(b.context().run({"x": x})["y"], np.maximum(x, 0))


def test_model_proto_without_its_external_data_is_refused_by_name(tmp_path, cnn):
    # Saved with its weights beside it, loaded without them: the proto names files in a folder it
    # does not carry. The error names a tensor and says to pass the path; the path compiles.
    import onnx
    copy = onnx.ModelProto()
    copy.CopyFrom(cnn)  # save_model moves the tensors' data out of the proto it is given
    onnx.save_model(copy, str(tmp_path / "cnn.onnx"), save_as_external_data=True, size_threshold=0,
                    location="weights.bin")
    bare = onnx.load(str(tmp_path / "cnn.onnx"), load_external_data=False)
    with pytest.raises(ValueError, match=r"tensor '[^']+' keeps its data in the external file 'weights.bin'"):
        edgec.compile(bare)
    inputs = cnn_inputs(3)
    got = edgert.Bundle(edgec.compile(tmp_path / "cnn.onnx")).context().run(inputs)
    for name, want in ort_run(cnn, inputs).items():
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-5)


def test_errors_name_the_node():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"], name="first"),
         helper.make_node("Unique", ["h"], ["y"], name="the_unique")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=OPSET)
    with pytest.raises(edgec.CompileError) as e:
        edgec.compile(model)
    assert e.value.node == "the_unique" and e.value.op_type == "Unique"
    assert "the_unique" in str(e.value) and "<model>" in str(e.value)
    with pytest.raises(edgec.CompileError, match="target"):
        edgec.compile(model, target="no-such-target")
    with pytest.raises(edgec.CompileError):
        edgec.compile(b"not an onnx model")
    with pytest.raises(TypeError):
        edgec.compile(12)


def test_console_entry_point():
    code = "import sys, edgec; sys.argv = ['edgec', '--list-targets']; edgec.main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "x86_64" in out.stdout


@pytest.mark.skipif(os.environ.get("EDGE_TEST_WHEEL") != "1",
                    reason="opt-in (EDGE_TEST_WHEEL=1): builds the wheel (pip wheel ., minutes) and installs it in a fresh venv")
def test_wheel_installs_in_a_fresh_venv(tmp_path, cnn):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True, text=True)
    wheel = next(wheels.glob("*.whl"))
    # What the wheel ships needs nothing of this machine (EDGE_SELF_CONTAINED, pyproject.toml).
    check = subprocess.run([sys.executable, str(ROOT / "tests" / "python" / "check_self_contained.py"), str(wheel)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", str(wheel)], check=True, capture_output=True)
    model = tmp_path / "cnn.onnx"
    model.write_bytes(cnn.SerializeToString())
    code = (f"import edgec, edgert, numpy as np; b = edgert.Bundle(edgec.compile({str(model)!r})); "
            "print(edgert.__file__); print(b.context().run({'image': np.zeros((1,3,16,16), np.float32), "
            "'bias': np.zeros((1,5), np.float32)})['probs'].shape)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EDGEC_BINARY", "LD_LIBRARY_PATH")}
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert str(venv) in out.stdout and "(1, 5)" in out.stdout
    for script in ("edgec", "edgert-run", "edgert-bench"):
        r = subprocess.run([str(venv / "bin" / script), "--help"], capture_output=True, text=True, env=env)
        assert r.returncode == 0 and re.search("usage", r.stdout + r.stderr, re.I), script


def test_readme_python_example_runs_as_written(tmp_path):
    """The README's Python example, run as written (from a copy of the repository's layout:
    samples/generated made by samples/build_sample_model.py, as the README says)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Python (`pip install .`)"):]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "no python example in the README's Python section"
    code = m.group(1)
    assert "edgec.compile" in code and "onnxruntime" in code and len(code.strip().splitlines()) <= 5
    gen = tmp_path / "samples" / "generated"
    subprocess.run([sys.executable, str(ROOT / "samples" / "build_sample_model.py"), "--out-dir", str(gen)],
                   check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # and it can fail: a wrong tolerance on a perturbed model output would not pass silently
    broken = code.replace('["probabilities"]', '["probabilities"] + 1e-2')
    out = subprocess.run([sys.executable, "-c", broken], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode != 0 and "AssertionError" in out.stderr


def test_warnings_become_python_warnings():
    # A stale declared output shape compiles with the computed one and a warning naming it.
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 5])])
    with pytest.warns(edgec.CompileWarning, match="'?y'?"):
        data = edgec.compile(helper.make_model(graph, opset_imports=OPSET))
    assert edgert.Bundle(data).outputs[0].shape == (2, 3)
