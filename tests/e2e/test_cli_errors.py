#!/usr/bin/env python3
"""CLI error handling: every bad input is a clear error with exit code 1, never a crash.

edgert-run: missing input, mis-shaped input, wrong dtype, unknown input name, missing or
truncated / corrupted / garbage bundle -> exit 1, stderr names the input (or the problem).
edgec: unsupported op -> error names the node and the op type; missing model file,
garbage model file -> clean error. --help works for edgec, edgert-run, edgert-bench.
Hostile inputs: a FIFO as bundle or .npy (refused, never waited on), a .npy whose header
claims more data than the file holds (refused before allocating), .npy headers that only a
real parser reads as numpy does, colliding output file names, out-of-range numeric flags,
and bundles with wrapped offsets or a missing target table given to `edgec inspect`."""
import os
import struct
import subprocess
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
def output_to_a_pipe_is_written_in_place():
    # -o /dev/null, /dev/stdout or a FIFO: the bundle is written into it. edgec wrote a file
    # beside it and renamed that over it, which replaced the device (as root, -o /dev/null
    # turned /dev/null into a regular file and broke every later `< /dev/null`). A FIFO here.
    import stat
    import threading
    model = lib.save_model(lib.make_simple_model([(A, SHAPE), (B, SHAPE)], "Add", name="add"), WORK / "pipe.onnx")
    want = WORK / "pipe_reference.bundle"
    lib.run_cmd([lib.find_tool("edgec"), "compile", model, "-o", want, "-q"])
    fifo = WORK / "bundle.fifo"
    if fifo.exists() or fifo.is_symlink():
        fifo.unlink()
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    res = subprocess.run([str(lib.find_tool("edgec")), "compile", str(model), "-o", str(fifo), "-q"],
                         capture_output=True, text=True, timeout=120)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), f"-o FIFO replaced the FIFO with a file: {describe(res)}"
    assert res.returncode == 0, describe(res)
    assert got and got[0] == want.read_bytes(), "the FIFO did not carry the bundle's bytes"
    assert not Path(str(fifo) + ".tmp").exists()


@suite.case
def serve_runs_each_line_as_its_own_command():
    # edgec --serve and edgert-run --serve (the conformance suites' way to compile and run
    # thousands of models): each line succeeds or fails as its own command line would, and a
    # failure leaves the server working.
    a, b = good(seed=3), good(seed=4)
    model = lib.save_model(lib.make_simple_model([(A, SHAPE), (B, SHAPE)], "Add", name="add"), WORK / "serve.onnx")
    args = lib.write_inputs({A: a, B: b}, WORK / "serve_in")
    saved = os.environ.get("EDGE_SERVE")
    os.environ["EDGE_SERVE"] = "edgec edgert-run"
    try:
        for attempt in range(2):
            bundle, out_dir = WORK / f"serve{attempt}.bundle", WORK / f"serve_out{attempt}"
            lib.run_tool([lib.find_tool("edgec"), "compile", model, "-o", bundle])
            lib.run_edgert([run_tool(), bundle, *args, "--output-dir", out_dir])
            got = lib.read_outputs(out_dir, ["y"])["y"]
            assert np.array_equal(got, a + b), "Add computed wrong values through --serve"
            for cmd, word in (([lib.find_tool("edgec"), "compile", WORK / "none.onnx", "-o", bundle], "none.onnx"),
                              ([run_tool(), bundle, *args[:2], "--output-dir", out_dir], B)):
                try:
                    lib.run_tool(cmd)
                    raise AssertionError(f"--serve ran a failing command line: {cmd}")
                except lib.ToolError as e:
                    assert e.returncode == 1 and word in e.first_line(), f"wrong failure: {e}"
    finally:
        if saved is None:
            del os.environ["EDGE_SERVE"]
        else:
            os.environ["EDGE_SERVE"] = saved
    for tool in (lib.find_tool("edgec"), run_tool()):
        res = subprocess.run([str(tool), "--serve"], stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=60)  # no command lines: nothing to do
        assert res.returncode == 0 and not res.stdout, describe(res)


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
def list_targets_where_the_help_says():
    """`edgec --list-targets` and `edgec compile --list-targets` (as compile --help lists it)
    print the same targets, one per line with what each needs, and each is accepted by
    --target (an unknown one is refused naming the known ones)."""
    # The host edgec itself: EDGEC may be a wrapper that appends its own --target.
    edgec = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
    top = lib.run_cmd([edgec, "--list-targets"]).stdout.splitlines()
    assert top == lib.run_cmd([edgec, "compile", "--list-targets"]).stdout.splitlines()
    names = [line.split()[0] for line in top]
    assert {"x86_64", "x86_64-avx512", "aarch64", "aarch64-dotprod", "opencl"} <= set(names), names
    assert all(len(line.split()) > 1 for line in top), top  # a description after each name
    expect_error([edgec, "compile", "m.onnx", "-o", WORK / "t.bundle", "--target", "no-such-target"], rc=None,
                 must_mention=["no-such-target"] + names)


