#!/usr/bin/env python3
"""CLI error handling: every bad input is a clear error with exit code 1, never a crash.

edgert-run: missing input, mis-shaped input, wrong dtype, unknown input name, missing or
truncated / corrupted / garbage bundle -> exit 1, stderr names the input (or the problem).
edgec: unsupported op -> error names the node and the op type; missing model file,
garbage model file -> clean error. --help works for edgec, edgert-run, edgert-bench."""
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_cli_errors")
WORK = None
SHAPE = (1, 3, 4, 5)
A, B = "sensor_alpha", "sensor_beta"   # distinctive names to look for in messages


def describe(res):
    return (f"exit {res.returncode} ({lib._describe_rc(res.returncode)})\n"
            f"--- stderr ---\n{lib._tail(res.stderr, 15)}\n--- stdout ---\n{lib._tail(res.stdout, 5)}")


def expect_error(cmd, must_mention=(), rc=1, timeout=120):
    res = lib.run_cmd(cmd, check=False, timeout=timeout)
    if res.returncode is not None and res.returncode < 0:
        raise AssertionError(f"crashed: {' '.join(map(str, cmd))}\n{describe(res)}")
    if rc is not None:
        assert res.returncode == rc, f"expected exit {rc}: {' '.join(map(str, cmd))}\n{describe(res)}"
    else:
        assert res.returncode != 0, f"expected failure: {' '.join(map(str, cmd))}\n{describe(res)}"
    text = res.stderr + res.stdout
    for word in must_mention:
        assert word.lower() in text.lower(), f"message does not mention {word!r}:\n{describe(res)}"
    first = (res.stderr.strip().splitlines() or ["<empty stderr>"])[0]
    print(f"    exit {res.returncode}: {first}")
    return res


def two_input_bundle():
    bundle = WORK / "add.bundle"
    if not bundle.exists():
        lib.compile_model(lib.make_simple_model([(A, SHAPE), (B, SHAPE)], "Add", name="add"), bundle)
    return bundle


def npy(name, array):
    path = WORK / f"{name}.npy"
    np.save(path, array)
    return path


def good(shape=SHAPE, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def run_tool():
    return lib.find_tool("edgert-run")


@suite.case
def valid_run_succeeds():
    # Baseline: the error cases below differ from this in one thing only.
    a, b = good(seed=1), good(seed=2)
    out = lib.run_bundle(two_input_bundle(), {A: a, B: b}, WORK / "ok_out", ["y"])
    assert np.allclose(out["y"], a + b, rtol=1e-6, atol=1e-6), "Add computed wrong values"


@suite.case
def missing_input():
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={npy('a', good())}",
                  "--output-dir", WORK / "o1"], must_mention=[B])


@suite.case
def misshaped_input():
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={npy('a', good())}",
                  "--input", f"{B}={npy('b_bad_shape', good((1, 3, 5, 4)))}",
                  "--output-dir", WORK / "o2"], must_mention=[B])


@suite.case
def wrong_rank_input():
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={npy('a_rank', good((3, 4, 5)))}",
                  "--input", f"{B}={npy('b', good())}", "--output-dir", WORK / "o3"], must_mention=[A])


@suite.case
def wrong_dtype_input():
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={npy('a', good())}",
                  "--input", f"{B}={npy('b_f64', good().astype(np.float64))}",
                  "--output-dir", WORK / "o4"], must_mention=[B])
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={npy('a_i32', good().astype(np.int32))}",
                  "--input", f"{B}={npy('b', good())}", "--output-dir", WORK / "o5"], must_mention=[A])


@suite.case
def unknown_input_name():
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={npy('a', good())}",
                  "--input", f"{B}={npy('b', good())}", "--input", f"no_such_input={npy('c', good())}",
                  "--output-dir", WORK / "o6"], must_mention=["no_such_input"])


