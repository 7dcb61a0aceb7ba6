#!/usr/bin/env python3
"""edgec compile --tune / --tune-cache (register tiles timed on this machine, README "CPU kernels").

- --tune on a small CNN writes a cache with one entry per distinct kernel shape (as many as
  edgec reports tuning, keys unique); the tuned bundle matches onnxruntime.
- Compiling again with --tune-cache and no --tune gives a byte-identical bundle.
- Identical convs share one key, and a model with other tensor names and weights finds
  every decision in the cache (the key depends on neither).
- A cache forcing 1x1 tiles everywhere changes the code, still matches onnxruntime and gives
  the same bits as the cost model's tiles.
- A garbage or malformed cache is an error naming the file (and line); an entry whose tile a
  kernel cannot take is a warning and the cost model's tile; entries of other targets survive
  a --tune rewrite.
- --tune for a target this machine cannot run (aarch64, opencl) is refused with a message."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4
suite = lib.Suite("test_tune")
WORK = None
HEADER = "edgec-tune-cache 1"


def require_x86_64_host():
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if not (re.search(r"\bavx2\b", flags) and re.search(r"\bfma\b", flags)):
        raise lib.Skip("this machine cannot run the x86_64 target (needs AVX2 and FMA)")


def edgec(*args, check=True):
    # Two candidates per shape (default 8): what is checked here (the cache, its keys and
    # replay) does not depend on how many were timed; each more is a trial compile.
    if "--tune" in args:
        args += ("--tune-candidates", "2")
    return lib.run_cmd([lib.find_tool("edgec"), "compile", *map(str, args)], check=check, timeout=600)


def read_cache(path):
    lines = [l for l in Path(path).read_text().splitlines() if l and not l.startswith("#")]
    assert lines[0] == HEADER, f"first line {lines[0]!r}"
    entries = {}
    for l in lines[1:]:
        key, target, vectors, unroll, tuned, default, shape = l.split()
        assert re.fullmatch(r"[0-9a-f]{16}", key), l
        assert key not in entries, f"key {key} twice"
        assert float(tuned) <= float(default) + 1e-9, f"tuned slower than the default: {l}"
        entries[key] = (target, int(vectors), int(unroll), shape)
    return entries


def tuned_count(stderr):
    m = re.search(r"tuned (\d+) kernel shapes", stderr)
    assert m, f"no 'tuned N kernel shapes' line in:\n{stderr}"
    return int(m.group(1))


def conv_chain(seed, prefix):
    """input -> conv A -> relu -> conv B -> relu -> conv C -> relu -> conv D -> output:
    B and C have the same shape (channels-last in and out), different weights."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    nodes, inits, x = [], [], "image"
    for i in range(4):
        w, b, y = f"{prefix}w{i}", f"{prefix}b{i}", f"{prefix}y{i}"
        inits += [numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32), w),
                  numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), b)]
        nodes.append(helper.make_node("Conv", [x, w, b], [y], pads=[1, 1, 1, 1], name=f"{prefix}conv{i}"))
        x = y
        if i < 3:
            nodes.append(helper.make_node("Relu", [y], [y + "r"], name=f"{prefix}relu{i}"))
            x = y + "r"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 16, 12, 12])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 16, 12, 12])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def check_against_ort(model, bundle, name, seed=0):
    """Runs the bundle on seeded inputs, compares with onnxruntime; returns the outputs."""
    rng = np.random.default_rng(seed)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    inputs = {model.graph.input[0].name: rng.standard_normal(shape).astype(np.float32)}
    actual = lib.run_bundle(bundle, inputs, WORK / f"{name}_out", lib.output_names(model))
    lib.assert_close(actual, lib.ort_run(model, inputs), RTOL, ATOL)
    return actual


@suite.case
def tune_writes_cache_and_cache_reproduces_bundle():
    require_x86_64_host()
    model = lib.make_cnn(seed=0, variant="basic")
    onnx_path = lib.save_model(model, WORK / "cnn.onnx")
    cache = WORK / "cnn.cache"
    res = edgec(onnx_path, "-o", WORK / "tuned.bundle", "--tune", "--tune-cache", cache)
    assert "tune round 1/" in res.stderr, res.stderr
    entries = read_cache(cache)
    assert len(entries) == tuned_count(res.stderr) > 0, f"{len(entries)} entries:\n{res.stderr}"
    assert all(e[0] == "x86_64" for e in entries.values()), entries
    check_against_ort(model, WORK / "tuned.bundle", "tuned")

    res = edgec(onnx_path, "-o", WORK / "cached.bundle", "--tune-cache", cache)
    assert f"{len(entries)} of {len(entries)} kernel shapes" in res.stderr, res.stderr
    assert "tune round" not in res.stderr, "--tune-cache alone must not time anything"
    assert (WORK / "cached.bundle").read_bytes() == (WORK / "tuned.bundle").read_bytes(), \
        "the bundle from the cache differs from the tuned one"


@suite.case
def same_shapes_share_a_key_across_names_and_weights():
    require_x86_64_host()
    a = lib.save_model(conv_chain(1, "a_"), WORK / "chain_a.onnx")
    cache = WORK / "chain.cache"
    res = edgec(a, "-o", WORK / "chain_a.bundle", "--tune", "--tune-cache", cache, "--winograd", "0")
    # 4 convs, B and C alike: 3 shapes.
    assert tuned_count(res.stderr) == 3 and len(read_cache(cache)) == 3, res.stderr
    model_b = conv_chain(2, "other_names_")
    b = lib.save_model(model_b, WORK / "chain_b.onnx")
    res = edgec(b, "-o", WORK / "chain_b.bundle", "--tune-cache", cache, "--winograd", "0")
    assert "3 of 3 kernel shapes" in res.stderr, res.stderr
    check_against_ort(model_b, WORK / "chain_b.bundle", "chain_b")


