#!/usr/bin/env python3
"""edgec on models whose weights are ONNX external data (files beside the .onnx, as
onnx.save(save_as_external_data=True), torch.onnx past 2 GB and optimum write them).

Compiled and run, matching onnxruntime: one data file for all tensors, one file per tensor,
a Constant node's tensor (convert_attribute=True) and a file in a subfolder.
Refused with exit 1, an error naming the tensor and the key at fault, and no bundle written:
a location that is absolute, climbs out with '..', is a symbolic link leading outside the
model's folder, or names a missing file or a folder; an offset past the end of the file; a
length that disagrees with the tensor's shape; a short file; an unknown key; tensors that
overlap (a small model must not allocate a file's size many times over)."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_external_data")
WORK = None
rng = np.random.default_rng(7)


def conv_model():
    """x[1,3,8,8] -> Conv(w, b) -> Relu -> Reshape(a Constant) -> MatMul(fc)."""
    w = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    fc = rng.standard_normal((16 * 36, 10)).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"]), h.make_node("Relu", ["c"], ["r"]),
             h.make_node("Constant", [], ["shape"], value=nh.from_array(np.array([1, -1], np.int64))),
             h.make_node("Reshape", ["r", "shape"], ["f"]), h.make_node("MatMul", ["f", "fc"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 8, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 10])],
                     [nh.from_array(w, "w"), nh.from_array(b, "b"), nh.from_array(fc, "fc")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


FEEDS = {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}


def save(name, m, **kwargs):
    """Saves m with external data into WORK/name/; returns the model path."""
    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.onnx"
    onnx.save_model(m, str(path), save_as_external_data=True, size_threshold=0, **kwargs)
    return path


def compile_path(path, bundle):
    edgec, _, _ = lib.tools()
    return lib.run_cmd([edgec, "compile", path, "-o", bundle, "-q"], check=False, timeout=300)


def matches_onnxruntime(name, path):
    m = onnx.load(str(path))  # with its external data: what onnxruntime is given
    assert any(t.data_location == TP.EXTERNAL for t in onnx.load(str(path), load_external_data=False).graph.initializer)
    expected = lib.ort_run(m, FEEDS)
    bundle = path.parent / "model.bundle"
    res = compile_path(path, bundle)
    assert res.returncode == 0, f"{name}: edgec failed:\n{res.stderr[-2000:]}"
    actual = lib.run_bundle(bundle, FEEDS, path.parent / "out", lib.output_names(m))
    for out, want in expected.items():
        assert actual[out].shape == want.shape, f"{name}/{out}: shape {actual[out].shape}, onnxruntime {want.shape}"
        assert np.allclose(actual[out], want, rtol=1e-4, atol=1e-4), \
            f"{name}/{out}: max err {np.abs(actual[out] - want).max()}"


def refused(name, path, must_mention):
    bundle = path.parent / f"{name}.bundle"
    res = compile_path(path, bundle)
    assert res.returncode == 1, f"{name}: expected exit 1, got {res.returncode}\n{res.stderr[-2000:]}"
    for word in must_mention:
        assert word.lower() in res.stderr.lower(), f"{name}: error does not mention {word!r}:\n{res.stderr[-2000:]}"
    assert not bundle.exists(), f"{name}: a bundle was written"
    print(f"    {res.stderr.strip().splitlines()[-1]}")


def edit_entry(path, tensor, key, value):
    """Rewrites one external_data entry of the initializer `tensor` in the saved model (the
    data files are left as they are); value None removes the key, a new key is added."""
    m = onnx.load(str(path), load_external_data=False)
    t = next(t for t in m.graph.initializer if t.name == tensor)
    entries = {e.key: e.value for e in t.external_data}
    if value is None:
        entries.pop(key)
    else:
        entries[key] = value
    del t.external_data[:]
    for k, v in entries.items():
        t.external_data.add(key=k, value=v)
    path.write_bytes(m.SerializeToString())


@suite.case
def external_data_compiles_and_matches_onnxruntime():
    matches_onnxruntime("one_file", save("one_file", conv_model(), all_tensors_to_one_file=True, location="weights.bin"))
    matches_onnxruntime("file_per_tensor", save("file_per_tensor", conv_model(), all_tensors_to_one_file=False))
    matches_onnxruntime("constant_attribute", save("constant_attribute", conv_model(), location="w.bin",
                                                   convert_attribute=True))
    (WORK / "subfolder" / "data").mkdir(parents=True)
    path = save("subfolder", conv_model(), location="data/weights.bin")
    assert (path.parent / "data" / "weights.bin").is_file()
    matches_onnxruntime("subfolder", path)


@suite.case
def the_compile_cache_keys_a_model_by_its_weights_too():
    # Two folders, the same model.onnx bytes, other weights.bin: the suites' compile cache
    # (EDGE_COMPILE_CACHE) must not hand the first one's bundle to the second.
    def weights(seed):
        m = conv_model()
        for t in m.graph.initializer:
            t.CopyFrom(nh.from_array(np.random.default_rng(seed).standard_normal(nh.to_array(t).shape)
                                     .astype(np.float32), t.name))
        return m
    a = save("cache_a", weights(1), all_tensors_to_one_file=True, location="weights.bin")
    b = save("cache_b", weights(2), all_tensors_to_one_file=True, location="weights.bin")
    assert a.read_bytes() == b.read_bytes() and (a.parent / "weights.bin").read_bytes() != (b.parent / "weights.bin").read_bytes()
    saved = os.environ.get("EDGE_COMPILE_CACHE")
    os.environ["EDGE_COMPILE_CACHE"] = str(WORK / "compile-cache")
    try:
        for path in (a, b):
            assert lib.compile_model(path, path.parent / "cached.bundle", ["-q"]).returncode == 0
    finally:
        if saved is None:
            os.environ.pop("EDGE_COMPILE_CACHE")
        else:
            os.environ["EDGE_COMPILE_CACHE"] = saved
    for path in (a, b):
        want = lib.ort_run(onnx.load(str(path)), FEEDS)
        got = lib.run_bundle(path.parent / "cached.bundle", FEEDS, path.parent / "out", list(want))
        for out in want:
            assert np.allclose(got[out], want[out], rtol=1e-4, atol=1e-4), \
                f"{path.parent.name}/{out}: the cached bundle is another model's (max err {np.abs(got[out] - want[out]).max()})"


@suite.case
def locations_outside_the_model_folder_are_refused():
    outside = WORK / "outside.bin"
    outside.write_bytes(np.zeros(4096, np.float32).tobytes())  # big enough for every tensor: only the path is wrong
    cases = [("absolute", str(outside), ["'w'", "location", "absolute"]),
             ("traversal", "../outside.bin", ["'w'", "location", "'..'"]),
             ("traversal_inner", "data/../../outside.bin", ["'w'", "location", "'..'"]),
             ("missing_file", "nowhere.bin", ["'w'", "location", "nowhere.bin"]),
             ("a_folder", "sub", ["'w'", "location", "not a regular file"])]
    for name, location, words in cases:
        path = save(name, conv_model(), location="weights.bin")
        (path.parent / "sub").mkdir(exist_ok=True)
        edit_entry(path, "w", "location", location)
        refused(name, path, words)
    path = save("symlink_out", conv_model(), location="weights.bin")
    os.symlink(outside, path.parent / "link.bin")
    edit_entry(path, "w", "location", "link.bin")
    refused("symlink_out", path, ["'w'", "location", "outside the model's folder"])
    # A link that stays inside the folder is fine.
    path = save("symlink_in", conv_model(), location="weights.bin")
    os.symlink("weights.bin", path.parent / "alias.bin")
    for t in ("w", "b", "fc"):
        edit_entry(path, t, "location", "alias.bin")
    assert compile_path(path, path.parent / "model.bundle").returncode == 0


@suite.case
def offsets_and_lengths_that_lie_are_refused():
    def variant(name, edits, words):
        path = save(name, conv_model(), location="weights.bin")
        for tensor, key, value in edits:
            edit_entry(path, tensor, key, value)
        refused(name, path, words)

    size = (16 * 3 * 3 * 3 + 16 + 16 * 36 * 10) * 4
    variant("offset_past_eof", [("fc", "offset", str(size + 64))], ["'fc'", "offset", "past the end"])
    variant("offset_huge", [("fc", "offset", str(2**64 - 1))], ["'fc'", "offset", "past the end"])
    variant("offset_not_a_number", [("b", "offset", "-4")], ["'b'", "offset", "not a byte count"])
    variant("length_mismatch", [("w", "length", "16")], ["'w'", "length", "16 bytes", "1728"])
    variant("length_huge", [("w", "length", str(2**62))], ["'w'", "length"])
    variant("location_missing", [("w", "location", None)], ["'w'", "location", "missing"])
    variant("unknown_key", [("b", "basepath", "/tmp")], ["'b'", "unknown", "basepath"])
    # Three tensors, each the whole file.
    folder = WORK / "overlapping"
    folder.mkdir()
    (folder / "same.bin").write_bytes(np.ones(1024, np.float32).tobytes())
    inits = []
    for name in ("t0", "t1", "t2"):
        t = onnx.TensorProto(name=name, data_type=TP.FLOAT, dims=[1024], data_location=TP.EXTERNAL)
        t.external_data.add(key="location", value="same.bin")
        inits.append(t)
    g = h.make_graph([h.make_node("Sum", ["x", "t0", "t1", "t2"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1024])], [h.make_tensor_value_info("y", TP.FLOAT, [1024])],
                     inits)
    (folder / "model.onnx").write_bytes(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString())
    refused("overlapping", folder / "model.onnx", ["'t1'", "overlap"])
    # The file is shorter than the tensors say (truncated on copy).
    path = save("short_file", conv_model(), location="weights.bin")
    with open(path.parent / "weights.bin", "r+b") as f:
        f.truncate(size - 100)
    refused("short_file", path, ["offset", "past the end"])
    # A model whose shape claims 2^31 floats for a small file: refused before any allocation.
    path = save("huge_shape", conv_model(), location="weights.bin")
    m = onnx.load(str(path), load_external_data=False)
    t = next(t for t in m.graph.initializer if t.name == "fc")
    t.dims[:] = [1 << 16, 1 << 15]
    kept = [(e.key, e.value) for e in t.external_data if e.key != "length"]  # onnx writes one; it is optional
    del t.external_data[:]
    for k, v in kept:
        t.external_data.add(key=k, value=v)
    path.write_bytes(m.SerializeToString())
    refused("huge_shape", path, ["'fc'", "past the end"])


if __name__ == "__main__":
    WORK = lib.work_dir("external_data")
    sys.exit(suite.main())
