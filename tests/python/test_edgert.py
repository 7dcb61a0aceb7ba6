"""edgert, the runtime binding: numpy in and out, zero copy, errors as exceptions, threads,
outputs against onnxruntime."""
import os
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

import edgec
import edgert
from conftest import ROUND_TRIP_TYPES, cnn_inputs, identity_model, ort_run

RTOL, ATOL = 1e-4, 1e-5


def random_array(dtype, shape, rng):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)  # the whole range, extremes included
        a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        a.flat[0], a.flat[1] = info.min, info.max
        return a
    a = (rng.standard_normal(shape) * 1e3).astype(dtype)
    a.flat[0], a.flat[1] = np.finfo(dtype).max, np.finfo(dtype).tiny
    return a


def test_dtype_round_trips_exact():
    bundle = edgert.Bundle(edgec.compile(identity_model()))
    assert [t.dtype for t in bundle.inputs] == [t.dtype for t in bundle.outputs]
    rng = np.random.default_rng(1)
    feed = {t.name: random_array(t.dtype, t.shape, rng) for t in bundle.inputs}
    got = bundle.context().run(feed)
    assert set(got) == {"y_" + k for k in ROUND_TRIP_TYPES}
    for k in ROUND_TRIP_TYPES:
        x, y = feed["x_" + k], got["y_" + k]
        assert y.dtype == x.dtype and y.shape == x.shape, k
        assert x.tobytes() == y.tobytes(), k  # bit-exact


def test_describes_inputs_and_outputs(cnn_bundle):
    b = cnn_bundle
    assert [(t.name, t.dtype, t.shape) for t in b.inputs] == [
        ("image", np.dtype(np.float32), (1, 3, 16, 16)), ("bias", np.dtype(np.float32), (1, 5))]
    assert [(t.name, t.dtype, t.shape, t.size_bytes) for t in b.outputs] == [
        ("probs", np.dtype(np.float32), (1, 5), 20), ("features", np.dtype(np.float32), (1, 8, 16, 16), 8192)]
    assert b.port == "cpu" and b.target["arch"] == "x86_64" and b.target["port"] == "cpu"
    assert b.arena_size > 0
    assert b.signer is None and not b.signature_verified
    assert "cpu" in edgert.runtime_ports()


def test_outputs_match_onnxruntime(cnn, cnn_bundle):
    for seed in range(3):
        inputs = cnn_inputs(seed)
        got = cnn_bundle.context().run(inputs)
        want = ort_run(cnn, inputs)
        assert set(got) == set(want)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=RTOL, atol=ATOL, err_msg=name)


def test_zero_copy_inputs_and_out(cnn, cnn_bundle):
    ctx = cnn_bundle.context()
    inputs = cnn_inputs(0)
    out = ctx.empty_outputs()
    res = ctx.run(inputs, out=out)
    assert res is out  # written into the caller's arrays and handed back
    first = {k: v.copy() for k, v in out.items()}
    # Mutate the input arrays in place (same objects, same dict): the rerun sees the new values.
    inputs["image"] *= -0.5
    inputs["bias"][...] = np.arange(5, dtype=np.float32)
    ids = {k: id(v) for k, v in out.items()}
    ctx.run(inputs, out=out)
    assert {k: id(v) for k, v in out.items()} == ids
    want = ort_run(cnn, inputs)
    for name in want:
        np.testing.assert_allclose(out[name], want[name], rtol=RTOL, atol=ATOL, err_msg=name)
        assert not np.allclose(out[name], first[name]), name
    # No numpy array is allocated per run with out= (numpy reports its data buffers to
    # tracemalloc): a copy of the 3 KB image, even one freed right after the run, or a new
    # output array would raise the peak.
    tracemalloc.start()
    try:
        ctx.run(inputs, out=out)
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for _ in range(50):
            ctx.run(inputs, out=out)
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - base < 1024, f"peak {peak - base} bytes above the baseline during 50 runs with out="
    assert current - base < 1024