@suite.case
def inspect_on_truncated_bundle():
    data = two_input_bundle().read_bytes()
    path = WORK / "trunc_inspect.bundle"
    path.write_bytes(data[: len(data) // 3])
    expect_error([lib.find_tool("edgec"), "inspect", path], rc=None)


# ---------------------------------------------------------------- hostile inputs

def bench_tool():
    bench = lib.find_tool("edgert-bench", required=False)
    if bench is None:
        raise AssertionError("edgert-bench not found")
    return bench


def ab_inputs():
    return ["--input", f"{A}={npy('a', good())}", "--input", f"{B}={npy('b', good())}"]


@suite.case
def fifo_is_refused_not_waited_on():
    # open() of a FIFO blocks until a writer appears: the tools must refuse it first.
    fifo = WORK / "pipe.fifo"
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    must = ["not a regular file", str(fifo)]
    expect_error([run_tool(), fifo, "--output-dir", WORK / "ofifo1"], must_mention=must, timeout=20)
    expect_error([bench_tool(), fifo, "--iters", "1"], must_mention=must, timeout=20)
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={fifo}", "--input", f"{B}={npy('b', good())}",
                  "--output-dir", WORK / "ofifo2"], must_mention=must + [A], timeout=20)
    expect_error([lib.find_tool("edgec"), "inspect", fifo], rc=None, must_mention=must, timeout=20)
    expect_error([lib.find_tool("edgec"), "inspect", WORK], rc=None, must_mention=["not a regular file"], timeout=20)


def npy_bytes(header: str, data: bytes = b"", version: int = 1) -> bytes:
    """A .npy file with this header text, padded as numpy pads it (to 64 bytes, ending '\\n')."""
    text = header.encode("latin1")
    prefix = 10 if version == 1 else 12
    text += b" " * ((-(prefix + len(text) + 1)) % 64) + b"\n"
    size = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + size + text + data


def limited_memory(cmd, megabytes=512):
    """cmd under `ulimit -v`: allocating what a lying header claims (1 GiB) fails. Not for a
    tool that is a script (tests/aarch64/bin: qemu-user reserves more than that itself). An
    ASan tool (EDGE_SANITIZER=asan, from ctest) reserves terabytes of shadow memory: there
    ASan itself refuses allocations past the limit (allocator_may_return_null is set)."""
    if Path(cmd[0]).read_bytes()[:2] == b"#!":
        return cmd
    if os.environ.get("EDGE_SANITIZER") == "asan":
        return ["env", f"ASAN_OPTIONS={os.environ.get('ASAN_OPTIONS', '')}:max_allocation_size_mb={megabytes}", *cmd]
    return ["/bin/sh", "-c", f'ulimit -v {megabytes * 1024} && exec "$@"', "sh", *map(str, cmd)]