@suite.case
def missing_npy_file():
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={WORK / 'does_not_exist.npy'}",
                  "--input", f"{B}={npy('b', good())}", "--output-dir", WORK / "o7"],
                 must_mention=["does_not_exist.npy"])


@suite.case
def garbage_npy_file():
    bad = WORK / "garbage.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={bad}",
                  "--input", f"{B}={npy('b', good())}", "--output-dir", WORK / "o8"])


@suite.case
def missing_bundle():
    expect_error([run_tool(), WORK / "no_such.bundle", "--output-dir", WORK / "o9"], must_mention=["no_such.bundle"])


def header_ranges(data: bytes):
    """(hashed ranges, end of the last hashed byte) from the 64-byte BundleHeader
    (schema/bundle_header.h): the FlatBuffer and the data blob are covered by the content
    hash; the header fields are checked too, except `reserved` (bytes 56..63)."""
    magic, version, hsize, fb_off, fb_size, data_off, data_size, _hash, _res = \
        struct.unpack_from("<8sIIQQQQQQ", data, 0)
    assert magic == b"EDGEBNDL", f"unexpected magic {magic!r}"
    return [(0, 56), (fb_off, fb_off + fb_size), (data_off, data_off + data_size)], data_off + data_size


def must_detect(ranges, pos):
    return any(lo <= pos < hi for lo, hi in ranges)


def run_modified(path, inputs, out_dir, must_fail):
    """must_fail: exit code 1 required. Otherwise (a byte nobody reads, e.g. alignment
    padding) exit 0 or 1 is fine -- but never a signal."""
    if must_fail:
        return expect_error([run_tool(), path, *inputs, "--output-dir", out_dir])
    res = lib.run_cmd([run_tool(), path, *inputs, "--output-dir", out_dir], check=False, timeout=120)
    assert res.returncode in (0, 1), f"{path.name}: {describe(res)}"
    print(f"    exit {res.returncode} (unhashed byte)")
    return res