def test_wrong_inputs_are_exceptions_naming_the_input(cnn_bundle):
    ctx = cnn_bundle.context()
    good = cnn_inputs(0)
    cases = {
        "dtype": (dict(good, image=good["image"].astype(np.float64)), edgert.InvalidArgumentError, "image"),
        "shape": (dict(good, bias=np.zeros((1, 6), np.float32)), edgert.InvalidArgumentError, "bias"),
        "order": (dict(good, image=np.asfortranarray(good["image"])), edgert.InvalidArgumentError, "image"),
        "strided": (dict(good, bias=np.zeros((1, 10), np.float32)[:, ::2]), edgert.InvalidArgumentError, "bias"),
        "not an array": (dict(good, bias=[[1.0] * 5]), edgert.InvalidArgumentError, "bias"),
        "missing": ({"image": good["image"]}, edgert.NotBoundError, "bias"),
        "unknown": (dict(good, imagee=good["image"]), edgert.InvalidArgumentError, "imagee"),
    }
    for what, (inputs, exc, name) in cases.items():
        with pytest.raises(exc) as e:
            ctx.run(inputs)
        assert f"'{name}'" in str(e.value), (what, str(e.value))
        assert isinstance(e.value, edgert.EdgertError)
    with pytest.raises(TypeError):
        ctx.run([good["image"], good["bias"]])
    # out= with a wrong array: named too, and nothing written
    out = ctx.empty_outputs()
    with pytest.raises(edgert.InvalidArgumentError, match="'probs'"):
        ctx.run(good, out=dict(out, probs=np.zeros((1, 5), np.float64)))
    ro = ctx.empty_outputs()
    ro["features"].flags.writeable = False
    with pytest.raises(edgert.InvalidArgumentError, match="'features'"):
        ctx.run(good, out=ro)
    # The context still works after all of that.
    ctx.run(good)


def test_copy_converts_dtype_and_order(cnn, cnn_bundle):
    ctx = cnn_bundle.context()
    good = cnn_inputs(2)
    odd = {"image": np.asfortranarray(good["image"].astype(np.float64)), "bias": good["bias"].tolist()}
    got = ctx.run(odd, copy=True)
    want = ctx.run(good)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])
    with pytest.raises(edgert.InvalidArgumentError, match="'bias'"):  # copy never reshapes
        ctx.run(dict(good, bias=np.zeros((5,), np.float32)), copy=True)


def test_closed_bundle_and_context_raise(cnn_bundle_bytes):
    b = edgert.Bundle(cnn_bundle_bytes)
    ctx = b.context()
    b.close()
    assert b.closed
    with pytest.raises(edgert.ClosedError):
        b.context()
    with pytest.raises(edgert.ClosedError):
        b.arena_size
    # A context keeps what it needs of the bundle: it still runs after Bundle.close().
    got = ctx.run(cnn_inputs(0))
    assert got["probs"].shape == (1, 5)
    ctx.close()
    ctx.close()  # twice is fine
    with pytest.raises(edgert.ClosedError):
        ctx.run(cnn_inputs(0))
    with pytest.raises(edgert.ClosedError):
        ctx.stats()


