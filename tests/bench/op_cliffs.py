#!/usr/bin/env python3
"""Hunt speed cliffs (issue 22): single ops and small blocks at edge-model shapes, edgert against
onnxruntime, 1 thread by default, in the same run.

Each case is an ONNX model built here with onnx.helper (batch 1, random weights, seed 0),
compiled with edgec, checked against onnxruntime (benchmark.output_mismatch), then timed
alternately: ROUNDS times a median of ITERS edgert runs (Python binding) and a median of ITERS
onnxruntime runs. `ratio` is the median over rounds of edgert over that of onnxruntime; `best`
the fastest round's of each (other work on a shared host only adds time, so `best` moves
less between runs). Cases whose best ratio is above --flag (default 1.5x) are marked CLIFF.
ITERS is picked per case so a round takes ~--round-ms.

    python3 tests/bench/op_cliffs.py [--only SUBSTR[,SUBSTR]] [--list] [--threads 1] [--rounds 5]
        [--flag 1.5] [--json OUT.json] [--target x86_64] [--edgec-args ARGS] [--baseline-args ARGS]
        [--baseline-edgec PATH] [--cpu-time]

--baseline-args also compiles each case with these edgec options and times that bundle in the
same alternating rounds (e.g. --baseline-args "--padded-grouped-convs 0": what the padded
copies change); the line then also gives edgert / baseline. --baseline-edgec compiles that
baseline bundle with another edgec (e.g. main's build: old against new code in the same rounds;
the bundle runs on this build's edgert).
--cpu-time times each call by this thread's CPU time (time.thread_time), as benchmark.py's: at
--threads 1 the binding and onnxruntime both run in this thread, so the time other work takes
the core away does not count (a loaded shared machine).

--random N [--seed S] times N seeded random conv blocks instead (a 1x1 conv and ReLU, then
the conv under test and ReLU: random_conv_cases): the shapes of architectures nobody tuned
for, where a fixed list only finds the cliffs someone thought of. --pooled ends each block in
a GlobalAveragePool, so the conv's result is an intermediate (channels-last) as in a model.
--random-ops N [--seed S]: N seeded random non-conv ops instead (random_op_cases: matrix
products, Softmax / reductions / LayerNorm over any axis, Transpose, Resize, pooling,
broadcasting elementwise ops, Concat, Pad, strided Slice, Gather, DepthToSpace, ArgMax; and
MORE_OP_KINDS: GroupNorm / InstanceNorm, attention, Einsum, ConvTranspose 1-D / 2-D, 1-D convs,
GRU / LSTM, Gemm transB, Where, Cast, CumSum, TopK, Expand, Tile, ReduceMax / Min / L2 /
LogSumExp, Resize to odd sizes). --op-kinds base draws only the first session's classes (the
same cases per seed as then); --op-kinds extra only EXTRA_OP_KINDS (dilated MaxPool,
SpaceToDepth, Gather along the last axis with run-time indices, GatherElements,
LpNormalization, Mod, Clip with run-time bounds, Pad reflect / edge, ArgMax / ArgMin over the
channels, Slice with negative steps; not in "all"); --op-kinds KIND[,KIND] only those classes.

Classes: conv1d, conv3d, dilated 3x3, conv_transpose, depthwise 5x5/7x7, grouped, stride-2 3x3,
convs writing the model's NCHW output (nchwout_), attention matmul, softmax, norms, resize,
pool, gather, transpose, concat/split, GRU/LSTM.
"""
import argparse
import json
import math
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmark as bm  # noqa: E402
import edge_testlib as lib  # noqa: E402

F = TensorProto.FLOAT
RNG = np.random.default_rng(0)