@suite.case
def truncated_bundles():
    data = two_input_bundle().read_bytes()
    n = len(data)
    _, end = header_ranges(data)
    cuts = sorted({0, 1, 7, 8, 63, 64, 100, n // 4, n // 2, n - 4097, end - 64, end - 1, n - 1})
    inputs = ["--input", f"{A}={npy('a', good())}", "--input", f"{B}={npy('b', good())}"]
    for cut in cuts:
        if not 0 <= cut < n:
            continue
        path = WORK / f"trunc_{cut}.bundle"
        path.write_bytes(data[:cut])
        run_modified(path, inputs, WORK / f"ot{cut}", must_fail=cut < end)


@suite.case
def corrupted_bundles():
    data = two_input_bundle().read_bytes()
    ranges, _ = header_ranges(data)
    inputs = ["--input", f"{A}={npy('a', good())}", "--input", f"{B}={npy('b', good())}"]
    rng = np.random.default_rng(0)
    positions = {0, 8, 12, 16, 24, 32, 40, 48, 60, len(data) // 2, len(data) - 1,
                 *rng.integers(0, len(data), 8).tolist()}
    for lo, hi in ranges[1:]:   # first, middle and last byte of the FlatBuffer and the data blob
        if hi > lo:
            positions |= {lo, (lo + hi) // 2, hi - 1}
    for pos in sorted(p for p in positions if 0 <= p < len(data)):
        bad = bytearray(data)
        bad[pos] ^= 0x5A
        path = WORK / f"flip_{pos}.bundle"
        path.write_bytes(bytes(bad))
        run_modified(path, inputs, WORK / f"of{pos}", must_fail=must_detect(ranges, pos))
    garbage = WORK / "garbage.bundle"
    garbage.write_bytes(rng.integers(0, 256, len(data), dtype=np.uint8).tobytes())
    expect_error([run_tool(), garbage, *inputs, "--output-dir", WORK / "og"])
    # A valid header in front of garbage: the content hash (or the verifier) must catch it.
    forged = bytearray(rng.integers(0, 256, len(data), dtype=np.uint8).tobytes())
    forged[:64] = data[:64]
    path = WORK / "forged.bundle"
    path.write_bytes(bytes(forged))
    expect_error([run_tool(), path, *inputs, "--output-dir", WORK / "ofg"])


@suite.case
def bench_on_truncated_bundle():
    bench = lib.find_tool("edgert-bench", required=False)
    if bench is None:
        raise AssertionError("edgert-bench not found")
    data = two_input_bundle().read_bytes()
    path = WORK / "trunc_bench.bundle"
    path.write_bytes(data[: len(data) // 2])
    expect_error([bench, path, "--iters", "1"])


@suite.case
def unsupported_op_names_node_and_op():
    from onnx import TensorProto, helper
    import onnx
    n = 6
    nodes = [
        helper.make_node("Relu", ["scores_in"], ["scores"], name="relu_scores"),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_thr"],
                         ["selected"], name="my_nms_node"),
    ]
    inits = [helper.make_tensor("max_out", TensorProto.INT64, [1], [3]),
             helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.5]),
             helper.make_tensor("score_thr", TensorProto.FLOAT, [1], [0.0])]
    graph = helper.make_graph(
        nodes, "nms",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, n, 4]),
         helper.make_tensor_value_info("scores_in", TensorProto.FLOAT, [1, 1, n])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    path = lib.save_model(model, WORK / "nms.onnx")
    out = WORK / "nms.bundle"
    expect_error([lib.find_tool("edgec"), "compile", path, "-o", out], rc=None,
                 must_mention=["my_nms_node", "NonMaxSuppression"])
    assert not out.exists() or out.stat().st_size == 0, "edgec left a bundle behind after failing"


@suite.case
def compiler_missing_model_file():
    res = expect_error([lib.find_tool("edgec"), "compile", WORK / "no_such_model.onnx", "-o", WORK / "x.bundle"],
                       rc=None, must_mention=["no_such_model.onnx"])
    assert "terminate called" not in res.stderr and "Aborted" not in res.stderr, "uncaught exception"


@suite.case
def compiler_garbage_model_file():
    bad = WORK / "garbage.onnx"
    bad.write_bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    res = expect_error([lib.find_tool("edgec"), "compile", bad, "-o", WORK / "g.bundle"], rc=None,
                       must_mention=["garbage.onnx"])
    assert "terminate called" not in res.stderr, "uncaught exception"


@suite.case
def compiler_unknown_option():
    expect_error([lib.find_tool("edgec"), "compile", "--no-such-flag"], rc=None)


@suite.case
def inspect_on_truncated_bundle():
    data = two_input_bundle().read_bytes()
    path = WORK / "trunc_inspect.bundle"
    path.write_bytes(data[: len(data) // 3])
    expect_error([lib.find_tool("edgec"), "inspect", path], rc=None)


@suite.case
def help_works():
    for tool in ("edgec", "edgert-run", "edgert-bench"):
        path = lib.find_tool(tool, required=tool != "edgert-bench")
        if path is None:
            raise AssertionError(f"{tool} not found")
        res = lib.run_cmd([path, "--help"], check=False, timeout=30)
        assert res.returncode == 0, f"{tool} --help: {describe(res)}"
        text = (res.stdout + res.stderr).lower()
        assert "usage" in text, f"{tool} --help prints no usage:\n{describe(res)}"
        print(f"    {tool} --help: ok ({len(text.splitlines())} lines)")


@suite.case
def no_arguments_is_usage_error():
    for tool in ("edgec", "edgert-run", "edgert-bench"):
        path = lib.find_tool(tool, required=False)
        if path is None:
            continue
        res = lib.run_cmd([path], check=False, timeout=30)
        assert res.returncode not in (0,) and res.returncode > 0, f"{tool} with no arguments: {describe(res)}"


if __name__ == "__main__":
    WORK = lib.work_dir("test_cli_errors")
    sys.exit(suite.main())