def test_bad_bundles_raise_their_status(tmp_path, cnn_bundle_bytes):
    with pytest.raises(edgert.BundleIOError):
        edgert.Bundle(str(tmp_path / "no-such.bundle"))
    damaged = bytearray(cnn_bundle_bytes)
    damaged[len(damaged) // 2] ^= 0xFF
    with pytest.raises(edgert.InvalidBundleError) as e:
        edgert.Bundle(bytes(damaged))
    assert str(e.value)  # the runtime's message
    with pytest.raises(edgert.InvalidBundleError):
        edgert.Bundle(cnn_bundle_bytes[:100])
    path = tmp_path / "m.bundle"
    path.write_bytes(cnn_bundle_bytes)
    for kw in ({}, {"map_in_place": True}):
        b = edgert.Bundle(path, **kw)  # os.PathLike
        assert b.context().run(cnn_inputs(0))["probs"].shape == (1, 5)


@pytest.mark.skipif(not edgert.signatures_supported(), reason="runtime built without EDGE_SIGNATURES")
def test_signed_bundle_needs_its_key(tmp_path, cnn_bundle_bytes):
    exe = edgec.executable()
    for name in ("a", "b"):
        subprocess.run([exe, "keygen", "-o", str(tmp_path / name)], check=True, capture_output=True)
    unsigned = tmp_path / "m.bundle"
    unsigned.write_bytes(cnn_bundle_bytes)
    signed = tmp_path / "m.signed.bundle"
    subprocess.run([exe, "sign", str(unsigned), "--key", str(tmp_path / "a.key"), "-o", str(signed)],
                   check=True, capture_output=True)
    key_a, key_b = tmp_path / "a.pub", tmp_path / "b.pub"
    with pytest.raises(edgert.InvalidBundleError):
        edgert.Bundle(signed, trusted_keys=[key_b])
    with pytest.raises(edgert.InvalidBundleError):
        edgert.Bundle(unsigned, trusted_keys=[key_a])
    b = edgert.Bundle(signed, trusted_keys=[key_b, key_a])
    assert b.signature_verified
    assert b.signer == bytes.fromhex(key_a.read_text().strip())
    # the key as hex text and as raw bytes, the bundle as bytes
    raw = bytes.fromhex(key_a.read_text().strip())
    assert edgert.Bundle(signed.read_bytes(), trusted_keys=[raw]).signer == raw
    assert edgert.Bundle(signed, trusted_keys=[raw.hex()]).context().run(cnn_inputs(0))["probs"].shape == (1, 5)
    with pytest.raises(edgert.InvalidArgumentError):
        edgert.Bundle(signed, trusted_keys=[b"short"])
    # Not in signed mode: it opens, names its signer, says it was not checked.
    u = edgert.Bundle(signed)
    assert u.signer == raw and not u.signature_verified


def test_two_threads_two_contexts_match_one(cnn_bundle):
    feeds = [cnn_inputs(seed) for seed in range(8)]
    ref_ctx = cnn_bundle.context()
    expected = [ref_ctx.run(f) for f in feeds]
    results = [[None] * len(feeds) for _ in range(2)]
    errors = []

    def worker(k):
        try:
            ctx = cnn_bundle.context(threads=1)
            out = ctx.empty_outputs()
            for _ in range(20):
                for i, f in enumerate(feeds):
                    ctx.run(f, out=out)
                    if results[k][i] is None:
                        results[k][i] = {n: a.copy() for n, a in out.items()}
                    else:
                        for n in out:
                            assert np.array_equal(out[n], results[k][i][n])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(2):
        for i in range(len(feeds)):
            for n in expected[i]:
                assert np.array_equal(results[k][i][n], expected[i][n]), (k, i, n)
    # A context splitting kernels across 2 threads gives the results of 1.
    two = cnn_bundle.context(threads=2)
    for f, e in zip(feeds, expected):
        got = two.run(f)
        for n in e:
            np.testing.assert_allclose(got[n], e[n], rtol=1e-6, atol=1e-7)


def test_gil_released_during_run():
    # A run of some milliseconds (a 256x1024 @ 1024x1024 MatMul), and a switch interval of
    # minutes, so that the interpreter never takes the GIL from the running thread: the ticker
    # thread gets it only when ctx.run gives it up (and hands it back at once: time.sleep(0)).
    # Without the release it gets no tick in during the runs.
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((1024, 1024)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "mm",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1024])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 1024])], initializer=[w])
    ctx = edgert.Bundle(edgec.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))).context()
    inputs = {"x": rng.standard_normal((256, 1024)).astype(np.float32)}
    out = ctx.empty_outputs()
    ctx.run(inputs, out=out)
    started, done = threading.Event(), threading.Event()
    ticks = [0]

    def ticker():
        started.set()
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0)

    old = sys.getswitchinterval()
    t = threading.Thread(target=ticker)
    t.start()
    started.wait()
    sys.setswitchinterval(300.0)
    try:
        before = ticks[0]
        t0 = time.perf_counter()
        for _ in range(5):
            ctx.run(inputs, out=out)
        elapsed = time.perf_counter() - t0
        n = ticks[0] - before
    finally:
        sys.setswitchinterval(old)
        done.set()
        t.join()
    assert n > 20, f"{n} ticks during 5 runs of {elapsed / 5 * 1e3:.1f} ms"

    # While one thread runs the context, a second run of it from another thread is refused
    # (one context per thread), not a data race; the first run is unharmed.
    results, errors = [], []

    def runner():
        for _ in range(5):
            results.append(ctx.run(inputs)["y"])

    t = threading.Thread(target=runner)
    t.start()
    while t.is_alive() and not errors:
        try:
            ctx.run(inputs, out=out)
        except edgert.InvalidArgumentError as e:
            errors.append(str(e))
    t.join()
    assert errors and "already running" in errors[0], errors
    assert len(results) == 5
    for r in results:
        np.testing.assert_array_equal(r, out["y"])