def weight(name, shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    s = scale if scale is not None else 1.0 / math.sqrt(max(fan_in, 1))
    return numpy_helper.from_array(RNG.uniform(-s, s, size=shape).astype(np.float32), name)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def conv(cin, cout, spatial, k, stride=1, pad=None, dil=1, group=1):
    nd = len(spatial)
    ks = [k] * nd
    p = (dil * (k - 1)) // 2 if pad is None else pad
    out = [(s + 2 * p - dil * (k - 1) - 1) // stride + 1 for s in spatial]
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=ks, strides=[stride] * nd,
                            pads=[p] * (2 * nd), dilations=[dil] * nd, group=group)
    return model([node], [vi("x", [1, cin, *spatial])], [vi("y", [1, cout, *out])],
                 [weight("w", [cout, cin // group, *ks]), weight("b", [cout], 0.1)])


def conv_transpose(cin, cout, hw, k, stride, pad, out_pad=0, group=1):
    out = [(s - 1) * stride - 2 * pad + k + out_pad for s in hw]
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[k, k], strides=[stride] * 2,
                            pads=[pad] * 4, output_padding=[out_pad] * 2, group=group)
    return model([node], [vi("x", [1, cin, *hw])], [vi("y", [1, cout, *out])],
                 [weight("w", [cin, cout // group, k, k], 1.0 / math.sqrt(cin // group * k * k / stride ** 2)),
                  weight("b", [cout], 0.1)])


def batched_matmul(bh, m, k, n):
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    return model([node], [vi("a", [bh, m, k]), vi("b", [bh, k, n])], [vi("y", [bh, m, n])])


def attention_qk(bh, s, d):
    """Q K^T with K given as [BH,S,D] (the transpose inside the model, as exported)."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["y"])]
    return model(nodes, [vi("q", [bh, s, d]), vi("k", [bh, s, d])], [vi("y", [bh, s, s])])


def unary(op, shape, out_shape=None, opset=17, inits=(), extra_inputs=(), **attrs):
    node = helper.make_node(op, ["x", *extra_inputs], ["y"], **attrs)
    return model([node], [vi("x", shape)], [vi("y", out_shape or shape)], inits, opset)


def layer_norm(shape):
    d = shape[-1]
    return unary("LayerNormalization", shape, inits=[weight("s", [d], 1.0), weight("b", [d], 0.1)],
                 extra_inputs=["s", "b"], axis=-1, epsilon=1e-5)


def group_norm(c, hw, groups):
    return unary("GroupNormalization", [1, c, *hw], opset=18,
                 inits=[weight("s", [groups], 1.0), weight("b", [groups], 0.1)], extra_inputs=["s", "b"],
                 num_groups=groups, epsilon=1e-5)


def instance_norm(c, hw):
    return unary("InstanceNormalization", [1, c, *hw], inits=[weight("s", [c], 1.0), weight("b", [c], 0.1)],
                 extra_inputs=["s", "b"], epsilon=1e-5)


def resize(c, hw, mode, ctm):
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, coordinate_transformation_mode=ctm,
                            **({"nearest_mode": "floor"} if mode == "nearest" else {}))
    return model([node], [vi("x", [1, c, *hw])], [vi("y", [1, c, hw[0] * 2, hw[1] * 2])], [scales])


def pool(op, c, hw):
    out = [(s + 2 - 3) // 2 + 1 for s in hw]
    return unary(op, [1, c, *hw], [1, c, *out], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])


def gather(vocab, d, seq):
    node = helper.make_node("Gather", ["table", "ids"], ["y"], axis=0)
    return model([node], [vi("ids", [1, seq], TensorProto.INT64)], [vi("y", [1, seq, d])],
                 [weight("table", [vocab, d], 1.0)])


def transpose(shape, perm):
    return unary("Transpose", shape, [shape[p] for p in perm], perm=perm)


def concat(c1, c2, hw):
    node = helper.make_node("Concat", ["a", "b"], ["y"], axis=1)
    return model([node], [vi("a", [1, c1, *hw]), vi("b", [1, c2, *hw])], [vi("y", [1, c1 + c2, *hw])])


def split(c, hw, parts):
    outs = [f"y{i}" for i in range(parts)]
    node = helper.make_node("Split", ["x"], outs, axis=1, num_outputs=parts)
    return model([node], [vi("x", [1, c, *hw])], [vi(o, [1, c // parts, *hw]) for o in outs], opset=18)


def rnn(op, seq, inp, hidden):
    gates = 3 if op == "GRU" else 4
    extra = {"linear_before_reset": 1} if op == "GRU" else {}
    node = helper.make_node(op, ["x", "W", "R", "B"], ["y", "yh"], hidden_size=hidden, **extra)
    s = 1.0 / math.sqrt(hidden)
    return model([node], [vi("x", [seq, 1, inp])], [vi("y", [seq, 1, 1, hidden]), vi("yh", [1, 1, hidden])],
                 [weight("W", [1, gates * hidden, inp], s), weight("R", [1, gates * hidden, hidden], s),
                  weight("B", [1, 2 * gates * hidden], s)])


def flatten_fc(c, hw, n, matmul=False):
    """Conv features into a Linear layer without global pooling (AlexNet's / VGG's classifier,
    LeNet-like heads): a 3x3 conv and ReLU at 2*hw, MaxPool 2x2, AveragePool 1x1 (torchvision's
    AdaptiveAvgPool at its own size), Flatten, then Gemm (transB 1) or MatMul to n outputs."""
    k = c * hw * hw
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[1, 1]),
             helper.make_node("Flatten", ["a"], ["f"])]
    if matmul:
        nodes.append(helper.make_node("MatMul", ["f", "fw"], ["y"]))
        fc = weight("fw", [k, n], 1.0 / math.sqrt(k))
    else:
        nodes.append(helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1))
        fc = weight("fw", [n, k])
    inits = [weight("w", [c, 16, 3, 3]), weight("b", [c], 0.1), fc] + ([] if matmul else [weight("fb", [n], 0.1)])
    return model(nodes, [vi("x", [1, 16, 2 * hw, 2 * hw])], [vi("y", [1, n])], inits)


def conv_block(cin, c, m, hw, k, stride, dil, group, pad, pooled=False):
    """A 1x1 conv (cin -> c) + ReLU, then the conv under test (c -> m) + ReLU: the conv reads a
    computed intermediate, as it does inside a model (not the model's NCHW input). pooled: a
    GlobalAveragePool after it, so that the conv's result is an intermediate too (a model
    output is stored NCHW)."""
    kh, kw = k
    out = [(s + 2 * p - d * (kk - 1) - 1) // stride + 1 for s, p, d, kk in zip(hw, pad, dil, k)]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a0"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["a0"], ["a"]),
             helper.make_node("Conv", ["a", "w", "b"], ["c"], kernel_shape=[kh, kw], strides=[stride] * 2,
                              pads=[pad[0], pad[1], pad[0], pad[1]], dilations=list(dil), group=group),
             helper.make_node("Relu", ["c"], ["r" if pooled else "y"])]
    if pooled:
        nodes.append(helper.make_node("GlobalAveragePool", ["r"], ["y"]))
        out = [1, 1]
    return model(nodes, [vi("x", [1, cin, *hw])], [vi("y", [1, m, *out])],
                 [weight("w0", [c, cin, 1, 1]), weight("w", [m, c // group, kh, kw]), weight("b", [m], 0.1)])


def pooled_intermediate(c, hw, op="GlobalAveragePool"):
    """A 1x1 conv (4 -> c channels, the cheapest conv) + ReLU, then a GlobalAveragePool (or
    ReduceMean over H, W, keepdims) of its channels-last result: a squeeze-and-excitation
    block's squeeze or a CNN head's pooling, the reduction over the pixels of an intermediate
    (edgert-bench --profile and onnxruntime's per-node profile time the pool alone)."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"])]
    if op == "ReduceMean":
        nodes.append(helper.make_node("ReduceMean", ["r", "axes"], ["y"], keepdims=1))
        inits = [numpy_helper.from_array(np.array([2, 3], np.int64), "axes")]
    else:
        nodes.append(helper.make_node(op, ["r"], ["y"]))
        inits = []
    return model(nodes, [vi("x", [1, 4, hw, hw])], [vi("y", [1, c, 1, 1])],
                 [weight("w", [c, 4, 1, 1]), weight("b", [c], 0.1), *inits], opset=18)


def conv3d_block(c, m, dhw, k, stride=(1, 1, 1), group=1):
    """A 1x1x1 conv (8 -> c) + ReLU, the 3-D conv under test (c -> m, padded to keep the size
    at stride 1) + ReLU, a GlobalAveragePool: video models' convs (r3d_18's 3x3x3, R(2+1)D's
    (1,3,3) + (3,1,1)) between two intermediates, which the CPU targets store channels-last."""
    pad = [kk // 2 for kk in k]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a0"], kernel_shape=[1, 1, 1]),
             helper.make_node("Relu", ["a0"], ["a"]),
             helper.make_node("Conv", ["a", "w", "b"], ["c"], kernel_shape=list(k), strides=list(stride),
                              pads=pad + pad, group=group),
             helper.make_node("Relu", ["c"], ["r"]), helper.make_node("GlobalAveragePool", ["r"], ["y"])]
    return model(nodes, [vi("x", [1, 8, *dhw])], [vi("y", [1, m, 1, 1, 1])],
                 [weight("w0", [c, 8, 1, 1, 1]), weight("w", [m, c // group, *k]), weight("b", [m], 0.1)])


def random_conv_cases(count, seed, pooled=False):
    """`count` conv blocks of shapes nobody tuned for (seeded): channels per group 1-96 (odd
    counts too), groups 1 to depthwise, square and strip kernels 1-7, stride 1-2, dilation
    1-2, 7-112 pixels, between ~20 and ~600 MFLOP each."""
    rng = np.random.default_rng(seed)
    c = {}
    while len(c) < count:
        cpg = int(rng.choice([1, 1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96]))
        groups = int(rng.choice([1, 2, 3, 4, 8, 16, 32, 64])) if cpg > 1 else int(rng.choice([16, 24, 32, 72, 96, 144]))
        ch = cpg * groups
        mpg = cpg if rng.random() < 0.6 else int(rng.choice([cpg * 2, max(1, cpg // 2)]))
        m = mpg * groups
        k = [int(rng.choice([1, 3, 3, 3, 5, 7]))] * 2
        if rng.random() < 0.15:
            k = [1, int(rng.choice([3, 5, 7]))][::int(rng.choice([1, -1]))]
        stride = int(rng.choice([1, 1, 2]))
        dil = [2, 2] if k != [1, 1] and rng.random() < 0.15 else [1, 1]
        pad = [dil[0] * (k[0] - 1) // 2, dil[1] * (k[1] - 1) // 2]
        hw = int(rng.choice([7, 14, 17, 28, 35, 56, 80, 112]))
        out = [(hw + 2 * p - d * (kk - 1) - 1) // stride + 1 for p, d, kk in zip(pad, dil, k)]
        flops = 2 * m * out[0] * out[1] * cpg * k[0] * k[1]
        if min(out) < 1 or not 2e7 <= flops <= 6e8:
            continue
        name = f"rand{len(c)}_c{ch}-{m}_g{groups}_k{k[0]}x{k[1]}_s{stride}_d{dil[0]}_{hw}"
        c[name] = conv_block(16, ch, m, [hw, hw], k, stride, dil, groups, pad, pooled)
    return c


def inferred(nodes, inputs, inits=(), opset=17, outputs=("y",)):
    """A model of nodes whose outputs (default "y") get their shapes from ONNX shape inference."""
    m = model(nodes, inputs, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
              inits, opset)
    inf = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    for out in m.graph.output:
        out.CopyFrom(next(v for v in list(inf.graph.value_info) + list(inf.graph.output) if v.name == out.name))
    return m


# random_op_cases' classes. BASE_OP_KINDS alone (--op-kinds base) draws the same cases per seed
# as before the other classes were added (session 36's seeds 1 and 2).
BASE_OP_KINDS = ("matmul", "linear", "softmax", "reduce", "transpose", "resize", "pool", "broadcast", "concat",
                 "layernorm", "pad", "slice", "gather", "depth_to_space", "argmax")
MORE_OP_KINDS = ("groupnorm", "attention", "einsum", "conv_transpose", "conv1d", "rnn", "gemm", "where", "cast",
                 "cumsum", "topk", "expand", "tile", "reduce_odd", "resize_odd")
# Classes real models use that the draws above never make (session 39); only with --op-kinds
# extra (or by name), so "all" draws the same cases per seed as before.
EXTRA_OP_KINDS = ("maxpool_dilated", "space_to_depth", "gather_last_runtime", "gather_elements", "lp_norm", "mod",
                  "clip_runtime", "pad_reflect_edge", "argmax_channels", "slice_negative_step")


def more_op_case(kind, rng, pick, x4, seq, dim, heads):
    """(model, name) of one of MORE_OP_KINDS at shapes drawn from rng (random_op_cases' draws
    of x4 = [1, C, H, W], seq, dim and heads)."""
    nc, hw = x4[1], x4[2]
    if kind == "groupnorm":
        if rng.random() < 0.5:
            groups = int(pick(*[g for g in (1, 2, 4, 8, 16, 32) if nc % g == 0]))
            return (unary("GroupNormalization", x4, opset=18, inits=[weight("s", [groups], 1.0), weight("b", [groups], 0.1)],
                          extra_inputs=["s", "b"], num_groups=groups, epsilon=1e-5),  # (shape inference leaves y untyped)
                    f"groupnorm_g{groups}_{x4}")
        return (inferred([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5)],
                         [vi("x", x4)], [weight("s", [nc], 1.0), weight("b", [nc], 0.1)]), f"instancenorm_{x4}")
    if kind == "attention":
        # softmax(Q K^T * scale) [V]: Q, K, V [1, H, S, D] with K transposed inside the model, as exported
        h = max(heads, 2)
        q = [1, h, seq, dim // h]
        nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
                 helper.make_node("MatMul", ["q", "kt"], ["s"]),
                 helper.make_node("Mul", ["s", "scale"], ["ss"])]
        with_v = rng.random() < 0.5
        nodes.append(helper.make_node("Softmax", ["ss"], ["p" if with_v else "y"], axis=-1))
        if with_v:
            nodes.append(helper.make_node("MatMul", ["p", "v"], ["y"]))
        scale = numpy_helper.from_array(np.array(1 / math.sqrt(q[3]), np.float32), "scale")
        return (inferred(nodes, [vi(n, q) for n in ("q", "k", "v")[:3 if with_v else 2]], [scale]),
                f"attention_{'qkv' if with_v else 'qk_softmax'}_{q}")
    if kind == "einsum":
        h = max(heads, 2)
        eq, shapes = [("bhqd,bhkd->bhqk", [[1, h, seq, dim // h], [1, h, seq, dim // h]]),
                      ("bhqk,bhkd->bhqd", [[1, h, seq, seq], [1, h, seq, dim // h]]),
                      ("bnc,cd->bnd", [[1, seq, dim], [dim, int(pick(64, 256, 384))]]),
                      ("bchw,bc->bhw", [x4, x4[:2]])][int(rng.integers(4))]
        return (inferred([helper.make_node("Einsum", ["a", "b"], ["y"], equation=eq)],
                         [vi("a", shapes[0]), vi("b", shapes[1])]), f"einsum_{eq.replace(',', '_').replace('->', '_to_')}_{shapes[0]}")
    if kind == "conv_transpose":
        one_d = rng.random() < 0.4
        stride = int(pick(2, 3, 4))
        k = stride * int(pick(1, 2)) if rng.random() < 0.7 else stride + 1
        cin = int(pick(16, 32, 64, 128))
        cout = int(pick(16, 32, 64))
        groups = 1 if rng.random() < 0.6 else int(pick(*[g for g in (2, 4, cin) if cin % g == 0 and cout % g == 0] or [1]))
        if groups == cin:
            cout = cin
        pad = (k - stride) // 2
        spatial = [int(pick(50, 100, 250, 500))] if one_d else [int(pick(7, 14, 20, 28, 40))] * 2
        ks = [k] * len(spatial)
        node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=ks, strides=[stride] * len(ks),
                                pads=[pad] * 2 * len(ks), group=groups)
        return (inferred([node], [vi("x", [1, cin, *spatial])],
                         [weight("w", [cin, cout // groups, *ks], 1.0 / math.sqrt(cin // groups * k ** len(ks) / stride ** len(ks))),
                          weight("b", [cout], 0.1)]),
                f"convT{len(ks)}d_k{k}s{stride}p{pad}_g{groups}_c{cin}-{cout}_{spatial[0]}")
    if kind == "conv1d":
        # audio front ends and TCNs: long sequences, dilated
        c_, n = int(pick(32, 64, 128, 256)), int(pick(1000, 2000, 4000, 8000, 16000))
        k, dil = int(pick(3, 3, 5, 7)), int(pick(1, 1, 2, 4, 8))
        group = c_ if rng.random() < 0.25 else 1
        n = min(n, int(3e8 / (2 * c_ * c_ // group * k)) // 100 * 100)  # at most ~0.3 GFLOP
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k], pads=[dil * (k - 1) // 2] * 2,
                                dilations=[dil], group=group)
        return (inferred([node], [vi("x", [1, c_, n])], [weight("w", [c_, c_ // group, k]), weight("b", [c_], 0.1)]),
                f"conv1d_k{k}d{dil}_g{group}_c{c_}_{n}")
    if kind == "rnn":
        op, inp, hid, steps = pick("GRU", "LSTM"), int(pick(32, 64, 80, 128, 256)), int(pick(32, 64, 100, 128, 256)), int(pick(1, 8, 32))
        gates = 3 if op == "GRU" else 4
        extra = {"linear_before_reset": 1} if op == "GRU" else {}
        s = 1.0 / math.sqrt(hid)
        m = inferred([helper.make_node(op, ["x", "W", "R", "B"], ["y"], hidden_size=hid, **extra)],
                     [vi("x", [steps, 1, inp])],
                     [weight("W", [1, gates * hid, inp], s), weight("R", [1, gates * hid, hid], s),
                      weight("B", [1, 2 * gates * hid], s)])
        return m, f"{op.lower()}_seq{steps}_in{inp}_h{hid}"
    if kind == "gemm":
        rows, n_out = int(pick(1, 8, seq)), int(pick(64, 100, 256, 1000))
        m = inferred([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)], [vi("x", [rows, dim])],
                     [weight("w", [n_out, dim]), weight("b", [n_out], 0.1)])
        return m, f"gemm_transB_{rows}x{dim}x{n_out}"
    if kind == "where":
        cmp = pick("Greater", "Less", "Equal", "GreaterOrEqual")
        other = [d if rng.random() < 0.5 else 1 for d in x4]
        nodes = [helper.make_node(cmp, ["x", "o"], ["c"]), helper.make_node("Where", ["c", "x", "o"], ["y"])]
        return inferred(nodes, [vi("x", x4), vi("o", other)]), f"where_{cmp}_{x4}_by_{other}"
    if kind == "cast":
        to = pick(TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT16)
        nodes = [helper.make_node("Mul", ["x", "k"], ["xk"]), helper.make_node("Cast", ["xk"], ["y"], to=to)]
        k = numpy_helper.from_array(np.array(100.0, np.float32), "k")
        return inferred(nodes, [vi("x", x4)], [k]), f"cast_{TensorProto.DataType.Name(to).lower()}_{x4}"
    if kind == "cumsum":
        axis, excl, rev = int(pick(1, 2, 3)), int(rng.integers(2)), int(rng.integers(2))
        ax = numpy_helper.from_array(np.array(axis, np.int64), "axis")
        return (inferred([helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=excl, reverse=rev)], [vi("x", x4)], [ax]),
                f"cumsum_a{axis}_e{excl}_r{rev}_{x4}")
    if kind == "topk":
        axis, k = int(pick(1, 2, 3, -1)), int(pick(1, 5, 10))
        kt = numpy_helper.from_array(np.array([min(k, x4[axis])], np.int64), "k")
        m = inferred([helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=axis)], [vi("x", x4)], [kt], outputs=("y", "i"))
        return m, f"topk_a{axis}_k{k}_{x4}"
    if kind == "expand":
        src = [d if rng.random() < 0.5 else 1 for d in x4]
        shp = numpy_helper.from_array(np.array(x4, np.int64), "shape")
        return inferred([helper.make_node("Expand", ["x", "shape"], ["y"])], [vi("x", src)], [shp]), f"expand_{src}_to_{x4}"
    if kind == "tile":
        reps = [1, int(pick(1, 2, 3)), int(pick(1, 2)), int(pick(1, 2, 4))]
        src = [1, nc, max(hw // 2, 4), max(hw // 2, 4)]
        r = numpy_helper.from_array(np.array(reps, np.int64), "reps")
        return inferred([helper.make_node("Tile", ["x", "reps"], ["y"])], [vi("x", src)], [r]), f"tile_{reps}_{src}"
    if kind == "reduce_odd":
        op = pick("ReduceMax", "ReduceMin", "ReduceL2", "ReduceLogSumExp")
        axes = sorted(rng.choice(4, int(rng.integers(1, 3)), replace=False).tolist())
        keep = int(rng.integers(2))
        axes_t = numpy_helper.from_array(np.array(axes, np.int64), "axes")
        return (inferred([helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)], [vi("x", x4)], [axes_t], opset=18),
                f"{op}_{x4}_axes{axes}_k{keep}")
    if kind in EXTRA_OP_KINDS:
        return extra_op_case(kind, rng, pick, x4)
    # resize_odd: cubic / nearest to sizes at odd scales
    mode = pick("nearest", "cubic")
    ctm = pick("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")
    out_hw = [max(1, int(round(hw * float(pick(1.5, 0.75, 3.0, 1.33, 0.6, 2.5))))) for _ in range(2)]
    sizes = numpy_helper.from_array(np.array([1, nc, *out_hw], np.int64), "sizes")
    extra = {"nearest_mode": pick("floor", "round_prefer_floor", "ceil")} if mode == "nearest" else {}
    return (inferred([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode,
                                       coordinate_transformation_mode=ctm, **extra)], [vi("x", x4)], [sizes], opset=13),
            f"resize_{mode}_{ctm}_{x4}_to{out_hw}")


def extra_op_case(kind, rng, pick, x4):
    """(model, name) of one of EXTRA_OP_KINDS on x4 = [1, C, H, W]."""
    nc, hw = x4[1], x4[2]
    if kind == "maxpool_dilated":
        k, st, d = int(pick(2, 3)), int(pick(1, 2)), int(pick(2, 3))
        pads = [d * (k - 1) // 2] * 4
        return (inferred([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[st, st], pads=pads,
                                           dilations=[d, d])], [vi("x", x4)]), f"maxpool_dil{d}_k{k}s{st}_{x4}")
    if kind == "space_to_depth":
        b = int(pick(2, 4))
        shape = [1, nc, hw - hw % b, hw - hw % b]
        return inferred([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)], [vi("x", shape)]), f"space_to_depth_b{b}_{shape}"
    if kind == "gather_last_runtime":  # indices an input: a model's computed positions along the last axis
        n = int(pick(4, 16, x4[3]))
        m = inferred([helper.make_node("Gather", ["x", "i"], ["y"], axis=3)], [vi("x", x4), vi("i", [n], TensorProto.INT64)])
        return m, f"gather_last_runtime_{n}_{x4}"
    if kind == "gather_elements":
        axis = int(pick(1, 2, 3))
        m = inferred([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)],
                     [vi("x", x4), vi("i", x4, TensorProto.INT64)])
        return m, f"gather_elements_a{axis}_{x4}"
    if kind == "lp_norm":
        axis, p = int(pick(1, 3)), int(pick(1, 2))
        return (inferred([helper.make_node("LpNormalization", ["x"], ["y"], axis=axis, p=p)], [vi("x", x4)]),
                f"lp_norm_p{p}_a{axis}_{x4}")
    if kind == "mod":
        fmod = int(rng.integers(2))
        other = [d if rng.random() < 0.5 else 1 for d in x4]
        # int32: x * 1000 by 1 + 20 |o| (the feeds lie in [-1, 1]: no zero divisor)
        nodes = [helper.make_node("Mod", ["x", "o"], ["y"], fmod=1)] if fmod else [
            helper.make_node("Mul", ["x", "k"], ["xk"]), helper.make_node("Cast", ["xk"], ["xi"], to=TensorProto.INT32),
            helper.make_node("Abs", ["o"], ["oa"]), helper.make_node("Mul", ["oa", "k20"], ["ok"]),
            helper.make_node("Add", ["ok", "one"], ["o1"]), helper.make_node("Cast", ["o1"], ["oi"], to=TensorProto.INT32),
            helper.make_node("Mod", ["xi", "oi"], ["y"])]
        consts = [numpy_helper.from_array(np.array(v, np.float32), n) for v, n in ((1000.0, "k"), (20.0, "k20"), (1.0, "one"))]
        return (inferred(nodes, [vi("x", x4), vi("o", other)], [] if fmod else consts),
                f"mod_{'fmod' if fmod else 'int32'}_{x4}_by_{other}")
    if kind == "clip_runtime":  # bounds as inputs (a quantized model's clamp, a ReLU6 exported with tensors)
        # (the bounds fed as [1] and reshaped to scalars: the binding's feeds are arrays)
        nodes = [helper.make_node("Reshape", ["lo", "scalar"], ["l0"]), helper.make_node("Reshape", ["hi", "scalar"], ["h0"]),
                 helper.make_node("Abs", ["l0"], ["la"]), helper.make_node("Neg", ["la"], ["l"]),
                 helper.make_node("Abs", ["h0"], ["h"]), helper.make_node("Clip", ["x", "l", "h"], ["y"])]
        scalar = numpy_helper.from_array(np.zeros(0, np.int64), "scalar")
        return inferred(nodes, [vi("x", x4), vi("lo", [1]), vi("hi", [1])], [scalar]), f"clip_runtime_{x4}"
    if kind == "pad_reflect_edge":
        mode = pick("reflect", "edge")
        p_ = [int(pick(0, 1, 2, 3)) for _ in range(4)]
        pads = numpy_helper.from_array(np.array([0, 0, p_[0], p_[1], 0, 0, p_[2], p_[3]], np.int64), "pads")
        return inferred([helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)], [vi("x", x4)], [pads]), f"pad_{mode}_{p_}_{x4}"
    if kind == "argmax_channels":
        op = pick("ArgMax", "ArgMin")
        return (inferred([helper.make_node(op, ["x"], ["y"], axis=1, keepdims=int(rng.integers(2)),
                                           select_last_index=int(rng.integers(2)))], [vi("x", x4)]), f"{op}_channels_{x4}")
    # slice_negative_step: a reversed and strided axis, from the middle
    axis, step = int(pick(1, 2, 3)), int(pick(-1, -2, -3))
    ts = [numpy_helper.from_array(np.array([v], np.int64), n) for v, n in
          ((x4[axis] - 2, "st"), (0, "en"), (axis, "ax"), (step, "sp"))]
    return (inferred([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [vi("x", x4)], ts),
            f"slice_a{axis}_step{step}_mid_{x4}")


def random_op_cases(count, seed, kinds=BASE_OP_KINDS + MORE_OP_KINDS):
    """`count` seeded random non-conv ops at random shapes (what a model between its convs
    does: matrix products, Softmax / reductions / LayerNorm over any axis, Transpose of 3-5
    dims, Resize, pooling, broadcasting elementwise ops, Concat, Pad, Slice with steps, Gather,
    DepthToSpace, ArgMax; MORE_OP_KINDS: GroupNorm / InstanceNorm, attention, Einsum,
    ConvTranspose, 1-D convs, GRU / LSTM, Gemm, Where, Cast, CumSum, TopK, Expand, Tile, odd
    reductions, Resize at odd scales), 0.1-4 M elements each (inputs, outputs or weights)."""
    rng = np.random.default_rng(seed)
    pick = lambda *v: v[int(rng.integers(len(v)))]  # noqa: E731
    c = {}
    while len(c) < count:
        kind = pick(*kinds)
        nc, hw = int(pick(3, 16, 24, 32, 48, 64, 96, 128, 256)), int(pick(7, 14, 20, 28, 40, 56, 80, 112))
        x4 = [1, nc, hw, hw]
        seq, dim, heads = int(pick(49, 64, 128, 197, 256, 400)), int(pick(64, 96, 128, 192, 256, 384, 768)), int(pick(1, 4, 8, 12))
        if kind == "matmul":
            a, b = [heads, seq, dim // heads if heads > 1 else dim], None
            b = [heads, a[2], seq] if rng.random() < 0.5 else [heads, a[2], int(pick(32, 64, 100))]
            m, name = inferred([helper.make_node("MatMul", ["x", "b"], ["y"])], [vi("x", a), vi("b", b)]), f"matmul_{a}x{b}"
        elif kind == "linear":
            n_out = int(pick(64, 100, 256, 512, 1000, 1536))
            m = inferred([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [1, seq, dim])],
                         [weight("w", [dim, n_out])])
            name = f"linear_{seq}x{dim}x{n_out}"
        elif kind == "softmax":
            shape, axis = ([1, heads, seq, seq], int(pick(-1, -2, 1))) if rng.random() < 0.5 else (x4, int(pick(1, 2, 3)))
            m, name = inferred([helper.make_node("Softmax", ["x"], ["y"], axis=axis)], [vi("x", shape)]), f"softmax_{shape}_a{axis}"
        elif kind == "reduce":
            op, axes = pick("ReduceMean", "ReduceMax", "ReduceSum"), sorted(rng.choice(4, int(rng.integers(1, 3)), replace=False).tolist())
            keep = int(rng.integers(2))
            axes_t = numpy_helper.from_array(np.array(axes, np.int64), "axes")
            m = inferred([helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)], [vi("x", x4)], [axes_t], opset=18)
            name = f"{op}_{x4}_axes{axes}_k{keep}"
        elif kind == "transpose":
            rank = int(pick(3, 4, 5))
            shape = [int(pick(2, 3, 4, 8, 12, 16, 32, 49, 64)) for _ in range(rank - 1)] + [int(pick(16, 32, 64, 96))]
            perm = rng.permutation(rank).tolist()
            m, name = inferred([helper.make_node("Transpose", ["x"], ["y"], perm=perm)], [vi("x", shape)]), f"transpose_{shape}_p{perm}"
        elif kind == "resize":
            mode, scale = pick("nearest", "linear", "cubic"), float(pick(2.0, 0.5, 4.0))
            ctm = pick("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")
            sc = numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32), "scales")
            m = inferred([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, coordinate_transformation_mode=ctm)],
                         [vi("x", x4)], [sc], opset=13)
            name = f"resize_{mode}_{ctm}_x{scale}_{x4}"
        elif kind == "pool":
            op, k, st = pick("MaxPool", "AveragePool"), int(pick(2, 3, 5)), int(pick(1, 2))
            pads = [k // 2] * 4 if rng.random() < 0.6 else [0] * 4
            m = inferred([helper.make_node(op, ["x"], ["y"], kernel_shape=[k, k], strides=[st, st], pads=pads)], [vi("x", x4)])
            name = f"{op}_k{k}s{st}p{pads[0]}_{x4}"
        elif kind == "broadcast":
            op = pick("Add", "Mul", "Sub", "Div", "Max")
            other = [d if rng.random() < 0.5 else 1 for d in x4]
            m = inferred([helper.make_node(op, ["x", "o"], ["y"])], [vi("x", x4), vi("o", other)])
            name = f"{op}_{x4}_by_{other}"
        elif kind == "concat":
            axis, parts = int(pick(1, 2, 3)), int(pick(2, 3, 4))
            shapes = [[d if i != axis else int(pick(8, 16, 24, 64)) for i, d in enumerate(x4)] for _ in range(parts)]
            names = [f"x{i}" for i in range(parts)]
            m = inferred([helper.make_node("Concat", names, ["y"], axis=axis)], [vi(n, sh) for n, sh in zip(names, shapes)])
            name = f"concat_a{axis}_{parts}x{shapes[0]}"
        elif kind == "layernorm":
            shape, axis = ([1, seq, dim], -1) if rng.random() < 0.6 else (x4, int(pick(1, 2, 3, -1)))
            dims = shape[axis:] if axis != -1 else shape[-1:]
            m = inferred([helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=axis, epsilon=1e-5)],
                         [vi("x", shape)], [weight("s", dims, 1.0), weight("b", dims, 0.1)])
            name = f"layernorm_{shape}_a{axis}"
        elif kind == "pad":
            mode, p_ = pick("constant", "reflect", "edge"), int(pick(1, 2, 3))
            pads = numpy_helper.from_array(np.array([0, 0, p_, p_, 0, 0, p_, p_], np.int64), "pads")
            m = inferred([helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)], [vi("x", x4)], [pads])
            name = f"pad_{mode}_{p_}_{x4}"
        elif kind == "slice":
            axis, step = int(pick(1, 2, 3)), int(pick(2, -1, 3))
            start, end = (0, x4[axis]) if step > 0 else (x4[axis] - 1, -x4[axis] - 1)
            ts = [numpy_helper.from_array(np.array([v], np.int64), n) for v, n in
                  ((start, "st"), (end, "en"), (axis, "ax"), (step, "sp"))]
            m = inferred([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [vi("x", x4)], ts)
            name = f"slice_a{axis}_step{step}_{x4}"
        elif kind == "gather":
            axis = int(pick(1, 2, 3))
            idx = numpy_helper.from_array(rng.integers(0, x4[axis], size=int(pick(4, 16, x4[axis]))).astype(np.int64), "idx")
            m = inferred([helper.make_node("Gather", ["x", "idx"], ["y"], axis=axis)], [vi("x", x4)], [idx])
            name = f"gather_a{axis}_{len(idx.int64_data) or idx.dims[0]}_{x4}"
        elif kind == "depth_to_space":
            shape = [1, nc * 4, max(hw // 2, 4), max(hw // 2, 4)]
            m = inferred([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode=pick("DCR", "CRD"))], [vi("x", shape)])
            name = f"depth_to_space_{shape}"
        elif kind == "argmax":
            axis = int(pick(1, 2, 3))
            m = inferred([helper.make_node("ArgMax", ["x"], ["y"], axis=axis, keepdims=1)], [vi("x", x4)])
            name = f"argmax_a{axis}_{x4}"
        else:
            m, name = more_op_case(kind, rng, pick, x4, seq, dim, heads)
        numel = int(np.prod([d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim]))
        numel_in = sum(int(np.prod([d.dim_value for d in i.type.tensor_type.shape.dim])) for i in m.graph.input)
        numel_w = max([int(np.prod(t.dims)) for t in m.graph.initializer], default=0)
        if not 1e5 <= max(numel, numel_in, numel_w if kind in MORE_OP_KINDS else 0) <= 4e6:
            continue
        c[f"rop{len(c)}_{name}".replace(" ", "")] = m
    return c


def cases():
    c = {}
    # Conv1d: audio / sequence models (TCN, wav2vec-style front ends, keyword spotting)
    for cin, cout, n, k, d in [(64, 64, 16000, 3, 1), (128, 128, 4000, 3, 2), (128, 128, 4000, 5, 4),
                               (256, 256, 1000, 3, 1), (256, 256, 1000, 5, 2), (64, 128, 8000, 5, 1)]:
        c[f"conv1d_c{cin}-{cout}_l{n}_k{k}_d{d}"] = conv(cin, cout, [n], k, dil=d)
    c["conv1d_s2_c128-256_l2000_k3"] = conv(128, 256, [2000], 3, stride=2)
    c["conv1d_dw_c256_l4000_k5"] = conv(256, 256, [4000], 5, group=256)
    # dilated 3x3 (DeepLab ASPP: rates 6/12/18 at output stride 16, 2/4 in dilated backbones)
    for cin, cout, hw, d in [(256, 256, 33, 2), (256, 256, 33, 4), (320, 256, 33, 6), (128, 128, 65, 2)]:
        c[f"dil3x3_c{cin}-{cout}_{hw}_r{d}"] = conv(cin, cout, [hw, hw], 3, dil=d)
    c["dil3x3_dw_c512_33_r4"] = conv(512, 512, [33, 33], 3, dil=4, group=512)
    # ConvTranspose (decoders, segmentation/detection heads)
    c["convT_k4s2p1_c128-64_40"] = conv_transpose(128, 64, [40, 40], 4, 2, 1)
    c["convT_k4s2p1_c256-128_20"] = conv_transpose(256, 128, [20, 20], 4, 2, 1)
    c["convT_k3s2p1op1_c64-32_80"] = conv_transpose(64, 32, [80, 80], 3, 2, 1, 1)
    c["convT_k2s2_c256-128_32"] = conv_transpose(256, 128, [32, 32], 2, 2, 0)
    c["convT_k2s2_c64-64_80"] = conv_transpose(64, 64, [80, 80], 2, 2, 0)
    c["convT_dw_k4s2p1_c128_40"] = conv_transpose(128, 128, [40, 40], 4, 2, 1, group=128)
    c["convT_dw_k2s2_c64_80"] = conv_transpose(64, 64, [80, 80], 2, 2, 0, group=64)
    # large-kernel depthwise (ConvNeXt, MobileNetV3/EfficientNet 5x5)
    c["dw7x7_c96_56"] = conv(96, 96, [56, 56], 7, group=96)
    c["dw7x7_c32_112"] = conv(32, 32, [112, 112], 7, group=32)
    c["dw5x5_c72_56"] = conv(72, 72, [56, 56], 5, group=72)
    c["dw5x5_c120_28"] = conv(120, 120, [28, 28], 5, group=120)
    c["dw5x5_s2_c72_112"] = conv(72, 72, [112, 112], 5, stride=2, group=72)
    # grouped convs by channels per group (ResNeXt, RegNet, ShuffleNet)
    for cpg, ch, hw in [(2, 64, 56), (4, 128, 56), (8, 256, 28), (16, 256, 28), (32, 512, 14), (16, 512, 28),
                        (24, 192, 28), (48, 432, 14), (64, 256, 28)]:
        c[f"grouped_cpg{cpg}_c{ch}_{hw}"] = conv(ch, ch, [hw, hw], 3, group=ch // cpg)
    # strided (the first block of a ResNeXt / RegNet stage) and 1x1 (ShuffleNet v1) grouped convs
    c["grouped_s2_cpg64_c256_56"] = conv(256, 256, [56, 56], 3, stride=2, group=4)
    c["grouped_s2_cpg16_c256_56"] = conv(256, 256, [56, 56], 3, stride=2, group=16)
    c["grouped_1x1_cpg16_c256_28"] = conv(256, 256, [28, 28], 1, group=16)
    # convs (+ bias + ReLU) whose result is the model's NCHW output, reading a computed
    # (channels-last) intermediate: detection heads (YOLO's 255-channel 1x1, SSD's box and class
    # convs), segmentation logits, an encoder's last conv; dense, depthwise, grouped (issue 22)
    for name, cin, m, hw, k, groups in [("dense1x1_c128-255_20", 128, 255, 20, 1, 1),
                                        ("dense1x1_c512-2048_28", 512, 2048, 28, 1, 1),
                                        ("dense3x3_c96-24_40", 96, 24, 40, 3, 1),
                                        ("dense3x3_c64-91_20", 64, 91, 20, 3, 1),
                                        ("dw3x3_c144_56", 144, 144, 56, 3, 144),
                                        ("grouped3x3_cpg8_c128_28", 128, 128, 28, 3, 16),
                                        ("grouped3x3_cpg64_c256_14", 256, 256, 14, 3, 4)]:
        p = k // 2
        c[f"nchwout_{name}"] = conv_block(16, cin, m, [hw, hw], (k, k), 1, (1, 1), groups, (p, p))
    # stride-2 3x3 (stems, downsampling)
    c["s2_3x3_c3-32_224"] = conv(3, 32, [224, 224], 3, stride=2)
    c["s2_3x3_c64-128_56"] = conv(64, 128, [56, 56], 3, stride=2)
    c["s2_3x3_c256-256_28"] = conv(256, 256, [28, 28], 3, stride=2)
    c["s4_4x4_c3-96_224"] = conv(3, 96, [224, 224], 4, stride=4, pad=0)  # ConvNeXt / Swin patchify stem
    # 3-D convs (video models: r3d_18, R(2+1)D's factorized (1,3,3) + (3,1,1), grouped)
    c["conv3d_3x3x3_c64_8x56"] = conv3d_block(64, 64, [8, 56, 56], (3, 3, 3))
    c["conv3d_3x3x3_s2_c64-128_8x56"] = conv3d_block(64, 128, [8, 56, 56], (3, 3, 3), stride=(2, 2, 2))
    c["conv3d_3x3x3_c256_2x14"] = conv3d_block(256, 256, [2, 14, 14], (3, 3, 3))
    c["conv3d_1x3x3_c64-144_8x56"] = conv3d_block(64, 144, [8, 56, 56], (1, 3, 3))
    c["conv3d_3x1x1_c144-64_8x56"] = conv3d_block(144, 64, [8, 56, 56], (3, 1, 1))
    c["conv3d_3x3x3_g8_c128_4x28"] = conv3d_block(128, 128, [4, 28, 28], (3, 3, 3), group=8)
    # attention: B*H x S x D
    for bh, s, d in [(8, 64, 64), (12, 197, 64), (8, 256, 32), (4, 1024, 32), (8, 512, 64)]:
        c[f"attn_qk_bh{bh}_s{s}_d{d}"] = batched_matmul(bh, s, d, s)
        c[f"attn_av_bh{bh}_s{s}_d{d}"] = batched_matmul(bh, s, s, d)
    c["attn_qkT_transpose_bh12_s197_d64"] = attention_qk(12, 197, 64)
    for bh, s in [(12, 197), (8, 512), (4, 1024)]:
        c[f"softmax_bh{bh}_s{s}"] = unary("Softmax", [bh, s, s], axis=-1)
    # norms
    c["layernorm_197x768"] = layer_norm([1, 197, 768])
    c["layernorm_1024x256"] = layer_norm([1, 1024, 256])
    c["groupnorm_c256_32x32_g32"] = group_norm(256, [32, 32], 32)
    c["groupnorm_c128_64x64_g32"] = group_norm(128, [64, 64], 32)
    c["instancenorm_c64_128x128"] = instance_norm(64, [128, 128])
    # Resize x2 (FPN, U-Net decoders)
    for mode, ctm in [("nearest", "asymmetric"), ("nearest", "half_pixel"), ("linear", "half_pixel"),
                      ("linear", "align_corners")]:
        c[f"resize_{mode}_{ctm}_c128_40"] = resize(128, [40, 40], mode, ctm)
    c["resize_linear_half_pixel_c32_160"] = resize(32, [160, 160], "linear", "half_pixel")
    # pooling 3x3 s2
    c["maxpool3s2_c64_112"] = pool("MaxPool", 64, [112, 112])
    c["avgpool3s2_c256_28"] = pool("AveragePool", 256, [28, 28])
    # Gather: embedding lookup
    c["gather_v30000_d256_s128"] = gather(30000, 256, 128)
    c["gather_v1000_d768_s512"] = gather(1000, 768, 512)
    # Transpose 4-D
    c["transpose_nchw2nhwc_c64_112"] = transpose([1, 64, 112, 112], [0, 2, 3, 1])
    c["transpose_nhwc2nchw_c128_56"] = transpose([1, 56, 56, 128], [0, 3, 1, 2])
    c["transpose_heads_s197_h12_d64"] = transpose([1, 197, 12, 64], [0, 2, 1, 3])
    c["transpose_shuffle_g2_c116_28"] = transpose([1, 2, 58, 28 * 28], [0, 2, 1, 3])
    # Concat / Split along channels
    c["concat_c64+64_112"] = concat(64, 64, [112, 112])
    c["concat_c256+128_28"] = concat(256, 128, [28, 28])
    c["split2_c128_56"] = split(128, [56, 56], 2)
    c["split4_c256_28"] = split(256, [28, 28], 4)
    # one-layer recurrent nets, seq 50
    for op in ("GRU", "LSTM"):
        for inp, h in [(64, 64), (128, 128), (256, 256)]:
            c[f"{op.lower()}_seq50_in{inp}_h{h}"] = rnn(op, 50, inp, h)
    # conv features flattened into a Linear layer (AlexNet 256x6x6 -> 4096 at a quarter of its
    # outputs, a LeNet-like head, a driving model's planner); Gemm transB 1 and MatMul
    c["flatten_fc_c256_6x6_n1024"] = flatten_fc(256, 6, 1024)
    c["flatten_fc_c50_4x4_n500"] = flatten_fc(50, 4, 500)
    c["flatten_fc_matmul_c64_8x8_n256"] = flatten_fc(64, 8, 256, matmul=True)
    # reductions over the pixels of a channels-last intermediate (SE blocks' squeeze, CNN heads)
    for ch, hw in [(256, 112), (96, 56), (672, 14), (2048, 7), (40, 28)]:
        c[f"gap_c{ch}_{hw}"] = pooled_intermediate(ch, hw)
    c["gap_reducemean_c256_56"] = pooled_intermediate(256, 56, "ReduceMean")
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated substrings of case names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--round-ms", type=float, default=60.0, help="target time of one engine's round")
    ap.add_argument("--flag", type=float, default=1.5)
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--target", default="x86_64")
    ap.add_argument("--edgec-args", default="")
    ap.add_argument("--baseline-args", help="edgec options of a second bundle timed in the same rounds")
    ap.add_argument("--baseline-edgec", help="the edgec that compiles that second bundle (default: this build's)")
    ap.add_argument("--cpu-time", action="store_true", help="time this thread's CPU time (--threads 1)")
    ap.add_argument("--json")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="instead of the fixed cases, N seeded random conv blocks (random_conv_cases)")
    ap.add_argument("--seed", type=int, default=0, help="the seed of --random")
    ap.add_argument("--pooled", action="store_true",
                    help="--random blocks end in a GlobalAveragePool (the conv's result an intermediate)")
    ap.add_argument("--random-ops", type=int, default=0, metavar="N",
                    help="instead of the fixed cases, N seeded random non-conv ops (random_op_cases)")
    ap.add_argument("--op-kinds", default="all",
                    help="--random-ops' classes: all, base (BASE_OP_KINDS: the cases of the seeds run before "
                         "MORE_OP_KINDS were added) or a comma-separated list of kinds")
    args = ap.parse_args()
    kinds = {"all": BASE_OP_KINDS + MORE_OP_KINDS, "base": BASE_OP_KINDS, "extra": EXTRA_OP_KINDS}.get(args.op_kinds)
    kinds = kinds or tuple(args.op_kinds.split(","))
    if set(kinds) - set(BASE_OP_KINDS + MORE_OP_KINDS + EXTRA_OP_KINDS):
        ap.error(f"--op-kinds: unknown {sorted(set(kinds) - set(BASE_OP_KINDS + MORE_OP_KINDS + EXTRA_OP_KINDS))}")
    all_cases = (random_conv_cases(args.random, args.seed, args.pooled) if args.random
                 else random_op_cases(args.random_ops, args.seed, kinds) if args.random_ops else cases())
    names = [n for n in all_cases if not args.only or any(s in n for s in args.only.split(","))]
    if args.list:
        print("\n".join(names))
        return
    if args.cpu_time:
        if args.threads != 1:
            ap.error("--cpu-time: only at --threads 1")
        bm.CLOCK = time.thread_time
    if args.baseline_edgec and args.baseline_args is None:
        args.baseline_args = ""
    import onnxruntime as ort
    edgec = lib.find_tool("edgec")
    edgert = bm.import_edgert()
    rows, failed = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = Path(tmp) / f"{name}.onnx"
            onnx.save(all_cases[name], path)
            bundle = Path(tmp) / f"{name}.bundle"
            res = subprocess.run([str(edgec), "compile", str(path), "-o", str(bundle), "-q", "--target", args.target,
                                  *shlex.split(args.edgec_args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
            if res.returncode != 0:
                failed[name] = "edgec failed: " + (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[0]
                print(f"{name}: {failed[name]}", flush=True)
                continue
            mismatch = bm.output_mismatch(str(path), bundle, tmp, args.tolerance)
            if mismatch:
                failed[name] = f"outputs differ: {mismatch}"
                print(f"{name}: {failed[name]}", flush=True)
                continue
            so = ort.SessionOptions()
            so.intra_op_num_threads = args.threads
            so.inter_op_num_threads = 1
            sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            feeds = bm.random_inputs(sess, 0)
            for _ in range(2):
                sess.run(None, feeds)
            t0 = time.perf_counter()
            sess.run(None, feeds)
            one = (time.perf_counter() - t0) * 1e3
            iters = max(3, min(200, int(args.round_ms / max(one, 1e-3))))
            edge_run = bm.binding_runner(edgert, bundle, args.threads, feeds, iters)
            base_run = None
            if args.baseline_args is not None:
                base_bundle = Path(tmp) / f"{name}.baseline.bundle"
                subprocess.run([args.baseline_edgec or str(edgec), "compile", str(path), "-o", str(base_bundle), "-q",
                                "--target", args.target, *shlex.split(args.baseline_args)], check=True,
                               stdout=subprocess.DEVNULL)
                base_run = bm.binding_runner(edgert, base_bundle, args.threads, feeds, iters)
            e_med, o_med, b_med = [], [], []
            for _ in range(args.rounds):
                e_med.append(edge_run())
                if base_run:
                    b_med.append(base_run())
                o_med.append(bm.timed_median_ms(lambda: sess.run(None, feeds), iters))
            e, o = statistics.median(e_med), statistics.median(o_med)
            best = min(e_med) / min(o_med)
            rows.append((name, e, o, best))
            flag = "  CLIFF" if best > args.flag else ""
            base = ""
            if base_run:
                b = statistics.median(b_med)
                base = f"; baseline {b:.3f} ms (ratio {b / o:.2f}), this / baseline {e / b:.3f}"
            print(f"{name}: edgert {e:.3f} ms, onnxruntime {o:.3f} ms, ratio {e / o:.2f}, best {best:.2f}{flag}{base}",
                  flush=True)
    print(f"\ntarget {args.target}, threads {args.threads}, {args.rounds} rounds, alternating"
          f"{', CPU time of the calling thread' if args.cpu_time else ''}; "
          f"cases whose best ratio is above {args.flag}x, worst first:")
    for name, e, o, best in sorted(rows, key=lambda r: -r[3]):
        if best > args.flag:
            print(f"  {name}: best {best:.2f}x, median {e / o:.2f}x ({e:.3f} ms vs {o:.3f} ms)")
    if rows:
        g = math.exp(statistics.fmean(math.log(best) for *_, best in rows))
        print(f"geometric mean of the best ratios edgert / onnxruntime {g:.2f}x over {len(rows)} cases")
    for name, why in failed.items():
        print(f"{name}: not measured: {why}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "target": args.target, "threads": args.threads, "rounds": args.rounds, "failed": failed,
            "cases": [{"case": n, "edgert_ms": e, "onnxruntime_ms": o, "ratio": e / o, "best_ratio": best}
                      for n, e, o, best in rows]},
            indent=1) + "\n")


if __name__ == "__main__":
    main()