@suite.case
def forced_tiles_change_code_and_stay_correct():
    require_x86_64_host()
    model = lib.make_cnn(seed=5, variant="grouped")
    from onnx import TensorProto, helper
    model.graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10]))
    onnx_path = lib.save_model(model, WORK / "grouped.onnx")
    cache = WORK / "grouped.cache"
    edgec(onnx_path, "-o", WORK / "grouped_tuned.bundle", "--tune", "--tune-cache", cache)
    edgec(onnx_path, "-o", WORK / "grouped_default.bundle")
    # 1 vector x 1 output fits every kernel: allowed, and never the cost model's choice.
    lines = [re.sub(r"^(\S+ \S+) \d+ \d+ ", r"\1 1 1 ", l) if re.match(r"[0-9a-f]{16} ", l) else l
             for l in cache.read_text().splitlines()]
    forced = WORK / "forced.cache"
    forced.write_text("\n".join(lines) + "\n")
    res = edgec(onnx_path, "-o", WORK / "grouped_forced.bundle", "--tune-cache", forced)
    assert "warning" not in res.stderr, res.stderr
    assert (WORK / "grouped_forced.bundle").read_bytes() != (WORK / "grouped_default.bundle").read_bytes(), \
        "forcing 1x1 tiles did not change the code"
    forced_out = check_against_ort(model, WORK / "grouped_forced.bundle", "forced")
    check_against_ort(model, WORK / "grouped_tuned.bundle", "grouped_tuned")
    # A tile changes which outputs a step computes together, never the order of one sum.
    default_out = check_against_ort(model, WORK / "grouped_default.bundle", "grouped_default")
    for name, value in default_out.items():
        assert np.array_equal(value, forced_out[name]), f"{name}: 1x1 tiles changed the result bits"


@suite.case
def bad_caches():
    model = lib.make_cnn(seed=0, variant="basic")
    onnx_path = lib.save_model(model, WORK / "bad.onnx")
    default = WORK / "bad_default.bundle"
    edgec(onnx_path, "-o", default)

    def refused(text, *mention):
        path = WORK / "bad.cache"
        path.write_text(text)
        res = edgec(onnx_path, "-o", WORK / "x.bundle", "--tune-cache", path, check=False)
        assert res.returncode == 1, f"exit {res.returncode}:\n{res.stderr}"
        for m in (str(path),) + mention:
            assert m in res.stderr, f"error does not mention {m!r}:\n{res.stderr}"

    refused('{"format": "json"}\n', "not an edgec tune cache")
    refused("", "empty")
    refused(HEADER + "\n0123456789abcdef x86_64 2 4\n", ":2:", "7 fields")
    refused(HEADER + "\n0123456789abcdef x86_64 2 four 1.0 1.0 s\n", ":2:", "tile")
    refused(HEADER + "\nNOTAKEY x86_64 2 4 1.0 1.0 s\n", ":2:", "key")
    missing = WORK / "missing.cache"
    res = edgec(onnx_path, "-o", WORK / "x.bundle", "--tune-cache", missing, check=False)
    assert res.returncode == 1 and "cannot read tune cache" in res.stderr, res.stderr

    # A well-formed entry with a tile the kernel cannot take: warned about, then ignored.
    require_x86_64_host()
    cache = WORK / "good.cache"
    edgec(onnx_path, "-o", WORK / "y.bundle", "--tune", "--tune-cache", cache)
    text = cache.read_text()
    key = next(l.split()[0] for l in text.splitlines() if re.match(r"[0-9a-f]{16} ", l))
    text = re.sub(rf"^{key} (\S+) \d+ \d+ ", rf"{key} \1 64 64 ", text, flags=re.M)
    foreign = "fedcba9876543210 aarch64 2 8 10.00 12.00 out[1,8,8,32]/r[16,3,3]"
    cache.write_text(text + foreign + "\n")
    res = edgec(onnx_path, "-o", WORK / "z.bundle", "--tune-cache", cache)
    assert "warning" in res.stderr and key in res.stderr and "64x64" in res.stderr, res.stderr
    # --tune rewrites the cache and keeps the other target's entry.
    edgec(onnx_path, "-o", WORK / "z.bundle", "--tune", "--tune-cache", cache)
    assert foreign in cache.read_text().splitlines(), cache.read_text()


@suite.case
def tune_refused_for_targets_this_machine_cannot_run():
    model = lib.make_cnn(seed=0, variant="basic")
    onnx_path = lib.save_model(model, WORK / "refused.onnx")
    for target in ("aarch64", "opencl"):
        res = edgec(onnx_path, "-o", WORK / "r.bundle", "--target", target, "--tune", check=False)
        assert res.returncode == 1, f"{target}: exit {res.returncode}\n{res.stderr}"
        assert f"target {target} does not run on it" in res.stderr, res.stderr
        assert not (WORK / "r.bundle").exists()


if __name__ == "__main__":
    WORK = lib.work_dir("test_tune")
    sys.exit(suite.main())