@suite.case
def npy_header_claims_more_than_the_file():
    big = (16384, 16384)   # 1 GiB of float32, in a 176-byte file
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {big}, }}"
    lying = WORK / "lying.npy"
    lying.write_bytes(npy_bytes(header, bytes(48)))
    assert lying.stat().st_size == 176, lying.stat().st_size
    # The wrong shape is named (before the data size matters).
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={lying}", "--input", f"{B}={npy('b', good())}",
                  "--output-dir", WORK / "olie1"], must_mention=[A, "(16384, 16384)", "(1, 3, 4, 5)"])
    # An input that really is 1 GiB: truncation is reported with both sizes, without
    # allocating the gigabyte first (512 MiB of address space would not hold it).
    bundle = WORK / "big_relu.bundle"
    if not bundle.exists():
        lib.compile_model(lib.make_simple_model([("big_in", big)], "Relu", name="big_relu"), bundle)
    expect_error(limited_memory([run_tool(), bundle, "--input", f"big_in={lying}", "--output-dir", WORK / "olie2"]),
                 must_mention=["big_in", "truncated", "shorter than its header", str(16384 * 16384 * 4), "48"])
    # Right shape, short data.
    short = WORK / "short.npy"
    short.write_bytes(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 4, 5), }", bytes(100)))
    expect_error([run_tool(), two_input_bundle(), "--input", f"{A}={short}", "--input", f"{B}={npy('b', good())}",
                  "--output-dir", WORK / "olie3"], must_mention=[A, "truncated", "240", "100"])
    # Element count * element size overflows 64 bits.
    huge = WORK / "overflow.npy"
    huge.write_bytes(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }"))
    model = lib.save_model(lib.make_simple_model([("x", (2,)), ("k", (2,))], "Add", name="addk"), WORK / "addk.onnx")
    expect_error([lib.find_tool("edgec"), "compile", model, "-o", WORK / "addk.bundle", "--const-input", f"k={huge}"],
                 rc=None, must_mention=["overflow.npy", "too large"])


def numpy_verdict(path, dtype, shape):
    """(array, why): the array when numpy reads `path` as a C-order `dtype` array of `shape`
    (what the tool must accept, with the same values), else None."""
    try:
        arr = np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - any refusal by numpy
        return None, f"numpy refuses it ({type(e).__name__}: {str(e)[:80]})"
    if arr.dtype != np.dtype(dtype) or arr.shape != shape:
        return None, f"numpy reads {arr.dtype.str} {arr.shape}"
    if arr.ndim > 1 and not arr.flags.c_contiguous:
        return None, "numpy reads it in Fortran order"
    return arr, f"numpy reads {arr.dtype.str} {arr.shape}"