def test_self_test_profile_and_stats(cnn_bundle):
    ctx = cnn_bundle.context()
    report = ctx.self_test()
    assert report["ok"], report
    assert set(report["outputs"]) == {"probs", "features"}
    ctx.profiling = True
    ctx.run(cnn_inputs(0))
    rows = ctx.profile()
    assert len(rows) == len(cnn_bundle.commands()) > 0
    assert any(r["is_launch"] and r["ns"] > 0 for r in rows)
    stats = ctx.stats()
    assert stats["port"] == "cpu" and stats["arena_bytes"] == cnn_bundle.arena_size
    with pytest.raises(edgert.InvalidArgumentError):
        edgert.Bundle(edgec.compile(identity_model())).context().self_test()  # no reference data


def test_prepare_refuses_a_cpu_bundle(tmp_path, cnn_bundle_bytes):
    path = tmp_path / "m.bundle"
    path.write_bytes(cnn_bundle_bytes)
    with pytest.raises(edgert.InvalidArgumentError):
        edgert.prepare(path, tmp_path / "p.bundle")


def test_edgert_imports_no_compiler():
    code = ("import sys, edgert; bad = [m for m in ('onnx', 'google.protobuf', 'edgec', 'onnxruntime') "
            "if m in sys.modules]; assert not bad, bad; print(edgert.__version__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == edgec.__version__


def test_opencl_bundle_prepared_and_run(tmp_path):
    # The opencl port is linked into the module: an unprepared bundle is refused
    # (UnsupportedError), edgert.prepare builds it on this device, then it runs.
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])])
    bundle = tmp_path / "cl.bundle"
    edgec.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), target="opencl",
                  output=bundle)
    assert "opencl" in edgert.runtime_ports()
    b = edgert.Bundle(bundle)
    assert b.port == "opencl"
    try:
        b.context()
        pytest.fail("an unprepared OpenCL bundle opened a context without allow_source_build")
    except edgert.UnsupportedError as e:
        if "no program binaries" not in str(e):
            if os.environ.get("EDGE_REQUIRE_OPENCL") == "1":
                raise
            pytest.skip(f"no OpenCL device: {e}")
    prepared = tmp_path / "cl.prepared.bundle"
    edgert.prepare(bundle, prepared)
    ctx = edgert.Bundle(prepared).context()
    assert ctx.stats()["port"] == "opencl" and ctx.stats()["programs_loaded"] >= 1
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
    np.testing.assert_array_equal(ctx.run({"x": x})["y"], np.maximum(x, 0))
