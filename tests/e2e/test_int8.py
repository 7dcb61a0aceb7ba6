#!/usr/bin/env python3
"""End-to-end int8: small CNNs (onnx.helper, seeded numpy) quantized by onnxruntime's
quantize_static into QDQ models (tests/models/quantize_models.py: per-channel int8 weights,
uint8 activations, seeded calibration), compiled with edgec, run with edgert-run and compared
with onnxruntime on the SAME QDQ model with default session options: onnxruntime fuses the
QDQ groups into its integer kernels (QLinearConv, QLinearMatMul, QGemm, QLinearAdd, ...), and
those results are the reference.

Each case prints, per output, the fraction of elements equal to onnxruntime's and the
largest difference in quantization steps of that output, for the float output (after the
last DequantizeLinear) and for the uint8 tensor in front of it (exposed as a second output).
Run directly (uses build/) or via ctest (env EDGEC, EDGERT_RUN, EDGE_WORK_DIR); needs
onnxruntime's quantization package (numpy, onnx, ml_dtypes)."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models"))
import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_int8")
WORK = None


class Builder:
    def __init__(self, seed, in_shape):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0
        self.in_shape = in_shape

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def const(self, arr, p="w"):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower() + "_")
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k=3, stride=1, group=1, bias=True):
        fan = cin // group * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan)).astype(np.float32)
        ins = [x, self.const(w)]
        if bias:
            ins.append(self.const((self.rng.standard_normal(cout) * 0.1).astype(np.float32), "b"))
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=group)

    def model(self, out, out_shape, opset=13):
        g = helper.make_graph(self.nodes, "int8_test",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, self.in_shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m


def conv_relu(seed=0, size=16):
    b = Builder(seed, [1, 3, size, size])
    y = b.op("Relu", [b.conv("input", 3, 8)])
    y = b.op("Relu", [b.conv(y, 8, 16, stride=2)])
    y = b.conv(y, 16, 8, k=1)
    return b.model(y, [1, 8, size // 2, size // 2])


def residual(seed=1, size=16):
    b = Builder(seed, [1, 3, size, size])
    x = b.op("Relu", [b.conv("input", 3, 16)])
    y = b.op("Relu", [b.conv(x, 16, 16)])
    y = b.conv(y, 16, 16)
    y = b.op("Relu", [b.op("Add", [x, y])])
    y = b.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    return b.model(y, [1, 16, size // 2, size // 2])


def depthwise(seed=2, size=16):
    b = Builder(seed, [1, 3, size, size])
    x = b.op("Relu", [b.conv("input", 3, 16)])
    lo, hi = b.const(np.float32(0), "lo"), b.const(np.float32(6), "hi")
    y = b.op("Clip", [b.conv(x, 16, 16, group=16), lo, hi])
    y = b.op("AveragePool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = b.conv(y, 16, 24, k=1)
    return b.model(y, [1, 24, size // 2, size // 2])


def grouped(seed=6, size=16):
    """Grouped convs (RegNet / ResNeXt): 16 channels per group (a vector of output channels in
    one group), 4 per group (a vector spanning groups), then a 1x1."""
    b = Builder(seed, [1, 3, size, size])
    x = b.op("Relu", [b.conv("input", 3, 32)])
    y = b.op("Relu", [b.conv(x, 32, 32, group=2)])
    y = b.op("Relu", [b.conv(y, 32, 32, group=8, stride=2)])
    y = b.conv(y, 32, 8, k=1)
    return b.model(y, [1, 8, size // 2, size // 2])


def conv1d_stem(seed=10, length=40):
    """Whisper's audio stem at a small size: Conv1d k3 pad 1 (16 -> 32 channels), ReLU, Conv1d
    k3 stride 2 pad 1 (32 -> 32), ReLU, Conv1d k5 pad 2 (32 -> 8): int8 convs of (N, C, L)
    data, which is stored channels-first."""
    b = Builder(seed, [1, 16, length])

    def conv1d(x, cin, cout, k, stride=1):
        w = (b.rng.standard_normal((cout, cin, k)) * np.sqrt(2.0 / (cin * k))).astype(np.float32)
        bias = (b.rng.standard_normal(cout) * 0.1).astype(np.float32)
        return b.op("Conv", [x, b.const(w), b.const(bias, "b")], kernel_shape=[k], strides=[stride],
                    pads=[k // 2, k // 2])

    x = b.op("Relu", [conv1d("input", 16, 32, 3)])
    x = b.op("Relu", [conv1d(x, 32, 32, 3, stride=2)])
    return b.model(conv1d(x, 32, 8, 5), [1, 8, length // 2])


def inverted_residual(seed=7, size=16):
    """MobileNetV2's inverted residual blocks: 1x1 expansion, depthwise 3x3 (stride 1, 144
    channels: a whole step of 128 and a ragged one of 16 on HVX) with a residual Add, then
    a depthwise 5x5 of stride 2 over 96 channels (EfficientNet's kernel size)."""
    b = Builder(seed, [1, 3, size, size])
    lo, hi = b.const(np.float32(0), "lo"), b.const(np.float32(6), "hi")
    relu6 = lambda y: b.op("Clip", [y, lo, hi])  # noqa: E731
    x = relu6(b.conv("input", 3, 16))
    y = relu6(b.conv(x, 16, 144, k=1))
    y = relu6(b.conv(y, 144, 144, group=144))
    y = b.op("Add", [x, b.conv(y, 144, 16, k=1)])
    y = relu6(b.conv(y, 16, 96, k=1))
    y = relu6(b.conv(y, 96, 96, k=5, stride=2, group=96))
    y = b.conv(y, 96, 24, k=1)
    return b.model(y, [1, 24, size // 2, size // 2])


def concat_pool(seed=3, size=16):
    b = Builder(seed, [1, 3, size, size])
    x = b.op("Relu", [b.conv("input", 3, 8)])
    l = b.op("Relu", [b.conv(x, 8, 8, k=1)])
    r = b.op("Relu", [b.conv(x, 8, 8)])
    y = b.op("Concat", [l, r], axis=1)
    y = b.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = b.conv(y, 16, 8)
    return b.model(y, [1, 8, size // 2, size // 2])


def classifier(seed=4, size=16, head="Gemm"):
    b = Builder(seed, [1, 3, size, size])
    x = b.op("Relu", [b.conv("input", 3, 16, stride=2)])
    x = b.op("Relu", [b.conv(x, 16, 32)])
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    w = (b.rng.standard_normal((32, 10)) * 0.2).astype(np.float32)
    bias = (b.rng.standard_normal(10) * 0.1).astype(np.float32)
    if head == "Gemm":
        y = b.op("Gemm", [x, b.const(w.T.copy()), b.const(bias, "b")], transB=1)
    else:
        y = b.op("Add", [b.op("MatMul", [x, b.const(w)]), b.const(bias, "b")])
    return b.model(y, [1, 10])


def activations(seed=5, size=16):
    """Sigmoid gate (x * sigmoid(x), SiLU as in EfficientNet), HardSwish-like tail, Mul."""
    b = Builder(seed, [1, 3, size, size])
    x = b.conv("input", 3, 16)
    x = b.op("Mul", [x, b.op("Sigmoid", [x])])
    y = b.conv(x, 16, 16)
    y = b.op("Mul", [y, b.op("HardSigmoid", [y], alpha=1.0 / 6, beta=0.5)])
    y = b.conv(y, 16, 8, k=1)
    y = b.op("Sigmoid", [y])
    return b.model(y, [1, 8, size, size])



def squeeze_excite(seed=9, size=16):
    """EfficientNet-B0's MBConv block at a small size: 1x1 expansion and 5x5 depthwise, each
    with SiLU (x * sigmoid(x)); squeeze-excite (GlobalAveragePool, 1x1 reduce, SiLU, 1x1
    expand, Sigmoid, a Mul broadcasting (1, C, 1, 1) over the block); projection, residual
    Add; then the network's tail: 1x1, SiLU, GlobalAveragePool, Flatten, Gemm (the SiLU read
    through the pool's sum, one kernel)."""
    b = Builder(seed, [1, 3, size, size])
    silu = lambda y: b.op("Mul", [y, b.op("Sigmoid", [y])])  # noqa: E731
    x = silu(b.conv("input", 3, 16))
    y = silu(b.conv(x, 16, 64, k=1))
    y = silu(b.conv(y, 64, 64, k=5, group=64))
    s = b.op("GlobalAveragePool", [y])
    s = silu(b.conv(s, 64, 8, k=1))
    s = b.op("Sigmoid", [b.conv(s, 8, 64, k=1)])
    y = b.op("Mul", [y, s])
    y = b.op("Add", [x, b.conv(y, 64, 16, k=1)])
    y = silu(b.conv(y, 16, 128, k=1))
    y = b.op("Flatten", [b.op("GlobalAveragePool", [y])], axis=1)
    w = (b.rng.standard_normal((100, 128)) * np.sqrt(1.0 / 128)).astype(np.float32)
    y = b.op("Gemm", [y, b.const(w), b.const(np.zeros(100, np.float32), "b")], transB=1)
    return b.model(y, [1, 100])


def expose_quantized_output(model):
    """Adds the uint8 tensor in front of the final DequantizeLinear as a second output."""
    import quantize_models as qm
    out = model.graph.output[0].name
    scale, zp, q_name = qm.output_quant(model, out)
    dims = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    model.graph.output.append(helper.make_tensor_value_info(q_name, TensorProto.UINT8, dims))
    return scale, q_name


def check(name, model, exact=True, min_equal=1.0, max_steps=0.0, weight_type="int8", seed=0):
    """Quantizes `model` (quantize_static), compares edgert with onnxruntime on it."""
    import quantize_models as qm
    import onnx
    from onnxruntime.quantization import QuantType
    wt = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[weight_type]
    extra = {} if weight_type == "int8" else {"WeightSymmetric": False}
    path = qm.quantize(model, WORK / f"{name}.qdq.onnx", calibration=4, seed=seed, weight_type=wt, extra_options=extra)
    q = onnx.load(str(path))
    rng = np.random.default_rng(100 + seed)
    shape = [d.dim_value for d in q.graph.input[0].type.tensor_type.shape.dim]
    compare_qdq(name, q, {"input": rng.standard_normal(shape).astype(np.float32)}, exact, min_equal, max_steps)
    return path


def compare_qdq(name, q, inputs, exact=True, min_equal=1.0, max_steps=0.0):
    """Runs the QDQ model q with edgert and onnxruntime. exact: every uint8 element (and so
    every float output) equal; otherwise at least min_equal of them and none more than
    max_steps apart."""
    import quantize_models as qm
    scale, q_name = expose_quantized_output(q)
    names = [o.name for o in q.graph.output]
    expected = dict(zip(names, qm.ort_session(q).run(names, inputs)))
    actual = lib.compile_and_run(q, inputs, WORK, name=name)
    out = names[0]
    eq_f, steps_f = qm.step_stats(actual[out], expected[out], scale)
    eq_q, steps_q = qm.step_stats(actual[q_name].astype(np.int32), expected[q_name].astype(np.int32), 1.0)
    print(f"    {name}: output {out}: {eq_f * 100:.3f}% equal, max {steps_f} steps; "
          f"uint8 {q_name}: {eq_q * 100:.3f}% equal, max {steps_q} steps ({actual[q_name].size} elements)")
    assert actual[q_name].dtype == np.uint8, actual[q_name].dtype
    if exact:
        assert eq_q == 1.0 and eq_f == 1.0, f"{name}: not bit-exact to onnxruntime"
    else:
        assert eq_q >= min_equal and steps_q <= max_steps, \
            f"{name}: {eq_q * 100:.3f}% equal (want {min_equal * 100:.1f}%), max {steps_q} steps (want <= {max_steps})"


def qdq_conv_ties(sx=0.03387615, sw=0.017618401, sy=0.18608256, zy=160):
    """A hand-made QDQ 1x1 conv whose 65280 products (x - 128) * w, x = 0..255 (the input),
    w = -127..127 (the output channels), hit the cases where onnxruntime's integer
    requantization, round(acc * float32(sx * sw / sy)), and the float path,
    round(float32(x_deq * w_deq) / sy), round to different steps (16 of them for these
    scales, found by a search over random scales)."""
    f32 = np.float32
    x_q = np.arange(256, dtype=np.int64).reshape(1, 1, 16, 16)
    inputs = {"input": ((x_q - 128).astype(f32) * f32(sx)).astype(f32)}
    w = np.arange(-127, 128, dtype=np.int8).reshape(255, 1, 1, 1)
    inits = [numpy_helper.from_array(np.array(sx, f32), "sx"), numpy_helper.from_array(np.array(128, np.uint8), "zx"),
             numpy_helper.from_array(w, "w_q"), numpy_helper.from_array(np.array(sw, f32), "sw"),
             numpy_helper.from_array(np.array(0, np.int8), "zw"), numpy_helper.from_array(np.array(sy, f32), "sy"),
             numpy_helper.from_array(np.array(zy, np.uint8), "zy")]
    nodes = [helper.make_node("QuantizeLinear", ["input", "sx", "zx"], ["x_q"]),
             helper.make_node("DequantizeLinear", ["x_q", "sx", "zx"], ["x_dq"]),
             helper.make_node("DequantizeLinear", ["w_q", "sw", "zw"], ["w_dq"]),
             helper.make_node("Conv", ["x_dq", "w_dq"], ["y"], name="conv", kernel_shape=[1, 1]),
             helper.make_node("QuantizeLinear", ["y", "sy", "zy"], ["y_q"]),
             helper.make_node("DequantizeLinear", ["y_q", "sy", "zy"], ["output"])]
    g = helper.make_graph(nodes, "ties", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 16, 16])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 255, 16, 16])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, inputs


@suite.case
def requantization_rounds_as_onnxruntime():
    # Fails where the conv runs in float between DequantizeLinear and QuantizeLinear.
    m, inputs = qdq_conv_ties()
    compare_qdq("conv_ties", m, inputs)


def pair_overflow_model(op, x_type=np.uint8, size=2, identity_conv_first=False):
    """A hand-made QDQ 1x1 Conv (op "Conv") or Gemm (transB=1, op "Gemm") over 64 channels whose
    uint8 activations are mostly 255 (int8 ones, x_type np.int8: -128; size x size pixels) and
    int8 weights mostly +-127 (identity_conv_first: the Conv reads the output of a QDQ 1x1 conv
    by the identity, x_q again, as a conv of a real model reads its producer's): two neighbouring products
    sum to up to 2 * 255 * 127 = 64770, over int16's 32767, where onnxruntime's default u8s8
    kernels on x86 CPUs without VNNI (vpmaddubsw) saturate (edge_testlib.exact_weights). Every
    scale is a power of two, so the float path of the ONNX reference (DequantizeLinear, float
    op, QuantizeLinear) computes the exact integer sums and its rounding (half to even) agrees
    with any exact integer kernel: no float rounding leaves room for a tie to fall either way.
    Returns (model, inputs)."""
    f32, k, n = np.float32, 64, 32
    rng = np.random.default_rng(21)
    lo, hi = np.iinfo(x_type).min, np.iinfo(x_type).max
    x_q = np.where(rng.random((1, k)) < 0.8, hi if x_type == np.uint8 else lo, rng.integers(lo, hi + 1, (1, k)))
    w_q = (np.where(rng.random((n, k)) < 0.8, 127, rng.integers(0, 128, (n, k))) * rng.choice([-1, 1], (n, k))).astype(np.int8)
    sx, sy = f32(2.0 ** -3), f32(8.0)
    sw = np.where(np.arange(n) % 2 == 0, 2.0 ** -5, 2.0 ** -6).astype(f32)  # per output channel
    bias_q = rng.integers(-4096, 4096, n).astype(np.int32)
    x_shape, w_shape = ([1, k, size, size], [n, k, 1, 1]) if op == "Conv" else ([1, k], [n, k])
    x = (np.resize(x_q, x_shape) * sx).astype(f32)  # QuantizeLinear gives back x_q exactly
    inits = [numpy_helper.from_array(np.array(sx, f32), "sx"), numpy_helper.from_array(np.array(0, x_type), "zx"),
             numpy_helper.from_array(w_q.reshape(w_shape), "w_q"), numpy_helper.from_array(sw, "sw"),
             numpy_helper.from_array(np.zeros(n, np.int8), "zw"), numpy_helper.from_array(bias_q, "b_q"),
             numpy_helper.from_array((sx * sw).astype(f32), "sb"), numpy_helper.from_array(np.zeros(n, np.int32), "zb"),
             numpy_helper.from_array(np.array(sy, f32), "sy"), numpy_helper.from_array(np.array(128, np.uint8), "zy")]
    attrs = {"kernel_shape": [1, 1]} if op == "Conv" else {"transB": 1}
    nodes = [helper.make_node("QuantizeLinear", ["input", "sx", "zx"], ["x_q"]),
             helper.make_node("DequantizeLinear", ["x_q", "sx", "zx"], ["x_dq"]),
             helper.make_node("DequantizeLinear", ["w_q", "sw", "zw"], ["w_dq"], axis=0),
             helper.make_node("DequantizeLinear", ["b_q", "sb", "zb"], ["b_dq"], axis=0),
             helper.make_node(op, ["x_dq", "w_dq", "b_dq"], ["y"], name=op.lower(), **attrs),
             helper.make_node("QuantizeLinear", ["y", "sy", "zy"], ["y_q"]),
             helper.make_node("DequantizeLinear", ["y_q", "sy", "zy"], ["output"])]
    if identity_conv_first:
        inits += [numpy_helper.from_array(np.eye(k, dtype=np.int8).reshape(k, k, 1, 1), "w_id"),
                  numpy_helper.from_array(np.array(1.0, f32), "s_id"), numpy_helper.from_array(np.array(0, np.int8), "z_id")]
        nodes[1:2] = [helper.make_node("DequantizeLinear", ["x_q", "sx", "zx"], ["x0_dq"]),
                      helper.make_node("DequantizeLinear", ["w_id", "s_id", "z_id"], ["w_id_dq"]),
                      helper.make_node("Conv", ["x0_dq", "w_id_dq"], ["x1"], name="identity", kernel_shape=[1, 1]),
                      helper.make_node("QuantizeLinear", ["x1", "sx", "zx"], ["x1_q"]),
                      helper.make_node("DequantizeLinear", ["x1_q", "sx", "zx"], ["x_dq"])]
    y_shape = [1, n, size, size] if op == "Conv" else [1, n]
    g = helper.make_graph(nodes, "pair_overflow", [helper.make_tensor_value_info("input", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, y_shape),
                           helper.make_tensor_value_info("y_q", TensorProto.UINT8, y_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, {"input": x}


@suite.case
def int16_pair_overflow_equals_onnx_reference():
    """The integer products must be exact where pairs of them overflow int16: edgec's uint8
    output equal to the ONNX reference evaluator's and to onnxruntime's with u8u8 weights
    (exact_weights). onnxruntime's default u8s8 kernels on an x86 CPU without VNNI saturate
    there (printed, not asserted: CPUs with VNNI or ARM ones compute it exactly); the budget
    test's MobileNetV2 (hexagon/test_insn_budget.py) differs from them the same way."""
    import onnxruntime as ort
    import quantize_models as qm
    for op in ("Conv", "Gemm"):
        m, inputs = pair_overflow_model(op)
        ref = qm.onnx_reference_run(m, inputs)
        exact = dict(zip(["output", "y_q"], qm.ort_session(m).run(["output", "y_q"], inputs)))
        default = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(["y_q"], inputs)[0]
        got = lib.compile_and_run(m, inputs, WORK, name=f"pair_overflow_{op.lower()}")
        steps = lambda a, b: int(np.abs(a.astype(np.int32) - b.astype(np.int32)).max())
        print(f"    {op}: {int((got['y_q'] != ref['y_q']).sum())} of {got['y_q'].size} uint8 outputs differ from the "
              f"ONNX reference's, {int((got['y_q'] != exact['y_q']).sum())} from onnxruntime u8u8's; onnxruntime's "
              f"default (u8s8) session: {int((default != ref['y_q']).sum())} differ, max {steps(default, ref['y_q'])} steps")
        assert not (ref["y_q"] == 0).all() and not (ref["y_q"] == 255).all(), "the case saturates everywhere"
        assert np.array_equal(got["y_q"], ref["y_q"]) and np.array_equal(got["output"], ref["output"]), \
            f"{op}: not equal to the ONNX reference (max {steps(got['y_q'], ref['y_q'])} steps)"
        assert np.array_equal(got["y_q"], exact["y_q"]), f"{op}: not equal to onnxruntime with u8u8 weights"


@suite.case
def vpmaddwd_pairs_read_as_int16():
    """On x86_64 (AVX2) the activation pair each vpmaddwd broadcasts is read from an int16
    copy of the conv's input (channels-last, written once: ops_nn.cc conv_node) as one 32-bit
    broadcast. Widened in the loop it took vpbroadcastw + vpshufb (uint8; int8 also a vpsraw)
    per pixel of the register tile, 2 of the 5 vector instructions per pixel and vector of
    channels (QDQ ResNet-18 31.9 -> 30.0 ms without them). In the conv's IR only loads (the
    weight panels) are widened from bytes to words, and nothing is shuffled by vpshufb or
    shifted back. uint8 and int8 activations both give the ONNX reference's outputs (exact:
    power-of-two scales)."""
    if not lib.target_family("x86_64"):  # x86 codegen: the other targets' suites skip it
        return
    import re
    import quantize_models as qm
    for x_type in (np.uint8, np.int8):
        m, inputs = pair_overflow_model("Conv", x_type, size=4, identity_conv_first=True)
        name = f"int16_pairs_{np.dtype(x_type).name}"
        ref = qm.onnx_reference_run(m, inputs)
        got = lib.compile_and_run(m, inputs, WORK, name=name)
        assert not (ref["y_q"] == 0).all() and not (ref["y_q"] == 255).all(), "the case saturates everywhere"
        assert np.array_equal(got["y_q"], ref["y_q"]), f"{name}: not equal to the ONNX reference"
        path, ir = WORK / f"{name}.onnx", WORK / f"{name}.ll"
        path.write_bytes(m.SerializeToString())
        host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
        lib.run_cmd([host, "compile", path, "-o", WORK / f"{name}.bundle", "--target", "x86_64", "--dump-llvm-ir", ir])
        text = ir.read_text()
        assert "llvm.x86.avx2.pmadd.wd" in text, f"{name}: no vpmaddwd"
        # Every byte vector widened to vpmaddwd's 16 words is a load (the weight panel's
        # vpmovsxbw from memory, 2 per cycle), never the broadcast pair.
        loads = set(re.findall(r"(%\S+) = load <16 x i8>", text))
        widened = re.findall(r"= [sz]ext <16 x i8> (%\S+) to <16 x i16>", text)
        assert widened and set(widened) <= loads, f"{name}: the broadcast pair is widened by vpmov[sz]xbw"
        # LLVM turns the vpshufb into a shufflevector of the splat's bytes.
        assert "pshuf.b" not in text and not re.search(r"shufflevector <(16|32) x i8>", text), f"{name}: vpshufb"
        assert not re.search(r"= ashr (exact )?<16 x i16>", text), f"{name}: words shifted back (vpsraw)"


@suite.case
def vpmaddwd_tiles_leave_registers_for_products():
    """vpmaddwd does not accumulate: each product takes a register before its vpaddd, and the
    vpshufb mask another, so an x86_64 register tile keeps at most 10 accumulators of the 16
    registers (llvm_emit.cc multiplies_8bit_pairs). MobileNetV2's 16 -> 96 channel 1x1 conv took
    3 x 4 (12 accumulators, 3 weight vectors, the broadcast: 16) and spilled two accumulators
    in its inner loop. Here: no block of the conv's IR holds more than 10 vpmaddwd; the
    outputs equal onnxruntime's (u8u8)."""
    if not lib.target_family("x86_64"):  # x86 codegen: the other targets' suites skip it
        return
    import re
    b = Builder(12, [1, 3, 12, 12])
    y = b.op("Relu", [b.conv("input", 3, 16)])
    expanded = b.op("Relu", [b.conv(y, 16, 96, k=1)])
    path = check("expand_16_96", b.model(b.conv(expanded, 96, 8, k=1), [1, 8, 12, 12]))
    ir = WORK / "expand_16_96.ll"
    host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
    lib.run_cmd([host, "compile", path, "-o", WORK / "expand_16_96.x86.bundle", "--target", "x86_64", "--dump-llvm-ir", ir])
    # The expanding conv's kernel (named after its output), its basic blocks (from a label).
    kernel = next(f for f in re.split(r"\n(?=define )", ir.read_text()) if f.startswith("define") and f"_{expanded}_QuantizeLinear" in f.split("(")[0])
    most = max(block.count("@llvm.x86.avx2.pmadd.wd(") for block in re.split(r"\n\S*:", kernel))
    assert 0 < most <= 10, f"a register tile of {most} vpmaddwd accumulators"


@suite.case
def stem_pair_loop_written_out():
    """A 3-channel 7x7 stem (ResNet's) is padded to 4 channels: 2 vpmaddwd pairs per tap on
    x86_64, whose loop around the dot step ran 2 iterations with its branch and induction
    (ResNet-18's stem at 0.8 of the speed it has written out, llvm_emit.cc
    short_loop_around_dot). In the stem kernel's IR no block runs one pair's step alone (u
    broadcast loads x v weight panels = u v vpmaddwd): the interior block runs both (twice
    each, their product twice the vpmaddwd). The outputs equal onnxruntime's (u8u8)."""
    if not lib.target_family("x86_64"):  # x86 codegen: the other targets' suites skip it
        return
    import re
    b = Builder(13, [1, 3, 32, 32])
    stem = b.op("Relu", [b.conv("input", 3, 16, k=7, stride=2)])
    path = check("stem_7x7", b.model(b.conv(stem, 16, 8, k=1), [1, 8, 16, 16]))
    ir = WORK / "stem_7x7.ll"
    host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
    lib.run_cmd([host, "compile", path, "-o", WORK / "stem_7x7.x86.bundle", "--target", "x86_64", "--dump-llvm-ir", ir])
    kernel = next(f for f in re.split(r"\n(?=define )", ir.read_text()) if f.startswith("define") and f"_{stem}_QuantizeLinear" in f.split("(")[0])
    # A pair: its two bytes (i16) or, stored as int16 (ops_nn.cc conv_node), its 32 bits.
    steps = [(blk.count("@llvm.x86.avx2.pmadd.wd("), len(re.findall(r"= load i(16|32), ", blk)), len(re.findall(r"= load <16 x i8>", blk)))
             for blk in re.split(r"\n\S*:", kernel)]
    assert not any(madds and madds == pairs * panels for madds, pairs, panels in steps), f"one pair's step alone: {steps}"
    assert any(madds and 2 * madds == pairs * panels for madds, pairs, panels in steps), f"no block with both pairs: {steps}"


@suite.case
def conv_relu_exact():
    check("conv_relu", conv_relu())


@suite.case
def vnni_dot_products_on_avx512():
    """x86_64-avx512 computes the 8-bit convs with vpdpbusd (channels in groups of 4, the
    bundle then requires avx512vnni); x86_64 (AVX2) with vpmaddwd (pairs widened to int16)
    and needs nothing more. Compile-time checks, in the x86_64 suites: the
    avx512 suite (ctest avx512_e2e_test_int8) runs them."""
    import re
    path = check("conv_relu_vnni", conv_relu())
    if not lib.target_family("x86_64"):
        return
    edgec = lib.find_tool("edgec")
    for target, vnni in (("x86_64-avx512", True), ("x86_64", False)):
        ir, bundle = WORK / f"vnni_{target}.ll", WORK / f"vnni_{target}.bundle"
        # The host edgec directly: EDGEC may be a wrapper that appends its own --target.
        host = os.environ.get("EDGE_HOST_EDGEC", edgec)
        lib.run_cmd([host, "compile", path, "-o", bundle, "--target", target, "--dump-llvm-ir", ir])
        features = re.search(r"features=(\S*)", lib.run_cmd([host, "inspect", bundle]).stdout).group(1).split(",")
        assert ("llvm.x86.avx512.vpdpbusd" in ir.read_text()) == vnni, target
        assert ("avx512vnni" in features) == vnni, (target, features)
        # AVX2: the pairs widened to int16 with vpmaddwd (every x86_64 CPU has it).
        assert ("llvm.x86.avx2.pmadd.wd" in ir.read_text()) != vnni, target


@suite.case
def uint8_camera_input_straight_into_first_conv():
    """A camera's uint8 image as the model input (the first QuantizeLinear of a quantized
    model removed: its scale and zero point now describe the camera's bytes). The first
    integer conv reads those bytes: no float tensor anywhere in the arena (x86_64-avx512 only
    copies the image channels-last, padded to the dot group, still uint8; x86_64 copies them
    widened to int16, vpmaddwd's pairs)."""
    import json
    import onnx
    import quantize_models as qm
    path = qm.quantize(conv_relu(), WORK / "camera.qdq.onnx", calibration=4, seed=0)
    q = onnx.load(str(path))
    quantize = next(n for n in q.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "input")
    q.graph.node.remove(quantize)
    for n in q.graph.node:
        n.input[:] = ["camera" if i == quantize.output[0] else i for i in n.input]
    shape = [d.dim_value for d in q.graph.input[0].type.tensor_type.shape.dim]
    q.graph.input.pop()
    q.graph.input.append(helper.make_tensor_value_info("camera", TensorProto.UINT8, shape))
    camera = np.random.default_rng(7).integers(0, 256, shape, dtype=np.uint8)
    compare_qdq("camera", q, {"camera": camera})
    info = json.loads(lib.run_cmd([lib.find_tool("edgec"), "inspect", WORK / "camera.bundle", "--json"]).stdout)
    arena = [(b["name"], b["dtype"]) for b in info["buffers"] if b["kind"] == "Arena"]
    assert arena and all(dtype in ("U8", "I8", "I16") for _, dtype in arena), arena


@suite.case
def sdot_dot_products_on_aarch64_dotprod():
    """aarch64-dotprod computes the 8-bit convs and matrix products with sdot (uint8
    activations read as x - 128, 128 * sum(w) in the bias), and only those kernels require
    dotprod: a float model's bundle needs nothing more than aarch64's. aarch64 (ARMv8.0) has
    no sdot. Compile-time checks, in the aarch64 suites: the aarch64-dotprod
    suite (ctest aarch64_dotprod_e2e_test_int8, qemu -cpu max) runs the results."""
    import re
    import shutil
    import subprocess
    host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
    float_model = WORK / "sdot_float.onnx"
    import onnx
    onnx.save(conv_relu(), str(float_model))
    paths = {name: check(f"{name}_sdot", model) for name, model in (("conv", conv_relu()), ("gemm", classifier(head="Gemm")))}
    if not lib.target_family("aarch64"):
        return
    for model_name, path in paths.items():
        for target, sdot in (("aarch64-dotprod", True), ("aarch64", False)):
            ir, bundle = WORK / f"sdot_{model_name}_{target}.ll", WORK / f"sdot_{model_name}_{target}.bundle"
            lib.run_cmd([host, "compile", path, "-o", bundle, "--target", target, "--dump-llvm-ir", ir])
            features = re.search(r"features=(\S*)", lib.run_cmd([host, "inspect", bundle]).stdout).group(1).split(",")
            text = ir.read_text()
            assert ("llvm.aarch64.neon.sdot" in text) == sdot, (model_name, target)
            assert "llvm.aarch64.neon.udot" not in text and "usdot" not in text, (model_name, target)
            assert ("dotprod" in features) == sdot, (model_name, target, features)
            objdump, llc = shutil.which("aarch64-linux-gnu-objdump"), shutil.which("llc-19")
            if objdump and llc:  # the machine code itself, from the LLVM IR as edgec compiles it
                obj = ir.with_suffix(".o")
                lib.run_cmd([llc, "-O3", "-filetype=obj", str(ir), "-o", str(obj)])
                asm = subprocess.run([objdump, "-d", str(obj)], capture_output=True, text=True, check=True).stdout
                assert (re.search(r"\bsdot\b", asm) is not None) == sdot, (model_name, target)
    bundle = WORK / "sdot_float.bundle"
    lib.run_cmd([host, "compile", float_model, "-o", bundle, "--target", "aarch64-dotprod"])
    features = re.search(r"features=(\S*)", lib.run_cmd([host, "inspect", bundle]).stdout).group(1).split(",")
    assert "dotprod" not in features, features


@suite.case
def vrmpy_dot_products_on_hexagon():
    """hexagon-v65 computes the 8-bit convs and matrix products on HVX: vrmpy (u8 x s8
    quads into 32 int32 lanes, the activation's quad splat), seen in the LLVM IR and in the
    Hexagon machine code (llc-19 + llvm-objdump-19 on that IR); a float model's kernels have
    none; the conv's requantization is HVX integer code too (vpacke). Compile-time checks: the Hexagon suite (ctest hexagon_e2e_test_int8, qemu-hexagon)
    runs the results; two compiles of the same model give the same bytes. The compile-time
    checks run in the Hexagon suites only."""
    import re
    import shutil
    import subprocess
    import onnx
    host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
    float_model = WORK / "vrmpy_float.onnx"
    onnx.save(conv_relu(), str(float_model))
    conv, gemm = check("conv_vrmpy", conv_relu()), check("gemm_vrmpy", classifier(head="Gemm"))
    if not lib.target_family("hexagon"):
        return
    llc, objdump = shutil.which("llc-19"), shutil.which("llvm-objdump-19")
    for name, path, hvx in (("conv", conv, True), ("gemm", gemm, True), ("float", float_model, False)):
        ir, bundle = WORK / f"vrmpy_{name}.ll", WORK / f"vrmpy_{name}.bundle"
        lib.run_cmd([host, "compile", path, "-o", bundle, "--target", "hexagon-v65", "--dump-llvm-ir", ir])
        assert ("llvm.hexagon.V6.vrmpybusv.acc.128B" in ir.read_text()) == hvx, name
        # The conv's requantization in HVX integer lanes (llvm_emit.cc emit_requantize_vector):
        # the 32 bytes packed with vpacke (the Gemm's 1-row output is not 32 lanes wide).
        if name == "conv":
            assert "llvm.hexagon.V6.vpackeb.128B" in ir.read_text(), name
        if llc and objdump:
            obj = ir.with_suffix(".o")
            lib.run_cmd([llc, "-O3", "-mcpu=hexagonv65", "-mattr=+hvxv65,+hvx-length128b", "-filetype=obj",
                         str(ir), "-o", str(obj)])
            asm = subprocess.run([objdump, "-d", str(obj)], capture_output=True, text=True, check=True).stdout
            assert (re.search(r"\.w \+?= vrmpy\(v\d+\.ub,v\d+\.b\)", asm) is not None) == hvx, name
    # Compiled twice, the same bytes: what qemu-hexagon ran is what ships (LLVM 19's Hexagon
    # vector combine ordered by address and gave another bundle most times: llvm_backend.cc
    # set_hexagon_codegen_options). Depthwise, 1x1 and residual kernels.
    import quantize_models as qm
    blocks = qm.quantize(inverted_residual(), WORK / "vrmpy_blocks.qdq.onnx", calibration=4, seed=0)
    first, second = WORK / "vrmpy_blocks.bundle", WORK / "vrmpy_blocks.again.bundle"
    lib.compile_model(blocks, first)  # through the compile cache the guard-page run shares
    lib.run_cmd([host, "compile", blocks, "-o", second, "--target", "hexagon-v65"])
    assert first.read_bytes() == second.read_bytes(), "two hexagon-v65 compiles gave different bundles"


@suite.case
def residual_add_maxpool():
    check("residual", residual())


@suite.case
def depthwise_clip_avgpool():
    check("depthwise", depthwise())


@suite.case
def inverted_residual_blocks():
    """Depthwise + pointwise + residual (MobileNetV2 / EfficientNet), exact: on hexagon-v65
    the depthwise convs as HVX 16-bit products (llvm_emit.cc emit_depthwise_hvx)."""
    check("inverted_residual", inverted_residual())
    if lib.target_family("hexagon"):
        # The exact results above came from the 16-bit products, not from int32 lanes: the
        # bundle's machine code (count.py's disassembly of its code section) has them.
        import re
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hexagon" / "qemu_insn_count"))
        import count
        host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
        blob, _, cpu = count.bundle_code(WORK / "inverted_residual.bundle", host)
        insns = [i for p in count.disassemble({raw for _, raw in count.split_packets(blob)}, cpu).values() for i in p or []]
        assert any(re.search(r"\.h = vmpy\(v\d+\.ub,v\d+\.b\)", i) for i in insns), "no vmpybusv"
        assert any(re.search(r"\.w \+= vadd\(v\d+\.h,v\d+\.h\)", i) for i in insns), "no vaddhw_acc"


def repeated_blocks(seed=11, size=16):
    """Two inverted residual blocks of the same shapes (own weights and scales): MobileNetV2
    repeats its blocks so, 2-4 times per stage."""
    b = Builder(seed, [1, 3, size, size])
    lo, hi = b.const(np.float32(0), "lo"), b.const(np.float32(6), "hi")
    relu6 = lambda y: b.op("Clip", [y, lo, hi])  # noqa: E731
    x = relu6(b.conv("input", 3, 16))
    for _ in range(2):
        y = relu6(b.conv(x, 16, 96, k=1))
        y = relu6(b.conv(y, 96, 96, group=96))
        x = b.op("Add", [x, b.conv(y, 96, 16, k=1)])
    return b.model(x, [1, 16, size, size])


@suite.case
def repeated_blocks_share_code():
    """Kernels with the same code (a repeated block's expansion, depthwise and projection,
    which differ in their weights only) share one function of the bundle's code section
    (llvm_backend.cc IdenticalKernels): LLVM compiles each once. Exact to onnxruntime."""
    import json
    check("repeated_blocks", repeated_blocks())
    info = json.loads(lib.run_cmd([lib.find_tool("edgec"), "inspect", WORK / "repeated_blocks.bundle", "--json"]).stdout)
    functions = {}
    for k in info["kernels"]:
        functions.setdefault(k["function"], []).append(k["name"])
    shared = [names for names in functions.values() if len(names) > 1]
    print(f"    {len(info['kernels'])} kernels, {len(functions)} functions; shared: {shared}")
    assert len(shared) >= 3, f"the second block's kernels have code of their own: {functions}"


@suite.case
def grouped_convs():
    check("grouped", grouped())


@suite.case
def conv1d_over_channels_last_copy():
    """int8 Conv1d (Whisper's stem), exact; on the CPU targets each conv reads a zero-point
    bordered channels-last copy of its input (ops_nn.cc copies_input_channels_last): a
    vector of output channels times one broadcast group of adjacent input channels, no
    bounds tests. Over the channels-first data each group's channels were L bytes apart
    (Smart Turn's 384 -> 384 stride-2 stem: 12.3 ms -> 4.1 ms CPU time, AVX2). On x86_64 the
    copies are int16. Not on OpenCL (no copy there) nor Hexagon (21 s under qemu-hexagon; it
    passed there at session 35)."""
    if lib.opencl_target() or lib.target_family("hexagon"):
        return
    path = check("conv1d_stem", conv1d_stem())
    for flag, want in (((), 3), (("--padded-grouped-convs", "0"), 0)):
        dump = WORK / "conv1d_stem.kernels.txt"
        lib.run_tool([lib.find_tool("edgec"), "compile", path, "-o", WORK / "conv1d_stem_dump.bundle",
                      "--dump-kernels", dump, *flag])
        kernels = ("\n" + dump.read_text()).split("\nkernel ")[1:]
        copies = [k.split()[0] for k in kernels if "_Pad_" in k.split()[0]]
        assert len(copies) == want, f"{flag}: expected {want} channels-last copies, the dump has {copies}"
        if want:
            convs = [k for k in kernels if "reduce ReduceSum" in k]
            assert convs and not any("inbounds" in k for k in convs), f"{flag}: a conv tests its bounds"
        # x86_64: the copies hold the bytes widened to int16 (vpmaddwd's pairs broadcast
        # as 32 bits, no vpshufb: ops_nn.cc conv_node).
        if want and lib.target_family("x86_64"):
            headers = [k.split("\n")[0] for k in kernels if "_Pad_" in k.split()[0]]
            assert all(h.endswith(" i16") for h in headers), f"copies not int16: {headers}"


@suite.case
def concat_maxpool():
    check("concat_pool", concat_pool())


@suite.case
def classifier_gemm():
    check("classifier_gemm", classifier(head="Gemm"))


@suite.case
def classifier_matmul_add():
    check("classifier_matmul", classifier(seed=6, head="MatMul"))


@suite.case
def sigmoid_hardswish_mul():
    check("activations", activations())


@suite.case
def squeeze_excite_silu():
    # QDQ EfficientNet-B0 (224x224) is bit-exact on x86_64 and hexagon-v65 (BENCHMARKS.md's
    # hexagon table); this is its block's op patterns at 16x16.
    check("squeeze_excite", squeeze_excite())


@suite.case
def asymmetric_uint8_weights():
    # Non-zero weight zero points: the slower form that subtracts them before the products.
    check("conv_relu_u8w", conv_relu(seed=7), weight_type="uint8", seed=7)


def weight_buffers(bundle):
    import json
    out = lib.run_cmd([lib.find_tool("edgec"), "inspect", bundle, "--json"]).stdout
    info = json.loads(out)
    weights = [b for b in info["buffers"] if b["kind"] == "Weight"]
    section = sum(s["size"] for s in info["sections"] if s["kind"] == "Weights")
    return weights, section


@suite.case
def int8_weights_stay_int8():
    # The conv weights go into the bundle as int8 (no float or int32 copy): the weights
    # section is about a quarter of the float model's.
    b = Builder(8, [1, 16, 16, 16])
    y = b.op("Relu", [b.conv("input", 16, 64)])
    y = b.op("Relu", [b.conv(y, 64, 64)])
    y = b.conv(y, 64, 32)
    fp32 = b.model(y, [1, 32, 16, 16])
    import quantize_models as qm
    path = qm.quantize(fp32, WORK / "weights.qdq.onnx", seed=8)
    # Direct convolutions: the Winograd form of the float model stores more weight bytes.
    lib.compile_model(fp32, WORK / "weights_fp32.bundle", ["--winograd", "0"])
    lib.compile_model(path, WORK / "weights_qdq.bundle")
    w32, s32 = weight_buffers(WORK / "weights_fp32.bundle")
    w8, s8 = weight_buffers(WORK / "weights_qdq.bundle")
    big = [w for w in w8 if w["size"] >= 4096]
    print(f"    weights section: fp32 {s32} bytes, QDQ {s8} bytes ({s8 / s32:.3f}); "
          f"large QDQ weights: {[(w['dtype'], w['shape']) for w in big]}")
    assert big and all(w["dtype"] == "I8" for w in big), big
    assert s8 <= 0.3 * s32, f"QDQ weights {s8} bytes, fp32 {s32}"


@suite.case
def shared_bias_through_identity():
    # Exporters share equal tensors through Identity (EfficientNet-B0's SE biases);
    # onnxruntime removes Identity before fusing, so the group must fuse through it.
    import quantize_models as qm
    import onnx
    path = qm.quantize(conv_relu(seed=9), WORK / "identity.qdq.onnx", seed=9)
    q = onnx.load(str(path))
    nodes = []
    for n in q.graph.node:
        if n.op_type == "Conv" and len(n.input) > 2:
            nodes.append(helper.make_node("Identity", [n.input[2]], [n.input[2] + "_shared"]))
            n.input[2] = n.input[2] + "_shared"
        nodes.append(n)
    del q.graph.node[:]
    q.graph.node.extend(nodes)
    rng = np.random.default_rng(109)
    compare_qdq("identity", q, {"input": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)})
    weights, _ = weight_buffers(WORK / "identity.bundle")
    floats = [(w["dtype"], w["shape"]) for w in weights if w["dtype"] == "F32" and w["size"] > 256]
    assert not floats, f"float weights left (a conv not fused): {floats}"


# ---- the com.microsoft QLinear operators, each against onnxruntime's own kernel ----

def ms_op(op, inputs, params, out_dtype=np.uint8, **attrs):
    """One com.microsoft node: inputs {name: array} are graph inputs, params [(name, array)]
    initializers, in the node's input order given by `order` (inputs and params interleaved
    as the op wants: pass a list of names)."""
    names, inits, ins = [], [], []
    for n, v in inputs:
        names.append(n)
        if isinstance(v, np.ndarray) and n.startswith("in"):
            ins.append(helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape))
        else:
            inits.append(numpy_helper.from_array(np.asarray(v), n))
    node = helper.make_node(op, names, ["y"], domain="com.microsoft", name=op.lower(), **attrs)
    g = helper.make_graph([node], op, ins, [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    feeds = {n: v for n, v in inputs if n.startswith("in")}
    return m, feeds


def check_exact(name, m, feeds):
    import quantize_models as qm
    want = qm.ort_session(m).run(["y"], feeds)[0]
    got = lib.compile_and_run(m, feeds, WORK, name=name)["y"]
    assert got.shape == want.shape and got.dtype == want.dtype, f"{name}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    eq, steps = qm.step_stats(got.astype(np.int32), want.astype(np.int32), 1.0)
    print(f"    {name}: {eq * 100:.3f}% equal, max {steps} steps ({got.size} elements)")
    assert eq == 1.0, f"{name}: not bit-exact to onnxruntime"


def qparams_f(rng, t=np.uint8):
    zp = rng.integers(0, 256) if t == np.uint8 else rng.integers(-128, 128)
    return np.float32(rng.uniform(0.002, 0.1)), np.array(zp, t)


def rand_q(rng, shape, t=np.uint8):
    info = np.iinfo(t)
    return rng.integers(info.min, int(info.max) + 1, size=shape).astype(t)


@suite.case
def qlinear_add_mul():
    rng = np.random.default_rng(11)
    for t in (np.uint8, np.int8):
        for op in ("QLinearAdd", "QLinearMul"):
            for b_shape in ((1, 8, 16, 16), (1, 8, 1, 1)):
                for trial in range(3):
                    (sa, za), (sb, zb), (sc, zc) = qparams_f(rng, t), qparams_f(rng, t), qparams_f(rng, t)
                    m, feeds = ms_op(op, [("in_a", rand_q(rng, (1, 8, 16, 16), t)), ("sa", sa), ("za", za),
                                          ("in_b", rand_q(rng, b_shape, t)), ("sb", sb), ("zb", zb), ("sc", sc), ("zc", zc)],
                                     None, t)
                    check_exact(f"{op}_{np.dtype(t).name}_{b_shape[2]}_{trial}", m, feeds)


@suite.case
def qlinear_mul_broadcast_over_large_planes():
    # A per-channel b over 64 x 64 planes (a squeeze-excite Mul at EfficientNet-B0's larger
    # sizes; hexagon-v65 makes it a table of 256 entries per channel, ops_quant.cc
    # lower_qlinear_mul): every code of a in every channel, either operand the broadcast one.
    rng = np.random.default_rng(18)
    for t in (np.uint8, np.int8):
        codes = np.arange(np.iinfo(t).min, int(np.iinfo(t).max) + 1).astype(t)
        big = np.stack([np.roll(np.tile(codes, 16), 37 * c) for c in range(8)]).reshape(1, 8, 64, 64)
        for trial in range(2):
            (sa, za), (sb, zb), (sc, zc) = qparams_f(rng, t), qparams_f(rng, t), qparams_f(rng, t)
            small = rand_q(rng, (1, 8, 1, 1), t)
            first, second = (big, small) if trial == 0 else (small, big)
            m, feeds = ms_op("QLinearMul", [("in_a", first), ("sa", sa), ("za", za), ("in_b", second), ("sb", sb), ("zb", zb),
                                            ("sc", sc), ("zc", zc)], None, t)
            check_exact(f"QLinearMul_broadcast_{np.dtype(t).name}_{trial}", m, feeds)
        # The big operand a QLinearSigmoid's output (squeeze-excite over a SiLU-like table:
        # hexagon-v65 composes the two tables).
        (sx, zx), (sb, zb), (sc, zc) = qparams_f(rng, t), qparams_f(rng, t), qparams_f(rng, t)
        tt = helper.np_dtype_to_tensor_dtype(np.dtype(t))
        nodes = [helper.make_node("QLinearSigmoid", ["in_x", "sx", "zx", "ss", "zs"], ["s"], domain="com.microsoft", name="sig"),
                 helper.make_node("QLinearMul", ["s", "ss", "zs", "in_b", "sb", "zb", "sc", "zc"], ["y"], domain="com.microsoft",
                                  name="mul")]
        inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in
                 (("sx", np.float32(sx * 10)), ("zx", zx), ("ss", np.float32(1 / 256)), ("zs", np.array(np.iinfo(t).min, t)),
                  ("sb", sb), ("zb", zb), ("sc", sc), ("zc", zc))]
        g = helper.make_graph(nodes, "sigmoid_mul", [helper.make_tensor_value_info("in_x", tt, big.shape),
                                                     helper.make_tensor_value_info("in_b", tt, (1, 8, 1, 1))],
                              [helper.make_tensor_value_info("y", tt, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        feeds = {"in_x": big, "in_b": rand_q(rng, (1, 8, 1, 1), t)}
        check_exact(f"QLinearMul_broadcast_of_sigmoid_{np.dtype(t).name}", m, feeds)


@suite.case
def qlinear_add_all_pairs():
    # Every (a, b) pair of uint8 values, with scales (found by a search) where forming
    # onnxruntime's constant term zc - (ra * za + rb * zb) without its FMA flips 2 outputs,
    # and forming the per-element FMAs as separate float32 operations flips more.
    a = np.repeat(np.arange(256), 256).astype(np.uint8).reshape(1, 1, 256, 256)
    b = np.tile(np.arange(256), 256).astype(np.uint8).reshape(1, 1, 256, 256)
    p = [np.float32(0.03016665), np.array(107, np.uint8), np.float32(0.0068865833), np.array(160, np.uint8),
         np.float32(0.032431655), np.array(199, np.uint8)]
    m, feeds = ms_op("QLinearAdd", [("in_a", a), ("sa", p[0]), ("za", p[1]), ("in_b", b), ("sb", p[2]), ("zb", p[3]),
                                    ("sc", p[4]), ("zc", p[5])], None)
    check_exact("QLinearAdd_all_pairs", m, feeds)


@suite.case
def qlinear_add_scalar_b():
    # A constant scalar b (a QDQ GELU's Add of 1): onnxruntime's scalar-b kernel, whose
    # k + b * rb its build fuses into an FMA; for these scales and b (found by a search) the
    # unfused form flips one of the 256 outputs.
    cases = [(0.04192623868584633, 0.041144952178001404, 0.09139818698167801, 21, 100, 6, 208),
             (0.043436404317617416, 0.06820793449878693, 0.03662138432264328, 131, 50, 50, 135),
             (0.08824754506349564, 0.09643221646547318, 0.017889373004436493, 221, 182, 29, 206)]
    a = np.arange(256).astype(np.uint8).reshape(1, 1, 16, 16)
    for i, (sa, sb, sc, za, zb, zc, b) in enumerate(cases):
        m, feeds = ms_op("QLinearAdd", [("in_a", a), ("sa", np.float32(sa)), ("za", np.array(za, np.uint8)),
                                        ("b", np.array(b, np.uint8)), ("sb", np.float32(sb)), ("zb", np.array(zb, np.uint8)),
                                        ("sc", np.float32(sc)), ("zc", np.array(zc, np.uint8))], None)
        check_exact(f"QLinearAdd_scalar_b_{i}", m, feeds)


@suite.case
def qlinear_sigmoid_leaky_relu_all_values():
    rng = np.random.default_rng(12)
    for t in (np.uint8, np.int8):
        x = np.arange(np.iinfo(t).min, int(np.iinfo(t).max) + 1).astype(t).reshape(1, 1, 16, 16)
        for trial in range(4):
            (sx, zx), (sy, zy) = qparams_f(rng, t), qparams_f(rng, t)
            sx = np.float32(sx * 20)  # inputs over the sigmoid's whole range
            m, feeds = ms_op("QLinearSigmoid", [("in_x", x), ("sx", sx), ("zx", zx), ("sy", np.float32(1 / 256)), ("zy", zy)], None, t)
            check_exact(f"sigmoid_{np.dtype(t).name}_{trial}", m, feeds)
            m, feeds = ms_op("QLinearLeakyRelu", [("in_x", x), ("sx", sx), ("zx", zx), ("sy", sy), ("zy", zy)], None, t, alpha=0.1)
            check_exact(f"leaky_relu_{np.dtype(t).name}_{trial}", m, feeds)


def qdq_silu(t, sx, zx, ss, zs, sy, zy, sigmoid_first):
    """x (all 256 codes of t) -> DQ -> Mul(x, Sigmoid(x)) -> Q, in QDQ form as quantize_static
    writes SiLU (onnxruntime fuses it into QLinearSigmoid and QLinearMul)."""
    nodes = [helper.make_node("DequantizeLinear", ["in_x", "sx", "zx"], ["x"], name="dq_x"),
             helper.make_node("Sigmoid", ["x"], ["s"], name="sigmoid"),
             helper.make_node("QuantizeLinear", ["s", "ss", "zs"], ["s_q"], name="q_s"),
             helper.make_node("DequantizeLinear", ["s_q", "ss", "zs"], ["s_dq"], name="dq_s"),
             helper.make_node("Mul", ["s_dq", "x"] if sigmoid_first else ["x", "s_dq"], ["m"], name="mul"),
             helper.make_node("QuantizeLinear", ["m", "sy", "zy"], ["y"], name="q_y")]
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in
             (("sx", sx), ("zx", zx), ("ss", ss), ("zs", zs), ("sy", sy), ("zy", zy))]
    tt = helper.np_dtype_to_tensor_dtype(np.dtype(t))
    g = helper.make_graph(nodes, "silu", [helper.make_tensor_value_info("in_x", tt, [1, 1, 16, 16])],
                          [helper.make_tensor_value_info("y", tt, [1, 1, 16, 16])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    x = np.arange(np.iinfo(t).min, int(np.iinfo(t).max) + 1).astype(t).reshape(1, 1, 16, 16)
    return m, {"in_x": x}


@suite.case
def qdq_silu_one_table_all_values():
    # SiLU's Mul(x, Sigmoid(x)) depends on the byte x alone: edgec makes one 256-entry table
    # of onnxruntime's QLinearMul arithmetic over the sigmoid's table (ops_quant.cc
    # lower_qlinear_mul). Every code of x against onnxruntime, for random scales and for
    # EfficientNet-B0-like ones (the sigmoid at 1/256, x's zero point low in the range); the
    # bundle's one kernel is that table lookup, no float arithmetic. (sx, zx, sy, zy) found by
    # a search where the product scaled in float64 instead of float32 flips one output, and a
    # ratio sx * ss / sy of 1/2, whose ties (odd products) round half to even.
    rng = np.random.default_rng(17)
    u8 = lambda v: np.array(v, np.uint8)  # noqa: E731
    cases = [(np.uint8, np.float32(sx), u8(zx), np.float32(1 / 256), u8(0), np.float32(sy), u8(zy))
             for sx, zx, sy, zy in ((0.05, 30, 0.04, 8), (0.93207854, 191, 0.027939476, 69),
                                    (0.13679081, 170, 0.022136869, 179), (0.9376923, 180, 0.058605913, 228),
                                    (0.5, 128, 1 / 256, 128))]
    for t in (np.uint8, np.int8):
        for _ in range(3):
            (sx, zx), (sy, zy) = qparams_f(rng, t), qparams_f(rng, t)
            ss, zs = np.float32(rng.uniform(1 / 300, 1 / 200)), np.array(np.iinfo(t).min if rng.integers(2) else 0, t)
            cases.append((t, np.float32(sx * 10), zx, ss, zs, sy, zy))
    for i, (t, sx, zx, ss, zs, sy, zy) in enumerate(cases):
        for sigmoid_first in (False, True):
            name = f"silu_{np.dtype(t).name}_{i}_{int(sigmoid_first)}"
            m, feeds = qdq_silu(t, sx, zx, ss, zs, sy, zy, sigmoid_first)
            check_exact(name, m, feeds)
            kir = WORK / f"{name}.kernels.txt"  # not through the compile cache, which writes no dump
            kir.unlink(missing_ok=True)
            lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"{name}.onnx", "-o", WORK / f"{name}.ir.bundle",
                          "--dump-kernels", kir])
            ir = kir.read_text()
            assert ir.count("kernel ") == 1 and "f32" not in ir and ir.count("clamp(") == 1, f"{name}: not one table:\n{ir}"


@suite.case
def qlinear_global_average_pool_and_concat():
    rng = np.random.default_rng(13)
    for t in (np.uint8, np.int8):
        for trial in range(3):
            (sx, zx), (sy, zy) = qparams_f(rng, t), qparams_f(rng, t)
            m, feeds = ms_op("QLinearGlobalAveragePool", [("in_x", rand_q(rng, (1, 16, 7, 9), t)), ("sx", sx), ("zx", zx),
                                                          ("sy", sy), ("zy", zy)], None, t, channels_last=0)
            check_exact(f"gap_{np.dtype(t).name}_{trial}", m, feeds)
            (s1, z1), (s2, z2) = qparams_f(rng, t), qparams_f(rng, t)
            m, feeds = ms_op("QLinearConcat", [("sy", sy), ("zy", zy), ("in_1", rand_q(rng, (1, 4, 5, 5), t)), ("s1", s1), ("z1", z1),
                                               ("in_2", rand_q(rng, (1, 6, 5, 5), t)), ("s2", sy), ("z2", zy),
                                               ("in_3", rand_q(rng, (1, 2, 5, 5), t)), ("s2b", s2), ("z2b", z2)], None, t, axis=1)
            check_exact(f"concat_{np.dtype(t).name}_{trial}", m, feeds)


@suite.case
def qlinear_average_pool():
    rng = np.random.default_rng(15)
    configs = [dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
               dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
               dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
               dict(kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])]
    for t in (np.uint8, np.int8):
        for i, attrs in enumerate(configs):
            (sx, zx), (sy, zy) = qparams_f(rng, t), qparams_f(rng, t)
            m, feeds = ms_op("QLinearAveragePool", [("in_x", rand_q(rng, (1, 16, 15, 15), t)), ("sx", sx), ("zx", zx),
                                                    ("sy", sy), ("zy", zy)], None, t, **attrs)
            check_exact(f"avgpool_{np.dtype(t).name}_{i}", m, feeds)


@suite.case
def qlinear_softmax():
    rng = np.random.default_rng(16)
    for i, (shape, axis) in enumerate((((4, 50), -1), ((2, 8, 25), -1), ((1, 10, 7), 1))):
        sx = np.float32(rng.uniform(0.02, 0.2))
        m, feeds = ms_op("QLinearSoftmax", [("in_x", rand_q(rng, shape)), ("sx", sx), ("zx", np.array(rng.integers(0, 256), np.uint8)),
                                            ("sy", np.float32(1 / 256)), ("zy", np.array(0, np.uint8))], None, np.uint8,
                         axis=axis, opset=13)
        check_exact(f"softmax_{i}", m, feeds)


@suite.case
def qgemm_per_column_bias_trans():
    rng = np.random.default_rng(14)
    for trans_b in (0, 1):
        a = rand_q(rng, (5, 40))
        b = rng.integers(-127, 128, size=(40, 24) if not trans_b else (24, 40)).astype(np.int8)
        sb = rng.uniform(0.001, 0.01, size=24).astype(np.float32)
        (sa, za), (sy, zy) = qparams_f(rng), qparams_f(rng)
        c = rng.integers(-5000, 5000, size=24).astype(np.int32)
        m, feeds = ms_op("QGemm", [("in_a", a), ("sa", sa), ("za", za), ("b", b), ("sb", sb), ("zb", np.zeros(24, np.int8)),
                                   ("c", c), ("sy", sy), ("zy", zy)], None, np.uint8, transB=trans_b)
        check_exact(f"qgemm_t{trans_b}", m, feeds)


def qlinear_matmul_exact(a, sa, za, b, sb, zb, sy, zy):
    """numpy's QLinearMatMul as onnxruntime computes it: exact integer sums, float32(acc) times
    float32(sa * sb) / sy, rounded half to even, + zy, saturated."""
    acc = np.matmul(a.astype(np.int64) - int(za), b.astype(np.int64) - int(zb))
    factor = np.float32(np.float32(sa) * np.float32(sb)) / np.float32(sy)
    info = np.iinfo(zy.dtype)
    return np.clip(np.rint(acc.astype(np.float32) * factor) + int(zy), info.min, info.max).astype(zy.dtype)


def attention_qlinear_model(t, heads=3, rows=40, depth=32, zs=None, zv=None, seed=21):
    """Attention's two products of computed 8-bit tensors as QLinearMatMul (what onnxruntime
    fuses a QDQ model's DQ -> MatMul -> Q into): s = q k^T (heads x rows x rows over depth),
    o = s v (over rows), o's heads merged (Transpose, Reshape: (1, rows, heads * depth)).
    Operands of type t, full range; zero points random unless given (s's and v's); each
    output's scale and zero point spread its sums over 250 steps. Returns the model, its
    feeds and numpy's exact y."""
    rng = np.random.default_rng(seed)
    lowest = int(np.iinfo(t).min)

    def output_qparams(a, sa, za, b, sb, zb):  # the sums' range (and 0) over 250 steps, from step 2
        acc = np.matmul(a.astype(np.int64) - int(za), b.astype(np.int64) - int(zb))
        lo, hi = min(acc.min(), 0), max(acc.max(), 0)
        return np.float32(sa * sb * (hi - lo) / 250), np.array(lowest + 2 + round(-lo * 250 / (hi - lo)), t)

    (sq, zq), (sk, zk), (sv, zv_) = (qparams_f(rng, t) for _ in range(3))
    feeds = {"in_q": rand_q(rng, (1, heads, rows, depth), t), "in_kt": rand_q(rng, (1, heads, depth, rows), t),
             "in_v": rand_q(rng, (1, heads, rows, depth), t)}
    ss, zs_ = output_qparams(feeds["in_q"], sq, zq, feeds["in_kt"], sk, zk)
    zs = zs_ if zs is None else np.array(zs, t)
    zv = zv_ if zv is None else np.array(zv, t)
    s = qlinear_matmul_exact(feeds["in_q"], sq, zq, feeds["in_kt"], sk, zk, ss, zs)
    so, zo = output_qparams(s, ss, zs, feeds["in_v"], sv, zv)
    o = qlinear_matmul_exact(s, ss, zs, feeds["in_v"], sv, zv, so, zo)
    expected = o.transpose(0, 2, 1, 3).reshape(1, rows, heads * depth)
    params = {"sq": sq, "zq": zq, "sk": sk, "zk": zk, "ss": ss, "zs": zs, "sv": sv, "zv": zv, "so": so, "zo": zo,
              "merged": np.array([1, rows, heads * depth], np.int64)}
    nodes = [helper.make_node("QLinearMatMul", ["in_q", "sq", "zq", "in_kt", "sk", "zk", "ss", "zs"], ["s"]),
             helper.make_node("QLinearMatMul", ["s", "ss", "zs", "in_v", "sv", "zv", "so", "zo"], ["o"]),
             helper.make_node("Transpose", ["o"], ["o_t"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["o_t", "merged"], ["y"])]
    tt = helper.np_dtype_to_tensor_dtype(np.dtype(t))
    g = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info(n, tt, v.shape) for n, v in feeds.items()],
                          [helper.make_tensor_value_info("y", tt, [1, rows, heads * depth])],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in params.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, feeds, expected


@suite.case
def attention_products_of_computed_bytes():
    """Attention's Q K^T and P V multiply two computed 8-bit tensors. On x86_64 (AVX2) both
    take vpmaddwd pairs of the raw bytes, the zero points' terms (row sums of one operand,
    column sums of the other) outside the products (ops_quant.cc computed_8bit_matmul); they
    were int32 tensors of x - zero point multiplied by vpmulld (smart_turn's Q K^T: 2.85 ->
    1.23 ms). The merged heads' output vector (column c of head c / 32) reads its panel at
    (c mod 32) / 16 (kernel_ir.cc steps_by_one_from_block_start): gathers before. Outputs equal
    onnxruntime's (uint8, exact integer sums) with zero points random, and 0 on either side
    of the second product; int8 operands equal numpy's exact sums requantized as onnxruntime
    does. Structure (x86_64): both products' kernels hold vpmaddwd and no gather, and no
    kernel stores an int32 operand tensor."""
    import re
    import quantize_models as qm
    # (tag, type, s's zero point, v's, rows, depth): the last with too few rows for the copied
    # panels and an odd depth (no pairs): the zero points' terms around plain products.
    cases = [("u8", np.uint8, None, None, 40, 32), ("u8_zs0", np.uint8, 0, None, 40, 32),
             ("u8_zv0", np.uint8, None, 0, 40, 32), ("i8", np.int8, None, None, 40, 32),
             ("u8_8_rows_odd_depth", np.uint8, None, None, 8, 33)]
    for tag, t, zs, zv, rows, depth in cases:
        name = f"attention_bytes_{tag}"
        m, feeds, exact = attention_qlinear_model(t, rows=rows, depth=depth, zs=zs, zv=zv)
        want = qm.ort_session(m).run(["y"], feeds)[0] if t == np.uint8 else exact
        if t == np.uint8:
            assert np.array_equal(want, exact), f"{name}: onnxruntime and numpy's exact sums differ"
        got = lib.compile_and_run(m, feeds, WORK, name=name)["y"]
        eq, steps = qm.step_stats(got.astype(np.int32), want.astype(np.int32), 1.0)
        print(f"    {name}: {eq * 100:.3f}% equal, max {steps} steps ({got.size} elements)")
        assert (want == np.iinfo(t).min).mean() < 0.2 and (want == np.iinfo(t).max).mean() < 0.2, f"{name}: saturates"
        assert eq == 1.0, f"{name}: not bit-exact to the reference"
    if not lib.target_family("x86_64"):  # x86 codegen: the other targets' suites skip the structure
        return
    m, _, _ = attention_qlinear_model(np.uint8)
    path, ir, dump = WORK / "attention_bytes.onnx", WORK / "attention_bytes.ll", WORK / "attention_bytes.kernels.txt"
    path.write_bytes(m.SerializeToString())
    host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
    lib.run_cmd([host, "compile", path, "-o", WORK / "attention_bytes.x86.bundle", "--target", "x86_64",
                 "--dump-llvm-ir", ir, "--dump-kernels", dump])
    products = [f for f in re.split(r"\n(?=define )", ir.read_text())
                if f.startswith("define") and re.search(r"@k\d+_(s|y|o\w*)\(", f.split("\n")[0])]
    assert len(products) >= 2, [f.split("\n")[0] for f in products]
    for f in products:
        head = f.split("\n")[0]
        assert "llvm.x86.avx2.pmadd.wd" in f, f"{head}: no vpmaddwd"
        assert "gather" not in f, f"{head}: gathers"
    # int32 results: the zero points' row and column sums only (3 x 40), no operand (3 x 40 x 32).
    stored_i32 = [line for line in dump.read_text().splitlines() if line.startswith("kernel ") and line.endswith(" i32")
                  and np.prod([int(d) for d in re.search(r"\[([\d,]+)\]", line).group(1).split(",")]) > 3 * 40]
    assert not stored_i32, f"int32 operand tensors stored: {stored_i32}"


@suite.case
def matmul_rows_stored_as_int16():
    """x86_64 (AVX2): an 8-bit product with int8 weights reads its activation rows stored as
    int16 (lowering.cc stored_as_int16; its producer writes them so), each vpmaddwd pair a
    plain 32-bit broadcast instead of a 16-bit one widened by vpshufb beside every row of the
    register tile (smart_turn's 400 x 384 -> 1536 and 1536 -> 384 products: 3.5-4.7 -> 3.1-3.5
    ms). Outputs equal onnxruntime's (u8u8); a token MLP over 40 rows, two products read the
    same layer output. Structure: the products' kernels hold vpmaddwd and no vpshufb, and a
    kernel stores int16."""
    import re
    b = Builder(13, [1, 40, 64])
    w1 = (b.rng.standard_normal((64, 96)) * 0.15).astype(np.float32)
    w2 = (b.rng.standard_normal((64, 96)) * 0.15).astype(np.float32)
    w3 = (b.rng.standard_normal((96, 32)) * 0.1).astype(np.float32)
    h1 = b.op("Relu", [b.op("MatMul", ["input", b.const(w1)])])
    h2 = b.op("MatMul", ["input", b.const(w2)])
    y = b.op("MatMul", [b.op("Add", [h1, h2]), b.const(w3)])
    path = check("token_mlp", b.model(y, [1, 40, 32]))
    if not lib.target_family("x86_64"):  # x86 codegen: the other targets' suites skip the structure
        return
    ir, dump = WORK / "token_mlp.ll", WORK / "token_mlp.kernels.txt"
    host = os.environ.get("EDGE_HOST_EDGEC", lib.find_tool("edgec"))
    lib.run_cmd([host, "compile", path, "-o", WORK / "token_mlp.x86.bundle", "--target", "x86_64", "--dump-llvm-ir", ir,
                 "--dump-kernels", dump])
    products = [f for f in re.split(r"\n(?=define )", ir.read_text()) if f.startswith("define") and "llvm.x86.avx2.pmadd.wd(" in f]
    assert len(products) >= 2, f"{len(products)} kernels with vpmaddwd"
    for f in products:
        assert "pshuf.b" not in f and "shufflevector <32 x i8>" not in f, f"{f.split(chr(10))[0]}: the broadcast pair widened by vpshufb"
    assert re.search(r"^kernel \S+ out\[[\d,]+\] i16$", dump.read_text(), re.M), "no int16 rows stored"


if __name__ == "__main__":
    WORK = lib.work_dir("test_int8")
    sys.exit(suite.main())