@suite.case
def npy_header_read_as_numpy_reads_it():
    data = good(seed=7)
    b = good(seed=8)
    std = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 4, 5), }"
    cases = [  # (name, header, version, words the error must mention when refused)
        ("numpy_default", std, 1, ()),
        ("version_2", std, 2, ()),
        ("version_3", std, 3, ()),
        ("reordered_spaced", '{"shape":(1,3,4,5,),\t"fortran_order" :False,\n "descr":"<f4"}', 1, ()),
        ("native_order", "{'descr': '=f4', 'fortran_order': False, 'shape': (1, 3, 4, 5)}", 1, ()),
        # Python keeps the last key: numpy reads int32 (a substring search found '<f4').
        ("repeated_descr", "{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (1, 3, 4, 5), }", 1,
         ("descr",)),
        # A structured dtype whose field name holds the text 'descr': '<f4'.
        ("f4_in_field_name", '{"descr": [("\'descr\': \'<f4\'", "<i4")], "fortran_order": False, '
                             '"shape": (1, 3, 4, 5), }', 1, ("structured",)),
        ("int32", "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 3, 4, 5), }", 1, ("i32",)),
        ("unknown_key", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 4, 5), 'x': 1}", 1, ("'x'",)),
        ("shape_without_commas", "{'descr': '<f4', 'fortran_order': False, 'shape': (1 3 4 5), }", 1, ("shape",)),
        ("shape_not_tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': 240, }", 1, ("shape",)),
        ("fortran_4d", "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3, 4, 5), }", 1, ("fortran",)),
        ("big_endian", "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 3, 4, 5), }", 1, ("big-endian",)),
        ("object", "{'descr': '|O', 'fortran_order': False, 'shape': (1, 3, 4, 5), }", 1, ("object",)),
        ("lowercase_false", "{'descr': '<f4', 'fortran_order': false, 'shape': (1, 3, 4, 5), }", 1, ("fortran",)),
        ("text_after_dict", std + " x", 1, ("after",)),
        ("unsupported_version", std, 4, ("version",)),
    ]
    for name, header, version, words in cases:
        path = WORK / f"hdr_{name}.npy"
        path.write_bytes(npy_bytes(header, data.tobytes(), version))
        arr, why = numpy_verdict(path, np.float32, SHAPE)
        print(f"    {name}: {why}")
        cmd = [run_tool(), two_input_bundle(), "--input", f"{A}={path}", "--input", f"{B}={npy('b8', b)}",
               "--output-dir", WORK / f"ohdr_{name}"]
        if arr is None:
            expect_error(cmd, must_mention=[A, *words])
            continue
        res = lib.run_cmd(cmd, check=False, timeout=120)
        assert res.returncode == 0, f"{name}: numpy reads it, edgert-run does not:\n{describe(res)}"
        out = np.load(lib.output_file(WORK / f"ohdr_{name}", "y"))
        assert np.allclose(out, arr + b, rtol=1e-6, atol=1e-6), f"{name}: wrong values"
    # Fortran order is the same bytes when only one dimension is longer than 1: accepted.
    bundle = WORK / "relu1d.bundle"
    if not bundle.exists():
        lib.compile_model(lib.make_simple_model([("v", (6,))], "Relu", name="relu1d"), bundle)
    v = np.array([-1, 2, -3, 4, -5, 6], np.float32)
    path = WORK / "hdr_fortran_1d.npy"
    path.write_bytes(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", v.tobytes()))
    arr, why = numpy_verdict(path, np.float32, (6,))
    assert arr is not None, why
    out = lib.run_bundle(bundle, {}, WORK / "ohdr_f1d", ["y"], extra_args=["--input", f"v={path}"])
    assert np.array_equal(out["y"], np.maximum(arr, 0)), out["y"]


@suite.case
def colliding_output_file_names():
    from onnx import TensorProto, helper
    import onnx
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a/b"], name="relu"), helper.make_node("Neg", ["x"], ["a_b"], name="neg")],
        "collide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("a/b", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("a_b", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    bundle = WORK / "collide.bundle"
    lib.compile_model(model, bundle)
    x = good((2, 3), seed=3)
    out_dir = WORK / "ocollide"
    res = lib.run_cmd([run_tool(), bundle, "--input", f"x={npy('x23', x)}", "--output-dir", out_dir])
    files = sorted(p.name for p in out_dir.glob("*.npy"))
    # Documented (edgert-run --help): 'a_b' keeps a_b.npy, 'a/b' gets the first free a_b_1.npy.
    assert files == ["a_b.npy", "a_b_1.npy"], f"files written: {files}\n{describe(res)}"
    assert "a/b" in res.stderr and "a_b_1.npy" in res.stderr, f"mapping not reported:\n{describe(res)}"
    print(f"    {res.stderr.strip()}")
    assert np.array_equal(np.load(out_dir / "a_b_1.npy"), np.maximum(x, 0)), "a/b (Relu) is wrong"
    assert np.array_equal(np.load(out_dir / "a_b.npy"), -x), "a_b (Neg) is wrong"


@suite.case
def numeric_flags_are_strict():
    base = [run_tool(), two_input_bundle(), *ab_inputs(), "--output-dir", WORK / "oflags"]
    for value in ["4294967297", "18446744073709551617", "1025", "0", "-1", "+4", " 4", "4 ", "4x", "0x4", "1e3", ""]:
        expect_error(base + ["--threads", value], must_mention=["--threads", f"'{value}'"], timeout=30)
    expect_error(base + ["--repeat", "4294967297"], must_mention=["--repeat", "4294967297"], timeout=30)
    expect_error(base + ["--device", "4294967296"], must_mention=["--device", "4294967296"], timeout=30)
    expect_error([bench_tool(), two_input_bundle(), "--threads", "4294967297"],
                 must_mention=["--threads", "4294967297"], timeout=30)
    res = lib.run_cmd(base + ["--threads", "3", "--repeat", "2"], check=False, timeout=60)
    assert res.returncode == 0, f"--threads 3 --repeat 2 should run:\n{describe(res)}"


@suite.case
def bench_iteration_counts_are_bounded():
    bundle = two_input_bundle()
    for flag, value in [("--iters", "100000000000000"), ("--iters", "10000001"), ("--iters", "0"),
                        ("--warmup", "100000000000000"), ("--warmup", "-1")]:
        expect_error([bench_tool(), bundle, flag, value], must_mention=[flag, value], timeout=30)
    res = lib.run_cmd([bench_tool(), bundle, "--iters", "3", "--warmup", "0"], check=False, timeout=60)
    assert res.returncode == 0, f"--iters 3 should run:\n{describe(res)}"


def fnv_content_hash(fb: bytes, blob: bytes) -> int:
    """schema/bundle_header.h content_hash: 64-bit FNV-1a over 8-byte words, then bytes."""
    h, prime, mask = 0xcbf29ce484222325, 0x100000001b3, (1 << 64) - 1
    for part in (fb, blob):
        n = len(part) // 8 * 8
        for w in np.frombuffer(part[:n], dtype="<u8").tolist():
            h = ((h ^ w) * prime) & mask
        for byte in part[n:]:
            h = ((h ^ byte) * prime) & mask
    return h


def rehashed(data: bytearray) -> bytes:
    """The bundle with its header's content hash recomputed: only the verifier can object."""
    _, _, _, fb_off, fb_size, data_off, data_size, _, _ = struct.unpack_from("<8sIIQQQQQQ", data, 0)
    struct.pack_into("<Q", data, 48, fnv_content_hash(bytes(data[fb_off:fb_off + fb_size]),
                                                      bytes(data[data_off:data_off + data_size])))
    return bytes(data)


def expect_inspect_error(path, must_mention=()):
    return expect_error([lib.find_tool("edgec"), "inspect", path], rc=None, must_mention=must_mention, timeout=30)


@suite.case
def inspect_on_hostile_bundles():
    data = two_input_bundle().read_bytes()
    assert rehashed(bytearray(data)) == data, "content hash recomputed differently from edgec's"
    res = lib.run_cmd([lib.find_tool("edgec"), "inspect", two_input_bundle(), "--json"])
    assert '"target"' in res.stdout, res.stdout[:200]
    # A bundle for another machine or port: the runtime linked into edgec cannot run it, but
    # inspect still shows it.
    for target in ("aarch64", "opencl", "x86_64"):
        cross = WORK / f"add_{target}.bundle"
        lib.compile_model(lib.make_simple_model([(A, SHAPE), (B, SHAPE)], "Add", name="add"), cross,
                          ["--target", target])
        res = lib.run_cmd([lib.find_tool("edgec"), "inspect", cross, "--json"], check=False, timeout=60)
        assert res.returncode == 0 and '"arch":' in res.stdout, f"inspect of a {target} bundle:\n{describe(res)}"
    # Header offsets whose offset + size wraps around 2^64 to a small number.
    for field, value, size in [(16, 1 << 63, (1 << 63) + 64), (16, (1 << 64) - 64, 128),
                               (32, 1 << 63, (1 << 63) + 4096)]:
        bad = bytearray(data)
        struct.pack_into("<QQ", bad, field, value, size)
        path = WORK / f"wrap_{field}_{value:x}.bundle"
        path.write_bytes(bytes(bad))
        expect_inspect_error(path)
    # The FlatBuffer's root offset (its first 4 bytes) points outside the file.
    fb_off = struct.unpack_from("<Q", data, 16)[0]
    for root in (0xFFFFFF00, len(data), 0x7FFFFFFF):
        bad = bytearray(data)
        struct.pack_into("<I", bad, fb_off, root)
        path = WORK / f"root_{root:x}.bundle"
        path.write_bytes(rehashed(bad))
        expect_inspect_error(path)
    # No target table: clear the `target` slot (field 3 of table Bundle) in the root vtable.
    bad = bytearray(data)
    table = fb_off + struct.unpack_from("<I", bad, fb_off)[0]
    vtable = table - struct.unpack_from("<i", bad, table)[0]
    assert struct.unpack_from("<H", bad, vtable)[0] > 4 + 2 * 3, "root vtable has no target slot"
    struct.pack_into("<H", bad, vtable + 4 + 2 * 3, 0)
    path = WORK / "no_target.bundle"
    path.write_bytes(rehashed(bad))
    expect_inspect_error(path, must_mention=["target"])
    # Truncated at many lengths.
    n = len(data)
    for cut in sorted({*range(0, 130), *range(130, n, 37), n - 64, n - 1}):
        path = WORK / "trunc_many.bundle"
        path.write_bytes(data[:cut])
        res = lib.run_cmd([lib.find_tool("edgec"), "inspect", path], check=False, timeout=30)
        assert res.returncode is not None and res.returncode > 0 and res.stderr.strip(), \
            f"inspect of the first {cut} of {n} bytes:\n{describe(res)}"
    print(f"    truncations: all refused with a message")


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
