#!/usr/bin/env python3
"""edgec --precision bf16 (README "CPU kernels"): convolutions and matrix products with
constant weights take bfloat16 operands, products summed in float32 (vdpbf16ps on
x86_64-avx512).

- Exact semantics, against onnxruntime: the reference is the same ONNX model with the bf16
  rounding written into it — every paired op's weights rounded to bf16 (round to nearest
  even, in numpy) and its activation input passed through Cast(to=BFLOAT16) ->
  Cast(to=FLOAT). onnxruntime then multiplies the very operands edgert does, exactly, and
  only the order of the float32 sums differs (rtol 1e-4). A wrong rounding (truncation
  instead of nearest even: ~2e-3 relative) or a weight pair stored in the wrong lane fails.
  The paired ops (the documented rule): Conv with constant weights and an even number of
  input channels per group, MatMul / Gemm with a constant B, at least 4 rows of A and an
  even inner dim. The model has each kind and the ones left in fp32 (a depthwise conv, the
  3-channel stem, a 1-row Gemm); convs see padding, stride 2, groups and a residual.
- With Winograd (the CPU default, F(2x2) only under bf16): within 3e-2 of the output's
  scale of onnxruntime's fp32 output (transformed tiles are rounded to bf16 too).
- The code has vdpbf16ps and the bundle stores bf16 weights (under 0.6x the fp32 weight bytes);
  outputs are bit-identical run after run and at 1 and 3 threads.
- --precision bf16 for a target without bf16 dot products, or an unknown precision, is an
  error naming the targets that have them.
On a CPU without AVX512_BF16 the runtime must refuse the bundle naming avx512bf16 (checked
instead of the outputs)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_bf16")
WORK = lib.work_dir("test_bf16")
TARGET = ["--target", "x86_64-avx512"]


def cpu_has_bf16():
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return re.search(r"\bavx512_bf16\b", info) is not None


def round_bf16(a):
    """float32 -> nearest bfloat16 (ties to even), as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def make_model(rounded):
    """The test network; rounded=True writes the bf16 rounding of the paired ops into it."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)
    nodes, inits = [], []

    def const(name, array, paired):
        array = array.astype(np.float32)
        inits.append(numpy_helper.from_array(round_bf16(array) if paired and rounded else array, name))
        return name

    def operand(x, paired):
        if not (paired and rounded):
            return x
        nodes.append(helper.make_node("Cast", [x], [x + ".bf16"], to=TensorProto.BFLOAT16))
        nodes.append(helper.make_node("Cast", [x + ".bf16"], [x + ".bf16.f32"], to=TensorProto.FLOAT))
        return x + ".bf16.f32"

    def conv(x, name, cin, cout, k, stride=1, group=1, relu=True):
        paired = (cin // group) % 2 == 0
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))
        ins = [operand(x, paired), const(name + ".w", w, paired), const(name + ".b", rng.standard_normal(cout) * 0.1, False)]
        nodes.append(helper.make_node("Conv", ins, [name + ".y"], kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4, group=group))
        if not relu:
            return name + ".y"
        nodes.append(helper.make_node("Relu", [name + ".y"], [name + ".r"]))
        return name + ".r"

    h = conv("image", "stem", 3, 16, 3)                  # 3 channels: fp32
    h = conv(h, "c1", 16, 32, 3)                          # paired, padded
    h = conv(h, "down", 32, 48, 3, stride=2)              # paired, stride 2
    h = conv(h, "dw", 48, 48, 3, group=48)                # depthwise: fp32
    h = conv(h, "pw", 48, 64, 1)                          # paired 1x1
    r = conv(h, "g", 64, 64, 3, group=2)                  # paired, 32 channels per group
    r = conv(r, "c3", 64, 64, 3, relu=False)              # paired, Winograd-eligible
    nodes.append(helper.make_node("Add", [r, h], ["res"]))
    nodes.append(helper.make_node("Relu", ["res"], ["feat"]))   # (1, 64, 10, 10)
    # A matrix product over the 100 pixels (paired) and a classifier on their mean (1 row: fp32).
    inits.append(numpy_helper.from_array(np.array([1, 64, 100], dtype=np.int64), "flat_shape"))
    nodes.append(helper.make_node("Reshape", ["feat", "flat_shape"], ["flat"]))
    nodes.append(helper.make_node("Transpose", ["flat"], ["pixels"], perm=[0, 2, 1]))
    nodes.append(helper.make_node("MatMul", [operand("pixels", True), const("proj", rng.standard_normal((64, 24)) * 0.2, True)],
                                  ["projected"]))
    nodes.append(helper.make_node("GlobalAveragePool", ["feat"], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["pooled"]))
    nodes.append(helper.make_node("Gemm", ["pooled", const("fc.w", rng.standard_normal((10, 64)) * 0.2, False),
                                           const("fc.b", rng.standard_normal(10) * 0.1, False)], ["logits"], transB=1))
    graph = helper.make_graph(nodes, "bf16_products",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 20, 20])],
                              [helper.make_tensor_value_info("projected", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def image(seed):
    return {"image": np.random.default_rng(seed).standard_normal((1, 3, 20, 20)).astype(np.float32)}


def compile_bf16(name, *extra):
    bundle = WORK / f"{name}.bundle"
    lib.compile_model(make_model(rounded=False), bundle, [*TARGET, "--precision", "bf16", *extra])
    return bundle


def run(bundle, inputs, tag, threads=None):
    return lib.run_bundle(bundle, inputs, WORK / tag, ["projected", "logits"], threads=threads)


def check_refused_without_bf16(bundle):
    res = lib.run_cmd([lib.find_tool("edgert-run"), bundle, "--output-dir", WORK / "refused"], check=False)
    assert res.returncode == 1 and "avx512bf16" in res.stderr and "which this machine lacks" in res.stderr, res.stderr


@suite.case
def matches_onnxruntime_with_bf16_operands():
    bundle = compile_bf16("direct", "--winograd", "0")
    if not cpu_has_bf16():
        check_refused_without_bf16(bundle)
        return
    reference = make_model(rounded=True)
    plain = make_model(rounded=False)
    for seed in (1, 2):
        inputs = image(seed)
        actual = run(bundle, inputs, f"direct_{seed}")
        expected = lib.ort_run(reference, inputs)
        for name in expected:
            scale = float(np.abs(expected[name]).max())
            lib.assert_close({name: actual[name]}, {name: expected[name]}, rtol=1e-4, atol=1e-5 * scale)
        # The rounding is visible: fp32 onnxruntime is further away than the tolerance.
        fp32 = lib.ort_run(plain, inputs)["projected"]
        gap = np.abs(fp32 - expected["projected"]).max() / np.abs(expected["projected"]).max()
        print(f"    seed {seed}: bf16 reference vs fp32 onnxruntime {gap:.2e} of the output's scale")
        assert gap > 1e-3, gap


@suite.case
def winograd_f2_within_bf16_error():
    bundle = compile_bf16("winograd")
    if not cpu_has_bf16():
        check_refused_without_bf16(bundle)
        return
    inputs = image(3)
    actual = run(bundle, inputs, "winograd")
    expected = lib.ort_run(make_model(rounded=False), inputs)
    for name in expected:
        err = np.abs(actual[name] - expected[name]).max() / np.abs(expected[name]).max()
        print(f"    {name}: {err:.2e} of the output's scale from fp32 onnxruntime")
        assert err < 3e-2, (name, err)


@suite.case
def bf16_code_weights_and_determinism():
    ir = WORK / "direct.ll"
    bundle = compile_bf16("checked", "--winograd", "0", "--dump-llvm-ir", ir)
    assert "llvm.x86.avx512bf16.dpbf16ps" in ir.read_text(), "no vdpbf16ps in the generated code"

    def weight_bytes(*args):
        out = lib.compile_model(make_model(rounded=False), WORK / "sized.bundle", [*TARGET, "--winograd", "0", *args]).stdout
        return int(re.search(r"weights: +\d+ tensors, (\d+) bytes", out).group(1))
    # The paired weights are most of the bytes; the stem, the depthwise conv, the classifier
    # and the biases stay fp32.
    ratio = weight_bytes("--precision", "bf16") / weight_bytes()
    print(f"    weight bytes bf16 / fp32: {ratio:.2f}")
    assert ratio < 0.6, ratio
    if not cpu_has_bf16():
        check_refused_without_bf16(bundle)
        return
    inputs = image(4)
    first = run(bundle, inputs, "det_a")
    for tag, threads in (("det_b", None), ("det_threads3", 3)):
        again = run(bundle, inputs, tag, threads=threads)
        for name in first:
            assert np.array_equal(first[name].view(np.uint32), again[name].view(np.uint32)), (tag, name)


@suite.case
def refused_where_unsupported():
    model = WORK / "model.onnx"
    lib.save_model(make_model(rounded=False), model)
    edgec = lib.find_tool("edgec")
    res = lib.run_cmd([edgec, "compile", model, "--target", "x86_64", "--precision", "bf16", "-o", WORK / "x.bundle"],
                      check=False)
    assert res.returncode != 0 and "x86_64-avx512" in res.stderr and "--precision bf16" in res.stderr, res.stderr
    assert not (WORK / "x.bundle").exists()
    res = lib.run_cmd([edgec, "compile", model, *TARGET, "--precision", "fp8", "-o", WORK / "y.bundle"], check=False)
    assert res.returncode != 0 and "fp32 or bf16" in res.stderr, res.stderr


if __name__ == "__main__":
    sys.exit(suite.main())
