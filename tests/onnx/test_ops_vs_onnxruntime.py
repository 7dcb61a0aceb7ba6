#!/usr/bin/env python3
"""Operator checks against onnxruntime beyond the ONNX node tests: configurations the node
tests do not cover (bidirectional RNNs with sequence_lens, ConvTranspose strides/dilations/
groups/output_shape, grouped convs, Resize modes on float16 and uint8, Einsum forms, GridSample modes,
opset-23 Attention / RotaryEmbedding / RMSNormalization), the Cast matrix over the types a
driving model uses, float16 variants of the new ops and float16 long sums, convs and math
(vs float32 onnxruntime; aarch64-fp16 computes them in half).

    python3 tests/onnx/test_ops_vs_onnxruntime.py [case-substring ...]

Tools come from EDGEC / EDGERT_RUN or build/; scratch files go to $EDGE_WORK_DIR."""
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402
import edge_testlib as lib  # noqa: E402

# ctest runs it on rusticl in shards (EDGE_SUITE_SHARD), balanced by the seconds per case that
# tests/test_costs.json records (tests/update_test_costs.py writes it from a run).
suite = lib.Suite("test_ops_vs_onnxruntime")
WORK = None
_count = [0]


def model(nodes, inputs, outputs, inits=(), opset=18):
    """inputs: {name: ndarray}; outputs: names (dtype from the first input unless given as (name, dtype))."""
    ins = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in inputs.items()]
    first = h.np_dtype_to_tensor_dtype(next(iter(inputs.values())).dtype)
    outs = [h.make_tensor_value_info(o if isinstance(o, str) else o[0], first if isinstance(o, str) else o[1], None)
            for o in outputs]
    g = h.make_graph(nodes, "g", ins, outs, [nh.from_array(v, n) for n, v in inits])
    ir = 10 if opset >= 21 else 8
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir)
    if opset <= 22:
        m = onnx.shape_inference.infer_shapes(m)
    return m


def check(m, feeds, rtol=1e-4, atol=1e-5, ref_model=None, ref_feeds=None, scale_tol=False, compile_args=()):
    """Compiles and runs m; compares every output with onnxruntime on ref_model (default m)."""
    expected = lib.ort_run(ref_model or m, ref_feeds or feeds)
    _count[0] += 1
    actual = lib.compile_and_run(m, feeds, WORK, name=f"m{_count[0]}", compile_args=compile_args)
    for name, want in expected.items():
        got = actual[name]
        assert got.shape == want.shape, f"{name}: shape {got.shape} vs {want.shape}"
        if ref_model is None:
            assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} vs {want.dtype}"
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
        tol = atol * max(1.0, float(np.abs(w64).max())) if scale_tol else atol
        ok = np.allclose(g64, w64, rtol=rtol, atol=tol, equal_nan=True)
        assert ok, f"{name}: max abs err {np.nanmax(np.abs(g64 - w64)):.3g}"



def checked_run(m, feeds, name, rtol, atol, threads=(3,), compile_args=()):
    """Compiles m (bundle WORK/name.bundle), runs it at 1 thread and compares every output with
    onnxruntime (allclose), then at each of `threads`: bit-identical to 1 thread. The outputs."""
    want = lib.ort_run(m, feeds)
    got = lib.compile_and_run(m, feeds, WORK, name=name, threads=1, compile_args=compile_args)
    outs = list(want)
    for out in outs:
        assert np.allclose(got[out], want[out], rtol=rtol, atol=atol), \
            f"{out}: max abs err {np.abs(got[out] - want[out]).max():.3g}"
    for n in threads:
        more = lib.run_bundle(WORK / f"{name}.bundle", feeds, WORK / f"{name}_t{n}", outs, threads=n)
        for out in outs:
            assert np.array_equal(got[out], more[out]), f"{out}: {n} threads differ from 1"
    return got

RNG = np.random.default_rng(20240601)


def randn(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


@suite.case
def rnn_gru_lstm_directions_and_lengths():
    # Past a batch entry's sequence_lens its state is held and its Y is 0. The step test
    # compares in 32 bits (Mesa 22.3's rusticl got `2L < (long)len` always true, so the
    # masked steps ran on there).
    for op, gates in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        for direction, extra in (("bidirectional", {}), ("reverse", {"clip": 0.8}),
                                 ("forward", {"linear_before_reset": 1} if op == "GRU" else {})):
            dirs, hid, seq, batch, inp = (2 if direction == "bidirectional" else 1), 6, 5, 3, 4
            inits = [("W", randn(dirs, gates * hid, inp, scale=0.5)), ("R", randn(dirs, gates * hid, hid, scale=0.5)),
                     ("B", randn(dirs, 2 * gates * hid, scale=0.5)), ("h0", randn(dirs, batch, hid))]
            names = ["x", "W", "R", "B", "lens", "h0"]
            if op == "LSTM":
                inits += [("c0", randn(dirs, batch, hid)), ("P", randn(dirs, 3 * hid))]
                names += ["c0", "P"]
            outs = ["Y", "Yh"] + (["Yc"] if op == "LSTM" else [])
            node = h.make_node(op, names, outs, hidden_size=hid, direction=direction, **extra)
            feeds = {"x": randn(seq, batch, inp), "lens": np.array([5, 2, 3], np.int32)}
            check(model([node], feeds, outs, inits, opset=14), feeds)


@suite.case
def gru_recurrent_products_as_one():
    """A bidirectional GRU with linear_before_reset (PLCMOS's: torch's export) computes each
    step's three recurrent products H R^T as one (batch, 3 * hidden) product, as the LSTM does
    its four: one product kernel and one gate kernel a step and direction (PLCMOS's 4 x 194
    steps: 3 kernels each, the z gate and the h gate's products stored apart). Hidden 32, 6
    steps, batch 2, an initial state; the x86_64 dump has at most one kernel reducing over the
    hidden size per step and direction. Not on OpenCL (the rnn case above checks the values
    there)."""
    if lib.opencl_target():
        return
    dirs, hid, seq, batch, inp = 2, 32, 6, 2, 16
    inits = [("W", randn(dirs, 3 * hid, inp, scale=0.3)), ("R", randn(dirs, 3 * hid, hid, scale=0.3)),
             ("B", randn(dirs, 6 * hid, scale=0.3)), ("h0", randn(dirs, batch, hid))]
    node = h.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["Y", "Yh"], hidden_size=hid, direction="bidirectional",
                       linear_before_reset=1)
    feeds = {"x": randn(seq, batch, inp)}
    check(model([node], feeds, ["Y", "Yh"], inits, opset=14), feeds)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "gru_products")
    products = [n for n, text in kernels.items() if f"reduce ReduceSum over [{hid}]" in text]
    assert len(products) <= seq * dirs, f"{len(products)} recurrent product kernels for {seq * dirs} steps"


@suite.case
def conv_transpose_configurations():
    cases = [
        ((2, 4, 5, 6), (4, 2, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
        ((1, 4, 5, 5), (4, 2, 4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1], group=2)),
        ((1, 3, 7), (3, 2, 3), dict(strides=[3], dilations=[2], pads=[2, 1])),
        ((1, 2, 3, 4, 4), (2, 2, 3, 3, 3), dict(strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 0])),
        ((1, 2, 5, 5), (2, 2, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
        ((1, 2, 5, 5), (2, 2, 3, 3), dict(strides=[3, 2], output_shape=[16, 11])),
        ((1, 2, 5, 5), (2, 2, 5, 5), dict(strides=[2, 2], dilations=[2, 2], pads=[3, 3, 2, 2])),
    ]
    for xs, ws, attrs in cases:
        inits = [("w", randn(*ws)), ("b", randn(ws[1] * attrs.get("group", 1)))]
        feeds = {"x": randn(*xs)}
        check(model([h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)], feeds, ["y"], inits, opset=17),
              feeds, atol=1e-4)


@suite.case
def conv_transpose_phases_as_one_conv():
    """ConvTransposes whose stride phases all read the same taps pattern (kernel == stride: the
    2x2 stride-2 upsampling of PP-OCR's detection head, here with its BN + ReLU and a second one
    to 1 channel + Sigmoid; grouped, 1-D, 3-D, stride 1 dilated). Each is one conv with a
    channel per phase, interleaved by a permute: no kernel sums masked div/mod reads of
    per-phase buffers (those ran at ~1 GB/s, 73% of the head's time). The first one's
    interleave (with its bias, BN and ReLU), read by the second, is stored (N, H, W, C) like the
    phases' conv result it reads: stored NCHW it gathered every vector from 4 phases
    (PP-OCRv4 det: 1 GFLOP/s, a tenth of the model's time)."""
    feeds = {"x": randn(1, 8, 6, 7)}
    nodes = [h.make_node("ConvTranspose", ["x", "w0", "b0"], ["t0"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("BatchNormalization", ["t0", "bn_s", "bn_b", "bn_m", "bn_v"], ["n0"]),
             h.make_node("Relu", ["n0"], ["r0"]),
             h.make_node("ConvTranspose", ["r0", "w1", "b1"], ["t1"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Sigmoid", ["t1"], ["y0"])]
    inits = [("w0", randn(8, 6, 2, 2, scale=0.3)), ("b0", randn(6)), ("bn_s", randn(6)), ("bn_b", randn(6)),
             ("bn_m", randn(6)), ("bn_v", (np.abs(randn(6)) + 0.5).astype(np.float32)),
             ("w1", randn(6, 1, 2, 2, scale=0.3)), ("b1", randn(1))]
    check(model(nodes, feeds, ["y0"], inits, opset=17), feeds, atol=1e-4)
    if not lib.opencl_target():
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", "conv_transpose_phases")
        masked = [n for n, text in kernels.items() if "inbounds" in text]
        convs = [n for n, text in kernels.items() if "reduce ReduceSum" in text]
        assert not masked and len(convs) == 2, \
            f"expected one conv per ConvTranspose and no masked phase reads: convs {convs}, masked {masked}"
        relu = [text.splitlines()[0] for text in kernels.values() if "Max(" in text and "reduce" not in text]
        assert len(relu) == 1 and "out[1,12,14,6]" in relu[0], f"the interleave + BN + ReLU should store (N, H, W, C): {relu}"
    cases = [
        ((1, 6, 5, 7), (6, 2, 2, 3), dict(strides=[2, 3], group=3)),  # grouped, phases per group
        ((2, 3, 9), (3, 4, 3), dict(strides=[3])),  # 1-D, batch 2
        ((1, 2, 3, 4, 4), (2, 3, 2, 2, 2), dict(strides=[2, 2, 2])),  # 3-D
        ((1, 3, 6, 6), (3, 2, 3, 3), dict(dilations=[2, 2], pads=[1, 2, 2, 1])),  # stride 1: one phase
        ((1, 4, 4, 5), (4, 2, 4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1])),  # phases differ: per-phase convs
    ]
    for xs, ws, attrs in cases:
        inits = [("w", randn(*ws)), ("b", randn(ws[1] * attrs.get("group", 1)))]
        feeds = {"x": randn(*xs)}
        check(model([h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)], feeds, ["y"], inits, opset=17),
              feeds, atol=1e-4)


@suite.case
def conv_transpose_unequal_phase_counts():
    """ConvTransposes whose stride phases compute different numbers of outputs (3x3 stride 2
    without padding: 2n+1 outputs, n+1 in phase 0 and n in phase 1; 5x5 / 4 and 4x4 / 3, a
    kernel shorter than the stride leaves a phase with no tap; grouped). Each phase's
    result is padded to the most outputs and stacked, one permute interleaves them: the
    kernel storing y loads one element per output unmasked (on main it summed every phase's
    buffer through masked div/mod loads: 2x onnxruntime at 16 -> 64 channels on 40x40, 5x
    for 5x5 stride 4; issue 22)."""
    cases = [
        ((1, 4, 6, 7), (4, 6, 3, 3), dict(strides=[2, 2])),
        ((1, 3, 5, 5), (3, 4, 5, 5), dict(strides=[4, 4])),
        ((1, 4, 5, 4), (4, 3, 4, 4), dict(strides=[3, 3], group=2)),
        ((1, 3, 5, 6), (3, 2, 2, 2), dict(strides=[3, 3])),  # a phase with no tap: zeros
    ]
    nodes, inits, feeds = [], [], {}
    for i, (xs, ws, attrs) in enumerate(cases):
        nodes.append(h.make_node("ConvTranspose", [f"x{i}", f"w{i}", f"b{i}"], [f"y{i}"], **attrs))
        inits += [(f"w{i}", randn(*ws)), (f"b{i}", randn(ws[1] * attrs.get("group", 1)))]
        feeds[f"x{i}"] = randn(*xs)
    check(model(nodes, feeds, [f"y{i}" for i in range(len(cases))], inits, opset=17), feeds, atol=1e-4)
    if lib.opencl_target():
        return
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "convT_unequal")
    for i, (_, ws, attrs) in enumerate(cases):
        out = [text for name, text in kernels.items() if re.fullmatch(rf"k\d+_y{i}(_\d+)?", name)]
        assert len(out) == 1 and "inbounds" not in out[0] and out[0].count("= load ") <= 2, \
            f"{ws} {attrs}: the kernel storing y{i} should read the stacked phases unmasked:\n{out}"


@suite.case
def conv_transpose_phases_stored_channels_last():
    """A dense ConvTranspose whose phases are one conv (kernel == stride) stores that conv's
    result channels-last, (N, Q..., P*M), and its interleave transposes once: stored
    channels-first, each vector of output channels was scattered to stores Q*Q*4 bytes apart
    (256 -> 128 channels on 32x32: 4 KB, 2.1x onnxruntime's time, tests/bench/op_cliffs.py).
    Odd sizes, P*M off the vector width, batch 2, 1-D, a 3x3 kernel at
    stride 3; 3 threads give the same bits as 1."""
    cases = [
        ((1, 5, 7, 9), (5, 3, 2, 2), dict(strides=[2, 2])),  # P*M = 12
        ((2, 16, 5, 6), (16, 5, 2, 2), dict(strides=[2, 2])),  # batch 2
        ((1, 7, 11), (7, 6, 3), dict(strides=[3])),  # 1-D
        ((1, 9, 4, 5), (9, 4, 3, 3), dict(strides=[3, 3])),
    ]
    for i, (xs, ws, attrs) in enumerate(cases):
        inits = [("w", randn(*ws, scale=ws[0] ** -0.5)), ("b", randn(ws[1]))]
        feeds = {"x": randn(*xs)}
        m = model([h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)], feeds, ["y"], inits, opset=17)
        check(m, feeds, atol=1e-4)
        if lib.opencl_target():
            continue
        name = f"convT_channels_last{i}"
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", name)
        convs = [text.splitlines()[0] for text in kernels.values() if "reduce ReduceSum" in text]
        phases_times_m = int(np.prod(attrs["strides"])) * ws[1]
        want = "out[" + ",".join(str(d) for d in (xs[0], *xs[2:], phases_times_m)) + "]"  # (N, Q..., P*M)
        assert len(convs) == 1 and want in convs[0], f"{xs} {attrs}: the phases' conv should store {want}: {convs}"
        bundle = WORK / f"{name}.bundle"
        one = lib.run_bundle(bundle, feeds, WORK / f"{name}_t1", ["y"], threads=1)
        three = lib.run_bundle(bundle, feeds, WORK / f"{name}_t3", ["y"], threads=3)
        assert np.array_equal(one["y"], three["y"]), f"{xs} {attrs}: 3 threads differ from 1"


@suite.case
def resize_modes_and_types():
    cases = [
        (np.float32, dict(mode="linear"), [1, 1, 2, 2], None),
        (np.float32, dict(mode="linear", coordinate_transformation_mode="align_corners"), [1, 1, 2, 2], None),
        (np.float32, dict(mode="cubic"), [1, 1, 2, 2], None),
        (np.float32, dict(mode="nearest", nearest_mode="floor", coordinate_transformation_mode="asymmetric"), [1, 1, 3, 3], None),
        (np.float32, dict(mode="linear"), [1, 1, 0.5, 0.5], None),
        (np.float32, dict(mode="linear"), None, [1, 3, 7, 9]),
        (np.float16, dict(mode="linear"), [1, 1, 2, 2], None),
        (np.uint8, dict(mode="linear"), [1, 1, 2, 2], None),
        (np.uint8, dict(mode="nearest"), [1, 1, 2, 2], None),
    ]
    for dtype, attrs, scales, sizes in cases:
        x = (RNG.random((1, 3, 8, 10)) * (255 if dtype == np.uint8 else 2)).astype(dtype)
        if scales is not None:
            inits, names = [("scales", np.array(scales, np.float32))], ["x", "", "scales"]
        else:
            inits, names = [("sizes", np.array(sizes, np.int64))], ["x", "", "", "sizes"]
        m = model([h.make_node("Resize", names, ["y"], **attrs)], {"x": x}, ["y"], inits, opset=19)
        check(m, {"x": x}, rtol=2e-3 if dtype == np.float16 else 1e-4, atol=1.0 if dtype == np.uint8 else 1e-5)


@suite.case
def nearest_upsampling_shifted_repeats():
    """Nearest upsampling by whole factors whose source index is the repeat o / k shifted and
    clamped at the edges: half_pixel or pytorch_half_pixel with floor or ceil (x2 floor: outputs
    0, 1, 2, 3 read inputs 0, 0, 0, 1; ceil: 0, 1, 1, 2), x2 / x3 / x4 per axis, float and
    uint8. Lowered as the repeat's view and copies of its edge element (lowering.cc
    gather_positions; they were a one-hot reduction over the whole input row, 4x onnxruntime's
    time at 40 -> 80): the dump has no reduce kernel."""
    for dtype in (np.float32, np.uint8):
        for ctm, nearest, scales in (("half_pixel", "floor", [1, 1, 2, 3]), ("half_pixel", "ceil", [1, 1, 3, 2]),
                                     ("pytorch_half_pixel", "floor", [1, 1, 4, 2]), ("half_pixel", "ceil", [1, 1, 4, 4])):
            x = (RNG.random((1, 3, 5, 7)) * (255 if dtype == np.uint8 else 2)).astype(dtype)
            m = model([h.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest", nearest_mode=nearest,
                                   coordinate_transformation_mode=ctm)],
                      {"x": x}, ["y"], [("scales", np.array(scales, np.float32))], opset=19)
            check(m, {"x": x}, rtol=0, atol=0)
            kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"nearest_shifted_{_count[0]}")
            reduces = [k for k, text in kernels.items() if " reduce " in text]
            assert not reduces, f"{ctm} {nearest} x{scales[2:]}: reduce kernels {reduces}"


@suite.case
def selections_at_scattered_positions():
    """Nearest Resize to sizes that are no multiple (14 -> 35 rows: each row read 2-3 times,
    14 -> 9 columns) and constant-index Gathers of many scattered channels / columns: positions
    known at compile time in more than a few runs are one Gather each (lowering.cc
    gather_positions). They were a one-hot reduction over the whole input row (13x
    onnxruntime) or dozens of slices joined, a select and a load per slice for every element
    (a Gather of 256 channels: 222x); the dump has no reduce kernel and no kernel loads more
    than the index and one element."""
    x = randn(1, 24, 14, 14)
    chans = RNG.integers(0, 24, 40).astype(np.int64)
    cols = RNG.permutation(14).astype(np.int64)
    for ctm, nearest, sizes in (("half_pixel", "round_prefer_floor", [1, 24, 35, 9]),
                                ("asymmetric", "floor", [1, 24, 21, 33]),
                                ("align_corners", "ceil", [1, 24, 9, 20])):
        m = model([h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest", nearest_mode=nearest,
                               coordinate_transformation_mode=ctm)],
                  {"x": x}, ["y"], [("sizes", np.array(sizes, np.int64))], opset=19)
        check(m, {"x": x}, rtol=0, atol=0)
        if not lib.opencl_target():
            _assert_one_read_per_element(_kernels(WORK / f"m{_count[0]}.onnx", f"scattered_{_count[0]}"), f"{ctm} {sizes}")
    for axis, idx in ((1, chans), (3, cols)):
        m = model([h.make_node("Gather", ["x", "i"], ["y"], axis=axis)], {"x": x}, ["y"], [("i", idx)])
        check(m, {"x": x}, rtol=0, atol=0)
        if not lib.opencl_target():
            _assert_one_read_per_element(_kernels(WORK / f"m{_count[0]}.onnx", f"scattered_{_count[0]}"), f"Gather axis {axis}")


def _assert_one_read_per_element(kernels, what):
    for name, text in kernels.items():
        loads = text.count("= load ")
        assert " reduce " not in text and loads <= 2, f"{what}: {name} reduces or loads {loads} times:\n{text[:600]}"


@suite.case
def upsample_after_conv_into_output():
    """A segmentation head: a 1x1 conv (stored channels-last on CPU targets) upsampled by Resize
    straight into the model output (NCHW), as DeepLabV3 and FCN end: bilinear by 8 with
    pytorch_half_pixel sizes, by 16 on 21 classes, align_corners, cubic to sizes that are no
    multiple, nearest. The CPU targets store the first (width) pass NCHW, so that the second pass
    reads rows instead of gathering every output across the channels."""
    c = 5
    feeds = {"x": randn(1, 8, 9, 7)}
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["f"]), h.make_node("Conv", ["x", "w21"], ["f21"])]
    inits = [("w", randn(c, 8, 1, 1, scale=0.4)), ("b", randn(c, scale=0.1)), ("w21", randn(21, 8, 1, 1, scale=0.4))]
    #          input, attributes, scales or sizes
    configs = (("f", dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), "sizes", [1, c, 72, 56]),
               ("f21", dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), "scales", [1, 1, 16, 16]),
               ("f", dict(mode="linear", coordinate_transformation_mode="align_corners"), "scales", [1, 1, 4, 4]),
               ("f", dict(mode="cubic"), "sizes", [1, c, 20, 17]),
               ("f", dict(mode="nearest"), "scales", [1, 1, 2, 2]))
    outs = []
    for i, (src, attrs, kind, value) in enumerate(configs):
        if kind == "scales":
            inits.append((f"s{i}", np.array(value, np.float32)))
            names = [src, "", f"s{i}"]
        else:
            inits.append((f"s{i}", np.array(value, np.int64)))
            names = [src, "", "", f"s{i}"]
        nodes.append(h.make_node("Resize", names, [f"y{i}"], **attrs))
        outs.append(f"y{i}")
    m = model(nodes, feeds, outs, inits, opset=19)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    # No kernel stores a width pass channels-last: (1, H, W', C) with W' an upsampled width.
    widths = {56, 7 * 16, 7 * 4, 17}
    for name, text in _kernels(WORK / f"m{_count[0]}.onnx", "upsample").items():
        dims = [int(d) for d in text.split("out[", 1)[1].split("]", 1)[0].split(",")]
        assert not (len(dims) == 4 and dims[3] in (c, 21) and dims[2] in widths), \
            f"{name} stores a width pass channels-last: {text.splitlines()[0]}"


@suite.case
def einsum_forms():
    for eq, shapes in [("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
                       ("ij,ij->", [(3, 4), (3, 4)]), ("i,j->ij", [(3,), (4,)]), ("iij->ji", [(3, 3, 2)])]:
        feeds = {f"x{i}": randn(*s) for i, s in enumerate(shapes)}
        check(model([h.make_node("Einsum", list(feeds), ["y"], equation=eq)], feeds, ["y"], opset=13), feeds)


@suite.case
def einsum_matrix_products():
    """Two-operand Einsums that are batched matrix products lowered as MatMul (ops_nn.cc
    einsum_as_matmul): batch labels in any position, several row / column / summed labels,
    an output in another order, a constant second operand, batch dims of 1 that broadcast (left
    to the generic multiply and sum), against onnxruntime. On the CPU targets attention's
    "bhqd,bhkd->bhqk" copies K into (d, k) order, as MatMul does: the product's loads of it
    run along the output's last dim (as a multiply and sum it read K across its rows, 42
    GFLOP/s against 77, 1.9x onnxruntime's time at 2 x 400 x 400 x 192)."""
    d = 24
    forms = [("bhqd,bhkd->bhqk", [(1, 2, 40, d), (1, 2, 48, d)], False),
             ("bhqk,bhkd->bhqd", [(1, 3, 20, 36), (1, 3, 36, 16)], False),
             ("bnc,cd->bnd", [(2, 30, 40), (40, 24)], True),
             ("ij,jk->ki", [(17, 9), (9, 13)], False),
             ("nchw,kc->nkhw", [(2, 16, 5, 6), (8, 16)], True),
             ("abcd,acde->abe", [(2, 7, 3, 4), (2, 3, 4, 5)], False),
             ("bij,xjk->bxik", [(2, 5, 6), (3, 6, 4)], False),
             ("bij,bjk->bik", [(1, 5, 6), (3, 6, 4)], False)]
    for i, (eq, shapes, const_b) in enumerate(forms):
        feeds = {"x0": randn(*shapes[0])}
        inits = [("x1", randn(*shapes[1]))] if const_b else []
        if not const_b:
            feeds["x1"] = randn(*shapes[1])
        check(model([h.make_node("Einsum", ["x0", "x1"], ["y"], equation=eq)], feeds, ["y"], inits, opset=13), feeds,
              rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    feeds = {"q": randn(1, 2, 64, d), "k": randn(1, 2, 64, d)}
    m = model([h.make_node("Einsum", ["q", "k"], ["y"], equation="bhqd,bhkd->bhqk")], feeds, ["y"], opset=13)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "einsum_qk")
    product = next(text for name, text in kernels.items() if "reduce" in text)
    assert f"{d}*v3" not in product.replace(" ", ""), f"the product reads K across its rows:\n{product}"


@suite.case
def grid_sample_modes(modes=("bilinear", "nearest")):
    # bicubic + border differs between onnxruntime and the ONNX reference; edgec follows the
    # reference (the node tests), so that combination is left out here.
    for mode in modes:
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                if mode == "bicubic" and pad == "border":
                    continue
                feeds = {"x": randn(2, 3, 5, 7), "grid": (RNG.random((2, 4, 6, 2)) * 3.4 - 1.7).astype(np.float32)}
                node = h.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=pad, align_corners=align)
                check(model([node], feeds, ["y"], opset=16), feeds, atol=1e-4)


@suite.case
def grid_sample_bicubic():
    # A case of its own: its OpenCL programs are the slowest of the suite to build cold, and
    # ctest runs the suite's cases in two shards (EDGE_SUITE_SHARD).
    grid_sample_modes(("bicubic",))


@suite.case
def attention_opset23():
    def run(feeds, outs=("y",), **attrs):
        names = list(feeds)
        present = {k: v for k, v in feeds.items() if v is not None}
        node = h.make_node("Attention", [n if feeds[n] is not None else "" for n in names], list(outs), **attrs)
        check(model([node], present, [o for o in outs if o], opset=23), present, atol=1e-4)
    run({"q": randn(2, 4, 5, 8), "k": randn(2, 4, 6, 8), "v": randn(2, 4, 6, 8)})
    run({"q": randn(2, 5, 32), "k": randn(2, 5, 16), "v": randn(2, 5, 16)}, q_num_heads=4, kv_num_heads=2)
    run({"q": randn(1, 2, 5, 8), "k": randn(1, 2, 5, 8), "v": randn(1, 2, 5, 8)}, is_causal=1)
    run({"q": randn(1, 2, 5, 8), "k": randn(1, 2, 6, 8), "v": randn(1, 2, 6, 8), "m": RNG.random((5, 6)) > 0.3})
    for mode in range(4):
        run({"q": randn(1, 2, 5, 8), "k": randn(1, 2, 6, 8), "v": randn(1, 2, 6, 8), "m": randn(1, 1, 5, 6)},
            outs=("y", "", "", "qk"), qk_matmul_output_mode=mode, softcap=3.0, scale=0.3)
    run({"q": randn(1, 2, 3, 8), "k": randn(1, 2, 3, 8), "v": randn(1, 2, 3, 8), "m": None,
         "pk": randn(1, 2, 4, 8), "pv": randn(1, 2, 4, 8)}, outs=("y", "pk_out", "pv_out"), is_causal=1)


@suite.case
def rotary_embedding_and_rms_norm():
    feeds = {"x": randn(2, 3, 5, 8), "c": randn(16, 2), "s": randn(16, 2), "p": RNG.integers(0, 16, (2, 5)).astype(np.int64)}
    node = h.make_node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"], rotary_embedding_dim=4)
    check(model([node], feeds, ["y"], opset=23), feeds)
    feeds = {"x": randn(2, 5, 24), "c": randn(2, 5, 4), "s": randn(2, 5, 4)}
    node = h.make_node("RotaryEmbedding", ["x", "c", "s"], ["y"], interleaved=1, num_heads=3)
    check(model([node], feeds, ["y"], opset=23), feeds)
    feeds = {"x": randn(2, 5, 8), "s": randn(5, 8)}
    check(model([h.make_node("RMSNormalization", ["x", "s"], ["y"], axis=1)], feeds, ["y"], opset=23), feeds)


@suite.case
def cast_matrix():
    """Every cast between 9 types, exact: one model per source type with a Cast to each
    destination (input x_<to>, output y_<to>), so an OpenCL run builds 9 programs, not 81."""
    types = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_]
    vals = np.array([0, 1, -1, 2.5, -2.5, 3.75, -3.75, 100.4, 127, -128, 0.49, 65, 7, 1e-3, 200], np.float64)
    for a in types:
        if a == np.bool_:
            x = vals != 0
        elif np.issubdtype(a, np.integer):
            x = np.clip(np.trunc(vals), np.iinfo(a).min, np.iinfo(a).max).astype(a)
        else:
            x = vals.astype(a)
        nodes, feeds, outputs = [], {}, []
        for b in types:
            if np.issubdtype(b, np.integer) and not (np.issubdtype(a, np.integer) or a == np.bool_):
                info = np.iinfo(b)  # float -> int outside the range is undefined: leave it out
                x_in = x[(x.astype(np.float64) > info.min - 1) & (x.astype(np.float64) < info.max + 1)]
            else:
                x_in = x
            to = h.np_dtype_to_tensor_dtype(np.dtype(b))
            name = np.dtype(b).name
            nodes.append(h.make_node("Cast", [f"x_{name}"], [f"y_{name}"], to=to))
            feeds[f"x_{name}"] = x_in
            outputs.append((f"y_{name}", to))
        m = model(nodes, feeds, outputs, opset=19)
        check(m, feeds, rtol=0, atol=0)


@suite.case
def saturating_float_to_int_casts():
    """Float -> integer casts past the destination's range, which ONNX leaves undefined: edgec
    saturates (NaN to 0, clamped to the type's range, README "Numerics") on every target.
    Against Python integers on the same rule: NaN, +-inf, the ends of each range and the
    floats next to them (2^31 - 128, the largest float below 2^31), float32 and float64
    sources, to int32 / int64 / uint32 / uint64 / int8 / uint8. On x86 the 32 / 64-bit
    casts are written out as vector selects (LLVM scalarized its fptosi.sat, lane by lane
    with a branch each: 3.3x onnxruntime's time on a Cast of 800K floats)."""
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.75, -0.75, 255.5, -128.9, 127.9, 65535.0, 2.0 ** 31, -2.0 ** 31,
                2.0 ** 31 - 128, -2.0 ** 31 - 256, 2.0 ** 32, 2.0 ** 32 - 256, 3e9, -3e9, 2.0 ** 63, -2.0 ** 63,
                2.0 ** 64, 1e19, -1e19, 1e30, -1e30, 123456789.0, -987654321.0]
    for src in (np.float32, np.float64):
        x = np.array(specials * 3, src)  # 84 values: whole vectors and a ragged tail
        nodes, outputs, expected = [], [], {}
        for dst in (np.int32, np.int64, np.uint32, np.uint64, np.int8, np.uint8):
            info = np.iinfo(dst)
            name = np.dtype(dst).name
            nodes.append(h.make_node("Cast", ["x"], [f"y_{name}"], to=h.np_dtype_to_tensor_dtype(np.dtype(dst))))
            outputs.append((f"y_{name}", h.np_dtype_to_tensor_dtype(np.dtype(dst))))
            want = [0 if np.isnan(v) else min(max(int(np.trunc(v)) if np.isfinite(v) else (info.max if v > 0 else info.min),
                                                  int(info.min)), int(info.max)) for v in x.astype(np.float64)]
            expected[f"y_{name}"] = np.array(want, dst)
        _count[0] += 1
        m = model(nodes, {"x": x}, outputs, opset=19)
        actual = lib.compile_and_run(m, {"x": x}, WORK, name=f"m{_count[0]}")
        for name, want in expected.items():
            bad = np.flatnonzero(actual[name] != want)
            assert not len(bad), (f"{np.dtype(src).name} -> {name[2:]}: {len(bad)} differ, first x={x[bad[0]]!r}: "
                                  f"got {actual[name][bad[0]]}, want {want[bad[0]]}")
        if lib.target_family("x86_64"):
            ir = _llvm_ir(m, f"saturating_casts_{np.dtype(src).name}")
            assert "fptosi.sat" not in ir and "fptoui.sat" not in ir, "x86 code casts through LLVM's fpto[su]i.sat"


@suite.case
def float16_versions_of_new_ops():
    """Each op in float16 against float32 onnxruntime on the same (float16) values."""
    cases = [
        ("ConvTranspose", [(1, 4, 5, 5)], dict(strides=[2, 2], pads=[1, 1, 1, 1]), [("w", randn(4, 3, 3, 3, scale=0.3))], 18),
        ("Resize", [(1, 3, 6, 6)], dict(mode="cubic"), [("roi", np.zeros(0, np.float32)), ("scales", np.array([1, 1, 1.5, 1.5], np.float32))], 18),
        ("GridSample", [(1, 3, 5, 6), (1, 4, 4, 2)], dict(mode="bilinear"), [], 16),
        ("LpPool", [(1, 2, 6, 6)], dict(kernel_shape=[3, 3], p=3), [], 18),
        ("GroupNormalization", [(2, 4, 3, 3)], dict(num_groups=2), [("s", np.ones(4, np.float32)), ("b", np.zeros(4, np.float32))], 21),
        ("CumSum", [(3, 7)], {}, [("axis", np.array(1, np.int64))], 18),
        ("Einsum", [(2, 3, 4), (2, 4, 5)], dict(equation="bij,bjk->bik"), [], 18),
        ("Atan", [(50,)], {}, [], 18),
        ("Mish", [(50,)], {}, [], 18),
        ("DFT", [(2, 8, 1)], dict(onesided=1), [], 17),
        ("Attention", [(1, 2, 6, 8), (1, 2, 6, 8), (1, 2, 6, 8)], dict(is_causal=1), [], 23),
    ]
    for op, shapes, attrs, inits, opset in cases:
        feeds32 = {f"x{i}": randn(*s, scale=0.5 if op == "GridSample" and i else 1.0) for i, s in enumerate(shapes)}
        feeds16 = {k: v.astype(np.float16) for k, v in feeds32.items()}
        names = list(feeds16) + [n for n, _ in inits]
        init16 = [(n, v.astype(np.float16) if v.dtype == np.float32 else v) for n, v in inits]
        m16 = model([h.make_node(op, names, ["y"], **attrs)], feeds16, ["y"], init16, opset=opset)
        m32 = model([h.make_node(op, names, ["y"], **attrs)], {k: v.astype(np.float32) for k, v in feeds16.items()},
                    ["y"], [(n, v.astype(np.float32) if v.dtype == np.float16 else v) for n, v in init16], opset=opset)
        check(m16, feeds16, rtol=1e-2, atol=1e-2, ref_model=m32,
              ref_feeds={k: v.astype(np.float32) for k, v in feeds16.items()}, scale_tol=True)


@suite.case
def batched_products_with_transposed_operands():
    """Matrix products whose second operand is computed and read across its rows (the K^T of
    attention), which edgec copies into (..., K, N) rows first from 16 rows per product on
    where N fills its vectors: remainders in M, N and K, broadcast batch dims, the
    transformer's head split (slice -> reshape -> transpose), a scaled K^T (opset-23
    Attention), Gemm transB; and the ones it leaves as they are (few rows, swin_t's 49
    columns, V read along its rows). Its own random numbers: drawing from
    RNG would change every later case's inputs (dynamic_quantize_lstm fails on some)."""
    rng = np.random.default_rng(22)
    randn = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    mm = lambda a, b, y: h.make_node("MatMul", [a, b], [y])  # noqa: E731
    tr = lambda x, y, perm: h.make_node("Transpose", [x], [y], perm=perm)  # noqa: E731
    for bh, m, n, k in [(3, 19, 30, 13), (2, 16, 15, 8), (4, 33, 29, 24), (2, 4, 10, 6), (3, 49, 49, 32)]:
        feeds = {"q": randn(bh, m, k), "k": randn(bh, n, k)}
        check(model([tr("k", "kt", [0, 2, 1]), mm("q", "kt", "y")], feeds, ["y"]), feeds, atol=1e-4)
    # Broadcast batch dims: q (2, 1, M, K) against K^T of (3, N, K) -> (2, 3, M, N); and a
    # shared K^T (N, K) -> (K, N) for every batch entry.
    feeds = {"q": randn(2, 1, 18, 7), "k": randn(3, 14, 7)}
    check(model([tr("k", "kt", [0, 2, 1]), mm("q", "kt", "y")], feeds, ["y"]), feeds, atol=1e-4)
    feeds = {"q": randn(3, 20, 5), "k": randn(15, 5)}
    check(model([h.make_node("Relu", ["k"], ["kr"]), tr("kr", "kt", [1, 0]), mm("q", "kt", "y")], feeds, ["y"]),
          feeds, atol=1e-4)
    # The transformer's self-attention: one (S, 3E) projection, K's heads split off by
    # slice -> reshape -> transpose, scores, softmax, times V (S = 29, E = 24, 3 heads of 8).
    s_len, e, heads = 29, 24, 3
    qkv = "qkv"
    feeds = {qkv: randn(s_len, 3 * e)}
    inits = [(f"{x}_{i}", np.array(v, np.int64)) for i, (x, v) in enumerate(
        [("st", [0]), ("en", [e]), ("st", [e]), ("en", [2 * e]), ("st", [2 * e]), ("en", [3 * e])])]
    inits += [("ax", np.array([1], np.int64)), ("heads", np.array([s_len, heads, e // heads], np.int64))]
    nodes = []
    for i, part in enumerate("qkv"):
        nodes += [h.make_node("Slice", [qkv, f"st_{2 * i}", f"en_{2 * i + 1}", "ax"], [f"{part}2"]),
                  h.make_node("Reshape", [f"{part}2", "heads"], [f"{part}3"]),
                  tr(f"{part}3", f"{part}h", [1, 0, 2])]
    nodes += [tr("kh", "kt", [0, 2, 1]), mm("qh", "kt", "scores"),
              h.make_node("Softmax", ["scores"], ["p"], axis=-1), mm("p", "vh", "y")]
    check(model(nodes, feeds, ["scores", "y"], inits), feeds, atol=1e-4)
    # Gemm with a computed B read transposed, and opset-23 Attention's scaled K^T at 18 queries.
    feeds = {"a": randn(20, 9), "b": randn(14, 9)}
    check(model([h.make_node("Tanh", ["b"], ["bt"]), h.make_node("Gemm", ["a", "bt"], ["y"], transB=1)],
                feeds, ["y"]), feeds, atol=1e-4)
    feeds = {"q": randn(1, 2, 18, 8), "k": randn(1, 2, 30, 8), "v": randn(1, 2, 30, 8)}
    check(model([h.make_node("Attention", ["q", "k", "v"], ["y"])], feeds, ["y"], opset=23), feeds, atol=1e-4)


@suite.case
def transposes_in_register_blocks():
    """Transposes whose output vectors read the source across its rows, which the CPU code
    loads as rows along another output dim and transposes in registers: remainders along both
    dims, a transposed operand fused with a contiguous one, int32, 3 threads; the LLVM IR of
    the NHWC -> NCHW copy has no gather (the element-by-element form it replaces)."""
    if lib.opencl_target():
        return  # a CPU code path (OpenCL Transposes: the conformance run)
    rng = np.random.default_rng(23)  # not RNG: later cases keep their inputs
    cases = [((1, 19, 13, 37), [0, 3, 1, 2], np.float32), ((1, 37, 13, 19), [0, 2, 3, 1], np.float32),
             ((33, 17), [1, 0], np.int32), ((3, 8, 16, 5), [0, 3, 2, 1], np.float32)]
    for i, (shape, perm, dtype) in enumerate(cases):
        feeds = {"x": (rng.standard_normal(shape) * 100).astype(dtype)}
        m = model([h.make_node("Transpose", ["x"], ["y"], perm=perm)], feeds, ["y"])
        want = lib.ort_run(m, feeds)["y"]
        for threads in (1, 3):
            got = lib.compile_and_run(m, feeds, WORK, name=f"transpose{i}_{threads}", threads=threads)["y"]
            assert np.array_equal(got, want), f"Transpose{perm} of {shape} ({threads} threads)"
    feeds = {"x": rng.standard_normal((2, 24, 41)).astype(np.float32),
             "y": rng.standard_normal((2, 41, 24)).astype(np.float32)}
    check(model([h.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]), h.make_node("Add", ["xt", "y"], ["s"]),
                 h.make_node("Relu", ["s"], ["r"])], feeds, ["r"]), feeds, rtol=0, atol=0)
    if lib.target_family("hexagon"):
        return  # hexagon-v65's HVX has no float lanes
    feeds = {"x": np.zeros((1, 20, 20, 64), np.float32)}
    m = model([h.make_node("Transpose", ["x"], ["y"], perm=[0, 3, 1, 2])], feeds, ["y"])
    assert "masked.gather" not in _llvm_ir(m, "nhwc_to_nchw"), "the NHWC -> NCHW copy gathers its elements"


@suite.case
def padded_transposes_in_register_blocks():
    """A transposing copy with a zero border (the padded channels-last copy of an NCHW input
    that a 5x5 depthwise conv reads; here Transpose + Pad): its rows are loaded masked by the
    border tests and transposed in registers, not gathered element by element (that copy
    took 3x the conv's time: tests/bench/op_cliffs.py dw5x5_s2_c72_112). Channels off the
    vector width, odd sizes, uneven pads, batch 2; 3 threads give the same bits; the LLVM IR
    has no gather."""
    rng = np.random.default_rng(29)  # not RNG: later cases keep their inputs
    feeds = {"x": rng.standard_normal((2, 19, 13, 11)).astype(np.float32)}
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]), h.make_node("Pad", ["t", "pads"], ["y"])]
    m = model(nodes, feeds, ["y"], [("pads", np.array([0, 2, 1, 0, 0, 3, 2, 0], np.int64))])
    want = lib.ort_run(m, feeds)["y"]
    for threads in (1, 3):
        got = lib.compile_and_run(m, feeds, WORK, name=f"padded_transpose_{threads}", threads=threads)["y"]
        assert np.array_equal(got, want), f"Transpose + Pad ({threads} threads)"
    if lib.opencl_target() or lib.target_family("hexagon"):
        return  # no LLVM IR; hexagon-v65's HVX has no float lanes
    assert "masked.gather" not in _llvm_ir(m, "padded_transpose"), "the padded NCHW -> NHWC copy gathers its elements"


def check_fp16(nodes, feeds16, outputs, inits16=(), rtol=1e-2, atol=1e-2, opset=18):
    """The float16 model against onnxruntime on the same model in float32, fed the same
    (float16) values upcast: the exact sums of the float16 numbers, not another float16 code."""
    up = lambda v: v.astype(np.float32) if v.dtype == np.float16 else v  # noqa: E731
    m16 = model(nodes, feeds16, outputs, inits16, opset=opset)
    nodes32 = []
    for n in nodes:  # a Cast to float16 casts to float32 in the reference
        n32 = onnx.NodeProto()
        n32.CopyFrom(n)
        for a in n32.attribute:
            if n32.op_type == "Cast" and a.name == "to" and a.i == TP.FLOAT16:
                a.i = TP.FLOAT
        nodes32.append(n32)
    m32 = model(nodes32, {k: up(v) for k, v in feeds16.items()}, outputs, [(n, up(v)) for n, v in inits16], opset=opset)
    check(m16, feeds16, rtol=rtol, atol=atol, ref_model=m32, ref_feeds={k: up(v) for k, v in feeds16.items()})


@suite.case
def float16_long_sums_convs_and_math():
    """float16 models where aarch64-fp16 computes in half (llvm_emit.cc kHalfBlock); on
    the other CPU targets they compute in float. Long sums of positive terms: a half
    accumulator stalls once the sum's half ulp exceeds a term (about 0.5 for the MatMul,
    2048 for the ReduceMean's sum), so these fail unless the sums are kept short in half.
    Convs with padding, stride and ragged widths (8 half lanes per vector), a softmax over
    1000, and elementwise math with a ragged tail (transcendentals in float, the rest in half)."""
    u = lambda lo, hi, *shape: RNG.uniform(lo, hi, shape).astype(np.float16)  # noqa: E731
    k = 4096
    check_fp16([h.make_node("MatMul", ["x", "w"], ["y"])], {"x": u(0.5, 1.5, 2, 5, k)}, ["y"],
               [("w", u(0, 2 / k, k, 19))], rtol=5e-3, atol=1e-3)
    check_fp16([h.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)], {"x": u(0, 2, 3, 3000)}, ["y"],
               rtol=5e-3, atol=1e-3, opset=13)
    check_fp16([h.make_node("Softmax", ["x"], ["y"], axis=-1)], {"x": randn(4, 1000, dtype=np.float16)}, ["y"],
               rtol=1e-2, atol=1e-5)
    c = 32
    nodes = [h.make_node("Conv", ["x", "w0", "b0"], ["a"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["a"], ["r"]),
             h.make_node("Conv", ["r", "wd"], ["d"], group=c, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             h.make_node("Conv", ["d", "wp", "bp"], ["p"]),
             h.make_node("MaxPool", ["p"], ["mp"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             h.make_node("GlobalAveragePool", ["mp"], ["g"])]
    inits = [("w0", randn(c, 3, 3, 3, scale=0.3, dtype=np.float16)), ("b0", randn(c, scale=0.1, dtype=np.float16)),
             ("wd", randn(c, 1, 3, 3, scale=0.3, dtype=np.float16)),
             ("wp", randn(24, c, 1, 1, scale=c ** -0.5, dtype=np.float16)), ("bp", randn(24, scale=0.1, dtype=np.float16))]
    check_fp16(nodes, {"x": randn(1, 3, 21, 19, dtype=np.float16)}, ["p", "mp", "g"], inits, rtol=1e-2, atol=1e-2)
    nodes = [h.make_node("Erf", ["x"], ["erf"]), h.make_node("Tanh", ["x"], ["tanh"]),
             h.make_node("Sigmoid", ["x"], ["sig"]), h.make_node("Div", ["x", "y"], ["div"]),
             h.make_node("Sqrt", ["y"], ["sqrt"]), h.make_node("Pow", ["y", "x"], ["pow"]),
             h.make_node("Max", ["x", "y"], ["max"]), h.make_node("Exp", ["x"], ["exp"]),
             h.make_node("Mul", ["x", "y"], ["xy"]), h.make_node("Add", ["xy", "x"], ["fma"]),
             h.make_node("Cast", ["x"], ["i"], to=TP.INT32), h.make_node("Cast", ["i"], ["back"], to=TP.FLOAT16),
             h.make_node("Cast", ["x"], ["f32"], to=TP.FLOAT)]
    outs = ["erf", "tanh", "sig", "div", "sqrt", "pow", "max", "exp", "fma", ("i", TP.INT32), "back", ("f32", TP.FLOAT)]
    check_fp16(nodes, {"x": randn(3, 45, scale=2.0, dtype=np.float16), "y": u(0.25, 4, 3, 45)}, outs,
               rtol=5e-3, atol=2e-3)


@suite.case
def gather_with_run_time_indices():
    """GatherElements and Gather whose indices are graph inputs (the data-dependent load):
    negative indices, a long (1000) gathered axis, int32 and int64 indices, float / int / bool
    data, every axis, scalar and 2-d Gather indices, smaller-than-data GatherElements indices."""
    for itype in (np.int64, np.int32):
        # GatherElements over a 1000-long axis, negative indices included.
        x = randn(3, 1000)
        idx = RNG.integers(-1000, 1000, size=(3, 1000)).astype(itype)
        feeds = {"x": x, "i": idx}
        check(model([h.make_node("GatherElements", ["x", "i"], ["y"], axis=1)], feeds, ["y"]), feeds)
        # Along axis 0 of a 3-d tensor, indices smaller than the data in every dim.
        x = randn(5, 4, 7)
        idx = RNG.integers(-5, 5, size=(3, 2, 6)).astype(itype)
        feeds = {"x": x, "i": idx}
        check(model([h.make_node("GatherElements", ["x", "i"], ["y"], axis=0)], feeds, ["y"]), feeds)
        # int and bool data along the last axis.
        for data in (RNG.integers(-100, 100, size=(4, 9)).astype(np.int32), RNG.random((4, 9)) < 0.5):
            idx = RNG.integers(-9, 9, size=(4, 13)).astype(itype)
            feeds = {"x": data, "i": idx}
            check(model([h.make_node("GatherElements", ["x", "i"], ["y"], axis=1)], feeds, ["y"]), feeds)
        # Gather: 1-d, 2-d and scalar indices, each axis, a 1000-long axis.
        for shape, axis, ishape in (((1000, 8), 0, (37,)), ((6, 1000), 1, (4, 5)), ((3, 5, 7), 1, ()),
                                    ((3, 5, 7), 2, (2, 3)), ((3, 5, 7), 0, (9,))):
            dim = shape[axis]
            x = randn(*shape)
            idx = np.array(RNG.integers(-dim, dim, size=ishape)).astype(itype)
            feeds = {"x": x, "i": idx}
            check(model([h.make_node("Gather", ["x", "i"], ["y"], axis=axis)], feeds, ["y"]), feeds)
        # Gather of a computed (not input) tensor, fused with arithmetic on the indices.
        x = randn(4, 50)
        idx = RNG.integers(0, 25, size=(10,)).astype(itype)
        feeds = {"x": x, "i": idx}
        two = np.array(2, itype)
        nodes = [h.make_node("Exp", ["x"], ["e"]), h.make_node("Mul", ["i", "two"], ["j"]),
                 h.make_node("Gather", ["e", "j"], ["y"], axis=1)]
        check(model(nodes, feeds, ["y"], [("two", two)]), feeds)


@suite.case
def gather_nd_and_grid_sample_3d():
    """GatherND with batch_dims 0 and 1, full and partial index depth, negative indices; 3-D
    GridSample (opset 20), the shapes the Gather primitive flattens."""
    for batch_dims, dshape, ishape in ((0, (4, 5, 6), (3, 2)), (0, (4, 5, 6), (2, 3, 3)),
                                       (1, (3, 5, 6), (3, 4, 1)), (1, (3, 5, 6, 2), (3, 2, 2))):
        data = randn(*dshape)
        depth = ishape[-1]
        dims = dshape[batch_dims:batch_dims + depth]
        idx = np.stack([RNG.integers(-d, d, size=ishape[:-1]) for d in dims], axis=-1).astype(np.int64)
        feeds = {"x": data, "i": idx}
        check(model([h.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)], feeds, ["y"]), feeds)
    for mode in ("linear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            feeds = {"x": randn(1, 2, 4, 5, 6), "grid": (RNG.random((1, 3, 4, 5, 3)) * 3.0 - 1.5).astype(np.float32)}
            node = h.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=pad, align_corners=0)
            check(model([node], feeds, ["y"], opset=20), feeds, atol=1e-4)


@suite.case
def integer_division_edges():
    # INT_MIN / -1 traps on x86 (idiv) and onnxruntime does not define it: the reference is
    # C's truncating division in Python integers, wrapped to the type (INT_MIN / -1 = INT_MIN).
    for dtype, bits in ((np.int32, 32), (np.int64, 64)):
        lo = -(1 << (bits - 1))
        a = np.array([lo, lo, lo + 1, 7, -7, 7, -7, 0, 5, lo], dtype=dtype)
        b = np.array([-1, 1, -1, 2, 2, -2, -2, 3, -1, 2], dtype=dtype)

        def cdiv(x, y):
            q = abs(x) // abs(y)
            q = q if (x < 0) == (y < 0) else -q
            return ((q - lo) % (1 << bits)) + lo

        want = np.array([cdiv(int(x), int(y)) for x, y in zip(a, b)], dtype=dtype)
        m = model([h.make_node("Div", ["a", "b"], ["q"])], {"a": a, "b": b}, ["q"])
        _count[0] += 1
        got = lib.compile_and_run(m, {"a": a, "b": b}, WORK, name=f"m{_count[0]}")["q"]
        assert got.dtype == want.dtype and np.array_equal(got, want), f"{dtype.__name__}: {got} != {want}"


@suite.case
def sigmoid_and_silu_at_the_extremes():
    # Sigmoid's exp has its own range handling (llvm_emit.cc exp_saturating): at and past
    # the clamps, infinities and NaN, in vectors and the scalar tail, alone, as SiLU
    # x * sigmoid(x) and in a Swish with a slope. The reference is numpy in float64:
    # onnxruntime's own approximation returns 0 already for sigmoid(-20) = 2.06e-9.
    edges = [-np.inf, -1e30, -1e4, -100.0, -89.0, -88.8, -88.7, -88.4, -88.3, -87.5, -87.34, -87.3, -50.0,
             -20.0, -1.0, -1e-8, 0.0, 1e-8, 1.0, 20.0, 50.0, 87.3, 87.34, 87.5, 88.3, 88.4, 88.7, 88.8, 89.0,
             100.0, 1e4, 1e30, np.inf, np.nan, -0.0, 3.0, -3.0]
    k = np.float32(1.702)
    nodes = [h.make_node("Sigmoid", ["x"], ["s"]), h.make_node("Mul", ["x", "s"], ["silu"]),
             h.make_node("Mul", ["x", "k"], ["kx"]), h.make_node("Sigmoid", ["kx"], ["ks"]),
             h.make_node("Mul", ["x", "ks"], ["swish"])]
    for x in (np.array(edges, dtype=np.float32), randn(3, 40, 17, scale=30.0)):  # + many vectors, a ragged tail
        m = model(nodes, {"x": x}, ["s", "silu", "swish"], inits=[("k", np.array([k]))])
        _count[0] += 1
        got = lib.compile_and_run(m, {"x": x}, WORK, name=f"m{_count[0]}")
        x64 = x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            s64 = 1.0 / (1.0 + np.exp(-x64))
            ks64 = 1.0 / (1.0 + np.exp(-(x * k).astype(np.float64)))
            want = {"s": s64, "silu": x64 * s64, "swish": x64 * ks64}
        for name, w in want.items():
            g = got[name].astype(np.float64)
            # a few float32 ulps; a sigmoid below 1.2e-38 (denormal) may be flushed to 0
            with np.errstate(invalid="ignore"):
                tiny = 1.2e-38 * np.maximum(1.0, np.abs(np.nan_to_num(x64)))
                ok = np.isclose(g, w, rtol=3e-7, atol=tiny, equal_nan=True) | (g == w)
            bad = np.flatnonzero(~ok)
            assert bad.size == 0, f"{name}: x={x.ravel()[bad[:5]]}: got {g.ravel()[bad[:5]]}, want {w.ravel()[bad[:5]]}"


@suite.case
def softmax_exp_at_the_extremes():
    # Softmax's exp(x - max) takes llvm_emit.cc exp_nonpositive (no overflow handling; the
    # kernel dump says Exp_nonpositive): rows with -inf (masked attention), gaps past the
    # underflow (-87.3, -88.7, -104), huge magnitudes, a NaN row, in vectors and a ragged
    # tail, as Softmax, LogSoftmax and SoftmaxCrossEntropyLoss's log_prob. The reference is
    # numpy in float64.
    edges = np.array([[0.0, -np.inf, -87.3, -87.34, -87.5, -88.7, -90.0, -104.0, -1e30, 1.0, -1.0, 3.0],
                      [-np.inf, 5.0, -np.inf, -np.inf, 4.0, 80.0, -10.0, -7.5, 0.5, 2.0, -2.0, 1.0],
                      [1e30, -1e30, 1e38, -1e38, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                      [np.nan, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]], dtype=np.float32)
    nodes = [h.make_node("Softmax", ["x"], ["s"], axis=-1), h.make_node("LogSoftmax", ["x"], ["ls"], axis=-1)]
    for x in (edges, randn(6, 37, scale=40.0), randn(3, 2, 512, scale=10.0)):
        m = model(nodes, {"x": x}, ["s", "ls"])
        _count[0] += 1
        got = lib.compile_and_run(m, {"x": x}, WORK, name=f"m{_count[0]}")
        x64 = x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            shifted = x64 - x64.max(axis=-1, keepdims=True)
            e = np.exp(shifted)
            want = {"s": e / e.sum(axis=-1, keepdims=True), "ls": shifted - np.log(e.sum(axis=-1, keepdims=True))}
        for name, w in want.items():
            g = got[name].astype(np.float64)
            with np.errstate(invalid="ignore"):
                ok = np.isclose(g, w, rtol=1e-6, atol=1e-6, equal_nan=True) | (g == w)
            bad = np.flatnonzero(~ok)
            assert bad.size == 0, f"{name}: got {g.ravel()[bad[:5]]}, want {w.ravel()[bad[:5]]} at {bad[:5]}"
    if lib.opencl_target():
        return
    dump = WORK / "softmax_exp.kernels.txt"
    lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"m{_count[0]}.onnx", "-o", WORK / "softmax_exp.bundle",
                  "--dump-kernels", dump])
    exps = [line for line in dump.read_text().splitlines() if "Exp" in line and "=" in line]
    assert exps and all("Exp_nonpositive(" in line for line in exps), exps


@suite.case
def softmax_rows_in_one_kernel():
    # The CPU targets compute each Softmax / LogSoftmax along the innermost dim as one row
    # kernel (schedule.cc fuse_row_reductions, llvm_emit.cc emit_row_kernel): per row its
    # max, then exp(x - max) and their sum with the exps kept in the output row, then the
    # scale. Rows of 1 element, short ones, lengths that are no multiple of the vector width
    # (ragged, masked ends) and long ones, with -inf and huge entries in some rows, and along
    # other axes (axis 1 of NCHW, axis 0: three kernels each, as before); all in one model
    # (one compile). The reference is numpy in float64. Then 2 threads must give the same
    # bits as 1, and, on the CPU targets, the rows along the last axis must be one kernel
    # per operator.
    cases = [((6, 1), -1), ((5, 10), -1), ((3, 1000), -1), ((2, 49, 49), -1), ((1, 2, 197, 197), -1),
             ((2, 512), -1), ((2, 4096), -1), ((4, 37), -1), ((1, 21, 13, 17), 1), ((5, 7, 3), 0)]
    feeds, nodes, outs, want = {}, [], [], {}
    for i, (shape, axis) in enumerate(cases):
        x = randn(*shape, scale=5.0)
        if shape == (4, 37):
            x[0, ::3] = -np.inf                         # masked attention
            x[1, 5] = 1e30                              # one entry far above the rest
            x[2, :] = -1e30
            x[2, 36] = 3e38                             # the largest in the ragged tail
        feeds[f"x{i}"] = x
        x64 = x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            shifted = x64 - x64.max(axis=axis, keepdims=True)
            e = np.exp(shifted)
            total = e.sum(axis=axis, keepdims=True)
        for op, out, ref in (("Softmax", f"s{i}", e / total), ("LogSoftmax", f"l{i}", shifted - np.log(total))):
            nodes.append(h.make_node(op, [f"x{i}"], [out], axis=axis))
            outs.append(out)
            want[out] = ref
    # log(sum) is off by about the float sum's relative rounding error (a sum of 197 terms in
    # one scalar accumulator on hexagon-v65: 1.3e-6), absolutely: where it is near 0 as well.
    atol = {"s": 1e-6, "l": 1e-5}
    m = model(nodes, feeds, outs, opset=17)
    _count[0] += 1
    name = f"m{_count[0]}"
    got = lib.compile_and_run(m, feeds, WORK, name=name, threads=1)
    for out, w in want.items():
        g = got[out].astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = np.isclose(g, w, rtol=1e-5, atol=atol[out[0]], equal_nan=True) | (g == w)
        bad = np.flatnonzero(~ok)
        assert bad.size == 0, f"{out}: got {g.ravel()[bad[:5]]}, want {w.ravel()[bad[:5]]} at {bad[:5]}"
    two = lib.run_bundle(WORK / f"{name}.bundle", feeds, WORK / f"{name}_out2", outs, threads=2)
    for out in outs:
        assert np.array_equal(two[out], got[out], equal_nan=True), f"{out}: 2 threads differ from 1"
    if lib.opencl_target():
        return
    dump = WORK / "softmax_rows.kernels.txt"
    lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"{name}.onnx", "-o", WORK / "softmax_rows.bundle",
                  "--dump-kernels", dump])
    text = dump.read_text()
    kernels = text.count("\nkernel ") + text.startswith("kernel ")
    # A row of 1 element has no reduction (x - x): one plain elementwise kernel; the two
    # cases along another axis 3 kernels per operator.
    assert kernels == len(outs) + 2 * 2 * 2, f"{kernels} kernels for {len(outs)} softmaxes"
    assert text.count(" row stage 1:") == len(outs) - 2 - 2 * 2, text.count(" row stage 1:")


@suite.case
def batch_norm_training_outputs_before_opset_14():
    # Opsets 9-13 have no training_mode attribute: a BatchNormalization that names its
    # outputs after Y is in training mode, Y normalized with the batch's own statistics (what
    # onnxruntime computes). torch exports F.batch_norm(training=True) so: timm's weight-
    # standardized convs (ScaledStdConv2d, nf_regnet / nfnet) normalize each conv weight with
    # one, its 4 extra outputs read by nothing. Here a plain one over x (running mean / var and
    # the batch mean compared too; output 4 is left out: onnxruntime's is 1 / sqrt(var + eps),
    # the spec's the variance) and the weight-standardization pattern feeding a Conv.
    # Before: edgec failed ("output 1 exists only in training mode").
    x = randn(2, 4, 5, 5) + np.float32(0.5)
    c_out, c_in, k = 8, 4, 3
    inits = [("s", randn(4, scale=0.3) + np.float32(1)), ("b", randn(4)), ("m", randn(4)),
             ("v", np.abs(randn(4)) + np.float32(0.5)),
             ("w", randn(1, c_out, c_in * k * k)), ("ones", np.ones(c_out, np.float32)),
             ("zeros", np.zeros(c_out, np.float32)), ("w_shape", np.array([c_out, c_in, k, k], np.int64))]
    nodes = [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv", "sm", "sv"],
                         epsilon=1e-5, momentum=0.9),
             h.make_node("BatchNormalization", ["w", "ones", "zeros", "zeros", "ones"],
                         ["w_std", "w_rm", "w_rv", "w_sm", "w_sv"], epsilon=1e-5, momentum=1.0),
             h.make_node("Reshape", ["w_std", "w_shape"], ["w4"]),
             h.make_node("Conv", ["x", "w4"], ["conv"], pads=[1, 1, 1, 1])]
    feeds = {"x": x}
    check(model(nodes, feeds, ["y", "rm", "rv", "sm", "conv"], inits, opset=13), feeds, atol=1e-4)


@suite.case
def norm_rows_in_one_kernel():
    # The CPU targets compute LayerNormalization / RMSNormalization / InstanceNormalization
    # as one row kernel per operator (schedule.cc fuse_row_reductions, llvm_emit.cc
    # emit_row_kernel): per row the mean, then the variance of x - mean, then the normalized
    # and scaled row, while it is in cache. The row is the trailing dims, more than one where
    # the norm covers several (LayerNorm axis -2, InstanceNorm's H and W); a LayerNorm exported
    # op by op (its epsilon an initializer) too. Rows of 1, 7 (one
    # ragged vector), 768 and 4097 elements, rows whose mean is 1000 (values 1000 + N(0, 1):
    # a one-pass sum of squares would lose the variance), epsilons 1e-5 and 0.5, GroupNorm (its
    # groups read through a reshape, three kernels) in the same model. The reference is numpy
    # in float64. Then 3 threads must give the same bits as 1, and, on the CPU targets, each
    # LayerNorm / RMSNorm / InstanceNorm must be one kernel. CPU code only: OpenCL keeps a
    # kernel per statistic (the node tests cover it there).
    if lib.opencl_target():
        return
    cases = []  # (op, x shape, axis or groups, epsilon, mean of x)
    for n, eps, mean in ((1, 1e-5, 0.0), (7, 1e-5, 1000.0), (768, 1e-5, 1000.0), (4097, 0.5, 0.0)):
        cases.append(("LayerNormalization", (3, n), -1, eps, mean))
    cases += [("LayerNormalization", (2, 5, 7, 9), -2, 1e-5, 1000.0), ("LayerNormalization", (3, 4, 33), -2, 1e-5, 0.0),
              ("RMSNormalization", (4, 768), -1, 1e-5, 0.0), ("RMSNormalization", (3, 5, 7), -2, 0.5, 3.0),
              ("InstanceNormalization", (2, 3, 13, 17), None, 1e-5, 1000.0),
              ("GroupNormalization", (2, 6, 5, 7), 3, 1e-5, 1000.0),
              ("LayerNorm op by op", (4, 384), -1, 1e-5, 1000.0)]
    feeds, inits, nodes, outs, want = {}, [], [], [], {}
    for i, (op, shape, arg, eps, mean) in enumerate(cases):
        x = randn(*shape) + np.float32(mean)
        feeds[f"x{i}"] = x
        x64 = x.astype(np.float64)
        if op == "InstanceNormalization":
            axes, pshape = (2, 3), (shape[1],)
        elif op == "GroupNormalization":
            axes, pshape = None, (shape[1],)
        else:
            axes = tuple(range(len(shape) + arg, len(shape)))
            pshape = shape[len(shape) + arg:]
        scale, bias = (RNG.uniform(0.5, 1.5, pshape).astype(np.float32), randn(*pshape, scale=0.1))
        inits += [(f"s{i}", scale)] + ([] if op == "RMSNormalization" else [(f"b{i}", bias)])
        if op == "GroupNormalization":
            xg = x64.reshape(shape[0], arg, -1)
            y = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + eps)
            y = y.reshape(shape) * scale.reshape(-1, 1, 1) + bias.reshape(-1, 1, 1)
            node = h.make_node(op, [f"x{i}", f"s{i}", f"b{i}"], [f"y{i}"], num_groups=arg, epsilon=eps)
        elif op == "LayerNorm op by op":  # as torch.onnx exports it below opset 17, epsilon an initializer
            y = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + eps) * scale + bias
            inits += [(f"eps{i}", np.array(eps, np.float32)), (f"two{i}", np.array(2.0, np.float32)),
                      (f"last{i}", np.array([-1], np.int64))]
            t = f"t{i}_"
            nodes += [h.make_node("ReduceMean", [f"x{i}", f"last{i}"], [t + "mean"]),
                      h.make_node("Sub", [f"x{i}", t + "mean"], [t + "d"]),
                      h.make_node("Pow", [t + "d", f"two{i}"], [t + "sq"]),
                      h.make_node("ReduceMean", [t + "sq", f"last{i}"], [t + "var"]),
                      h.make_node("Add", [t + "var", f"eps{i}"], [t + "ve"]),
                      h.make_node("Sqrt", [t + "ve"], [t + "std"]),
                      h.make_node("Div", [t + "d", t + "std"], [t + "n"]),
                      h.make_node("Mul", [t + "n", f"s{i}"], [t + "ns"])]
            node = h.make_node("Add", [t + "ns", f"b{i}"], [f"y{i}"])
        elif op == "RMSNormalization":
            y = x64 / np.sqrt((x64 * x64).mean(axes, keepdims=True) + eps) * scale
            node = h.make_node(op, [f"x{i}", f"s{i}"], [f"y{i}"], axis=arg, epsilon=eps)
        else:
            y = (x64 - x64.mean(axes, keepdims=True)) / np.sqrt(x64.var(axes, keepdims=True) + eps)
            y = y * (scale.reshape(-1, 1, 1) if op == "InstanceNormalization" else scale) + \
                (bias.reshape(-1, 1, 1) if op == "InstanceNormalization" else bias)
            attrs = {} if op == "InstanceNormalization" else {"axis": arg}
            node = h.make_node(op, [f"x{i}", f"s{i}", f"b{i}"], [f"y{i}"], epsilon=eps, **attrs)
        nodes.append(node)
        outs.append(f"y{i}")
        want[f"y{i}"] = y
    m = model(nodes, feeds, outs, inits, opset=23)
    _count[0] += 1
    name = f"m{_count[0]}"
    got = lib.compile_and_run(m, feeds, WORK, name=name, threads=1)
    for out, w in want.items():
        g = got[out].astype(np.float64)
        err = np.abs(g - w).max()
        # The mean of float32 values near 1000 is off by ~1e-4 (onnxruntime: its InstanceNorm
        # 2.8e-4, its LayerNorm, which sums in float64, 1.5e-5 at 768 elements).
        tol = (5e-4 if cases[int(out[1:])][4] >= 1000 else 3e-6) * max(1.0, np.abs(w).max())
        assert err < tol, f"{out} ({cases[int(out[1:])][:2]}): max abs err {err:.3g}"
    three = lib.run_bundle(WORK / f"{name}.bundle", feeds, WORK / f"{name}_out3", outs, threads=3)
    for out in outs:
        assert np.array_equal(three[out], got[out]), f"{out}: 3 threads differ from 1"
    dump = WORK / "norm_rows.kernels.txt"
    lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"{name}.onnx", "-o", WORK / "norm_rows.bundle",
                  "--dump-kernels", dump])
    text = dump.read_text()
    kernels = text.count("\nkernel ") + text.startswith("kernel ")
    # A row of 1 element has no reduction (x - x): one plain kernel; GroupNorm 3 kernels.
    assert kernels == len(outs) + 2, f"{kernels} kernels for {len(outs)} norms"
    assert text.count(" row stage 0:") == len(outs) - 2, text.count(" row stage 0:")


@suite.case
def erf_at_the_extremes():
    # Erf's tail uses the same saturating exp (llvm_emit.cc exp_saturating) for e^(-x^2):
    # against Python's math.erf in float64 (the approximation's absolute error is < 1.5e-7).
    import math
    edges = np.array([-np.inf, -1e30, -100.0, -10.0, -9.4, -9.3, -5.0, -3.0, -0.5, -0.4999, -1e-8, 0.0, 1e-8,
                      0.5, 3.0, 9.3, 9.4, 10.0, 100.0, np.inf, np.nan, -0.0], dtype=np.float32)
    x = np.concatenate([edges, randn(1000, scale=4.0)])
    m = model([h.make_node("Erf", ["x"], ["y"])], {"x": x}, ["y"])
    _count[0] += 1
    got = lib.compile_and_run(m, {"x": x}, WORK, name=f"m{_count[0]}")["y"].astype(np.float64)
    want = np.array([math.erf(float(v)) if not np.isnan(v) else np.nan for v in x])
    assert np.allclose(got, want, rtol=0, atol=3e-7, equal_nan=True), f"max abs err {np.nanmax(np.abs(got - want)):.3g}"


@suite.case
def conv_chains_with_padding_at_every_width():
    """Chains of convs whose intermediates the CPU targets store channels-last and tile in
    registers: a 3-channel stem, depthwise, 2-channel grouped and channel-multiplier convs (border outputs
    are computed apart from the register tiles), max pooling, a conv writing a model output
    (NCHW) from channels-last data, widths from 1 (no output inside the padding) to wider
    than two tiles."""
    for width, k, stride, dil, pads in ((1, 3, 1, 1, [1, 1, 1, 1]), (2, 5, 1, 1, [2, 2, 2, 2]),
                                        (7, 3, 1, 2, [2, 1, 0, 2]), (19, 3, 2, 1, [1, 1, 1, 1]),
                                        (37, 5, 1, 1, [2, 0, 2, 3]), (40, 3, 1, 1, [1, 1, 1, 1])):
        c = 24
        nodes = [h.make_node("Conv", ["x", "w0", "b0"], ["s"], pads=[1, 1, 1, 1]),
                 h.make_node("Relu", ["s"], ["r"]),
                 h.make_node("Conv", ["r", "wd", "bd"], ["d"], group=c, kernel_shape=[k, k], strides=[stride] * 2,
                             dilations=[dil] * 2, pads=pads),
                 h.make_node("Conv", ["d", "wg"], ["g"], group=c // 2, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 h.make_node("MaxPool", ["g"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 h.make_node("Conv", ["p", "wp"], ["y"]),
                 # channel multipliers 2 (lanes read input channel m / 2) and 3
                 h.make_node("Conv", ["p", "wm2"], ["m2"], group=c, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                 h.make_node("Relu", ["m2"], ["m2r"]),  # m2 stays an intermediate (channels-last)
                 h.make_node("Conv", ["p", "wm3"], ["m3"], group=c, kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
        inits = [("w0", randn(c, 3, 3, 3, scale=0.5)), ("b0", randn(c)), ("wd", randn(c, 1, k, k, scale=0.5)),
                 ("bd", randn(c)), ("wg", randn(c, 2, 3, 3, scale=0.5)), ("wp", randn(8, c, 1, 1, scale=0.3)),
                 ("wm2", randn(2 * c, 1, 3, 3, scale=0.5)), ("wm3", randn(3 * c, 1, 3, 3, scale=0.5))]
        feeds = {"x": randn(1, 3, width + 3, width)}
        # d is also a model output: kept NCHW, computed from channels-last data.
        check(model(nodes, feeds, ["y", "d", "m2r", "m3"], inits), feeds, rtol=1e-4, atol=1e-4)


@suite.case
def convs_writing_nchw_model_outputs():
    """Convs (+ bias + ReLU) whose result is a model output, stored NCHW, over a channels-last
    intermediate: dense 1x1 and 3x3, depthwise, grouped (5 in / 3 out per group) and strided
    convs, channel counts off the vector width, widths that leave a part tile, batch 2. The
    CPU code's register tile holds vectors of output channels; it transposes them in
    registers and stores runs of pixels per channel plane (llvm_emit.cc
    store_tile_transposed): the x86_64 / aarch64 LLVM IR has no scatter (a lane per channel
    plane: the depthwise case 1.6x onnxruntime's time, tests/bench/op_cliffs.py nchwout_).
    3 threads give the same bits as 1."""
    if lib.opencl_target() or lib.target_family("hexagon"):
        return  # a CPU code path (HVX keeps its scatters); no rusticl / qemu time
    c = 20
    nodes = [h.make_node("Conv", ["x", "w0"], ["s"]), h.make_node("Relu", ["s"], ["r"])]
    inits = [("w0", randn(c, 16, 1, 1, scale=0.3))]
    outputs = []
    for name, m, k, group, stride in (("dense1x1", 13, 1, 1, 1), ("dense3x3", 11, 3, 1, 1), ("dw3x3", c, 3, c, 1),
                                      ("grouped3x3", 12, 3, 4, 1), ("dense3x3_s2", 21, 3, 1, 2)):
        nodes += [h.make_node("Conv", ["r", f"w_{name}", f"b_{name}"], [f"c_{name}"], group=group,
                              kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4),
                  h.make_node("Relu", [f"c_{name}"], [name])]
        inits += [(f"w_{name}", randn(m, c // group, k, k, scale=0.4)), (f"b_{name}", randn(m, scale=0.1))]
        outputs.append(name)
    feeds = {"x": randn(2, 16, 13, 19)}
    m = model(nodes, feeds, outputs, inits)
    ir = WORK / "nchw_outputs.ll"
    checked_run(m, feeds, "nchw_outputs", 1e-4, 1e-4, compile_args=("--dump-llvm-ir", ir))
    assert "masked.scatter" not in ir.read_text(), "a conv scatters its NCHW output"


@suite.case
def conv_channel_loops():
    """The channel loops of register tiles over channels-last intermediates (a 1x1 conv, a
    padded 3x3 with a residual add, ragged last tiles of pixels: rows of 11):
    - each load is addressed as one pointer set before the loop plus the channel: one
      getelementptr per load in the loop. Summed into one index, LLVM split each input
      pixel's address into a chain starting from the channel and computed it with a lea per
      pixel per step (ResNet-50's 1x1 convs: 31 instructions per 12 multiply-adds, 24 after);
    - each multiply-add is one llvm.fmuladd, no fmul: a contractible fmul that LLVM shared
      between two copies of a tile (a ragged tile's repeated last pixel) was not fused, and
      that tile's sums rounded unlike the others' (ResNet-50, RegNetX-400MF)."""
    feeds = {"x": randn(1, 16, 9, 11)}
    nodes = [h.make_node("Conv", ["x", "w0"], ["c0"], kernel_shape=[3, 3], pads=[1] * 4),
             h.make_node("Relu", ["c0"], ["r0"]),
             h.make_node("Conv", ["r0", "w1"], ["c1"]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1] * 4),
             h.make_node("Add", ["c2", "r0"], ["y"])]
    inits = [("w0", randn(48, 16, 3, 3, scale=0.1)), ("w1", randn(40, 48, 1, 1, scale=0.15)),
             ("w2", randn(48, 40, 3, 3, scale=0.05))]
    m = model(nodes, feeds, ["y"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4)
    if lib.opencl_target() or lib.target_family("hexagon"):
        return  # no LLVM IR; hexagon-v65's HVX has no float lanes
    loops = 0
    for function in _llvm_ir(m, "conv_channel_loops").split("\ndefine ")[1:]:
        for block in re.split(r"\n(?=[\w.]+:)", function):
            label = block.split(":")[0]
            if f"label %{label}" not in block.splitlines()[-1] or "llvm.fmuladd" not in block and "fmul" not in block:
                continue  # not a loop of multiply-adds that branches back to itself
            loops += 1
            where = f"{function.split('(')[0]} loop {label}"
            geps, loads = block.count("getelementptr"), block.count(" = load ")
            assert geps <= loads, f"{where}: {geps} getelementptr for {loads} loads"
            assert not re.search(r"= fmul ", block), f"{where}: a multiply-add as fmul and fadd, not llvm.fmuladd"
    assert loops >= 3, f"expected the three convs' channel loops in the IR, found {loops}"


@suite.case
def shuffled_channel_loops():
    """A 1x1 conv reading a ShuffleNet channel shuffle of a Concat (ShuffleNetV2's conv5 at
    7x7, scaled down): its channel loop is split in the shuffle's two halves (r[2, 48], the
    packed weights interleaving them), and is one channel loop to the x86_64 cost model all
    the same (llvm_emit.cc one_channel_loop): its register tile has more than the 8
    accumulators that leave a multiply-add loop no cycle to spare (ShuffleNetV2 x2.0's convs
    reading shuffles: 0.86-0.88 of their 2 x 4 time in 3 x 4 tiles, BENCHMARKS.md)."""
    feeds = {"x": randn(1, 16, 7, 7)}
    nodes = [h.make_node("Conv", ["x", "wa"], ["a"]), h.make_node("Relu", ["a"], ["ra"]),
             h.make_node("Conv", ["x", "wb"], ["b"]), h.make_node("Relu", ["b"], ["rb"]),
             h.make_node("Concat", ["ra", "rb"], ["cat"], axis=1),
             h.make_node("Reshape", ["cat", "split"], ["v"]),
             h.make_node("Transpose", ["v"], ["t"], perm=[0, 2, 1, 3, 4]),
             h.make_node("Reshape", ["t", "merge"], ["shuf"]),
             h.make_node("Conv", ["shuf", "w5"], ["c5"]), h.make_node("Relu", ["c5"], ["r5"]),
             h.make_node("GlobalAveragePool", ["r5"], ["y"])]
    inits = [("wa", randn(48, 16, 1, 1, scale=0.25)), ("wb", randn(48, 16, 1, 1, scale=0.25)),
             ("split", np.array([1, 2, 48, 7, 7], np.int64)), ("merge", np.array([1, 96, 7, 7], np.int64)),
             ("w5", randn(128, 96, 1, 1, scale=0.1))]
    m = model(nodes, feeds, ["y"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4)
    if os.environ.get("EDGE_TARGET", "x86_64") != "x86_64":
        return  # the rule is measured on AVX2 only
    ir = _llvm_ir(m, "shuffled_channel_loops")
    conv = next(name for name, text in _kernels(WORK / "shuffled_channel_loops.onnx", "shuffled_channel_loops").items()
                if "reduce ReduceSum over [2,48]" in text)
    body = next(f for f in ir.split("\ndefine ") if f" @{conv}(" in f.split("\n")[0])
    loops = [block.count("llvm.fmuladd") for block in re.split(r"\n(?=[\w.]+:)", body)
             if f"label %{block.split(':')[0]}" in block.splitlines()[-1] and "llvm.fmuladd" in block]
    assert loops and max(loops) > 8, f"{conv}: multiply-adds per step of its channel loops {loops}, expected > 8"


@suite.case
def stems_over_few_input_channels():
    """Dense convs over the model's 1-4 input channels (ImageNet stems: GoogLeNet's / ResNet's 7x7
    stride 2 into 64 channels, MobileNet's 3x3 stride 2 into 24, a 5x5 stride 1 into 20), and
    depthwise convs whose stride reaches their kernel width (3 / stride 3, 2 / stride 2: no
    tap is shared by neighbouring outputs) beside one whose taps are (3 / stride 2). A stem's
    input channels are not taps that neighbouring pixels share: the CPU targets keep them a
    loop; written out, the 3 x u broadcasts of a tile's steps were hoisted out of their
    multiply-adds and spilled (GoogLeNet's stem: 3.8 -> 2.6 ms of CPU time on x86_64)."""
    if lib.opencl_target():
        return  # a CPU code path (OpenCL convs: the conformance run and the conv cases above)
    for c, k, stride, out, hw in ((3, 7, 2, 64, (21, 19)), (3, 3, 2, 24, (17, 16)), (1, 7, 2, 16, (15, 15)),
                                  (4, 3, 2, 24, (9, 13)), (3, 5, 1, 20, (11, 8))):
        nodes = [h.make_node("Conv", ["x", "w", "b"], ["s"], kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4),
                 h.make_node("Relu", ["s"], ["r"]),
                 h.make_node("Conv", ["r", "wp"], ["y"])]  # r stays an intermediate (channels-last)
        inits = [("w", randn(out, c, k, k, scale=(2 / (c * k * k)) ** 0.5)), ("b", randn(out, scale=0.1)),
                 ("wp", randn(8, out, 1, 1, scale=(1 / out) ** 0.5))]
        feeds = {"x": randn(1, c, *hw)}
        check(model(nodes, feeds, ["y", "s"], inits), feeds, rtol=1e-4, atol=1e-4)
    for k, stride in ((3, 3), (2, 2), (3, 2)):
        nodes = [h.make_node("Conv", ["x", "w0"], ["e"]),
                 h.make_node("Conv", ["e", "wd", "bd"], ["d"], group=24, kernel_shape=[k, k], strides=[stride] * 2,
                             pads=[1, 1, 0, 0]),
                 h.make_node("Relu", ["d"], ["y"])]
        inits = [("w0", randn(24, 3, 1, 1, scale=0.5)), ("wd", randn(24, 1, k, k, scale=0.5)), ("bd", randn(24, scale=0.1))]
        feeds = {"x": randn(1, 3, 20, 23)}
        check(model(nodes, feeds, ["y"], inits), feeds, rtol=1e-4, atol=1e-4)
    if lib.target_family("hexagon"):
        return  # scalar float code there
    # The 7x7 stem's reduce loops in the x86_64 code: kh, kw and the 3 channels (2 loops with
    # the channel steps written out).
    nodes = [h.make_node("Conv", ["x", "w"], ["s"], kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3]),
             h.make_node("Relu", ["s"], ["r"]), h.make_node("Conv", ["r", "wp"], ["y"])]
    feeds = {"x": randn(1, 3, 64, 64)}
    path = WORK / "stem_loops.onnx"
    path.write_bytes(model(nodes, feeds, ["y"], [("w", randn(64, 3, 7, 7)), ("wp", randn(8, 64, 1, 1))]).SerializeToString())
    ir = WORK / "stem_loops.ll"
    lib.run_tool([lib.find_tool("edgec"), "compile", path, "-o", WORK / "stem_loops.bundle", "--dump-llvm-ir", ir])
    stem = next(name for name, text in _kernels(path, "stem_loops").items() if "over [3,7,7]" in text)
    body = next(f for f in ir.read_text().split("\ndefine ") if f" @{stem}(" in f.split("\n")[0])
    loops = sum(1 for line in body.splitlines() if line.lstrip().startswith("br ") and "!llvm.loop" in line)
    assert loops == 3, f"{stem}: {loops} reduce loops in its LLVM IR, expected kh, kw and the channels"
    # The padded channels-last copy of the 3 input planes that the stem reads: its vectors run
    # along the rows (where the planes are read) and are interleaved in registers into runs of
    # pixels, not scattered one float every 3 (llvm_emit.cc choose_interleaved_stores: 4-8
    # lanes, AVX2 and NEON; 0.11 -> 0.055 ms for MobileNetV3's 224 x 224 input on x86_64).
    if os.environ.get("EDGE_TARGET", "x86_64") in ("x86_64", "aarch64"):
        copy = next(name for name, text in _kernels(path, "stem_loops").items() if text.startswith(f"kernel {name} out[1,70,70,3]"))
        body = next(f for f in ir.read_text().split("\ndefine ") if f" @{copy}(" in f.split("\n")[0])
        assert "llvm.masked.scatter" not in body, f"{copy}: the channels-last copy scatters its vectors"


@suite.case
def inverted_residual_depthwise_rows():
    """Inverted-residual blocks (1x1 expand, SiLU, depthwise, SiLU, 1x1 project, residual add)
    on the row widths of EfficientNet / MNASNet: the register tiles of a depthwise conv run
    between the padded borders of each row and the cost model sizes them by the outputs
    there (llvm_emit.cc outputs_between_borders): 10 of 14 for a 5x5 conv, 3 of 7, 12 of 14
    at stride 2, 54 of 56 for a 3x3 conv; a tile wider than what lies between the borders
    (2-wide rows); 40 channels (not a multiple of the vector width of AVX-512)."""
    c, e = 16, 40
    for width, k, stride in ((14, 5, 1), (7, 5, 1), (7, 3, 1), (28, 5, 2), (56, 3, 1), (2, 5, 1), (15, 3, 2)):
        nodes = [h.make_node("Conv", ["x", "we"], ["a"]),
                 h.make_node("Sigmoid", ["a"], ["as"]), h.make_node("Mul", ["a", "as"], ["r"]),
                 h.make_node("Conv", ["r", "wd", "bd"], ["d"], group=e, kernel_shape=[k, k], strides=[stride] * 2,
                             pads=[k // 2] * 4),
                 h.make_node("Sigmoid", ["d"], ["ds"]), h.make_node("Mul", ["d", "ds"], ["q"]),
                 h.make_node("Conv", ["q", "wp"], ["p"])]
        outputs = ["p"]
        if stride == 1:
            nodes.append(h.make_node("Add", ["p", "x"], ["y"]))
            outputs = ["y"]
        inits = [("we", randn(e, c, 1, 1, scale=0.4)), ("wd", randn(e, 1, k, k, scale=0.3)), ("bd", randn(e)),
                 ("wp", randn(c, e, 1, 1, scale=0.3))]
        feeds = {"x": randn(1, c, width, width)}
        check(model(nodes, feeds, outputs, inits), feeds, rtol=1e-4, atol=1e-4)


@suite.case
def winograd_where_it_pays():
    """--winograd auto keeps a 3x3 conv direct where its transformed tiles pass 64 MB
    (conv_winograd.cc kMaxWinogradTransformedBytes: DNSMOS's convs over a 900 x 161 spectrogram
    ran 1.55x slower as Winograd): 16 -> 128 channels at 256 x 256 (F(4x4): 75 MB; 1.7x
    slower as Winograd, AVX2) compiles to one conv over its padded copy, the same conv at 32 x
    32 to Winograd's transform kernels. Compiled only (the direct and Winograd sums are
    checked elsewhere); CPU targets (OpenCL keeps direct sums)."""
    if lib.opencl_target():
        return
    for size, winograd in ((32, True), (256, False)):
        feeds = {"x": randn(1, 16, size, size)}
        nodes = [h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
        m = model(nodes, feeds, ["y"], [("w", randn(128, 16, 3, 3, scale=(2 / 144) ** 0.5))])
        path = lib.save_model(m, WORK / f"winograd_fit_{size}.onnx")
        kernels = _kernels(path, f"winograd_fit_{size}")
        transforms = [name for name in kernels if "_ReduceSum_" in name]  # Winograd's transforms and products
        assert bool(transforms) == winograd, f"{size} x {size}: kernels {sorted(kernels)}"
    # Over the model's NCHW input (ops_nn.cc winograd_if_it_pays) the input transform reads a
    # zero-bordered channels-last copy, not the input through bounds tests (64 -> 64 channels
    # at 56x56: 1.90 -> 1.41 ms, AVX2); the outputs against onnxruntime, with a bias and an
    # asymmetric border and a forced F(2x2).
    for name, c, k, size, pads, args in (("nchw_64_64", 64, 64, 56, [1, 1, 1, 1], ()),
                                         ("nchw_24_16", 24, 16, 30, [0, 1, 2, 1], ("--winograd", "2"))):
        feeds = {"x": randn(1, c, size, size)}
        nodes = [h.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], pads=pads)]
        m = model(nodes, feeds, ["y"], [("w", randn(k, c, 3, 3, scale=(2 / (9 * c)) ** 0.5)), ("b", randn(k, scale=0.1))])
        check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True, compile_args=args)
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"winograd_{name}", args)
        transforms = [n for n in kernels if "_ReduceSum_" in n]
        assert transforms, f"{name}: no Winograd kernels in {sorted(kernels)}"
        guarded = [n for n in transforms if "inbounds" in kernels[n]]
        assert not guarded, f"{name}: Winograd kernels {guarded} test bounds (read the input, not a bordered copy)"


@suite.case
def winograd_convs():
    """Stride-1 3x3 convs as Winograd F(2x2, 3x3) and F(4x4, 3x3) (edgec --winograd 2 / 4; auto is
    the CPU default): output sizes that are and are not multiples of the tile (one tile, a
    partial last tile, tiles past a padded border), asymmetric and zero padding, batch 2,
    channel counts that are not multiples of the vector width, no bias, a chain of two (the
    second reads the first's channels-last result) with a residual add and ReLU fused into
    the output transform, a Winograd result that is also a model output (NCHW); 3 threads give
    the same bits as 1."""
    for tile in ("2", "4", "auto"):
        for n, c, k, hw, pads in ((1, 16, 16, (4, 4), [1, 1, 1, 1]), (2, 24, 17, (9, 7), [1, 1, 1, 1]),
                                  (1, 40, 32, (6, 11), [0, 1, 2, 0]), (1, 16, 20, (3, 14), [0, 0, 0, 0]),
                                  (1, 64, 64, (15, 13), [2, 2, 2, 2])):
            nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["a"], kernel_shape=[3, 3], pads=pads),
                     h.make_node("Relu", ["a"], ["r"]),
                     h.make_node("Conv", ["r", "w2"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                     h.make_node("Add", ["b", "r"], ["s"]),
                     h.make_node("Relu", ["s"], ["y"])]
            inits = [("w1", randn(k, c, 3, 3, scale=(2 / (9 * c)) ** 0.5)), ("b1", randn(k, scale=0.1)),
                     ("w2", randn(k, k, 3, 3, scale=(2 / (9 * k)) ** 0.5))]
            feeds = {"x": randn(n, c, *hw)}
            m = model(nodes, feeds, ["y", "a"], inits)
            check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True, compile_args=("--winograd", tile))
            # The same bundle on 3 threads: bit-identical (each output element is summed in one order).
            bundle = WORK / f"m{_count[0]}.bundle"
            one = lib.run_bundle(bundle, feeds, WORK / "wg_t1", lib.output_names(m), threads=1)
            three = lib.run_bundle(bundle, feeds, WORK / "wg_t3", lib.output_names(m), threads=3)
            for name in one:
                assert np.array_equal(one[name], three[name]), f"{name}: 3 threads differ from 1"


@suite.case
def winograd_transforms_past_the_cache():
    """Winograd F(4x4) and F(2x2) convs whose transformed tiles outgrow a core's cache (40 -> 20
    channels at 44 x 50: 143 tiles, 0.8 MB), as PP-OCRv4 det's 96 -> 24 convs at 160 x 160:
    their transform kernels run their loops in memory order, the 6 (or 4) rows of the table one
    register tile, the cores splitting a dim that the input depends on (unit test "loop
    order"; 2 and 3 threads: 6 rows split 3 + 3 and 2 + 2 + 2). Outputs against onnxruntime;
    2 and 3 threads give the same bits as 1. CPU code generation only: not on OpenCL or
    Hexagon."""
    if lib.opencl_target() or lib.target_family("hexagon"):
        return
    feeds = {"x": randn(1, 40, 44, 50)}
    nodes = [h.make_node("Conv", ["x", "w"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["a"], ["y"])]
    m = model(nodes, feeds, ["y"], [("w", randn(20, 40, 3, 3, scale=(2 / 360) ** 0.5))])
    for tile in ("4", "2"):
        check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True, compile_args=("--winograd", tile))
        bundle = WORK / f"m{_count[0]}.bundle"
        one = lib.run_bundle(bundle, feeds, WORK / "wgc_t1", lib.output_names(m), threads=1)
        for threads in (2, 3):
            more = lib.run_bundle(bundle, feeds, WORK / f"wgc_t{threads}", lib.output_names(m), threads=threads)
            assert np.array_equal(one["y"], more["y"]), f"F({tile}x{tile}): {threads} threads differ from 1"


@suite.case
def grouped_convs():
    """Grouped convs (1 < groups < channels), read from and written to channels-last
    intermediates as in RegNet / ResNeXt: groups 2 to 32, 1 to 64 channels per group in and
    out (a vector of output channels inside one group reads one broadcast input channel; one
    spanning several groups a span of the input and a shuffle; 12 per group neither: a
    gather), 3x3 and 1x1, strides 1 and 2, dilation 2, symmetric, asymmetric and no padding,
    one also a model output (NCHW); then 3x3 stride-1 ones as forced Winograd F(2x2) and
    F(4x4) (per-group products; auto keeps grouped convs direct)."""
    #          c_in, c_out, groups, kernel, stride, dilation, pads
    configs = ((32, 32, 2, 3, 1, 1, [1, 1, 1, 1]),     # 16 per group
               (32, 64, 4, 3, 2, 1, [1, 1, 1, 1]),     # 8 in, 16 out, stride 2
               (64, 64, 8, 3, 1, 2, [2, 2, 2, 2]),     # 8 per group, dilated
               (64, 64, 32, 3, 1, 1, [1, 1, 1, 1]),    # 2 per group (ResNeXt's first stage: 4)
               (32, 64, 32, 3, 2, 1, [0, 1, 1, 0]),    # 1 in, 2 out
               (128, 128, 2, 1, 1, 1, [0, 0, 0, 0]),   # 64 per group, 1x1
               (16, 32, 4, 1, 2, 1, [0, 0, 0, 0]),     # 4 in, 8 out, 1x1 stride 2
               (64, 96, 8, 3, 1, 1, [0, 1, 2, 0]),     # 8 in, 12 out: neither
               (128, 128, 4, 3, 1, 1, [1, 1, 1, 1]))   # 32 per group
    feeds = {"x": randn(1, 8, 11, 13)}
    nodes, inits, outs = [], [], []
    for i, (c, m, g, k, s, d, pads) in enumerate(configs):
        nodes += [h.make_node("Conv", ["x", f"ws{i}"], [f"s{i}"]),
                  h.make_node("Relu", [f"s{i}"], [f"r{i}"]),
                  h.make_node("Conv", [f"r{i}", f"wg{i}", f"bg{i}"], [f"g{i}"], group=g, kernel_shape=[k, k],
                              strides=[s, s], dilations=[d, d], pads=pads),
                  h.make_node("Relu", [f"g{i}"], [f"q{i}"]),
                  h.make_node("Conv", [f"q{i}", f"wo{i}"], [f"y{i}"])]
        inits += [(f"ws{i}", randn(c, 8, 1, 1, scale=0.5)), (f"wg{i}", randn(m, c // g, k, k, scale=(2 / (k * k * c // g)) ** 0.5)),
                  (f"bg{i}", randn(m, scale=0.1)), (f"wo{i}", randn(4, m, 1, 1, scale=(1 / m) ** 0.5))]
        outs.append(f"y{i}")
    outs.append("g1")  # also a model output: written NCHW
    check(model(nodes, feeds, outs, inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    for tile in ("2", "4"):
        nodes, inits = [], []
        for i, (c, g) in enumerate(((64, 4), (32, 8))):
            nodes += [h.make_node("Conv", ["x", f"ws{i}"], [f"s{i}"]),
                      h.make_node("Relu", [f"s{i}"], [f"r{i}"]),
                      h.make_node("Conv", [f"r{i}", f"wg{i}"], [f"g{i}"], group=g, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                      h.make_node("Relu", [f"g{i}"], [f"y{i}"])]
            inits += [(f"ws{i}", randn(c, 8, 1, 1, scale=0.5)), (f"wg{i}", randn(c, c // g, 3, 3, scale=(2 / (9 * c // g)) ** 0.5))]
        check(model(nodes, feeds, ["y0", "y1"], inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True,
              compile_args=("--winograd", tile))


def assert_padded_copies(name, want):
    """The last model check() ran, compiled again with --dump-kernels: `want` zero-bordered
    copies (kernels named _Pad_), and none with --padded-grouped-convs 0. Not on OpenCL: the
    copies are for the CPU targets' register tiles."""
    if lib.opencl_target():
        return
    for flag, n in (((), want), (("--padded-grouped-convs", "0"), 0)):
        dump = WORK / f"{name}.kernels.txt"
        lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"m{_count[0]}.onnx", "-o", WORK / f"{name}.bundle",
                      "--dump-kernels", dump, *flag])
        copies = [line for line in dump.read_text().splitlines() if line.startswith("kernel ") and "_Pad_" in line]
        assert len(copies) == n, f"{flag}: expected {n} padded copies, the dump has {len(copies)}: {copies}"


@suite.case
def depthwise_convs_mostly_border():
    """Stride-1 depthwise convs most of whose outputs read padding run over a zero-bordered
    channels-last copy: a 5x5 one over 3 rows (PP-OCR's text-direction classifier: every
    output a border output, each tap bounds-tested, 6-10 GFLOP/s) and a 3x3 one over 2 x 5,
    20 and 13 channels, with a bias + HardSwish epilogue, batch 2; a 3x3 one on 12x12 (100 of
    144 outputs inside) keeps its border tiles (the dump has 2 copies, none with
    --padded-grouped-convs 0). CPU targets only (the copies are theirs): not on OpenCL or Hexagon."""
    if lib.opencl_target() or lib.target_family("hexagon"):
        return
    feeds, nodes, inits, outs = {}, [], [], []
    #          channels, kernel, input (h, w)
    configs = ((20, 5, (3, 9)), (13, 3, (2, 5)), (13, 3, (12, 12)))
    for i, (c, k, hw) in enumerate(configs):
        feeds[f"x{i}"] = randn(2, 4, *hw)
        nodes += [h.make_node("Conv", [f"x{i}", f"we{i}"], [f"e{i}"]),
                  h.make_node("Relu", [f"e{i}"], [f"r{i}"]),
                  h.make_node("Conv", [f"r{i}", f"wd{i}", f"bd{i}"], [f"d{i}"], group=c, kernel_shape=[k, k],
                              pads=[k // 2] * 4),
                  h.make_node("HardSwish", [f"d{i}"], [f"y{i}"])]
        inits += [(f"we{i}", randn(c, 4, 1, 1, scale=0.5)), (f"wd{i}", randn(c, 1, k, k, scale=0.3)), (f"bd{i}", randn(c))]
        outs.append(f"y{i}")
    m = model(nodes, feeds, outs, inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    assert_padded_copies("mostly_border_depthwise", 2)


@suite.case
def convs_with_long_reductions_in_channel_chunks():
    """Dense float convs whose weights for a register tile of two vectors of output channels
    outgrow the core's cache share (2 x lanes x C x taps floats past 5/8 of L2) sum chunks of
    their input channels (ops_nn.cc conv_in_reduction_chunks; DeepLabV3's ASPP over 2048
    channels ran one-vector tiles at 30 GFLOP/s): a dilated 3x3 over 768 channels (summed over
    its regions too), a 1x1 over 5200, a 3x3 stride 2 over 640, 24 output channels, bias + ReLU,
    batch 2. CPU targets but Hexagon (the chunks are theirs): no conv kernel reduces over all the
    input channels."""
    if lib.opencl_target() or lib.target_family("hexagon"):
        return
    feeds = {"a": randn(2, 768, 12, 12, scale=0.5), "b": randn(2, 5200, 4, 4, scale=0.5),
             "c": randn(2, 640, 9, 9, scale=0.5)}
    nodes = [h.make_node("Conv", ["a", "wa", "ba"], ["ya"], kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2]),
             h.make_node("Relu", ["ya"], ["ra"]),
             h.make_node("Conv", ["b", "wb", "bb"], ["yb"]), h.make_node("Relu", ["yb"], ["rb"]),
             h.make_node("Conv", ["c", "wc", "bc"], ["yc"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["yc"], ["rc"])]
    inits = [("wa", randn(24, 768, 3, 3, scale=0.05)), ("ba", randn(24)), ("wb", randn(24, 5200, 1, 1, scale=0.02)),
             ("bb", randn(24)), ("wc", randn(24, 640, 3, 3, scale=0.05)), ("bc", randn(24))]
    m = model(nodes, feeds, ["ra", "rb", "rc"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    path = WORK / "long_reductions.onnx"
    path.write_bytes(m.SerializeToString())
    heads = [text.split("\n")[1] for text in _kernels(path, "long_reductions").values() if "ReduceSum over" in text]
    whole = [line for line in heads if any(f"over [{c}" in line for c in (768, 5200, 640))]
    assert not whole, f"conv kernels reduce over all their input channels: {whole}"
    assert len(heads) >= 6, f"expected each conv in two or more channel chunks, got {heads}"


@suite.case
def padded_grouped_convs():
    """Padded grouped convs, which the CPU targets run unpadded over a zero-bordered
    channels-last copy of their input (stride 1; ImportOptions::padded_grouped_convs):
    1 to 64 channels per group, strides 1 and 2, symmetric, asymmetric and one-sided pads,
    dilation, 3x3, 5x5 and 3x1 kernels, a fused bias + residual + ReLU epilogue, one reading the model's NCHW input
    directly, batch 2. The stride-1 ones must have their copy kernel (the kernel dump)."""
    #          c_in, c_out, groups, kernel, stride, dilation, pads
    configs = ((32, 32, 16, (3, 3), 1, 1, [1, 1, 1, 1]),   # 2 per group
               (64, 64, 16, (3, 3), 1, 1, [1, 1, 1, 1]),   # 4 per group (ResNeXt's first stage)
               (64, 64, 8, (3, 3), 1, 1, [2, 1, 0, 2]),    # 8 per group, asymmetric
               (48, 48, 4, (3, 3), 1, 1, [1, 1, 1, 1]),    # 12 per group
               (48, 48, 3, (3, 3), 1, 1, [1, 1, 1, 1]),    # 16 per group (RegNet)
               (48, 48, 2, (5, 5), 1, 1, [2, 2, 2, 2]),    # 24 per group, 5x5
               (32, 64, 8, (3, 3), 1, 2, [2, 2, 2, 2]),    # 4 in, 8 out, dilated
               (128, 128, 2, (3, 1), 1, 1, [1, 0, 1, 0]),  # 64 per group, 3x1: rows padded only
               (64, 64, 2, (3, 3), 2, 1, [1, 1, 1, 1]),    # 32 per group, stride 2
               (32, 32, 8, (3, 3), 2, 1, [0, 0, 1, 1]),    # 4 per group, stride 2, padded after
               (16, 32, 16, (3, 3), 1, 1, [1, 1, 1, 1]))   # 1 in, 2 out (channel multiplier)
    for batch in (1, 2):
        feeds = {"x": randn(batch, 8, 11, 13)}
        nodes, inits, outs = [], [], []
        for i, (c, m, g, k, s, d, pads) in enumerate(configs if batch == 1 else configs[1:3]):
            nodes += [h.make_node("Conv", ["x", f"ws{i}"], [f"s{i}"]),
                      h.make_node("Relu", [f"s{i}"], [f"r{i}"]),
                      h.make_node("Conv", [f"r{i}", f"wg{i}", f"bg{i}"], [f"g{i}"], group=g, kernel_shape=list(k),
                                  strides=[s, s], dilations=[d, d], pads=pads)]
            inits += [(f"ws{i}", randn(c, 8, 1, 1, scale=0.5)),
                      (f"wg{i}", randn(m, c // g, *k, scale=(2 / (k[0] * k[1] * c // g)) ** 0.5)),
                      (f"bg{i}", randn(m, scale=0.1)), (f"wo{i}", randn(4, m, 1, 1, scale=(1 / m) ** 0.5))]
            if c == m and s == 1 and d == 1 and pads[0] + pads[2] == k[0] - 1 and pads[1] + pads[3] == k[1] - 1:
                # Same size out: the residual add and ReLU ride on the conv's epilogue.
                nodes += [h.make_node("Add", [f"g{i}", f"r{i}"], [f"a{i}"]), h.make_node("Relu", [f"a{i}"], [f"q{i}"])]
            else:
                nodes.append(h.make_node("Relu", [f"g{i}"], [f"q{i}"]))
            nodes.append(h.make_node("Conv", [f"q{i}", f"wo{i}"], [f"y{i}"]))
            outs.append(f"y{i}")
        # Straight from the model's input (NCHW), 4 per group, and written as a model output.
        nodes.append(h.make_node("Conv", ["x", "wx"], ["gx"], group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        inits.append(("wx", randn(8, 4, 3, 3, scale=0.3)))
        outs.append("gx")
        m = model(nodes, feeds, outs, inits)
        check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    # batch 2: two stride-1 padded grouped convs and the one on the model's input
    assert_padded_copies("padded_grouped", 3)


@suite.case
def dilated_convs_reading_padding():
    """Dilated convs on maps about their dilation's size, where some kernel taps read only
    padding (edgec drops them: rate 36 on 16x16 is a 1x1 conv) and others read it for part of
    the outputs (rate 12 on 16x16: the conv is summed per region of outputs over the taps that
    read the input there): dilations 2 to 36, maps 5x5 to 33x33, strides 1, 2 and 4, dense,
    grouped and depthwise, asymmetric pads, a first kept tap that starts inside the input (the
    input is cropped), bias + ReLU fused; all read a channels-last intermediate. Then the same
    taps dropped from a QLinearConv with a nonzero input zero point (the padding reads it)."""
    #          c_in, c_out, groups, kernel, stride, dilation, map, pads
    configs = ((16, 16, 1, 3, 1, 36, 16, [36, 36, 36, 36]),     # ASPP rate 36: only the centre tap
               (16, 24, 1, 3, 1, 12, 16, [12, 12, 12, 12]),     # ASPP rate 12: every tap partly
               (8, 8, 1, 3, 1, 24, 33, [24, 24, 24, 24]),       # rate 24 on 33x33
               (16, 16, 16, 3, 1, 3, 5, [3, 3, 3, 3]),          # depthwise, 5x5 map
               (16, 16, 4, 3, 2, 6, 9, [6, 6, 6, 6]),           # grouped, stride 2
               (16, 16, 16, 3, 2, 8, 7, [8, 8, 8, 8]),          # depthwise stride 2: centre tap only
               (8, 8, 1, 3, 1, 2, 33, [2, 2, 2, 2]),            # fcn-like: all taps read inside
               (8, 16, 1, 3, 1, (2, 20), (6, 10), [2, 20, 0, 20]),  # per-dim dilations, asymmetric
               (8, 8, 2, 3, 4, 6, 12, [5, 5, 0, 0]))            # tap 0 dropped, first kept inside: crop
    nodes, inits, outs, feeds = [], [], [], {}
    for i, (c, m, g, k, s, d, hw, pads) in enumerate(configs):
        d = d if isinstance(d, tuple) else (d, d)
        hw = hw if isinstance(hw, tuple) else (hw, hw)
        feeds[f"x{i}"] = randn(1, 8, *hw)
        nodes += [h.make_node("Conv", [f"x{i}", f"ws{i}"], [f"s{i}"]),
                  h.make_node("Relu", [f"s{i}"], [f"r{i}"]),
                  h.make_node("Conv", [f"r{i}", f"wd{i}", f"bd{i}"], [f"d{i}"], group=g, kernel_shape=[k, k],
                              strides=[s, s], dilations=list(d), pads=pads),
                  h.make_node("Relu", [f"d{i}"], [f"q{i}"]),
                  h.make_node("Conv", [f"q{i}", f"wo{i}"], [f"y{i}"])]
        inits += [(f"ws{i}", randn(c, 8, 1, 1, scale=0.5)), (f"wd{i}", randn(m, c // g, k, k, scale=(2 / (k * k * c // g)) ** 0.5)),
                  (f"bd{i}", randn(m, scale=0.1)), (f"wo{i}", randn(4, m, 1, 1, scale=(1 / m) ** 0.5))]
        outs.append(f"y{i}")
    outs.append("d1")  # the region sum also as a model output (NCHW)
    check(model(nodes, feeds, outs, inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return  # the integer conv: the CPU targets' int8 paths
    # uint8 x with zero point 100 (the padding reads 100): rate 12 and 36 on 16x16, stride 2.
    x = RNG.integers(0, 256, (1, 16, 16, 16), dtype=np.uint8)
    qnodes, qinits, qouts = [], [], []
    for i, (d, s) in enumerate(((12, 1), (36, 1), (12, 2))):
        qnodes.append(h.make_node("QLinearConv", ["x", "xs", "xz", f"w{i}", "ws", "wz", "ys", "yz", f"b{i}"], [f"y{i}"],
                                  kernel_shape=[3, 3], strides=[s, s], dilations=[d, d], pads=[d] * 4))
        qinits += [(f"w{i}", RNG.integers(-60, 60, (8, 16, 3, 3), dtype=np.int8)),
                   (f"b{i}", RNG.integers(-2000, 2000, (8,), dtype=np.int32))]
        qouts.append((f"y{i}", TP.UINT8))
    qinits += [("xs", np.array(0.02, np.float32)), ("xz", np.array(100, np.uint8)), ("ws", np.array(0.01, np.float32)),
               ("wz", np.array(0, np.int8)), ("ys", np.array(0.05, np.float32)), ("yz", np.array(128, np.uint8))]
    check(model(qnodes, {"x": x}, qouts, qinits), {"x": x}, rtol=0, atol=1)  # requantized uint8: within 1 step


def _llvm_ir(m, name):
    """The --dump-llvm-ir text of the CPU bundle edgec compiles from model m (saved as WORK/name.onnx)."""
    path, ir = WORK / f"{name}.onnx", WORK / f"{name}.ll"
    path.write_bytes(m.SerializeToString())
    lib.run_tool([lib.find_tool("edgec"), "compile", path, "-o", WORK / f"{name}.bundle", "--dump-llvm-ir", ir])
    return ir.read_text()


def _kernels(onnx_path, name, compile_args=()):
    """{kernel name: its --dump-kernels text} of the CPU bundle edgec compiles from onnx_path."""
    dump = WORK / f"{name}.kernels.txt"
    lib.run_tool([lib.find_tool("edgec"), "compile", onnx_path, "-o", WORK / f"{name}.bundle", "--dump-kernels", dump,
                  *compile_args])
    return _parse_kernels(dump)


def _parse_kernels(dump):
    """{kernel name: its text} of an --dump-kernels file."""
    kernels, current = {}, None
    for line in dump.read_text().splitlines():
        if line.startswith("kernel "):
            current = line.split()[1]
            kernels[current] = line
        elif current:
            kernels[current] += "\n" + line
    return kernels


@suite.case
def conv_then_group_norm_of_one_group():
    """A conv (+ bias + residual) read by a GroupNorm of one group as torch exports it below
    opset 18 (MobileViTv2's GroupNorm1): Reshape (N, C, H, W) -> (N, 1, C*H*W),
    InstanceNormalization, Reshape back, per-channel scale and shift. A 1x1 conv (128 -> 64
    on 4x144, MobileViTv2's stage 3) and a strided 3x3 one. The CPU targets store the conv as
    (N, C, H, W) and normalize the flat view of it: fused through the merging reshape, the
    conv's kernel looped over the flat dim with div/mod index math (4 GFLOP/s, 15x slower).
    CPU code only (OpenCL's kernels take another schedule; the node tests cover the ops there)."""
    if lib.opencl_target():
        return
    configs = ((128, 64, (4, 144), 1, 1), (24, 40, (18, 18), 3, 2))  # c_in, c_out, (H, W), kernel, stride
    nodes, inits, outs, feeds = [], [], [], {}
    for i, (c_in, c, (hh, ww), k, s) in enumerate(configs):
        oh, ow = (hh + 2 * (k // 2) - k) // s + 1, (ww + 2 * (k // 2) - k) // s + 1
        feeds[f"x{i}"], feeds[f"r{i}"] = randn(1, c_in, hh, ww), randn(1, c, oh, ow)
        inits += [(f"w{i}", randn(c, c_in, k, k, scale=(1 / (c_in * k * k)) ** 0.5)), (f"b{i}", randn(c)),
                  (f"flat{i}", np.array([1, 1, -1], np.int64)), (f"back{i}", np.array([1, c, oh, ow], np.int64)),
                  (f"one{i}", np.ones(1, np.float32)), (f"zero{i}", np.zeros(1, np.float32)),
                  (f"g{i}", randn(c, 1, 1)), (f"beta{i}", randn(c, 1, 1))]
        nodes += [h.make_node("Conv", [f"x{i}", f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[k, k], strides=[s, s],
                              pads=[k // 2] * 4),
                  h.make_node("Add", [f"r{i}", f"c{i}"], [f"res{i}"]),
                  h.make_node("Reshape", [f"res{i}", f"flat{i}"], [f"f{i}"]),
                  h.make_node("InstanceNormalization", [f"f{i}", f"one{i}", f"zero{i}"], [f"n{i}"], epsilon=1e-5),
                  h.make_node("Reshape", [f"n{i}", f"back{i}"], [f"n4{i}"]),
                  h.make_node("Mul", [f"n4{i}", f"g{i}"], [f"m{i}"]), h.make_node("Add", [f"m{i}", f"beta{i}"], [f"y{i}"])]
        outs.append(f"y{i}")
    check(model(nodes, feeds, outs, inits, opset=13), feeds, atol=1e-4, scale_tol=True)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "conv_group_norm")
    for i, (_, c, _, _, _) in enumerate(configs):
        conv = [t for name, t in kernels.items() if name.endswith(f"_res{i}")]
        assert conv and f"out[1,{c}," in conv[0].splitlines()[0], \
            f"the conv + residual {i} is not stored as (N, C, H, W): {[t.splitlines()[0] for t in kernels.values()]}"


@suite.case
def group_norm_statistics_over_channels_last_buffer():
    """PoolFormer's block: a conv, its token mixer (3x3 AveragePool without the padding minus its
    input, added back), then a GroupNorm of one group as torch exports it below opset 18
    (Reshape (N, C, H, W) -> (N, 1, C*H*W), InstanceNormalization, Reshape back, scale and
    shift) and a 1x1 conv added to the residual sum. That sum is stored channels-last (the
    conv's kernel reads it);
    the norm's mean and variance sum the flat view of it, whose index is C * (r % HW) + r / HW. The sum splits into pixel and channel dims, the channels innermost
    (split_reduce_dims_at_divisions): 8-10x faster per statistic (poolformer_s12's 48 of them
    were 10% of its time, 1.6 GFLOP/s). 32 channels on 20x20, 48 on 10x7. CPU code only."""
    if lib.opencl_target():
        return
    configs = ((16, 32, 20, 20), (8, 48, 10, 7))  # c_in, c, H, W
    nodes, inits, outs, feeds = [], [], [], {}
    for i, (c_in, c, hh, ww) in enumerate(configs):
        feeds[f"x{i}"] = randn(1, c_in, hh, ww)
        inits += [(f"w{i}", randn(c, c_in, 3, 3, scale=(1 / (c_in * 9)) ** 0.5)), (f"b{i}", randn(c)),
                  (f"flat{i}", np.array([1, 1, -1], np.int64)), (f"back{i}", np.array([1, c, hh, ww], np.int64)),
                  (f"one{i}", np.ones(1, np.float32)), (f"zero{i}", np.zeros(1, np.float32)),
                  (f"g{i}", randn(c, 1, 1)), (f"beta{i}", randn(c, 1, 1)),
                  (f"w2{i}", randn(c, c, 1, 1, scale=c ** -0.5))]
        t = f"t{i}_"
        nodes += [h.make_node("Conv", [f"x{i}", f"w{i}", f"b{i}"], [t + "c"], kernel_shape=[3, 3], pads=[1] * 4),
                  h.make_node("AveragePool", [t + "c"], [t + "pool"], kernel_shape=[3, 3], pads=[1] * 4,
                              count_include_pad=0),
                  h.make_node("Sub", [t + "pool", t + "c"], [t + "mix"]),
                  h.make_node("Add", [t + "c", t + "mix"], [t + "res"]),
                  h.make_node("Reshape", [t + "res", f"flat{i}"], [t + "f"]),
                  h.make_node("InstanceNormalization", [t + "f", f"one{i}", f"zero{i}"], [t + "n"], epsilon=1e-5),
                  h.make_node("Reshape", [t + "n", f"back{i}"], [t + "n4"]),
                  h.make_node("Mul", [t + "n4", f"g{i}"], [t + "m"]), h.make_node("Add", [t + "m", f"beta{i}"], [t + "gn"]),
                  h.make_node("Conv", [t + "gn", f"w2{i}"], [t + "y1"], kernel_shape=[1, 1]),
                  h.make_node("Add", [t + "res", t + "y1"], [f"y{i}"])]
        outs.append(f"y{i}")
    check(model(nodes, feeds, outs, inits, opset=13), feeds, atol=1e-4, scale_tol=True)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "group_norm_statistics")
    statistics = [t for t in kernels.values() if t.splitlines()[0].endswith("out[1,1,1] f32")]
    assert len(statistics) >= 2 * len(configs), [t.splitlines()[0] for t in kernels.values()]
    for t in statistics:
        indices = [ln.split("[", 1)[1].split("]")[0] for ln in t.splitlines() if "= load arg1[" in ln]
        assert indices and not any("/" in ix or "%" in ix for ix in indices), \
            f"a norm statistic reads with div/mod index math:\n{t}"


@suite.case
def attention_heads_not_whole_column_blocks():
    """MobileViT's attention: a qkv Linear (+ bias) over (patch pixels 4, tokens, C), its columns
    reshaped to (3, heads, D) and permuted to (3, 4, heads, tokens, D), scaled q against k,
    Softmax, times v. With D = 30 and 36 (no whole number of the weight's 16-column blocks) the
    product fused through the reshape vectorized along D, across the blocks (div/mod weight
    index, 13-22 GFLOP/s): the CPU targets store it as computed, (4, tokens, 3 * heads * D), and
    the heads read the permuted view (mobilevit_xs's qkv products 4-5x faster). 36 tokens 4 x
    30, 9 tokens 4 x 36; a D of 32 stays fused. CPU code only."""
    if lib.opencl_target():
        return
    configs = ((36, 4, 30), (9, 4, 36), (16, 2, 32))  # tokens, heads, D
    nodes, inits, outs, feeds = [], [], [], {}
    for i, (tokens, heads, d) in enumerate(configs):
        c = heads * d
        feeds[f"x{i}"] = randn(4, tokens, c)
        inits += [(f"w{i}", randn(c, 3 * c, scale=c ** -0.5)), (f"b{i}", randn(3 * c, scale=0.1)),
                  (f"split{i}", np.array([4, tokens, 3, heads, d], np.int64)),
                  (f"merge{i}", np.array([4, tokens, c], np.int64)), (f"scale{i}", np.array(d ** -0.5, np.float32))]
        t = f"t{i}_"
        nodes += [h.make_node("MatMul", [f"x{i}", f"w{i}"], [t + "m"]), h.make_node("Add", [t + "m", f"b{i}"], [t + "qkv"]),
                  h.make_node("Reshape", [t + "qkv", f"split{i}"], [t + "r"]),
                  h.make_node("Transpose", [t + "r"], [t + "p"], perm=[2, 0, 3, 1, 4]),
                  h.make_node("Split", [t + "p"], [t + "q3", t + "k3", t + "v3"], axis=0),
                  *[h.make_node("Squeeze", [t + f"{x}3", "axis0"], [t + x]) for x in "qkv"],
                  h.make_node("Mul", [t + "q", f"scale{i}"], [t + "qs"]),
                  h.make_node("Transpose", [t + "k"], [t + "kt"], perm=[0, 1, 3, 2]),
                  h.make_node("MatMul", [t + "qs", t + "kt"], [t + "s"]),
                  h.make_node("Softmax", [t + "s"], [t + "a"], axis=-1),
                  h.make_node("MatMul", [t + "a", t + "v"], [t + "o"]),
                  h.make_node("Transpose", [t + "o"], [t + "ot"], perm=[0, 2, 1, 3]),
                  h.make_node("Reshape", [t + "ot", f"merge{i}"], [f"y{i}"])]
        outs.append(f"y{i}")
    inits.append(("axis0", np.array([0], np.int64)))
    check(model(nodes, feeds, outs, inits, opset=13), feeds, atol=1e-4, scale_tol=True)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "attention_heads")
    for i, (tokens, heads, d) in enumerate(configs):
        qkv = [t for name, t in kernels.items() if f"t{i}_" in name and f"over [{heads * d}]" in t]
        assert qkv, f"no qkv product of config {i}: {list(kernels)}"
        stored_flat = qkv[0].splitlines()[0].endswith(f",{3 * heads * d}] f32")
        assert stored_flat == (d % 16 != 0), f"config {i} (D = {d}) stored as {qkv[0].splitlines()[0]}"


@suite.case
def token_mlp_with_depthwise_conv():
    """PVTv2's MLP (SegFormer's Mix-FFN): Linear on (N, H*W, C) tokens, transposed and viewed as
    (N, C, H, W), a padded 3x3 depthwise conv, flattened back to tokens, Erf GELU, Linear. On 12x12
    and 7x5 token grids, 16 -> 40 -> 16 and 8 -> 24 -> 8 channels. The CPU targets store the first
    Linear's result and the depthwise conv's channels-last ((N, H, W, C): the token order), so that
    the conv takes vectors of channels: stored (N, C, H, W) and (N, C, H*W), its padding tests took
    div/mod of the token index for every tap (10 GFLOP/s; PVTv2-b0 16.8 -> 12.4 ms). CPU code only."""
    if lib.opencl_target():
        return
    configs = ((40, 40, 16, 64), (10, 10, 40, 96))  # H, W, channels, hidden
    nodes, inits, outs, feeds = [], [], [], {}
    for i, (hh, ww, c, hid) in enumerate(configs):
        feeds[f"x{i}"] = randn(1, hh * ww, c)
        inits += [(f"w1{i}", randn(c, hid, scale=c ** -0.5)), (f"b1{i}", randn(hid, scale=0.1)),
                  (f"wd{i}", randn(hid, 1, 3, 3, scale=0.3)), (f"bd{i}", randn(hid, scale=0.1)),
                  (f"w2{i}", randn(hid, c, scale=hid ** -0.5)), (f"b2{i}", randn(c, scale=0.1)),
                  (f"rows{i}", np.array([1, hid, hh, ww], np.int64)), (f"tokens{i}", np.array([1, hid, hh * ww], np.int64)),
                  (f"sqrt2{i}", np.array(np.sqrt(2.0), np.float32)), (f"one{i}", np.array(1.0, np.float32)),
                  (f"half{i}", np.array(0.5, np.float32))]
        t = f"t{i}_"
        nodes += [h.make_node("MatMul", [f"x{i}", f"w1{i}"], [t + "m1"]), h.make_node("Add", [t + "m1", f"b1{i}"], [t + "a1"]),
                  h.make_node("Transpose", [t + "a1"], [t + "t1"], perm=[0, 2, 1]),
                  h.make_node("Reshape", [t + "t1", f"rows{i}"], [t + "r4"]),
                  h.make_node("Conv", [t + "r4", f"wd{i}", f"bd{i}"], [t + "dw"], group=hid, kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
                  h.make_node("Reshape", [t + "dw", f"tokens{i}"], [t + "r3"]),
                  h.make_node("Transpose", [t + "r3"], [t + "t2"], perm=[0, 2, 1]),
                  h.make_node("Div", [t + "t2", f"sqrt2{i}"], [t + "g0"]), h.make_node("Erf", [t + "g0"], [t + "g1"]),
                  h.make_node("Add", [t + "g1", f"one{i}"], [t + "g2"]), h.make_node("Mul", [t + "t2", t + "g2"], [t + "g3"]),
                  h.make_node("Mul", [t + "g3", f"half{i}"], [t + "g4"]),
                  h.make_node("MatMul", [t + "g4", f"w2{i}"], [t + "m2"]), h.make_node("Add", [t + "m2", f"b2{i}"], [f"y{i}"])]
        outs.append(f"y{i}")
    check(model(nodes, feeds, outs, inits, opset=13), feeds, atol=1e-4, scale_tol=True)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "token_mlp")
    heads = [t.splitlines()[0] for t in kernels.values()]
    for hh, ww, _, hid in configs:
        channels_last = f"out[1,{hh},{ww},{hid}]"
        assert sum(channels_last in line for line in heads) == 2, \
            f"the Linear's and the depthwise conv's results are not both stored {channels_last}: {heads}"


@suite.case
def windows_after_channel_shuffle():
    """Depthwise convs and a max pool reading a ShuffleNet channel shuffle of a Concat (reshape
    to (N, g, C/g, H, W), transpose, reshape back): stride 2 and 1, odd channels per half (29, 11, 5), a
    shuffle of 3 groups, padded and unpadded. The CPU targets store the shuffled tensor once
    (a copy kernel named after it) instead of redoing its div/mod index math for every tap."""
    feeds = {"x": randn(1, 8, 13, 11)}
    nodes, inits, outs = [], [], []
    #          channels, shuffle groups, op, kernel, stride, pads
    configs = ((58, 2, "Conv", 3, 2, [1, 1, 1, 1]),      # ShuffleNetV2's stage-3 downsampling: 29 per half
               (22, 2, "Conv", 3, 2, [0, 1, 1, 0]),      # 11 per half, asymmetric padding
               (15, 3, "Conv", 3, 1, [1, 1, 1, 1]),      # 3 groups of 5, stride 1
               (22, 2, "Conv", 5, 2, [2, 2, 2, 2]),      # 5x5
               (10, 2, "MaxPool", 3, 2, [1, 1, 1, 1]))   # a pooling window
    for i, (c, g, op, k, s, pads) in enumerate(configs):
        # As in ShuffleNetV2, the shuffle reads a Concat of two branches.
        nodes += [h.make_node("Conv", ["x", f"wa{i}", f"ba{i}"], [f"ea{i}"]),
                  h.make_node("Relu", [f"ea{i}"], [f"ra{i}"]),
                  h.make_node("Conv", ["x", f"wb{i}"], [f"eb{i}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  h.make_node("Concat", [f"ra{i}", f"eb{i}"], [f"r{i}"], axis=1),
                  h.make_node("Reshape", [f"r{i}", f"split{i}"], [f"v{i}"]),
                  h.make_node("Transpose", [f"v{i}"], [f"t{i}"], perm=[0, 2, 1, 3, 4]),
                  h.make_node("Reshape", [f"t{i}", f"merge{i}"], [f"shuf{i}"])]
        inits += [(f"wa{i}", randn(c // 2, 8, 1, 1, scale=0.5)), (f"ba{i}", randn(c // 2, scale=0.1)),
                  (f"wb{i}", randn(c - c // 2, 8, 3, 3, scale=0.2)),
                  (f"split{i}", np.array([1, g, c // g, 13, 11], np.int64)),
                  (f"merge{i}", np.array([1, c, 13, 11], np.int64))]
        if op == "Conv":
            nodes.append(h.make_node("Conv", [f"shuf{i}", f"wd{i}", f"bd{i}"], [f"d{i}"], group=c, kernel_shape=[k, k],
                                     strides=[s, s], pads=pads))
            inits += [(f"wd{i}", randn(c, 1, k, k, scale=0.3)), (f"bd{i}", randn(c, scale=0.1))]
        else:
            nodes.append(h.make_node("MaxPool", [f"shuf{i}"], [f"d{i}"], kernel_shape=[k, k], strides=[s, s], pads=pads))
        nodes.append(h.make_node("Conv", [f"d{i}", f"wo{i}"], [f"y{i}"]))
        inits.append((f"wo{i}", randn(4, c, 1, 1, scale=(1 / c) ** 0.5)))
        outs.append(f"y{i}")
    m = model(nodes, feeds, outs, inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    names = list(_kernels(WORK / f"m{_count[0]}.onnx", "shuffle"))
    for i in range(len(configs)):
        assert any(n.endswith(f"_shuf{i}") for n in names), f"no copy kernel stores shuf{i}: {names}"


@suite.case
def conv_heads_reshaped_and_transposed():
    """SSD-style heads: a conv of A*K channels viewed as (N, A, K, H, W), transposed to
    (N, H, W, A, K) and reshaped to (N, H*W*A, K), the heads of two resolutions concatenated
    (and one head alone a model output); 3x3 and 1x1 convs, with and without bias, odd K.
    The CPU targets compute each conv in a kernel of its own (its register tile intact) and
    copy the view after it, rather than running the conv over the scrambled shape."""
    feeds = {"x": randn(1, 8, 12, 10)}
    nodes = [h.make_node("Conv", ["x", "ws"], ["s"], strides=[1, 1]),
             h.make_node("Relu", ["s"], ["f0"]),
             h.make_node("Conv", ["f0", "wd"], ["f1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["f1"], ["g1"])]
    inits = [("ws", randn(16, 8, 1, 1, scale=0.5)), ("wd", randn(16, 16, 3, 3, scale=0.1))]
    #          feature, (H, W), anchors, classes, kernel, bias
    heads = (("f0", (12, 10), 3, 7, 3, True), ("g1", (6, 5), 2, 7, 1, False), ("f0", (12, 10), 4, 5, 1, True))
    for i, (src, (hh, ww), a, k, kern, bias) in enumerate(heads):
        ins = [src, f"wh{i}"] + ([f"bh{i}"] if bias else [])
        nodes += [h.make_node("Conv", ins, [f"c{i}"], kernel_shape=[kern, kern], pads=[kern // 2] * 4),
                  h.make_node("Reshape", [f"c{i}", f"split{i}"], [f"v{i}"]),
                  h.make_node("Transpose", [f"v{i}"], [f"t{i}"], perm=[0, 3, 4, 1, 2]),
                  h.make_node("Reshape", [f"t{i}", f"merge{i}"], [f"o{i}"])]
        inits += [(f"wh{i}", randn(a * k, 16, kern, kern, scale=(1 / (16 * kern * kern)) ** 0.5)),
                  (f"split{i}", np.array([1, a, k, hh, ww], np.int64)), (f"merge{i}", np.array([1, -1, k], np.int64))]
        if bias:
            inits.append((f"bh{i}", randn(a * k, scale=0.1)))
    nodes.append(h.make_node("Concat", ["o0", "o1"], ["heads"], axis=1))
    m = model(nodes, feeds, ["heads", "o2"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    for name, text in _kernels(WORK / f"m{_count[0]}.onnx", "heads").items():
        # A conv's sum is stored in its own shape (N, M, H, W), never as the (N, H*W*A, K) view.
        assert " reduce " not in text or text.split("\n")[0].count(",") != 2, f"a conv runs over a head's view:\n{text}"


@suite.case
def convnext_blocks_channels_last():
    """Two ConvNeXt blocks as torchvision exports them: a 7x7 depthwise conv, a transpose to
    (N, H, W, C), LayerNorm spelled out (ReduceMean, Sub, Pow, Sqrt, Div), Linear C -> 4C,
    GELU (Erf), Linear 4C -> C, a transpose back, the layer scale and the residual; the second
    block's depthwise conv reads the first one's result. Odd sizes (20 channels, 9x11). The CPU
    targets store the transposed conv result as (N, H, W, C), so that the LayerNorm and the
    Linear layers read the channels consecutively (they were stored (N, H, C, W): channels
    11 floats apart), and the variance's Pow(x - mean, 2) is a product (no exp and log)."""
    c, hh, ww = 20, 9, 11
    feeds = {"x": randn(1, c, hh, ww)}
    nodes, src = [], "x"
    inits = [("two", np.array(2.0, np.float32)), ("eps", np.array(1e-6, np.float32)),
             ("sqrt2", np.array(2.0 ** 0.5, np.float32)), ("one", np.array(1.0, np.float32)),
             ("half", np.array(0.5, np.float32)), ("last", np.array([-1], np.int64))]
    for i in range(2):
        nodes += [h.make_node("Conv", [src, f"wd{i}", f"bd{i}"], [f"d{i}"], group=c, kernel_shape=[7, 7], pads=[3] * 4),
                  h.make_node("Transpose", [f"d{i}"], [f"t{i}"], perm=[0, 2, 3, 1]),
                  h.make_node("ReduceMean", [f"t{i}", "last"], [f"mean{i}"]),
                  h.make_node("Sub", [f"t{i}", f"mean{i}"], [f"cen{i}"]),
                  h.make_node("Pow", [f"cen{i}", "two"], [f"sq{i}"]),
                  h.make_node("ReduceMean", [f"sq{i}", "last"], [f"var{i}"]),
                  h.make_node("Add", [f"var{i}", "eps"], [f"vareps{i}"]),
                  h.make_node("Sqrt", [f"vareps{i}"], [f"std{i}"]),
                  h.make_node("Div", [f"cen{i}", f"std{i}"], [f"norm{i}"]),
                  h.make_node("Mul", [f"norm{i}", f"gamma{i}"], [f"scaled{i}"]),
                  h.make_node("Add", [f"scaled{i}", f"beta{i}"], [f"ln{i}"]),
                  h.make_node("MatMul", [f"ln{i}", f"w1{i}"], [f"m1{i}"]),
                  h.make_node("Add", [f"b1{i}", f"m1{i}"], [f"a1{i}"]),
                  h.make_node("Div", [f"a1{i}", "sqrt2"], [f"e0{i}"]),
                  h.make_node("Erf", [f"e0{i}"], [f"e1{i}"]),
                  h.make_node("Add", [f"e1{i}", "one"], [f"e2{i}"]),
                  h.make_node("Mul", [f"a1{i}", f"e2{i}"], [f"e3{i}"]),
                  h.make_node("Mul", [f"e3{i}", "half"], [f"gelu{i}"]),
                  h.make_node("MatMul", [f"gelu{i}", f"w2{i}"], [f"m2{i}"]),
                  h.make_node("Add", [f"b2{i}", f"m2{i}"], [f"a2{i}"]),
                  h.make_node("Transpose", [f"a2{i}"], [f"back{i}"], perm=[0, 3, 1, 2]),
                  h.make_node("Mul", [f"ls{i}", f"back{i}"], [f"lsc{i}"]),
                  h.make_node("Add", [f"lsc{i}", src], [f"y{i}"])]
        inits += [(f"wd{i}", randn(c, 1, 7, 7, scale=0.15)), (f"bd{i}", randn(c, scale=0.1)),
                  (f"gamma{i}", 1 + randn(c, scale=0.1)), (f"beta{i}", randn(c, scale=0.1)),
                  (f"w1{i}", randn(c, 4 * c, scale=c ** -0.5)), (f"b1{i}", randn(4 * c, scale=0.1)),
                  (f"w2{i}", randn(4 * c, c, scale=(4 * c) ** -0.5)), (f"b2{i}", randn(c, scale=0.1)),
                  (f"ls{i}", randn(c, 1, 1, scale=0.5))]
        src = f"y{i}"
    m = model(nodes, feeds, ["y1"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "convnext")
    for i in range(2):
        stored = [text.split("\n")[0] for name, text in kernels.items() if name.endswith(f"_t{i}")]
        assert stored and f"out[1,{hh},{ww},{c}]" in stored[0], f"t{i} is not stored (N, H, W, C): {stored}"
    pows = [name for name, text in kernels.items() if "Pow(" in text]
    assert not pows, f"Pow(x, 2) left as a general power in {pows}"


@suite.case
def swin_patch_merging():
    """Swin's patch merging as torchvision exports it: four strided slices (Slice, steps 2) of
    an (N, H, W, C) value concatenated along C, LayerNorm spelled out, Linear 4C -> 2C; 8x10
    pixels, 6 channels. The CPU targets store the Concat once (kernels named after it): the
    LayerNorm's three kernels would otherwise each redo the slices' div/mod index math."""
    n, hh, ww, c = 1, 8, 10, 6
    feeds = {"x": randn(n, hh, ww, c)}
    nodes = [h.make_node("Relu", ["x"], ["r"])]
    inits = [("two", np.array(2.0, np.float32)), ("eps", np.array(1e-5, np.float32)),
             ("last", np.array([-1], np.int64)), ("axes", np.array([1, 2], np.int64)),
             ("steps", np.array([2, 2], np.int64)), ("ends", np.array([hh, ww], np.int64)),
             ("gamma", 1 + randn(4 * c, scale=0.1)), ("beta", randn(4 * c, scale=0.1)),
             ("w", randn(4 * c, 2 * c, scale=(4 * c) ** -0.5))]
    for i, (y0, x0) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
        inits.append((f"starts{i}", np.array([y0, x0], np.int64)))
        nodes.append(h.make_node("Slice", ["r", f"starts{i}", "ends", "axes", "steps"], [f"s{i}"]))
    nodes += [h.make_node("Concat", ["s0", "s1", "s2", "s3"], ["cat"], axis=-1),
              h.make_node("ReduceMean", ["cat", "last"], ["mean"]),
              h.make_node("Sub", ["cat", "mean"], ["cen"]),
              h.make_node("Pow", ["cen", "two"], ["sq"]),
              h.make_node("ReduceMean", ["sq", "last"], ["var"]),
              h.make_node("Add", ["var", "eps"], ["vareps"]),
              h.make_node("Sqrt", ["vareps"], ["std"]),
              h.make_node("Div", ["cen", "std"], ["norm"]),
              h.make_node("Mul", ["norm", "gamma"], ["scaled"]),
              h.make_node("Add", ["scaled", "beta"], ["ln"]),
              h.make_node("MatMul", ["ln", "w"], ["y"])]
    m = model(nodes, feeds, ["y"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    names = list(_kernels(WORK / f"m{_count[0]}.onnx", "patch_merging"))
    # (Its kernel is cut per source: k0_cat_0 ... k0_cat_3.)
    stored = [name for name in names if name.endswith("_cat") or name.rsplit("_", 1)[0].endswith("_cat")]
    assert stored, f"the Concat is not stored once: {names}"


@suite.case
def padded_strip_convs():
    """Inception-v3's factorized convs: dense 1x7 and 7x1 convs (pads 3 on one axis), a 1x3
    and a 3x1 after 1x1 convs, each with bias + ReLU, on 17x17 and 8x8 maps with 19 and 24
    channels; one 1x7 reads the model's NCHW input. The CPU targets run them unpadded over a
    zero-bordered channels-last copy of their input (ImportOptions::padded_grouped_convs): the
    dump has the copies, none with --padded-grouped-convs 0."""
    feeds = {"x": randn(1, 8, 17, 17), "z": randn(1, 8, 8, 8)}
    #         input, c_out, kernel, pads
    convs = (("x", 19, (1, 7), [0, 3, 0, 3]), ("c0", 24, (7, 1), [3, 0, 3, 0]),
             ("z", 19, (1, 3), [0, 1, 0, 1]), ("z", 24, (3, 1), [1, 0, 1, 0]))
    nodes, inits, outs = [], [], []
    channels = {"x": 8, "z": 8}
    for i, (src, m, k, pads) in enumerate(convs):
        c, src_in = channels[src], src
        if src == "z":  # after a 1x1 conv + ReLU, as in Inception's branches
            nodes += [h.make_node("Conv", [src, f"ws{i}"], [f"s{i}"]), h.make_node("Relu", [f"s{i}"], [f"in{i}"])]
            inits.append((f"ws{i}", randn(c, c, 1, 1, scale=c ** -0.5)))
            src_in = f"in{i}"
        nodes += [h.make_node("Conv", [src_in, f"w{i}", f"b{i}"], [f"p{i}"], kernel_shape=list(k), pads=pads),
                  h.make_node("Relu", [f"p{i}"], [f"c{i}"])]
        inits += [(f"w{i}", randn(m, c, *k, scale=(2 / (c * k[0] * k[1])) ** 0.5)), (f"b{i}", randn(m, scale=0.1))]
        channels[f"c{i}"] = m
        outs.append(f"c{i}")
    m = model(nodes, feeds, outs, inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    assert_padded_copies("padded_strip", 4)


@suite.case
def padded_dense_strided_convs():
    """Dense strided convs, which the CPU targets also run unpadded over a zero-bordered
    channels-last copy of their input (ImportOptions::padded_grouped_convs;
    tests/bench/op_cliffs.py: a padded 3x3 stride-2 conv ran at 1/3 - 1/6 of the unpadded
    one's speed): a stem reading the model's NCHW input (3 channels, stride 2), 3x3 stride 2
    with symmetric and TensorFlow-SAME (after only) pads on an odd size, 5x5 stride 2,
    stride 2 across rows only, a strided dilated one (conv_by_regions: no copy), each with
    bias + ReLU after a 1x1 conv + ReLU of its own; an unpadded 1x1 stride 2 gets no copy.
    The dump has one copy per padded undilated conv, none with the flag at 0."""
    feeds = {"x": randn(1, 3, 17, 19), "z": randn(1, 8, 13, 15)}
    #          src, c_out, kernel, stride, dilation, pads
    convs = (("x", 16, (3, 3), (2, 2), 1, [1, 1, 1, 1]),   # stem on the model's input
             ("z", 24, (3, 3), (2, 2), 1, [1, 1, 1, 1]),
             ("z", 17, (3, 3), (2, 2), 1, [0, 0, 1, 1]),   # TF SAME on an odd size: padded after only
             ("z", 16, (5, 5), (2, 2), 1, [2, 2, 2, 2]),
             ("z", 12, (3, 1), (2, 1), 1, [1, 0, 1, 0]),   # stride 2 down the rows only
             ("z", 16, (3, 3), (2, 2), 2, [2, 1, 2, 1]),   # strided and dilated, asymmetric
             ("z", 16, (1, 1), (2, 2), 1, [0, 0, 0, 0]))   # unpadded: no copy
    nodes, inits, outs = [], [], []
    for i, (src, m, k, s, d, pads) in enumerate(convs):
        c, src_in = feeds[src].shape[1], src
        if src == "z":  # each conv after a 1x1 conv + ReLU of its own
            nodes += [h.make_node("Conv", [src, f"ws{i}"], [f"s{i}"]), h.make_node("Relu", [f"s{i}"], [f"in{i}"])]
            inits.append((f"ws{i}", randn(c, c, 1, 1, scale=c ** -0.5)))
            src_in = f"in{i}"
        nodes += [h.make_node("Conv", [src_in, f"w{i}", f"b{i}"], [f"p{i}"], kernel_shape=list(k), strides=list(s),
                              dilations=[d, d], pads=pads),
                  h.make_node("Relu", [f"p{i}"], [f"y{i}"])]
        inits += [(f"w{i}", randn(m, c, *k, scale=(2 / (c * k[0] * k[1])) ** 0.5)), (f"b{i}", randn(m, scale=0.1))]
        outs.append(f"y{i}")
    check(model(nodes, feeds, outs, inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    assert_padded_copies("padded_dense_strided", 5)


def _assert_first_operand_read_plainly(kernels, count, what):
    """`kernels` ({name: --dump-kernels text}) are `count` kernels, and each one's loads of its
    first operand (arg1) index it with no div/mod."""
    assert len(kernels) == count, f"expected the {count} {what} kernels, got {list(kernels)}"
    for name, text in kernels.items():
        loads = [line for line in text.splitlines() if " = load arg1[" in line]
        assert loads and not any(re.search(r"\[[^\]]*[/%]", line) for line in loads), \
            f"{name} reads its first operand through div/mod:\n" + "\n".join(loads)


@suite.case
def signal_convs_through_reshapes_of_padding():
    """tf2onnx's Conv1d over a signal (Basic Pitch's CQT): the (N, L, 1) input reshaped to
    (N, 1, L), zero-padded by a Pad node, reshaped to (N, 1, 1, L') and convolved by a 1 x K
    stride-2 Conv of one channel, plus a 2-channel (N, L, 2) signal read interleaved the same
    way. Where the Pad's guard holds, the first Reshape's flat index lies in one row of the
    source, so the conv's taps read it with no div/mod (on main `(2*v+k+L-p) % L`: an integer
    division per tap, 1.4 GFLOP/s; tests/bench/real_models.py basic_pitch)."""
    n, k = 203, 16
    feeds = {"x": randn(1, n, 1), "s": randn(1, n, 2)}
    nodes = [h.make_node("Reshape", ["x", "ncl"], ["x3"]), h.make_node("Pad", ["x3", "pads"], ["xp"]),
             h.make_node("Reshape", ["xp", "row"], ["x4"]),
             h.make_node("Conv", ["x4", "w", "b"], ["y"], kernel_shape=[1, k], strides=[1, 2]),
             h.make_node("Reshape", ["s", "ncl2"], ["s3"]), h.make_node("Pad", ["s3", "pads"], ["sp"]),
             h.make_node("Reshape", ["sp", "row2"], ["s4"]),
             h.make_node("Conv", ["s4", "w", "b"], ["z"], kernel_shape=[1, k], strides=[1, 2])]
    inits = [("ncl", np.array([-1, 1, n], np.int64)), ("pads", np.array([0, 0, 7, 0, 0, 8], np.int64)),
             ("row", np.array([-1, 1, 1, n + 15], np.int64)), ("ncl2", np.array([-1, 1, 2 * n], np.int64)),
             ("row2", np.array([-1, 1, 1, 2 * n + 15], np.int64)),
             ("w", randn(1, 1, 1, k, scale=0.25)), ("b", randn(1, scale=0.1))]
    dump = WORK / "signal_convs.kernels.txt"
    check(model(nodes, feeds, ["y", "z"], inits, opset=15), feeds, rtol=1e-4, atol=1e-5,
          compile_args=("--dump-kernels", str(dump)))
    if lib.opencl_target():
        return
    convs = {name: text for name, text in _parse_kernels(dump).items() if f"ReduceSum over [{k}]" in text}
    _assert_first_operand_read_plainly(convs, 2, "convs'")


@suite.case
def matrix_products_with_rows_merged_by_a_reshape():
    """Magika's Dense_0 (Keras via tf2onnx): bytes one-hot by Equal, a MatMul, bias and a tanh
    GELU, the (N, M, D) result reshaped to (N, M/4, 4*D) for a LayerNorm's sums; and a Gemm
    whose rows a reshape merges into the model's output. The CPU targets store each product
    as computed (rows of D) and read the merged rows through the view: the product's loads
    take no div/mod (on main its kernel looped over the merged shape: 14 GFLOP/s, 2x
    onnxruntime's time)."""
    m_rows, k, d, g = 64, 37, 16, 4
    feeds = {"x": RNG.integers(0, k, (1, m_rows)).astype(np.int32), "f": randn(24, 20)}
    c = lambda v: np.array(v, np.float32)  # noqa: E731
    nodes = [h.make_node("Unsqueeze", ["x", "last"], ["xu"]), h.make_node("Equal", ["xu", "codes"], ["eq"]),
             h.make_node("Cast", ["eq"], ["oh"], to=TP.FLOAT), h.make_node("MatMul", ["oh", "w"], ["mm"]),
             h.make_node("Add", ["mm", "b"], ["a"]), h.make_node("Mul", ["a", "a"], ["a2"]),
             h.make_node("Mul", ["a", "a2"], ["a3"]), h.make_node("Mul", ["a3", "k1"], ["a4"]),
             h.make_node("Add", ["a", "a4"], ["a5"]), h.make_node("Mul", ["a5", "k2"], ["a6"]),
             h.make_node("Tanh", ["a6"], ["t"]), h.make_node("Add", ["t", "one"], ["t1"]),
             h.make_node("Mul", ["t1", "half"], ["t2"]), h.make_node("Mul", ["a", "t2"], ["gelu"]),
             h.make_node("Reshape", ["gelu", "merged"], ["r"]), h.make_node("ReduceSum", ["r", "last"], ["y"]),
             h.make_node("Mul", ["r", "r"], ["sq"]), h.make_node("ReduceSum", ["sq", "last"], ["y2"]),
             h.make_node("Gemm", ["f", "gw", "gb"], ["gm"]), h.make_node("Relu", ["gm"], ["gr"]),
             h.make_node("Reshape", ["gr", "merged2"], ["z"])]
    inits = [("last", np.array([2], np.int64)), ("codes", np.arange(k, dtype=np.int32).reshape(1, 1, k)),
             ("w", randn(k, d, scale=0.5)), ("b", randn(1, 1, d, scale=0.1)), ("k1", c(0.044715)),
             ("k2", c(0.7978845608)), ("one", c(1.0)), ("half", c(0.5)),
             ("merged", np.array([1, m_rows // g, g * d], np.int64)),
             ("gw", randn(20, 24, scale=0.2)), ("gb", randn(24, scale=0.1)), ("merged2", np.array([8, 72], np.int64))]
    m = model(nodes, feeds, [("y", TP.FLOAT), ("y2", TP.FLOAT), ("z", TP.FLOAT)], inits, opset=15)
    dump = WORK / "merged_rows.kernels.txt"
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True, compile_args=("--dump-kernels", str(dump)))
    if lib.opencl_target():
        return
    products = {name: text for name, text in _parse_kernels(dump).items()
                if any(f"reduce ReduceSum over [{n}]" in text for n in (k, 20))}
    _assert_first_operand_read_plainly(products, 2, "products'")


@suite.case
def wide_convs_over_few_channels():
    """Basic Pitch's note head on a small map: 8 -> 8 channel 3x39 and 8 -> 8 5x1 convs (pads 1 /
    19 and 2 / 0), ReLU, their channels-last results read by an 8 -> 1 5x5 conv and a sigmoid;
    also 4 -> 4 channels (half a vector). On AVX2 the register tiles of one vector of output
    channels stop at 8 outputs (the unit test "register tiles: an AVX2 tile of one vector ..."):
    the outputs past a tile's end and the row borders run in the same code as ever. (CPU
    register tiles: not run on the OpenCL targets.)"""
    if lib.opencl_target():
        return
    feeds = {"x": randn(1, 8, 10, 61), "v": randn(1, 4, 9, 50)}
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 39], pads=[1, 19, 1, 19]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[5, 1], pads=[2, 0, 2, 0]),
             h.make_node("Relu", ["c2"], ["r2"]),
             h.make_node("Conv", ["r2", "w3"], ["c3"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
             h.make_node("Sigmoid", ["c3"], ["y"]),
             h.make_node("Conv", ["v", "w4"], ["c4"], kernel_shape=[3, 15], pads=[1, 7, 1, 7]),
             h.make_node("Relu", ["c4"], ["r4"]),
             h.make_node("Conv", ["r4", "w5"], ["z"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = [("w1", randn(8, 8, 3, 39, scale=0.05)), ("b1", randn(8, scale=0.1)),
             ("w2", randn(8, 8, 5, 1, scale=0.15)), ("b2", randn(8, scale=0.1)), ("w3", randn(1, 8, 5, 5, scale=0.1)),
             ("w4", randn(4, 4, 3, 15, scale=0.1)), ("w5", randn(3, 4, 3, 3, scale=0.2))]
    check(model(nodes, feeds, ["y", "z"], inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)


@suite.case
def padded_dilated_convs():
    """Dilated convs on maps a few times their dilation (FCN-ResNet50's rate 2 and 4 3x3
    convs, DeepLabV3-MobileNetV3's rate 2 depthwise ones), where most products read the
    input. The depthwise ones (rates 4 and (2, 3)) run unpadded over a zero-bordered
    channels-last copy of their input (they went by conv_by_regions: up to 9 region kernels
    each, 1.5-3.3x slower: tests/bench/op_cliffs.py, edgert-bench --profile); the dense ones (rates
    2 and 4, asymmetric pads, strided), a grouped one (4 per group) and one on a map about
    its rate (rate 6 on 8x8: 3/4 of its products read padding) stay with conv_by_regions:
    no copy. Each with bias + ReLU after a 1x1 conv + ReLU of its own."""
    feeds = {"z": randn(1, 8, 14, 16)}
    #          c_in, c_out, groups, stride, dilation, pads
    convs = ((16, 16, 1, 1, (2, 2), [2, 2, 2, 2]),    # dense rate 2
             (16, 24, 1, 1, (4, 4), [4, 4, 4, 4]),    # dense rate 4
             (16, 16, 1, 1, (2, 2), [1, 2, 3, 2]),    # asymmetric pads
             (16, 16, 1, 2, (2, 2), [2, 2, 2, 2]),    # strided
             (16, 16, 4, 1, (2, 2), [2, 2, 2, 2]),    # grouped, 4 per group: no copy
             (16, 16, 16, 1, (4, 4), [4, 4, 4, 4]),   # depthwise rate 4
             (24, 24, 24, 1, (2, 3), [2, 3, 2, 3]),   # depthwise, per-dim rates
             (16, 16, 16, 1, (6, 6), [6, 6, 6, 6]))   # depthwise, rate 6 on 8x8: regions, no copy
    nodes, inits, outs = [], [], []
    for i, (c, m, g, s, d, pads) in enumerate(convs):
        src = "z"
        if i == len(convs) - 1:  # an 8x8 map
            nodes.append(h.make_node("MaxPool", ["z"], ["zp"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 1, 0]))
            src = "zp"
        nodes += [h.make_node("Conv", [src, f"ws{i}"], [f"s{i}"]), h.make_node("Relu", [f"s{i}"], [f"in{i}"]),
                  h.make_node("Conv", [f"in{i}", f"w{i}", f"b{i}"], [f"p{i}"], kernel_shape=[3, 3], group=g,
                              strides=[s, s], dilations=list(d), pads=pads),
                  h.make_node("Relu", [f"p{i}"], [f"y{i}"])]
        inits += [(f"ws{i}", randn(c, 8, 1, 1, scale=8 ** -0.5)),
                  (f"w{i}", randn(m, c // g, 3, 3, scale=(2 / (c // g * 9)) ** 0.5)), (f"b{i}", randn(m, scale=0.1))]
        outs.append(f"y{i}")
    check(model(nodes, feeds, outs, inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    assert_padded_copies("padded_dilated", 3)  # the two depthwise convs' and the MaxPool's of the input


def assert_channels_last_copy(name):
    """The last model check() ran, compiled again with --dump-kernels: at least one
    channels-last copy of the conv's input (a kernel named _Pad_ or _Permute_) and no conv
    kernel testing bounds; with --padded-grouped-convs 0 no copy. Not on OpenCL."""
    if lib.opencl_target():
        return
    for flag in ((), ("--padded-grouped-convs", "0")):
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", name, flag)
        copies = [n for n in kernels if "_Pad_" in n or "_Permute_" in n]
        guarded = [n for n, text in kernels.items() if "reduce ReduceSum" in text and "inbounds" in text]
        if flag:
            assert not copies, f"{name} {flag}: expected no copy, the dump has {copies}"
        else:
            assert copies and not guarded, f"{name}: expected a copy and no bounds tests: copies {copies}, guarded {guarded}"


@suite.case
def conv_over_one_computed_channel():
    """A padded 3x3 conv over one computed channel read through a transposing view (DNSMOS:
    a spectrogram (N, T, F) transposed and unsqueezed to (N, 1, F, T), then 1 -> 16 channels):
    the CPU targets copy the plane with its zero border first and run the conv without bounds
    tests (38 -> 13 ms CPU time for DNSMOS's 900 x 161 one, AVX2). CPU targets only."""
    if lib.opencl_target():
        return
    feeds = {"x": randn(1, 23, 31)}
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
             h.make_node("Unsqueeze", ["t", "axes"], ["u"]),
             h.make_node("Conv", ["u", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["y"])]
    inits = [("axes", np.array([1], np.int64)), ("w", randn(16, 1, 3, 3, scale=1 / 3)), ("b", randn(16, scale=0.1))]
    check(model(nodes, feeds, ["y"], inits), feeds, atol=1e-4, scale_tol=True)
    assert_channels_last_copy("one_computed_channel")


@suite.case
def grouped_convs_tile_loads_each_pixel_once():
    """Grouped convs whose channels per group are a multiple of the vector width but no power
    of 2 (24, 40, 48; RegNet's and ResNeXt-style widths) and a power of 2 for contrast (16, 64
    stride 2): the register tile's vectors cover one group, so an input pixel is the same for
    all of them. The CPU emitter indexes it from the tile's first vector (llvm_emit.cc
    same_for_every_tile_lane), one load per pixel: it loaded it once per vector (LLVM cannot
    prove (v + 8) / 24 == v / 24), 15 loads for 12 multiply-adds, 1.4-1.5x onnxruntime's time
    (tests/bench/op_cliffs.py). Checked against onnxruntime after a 1x1 conv + ReLU (channels-last
    input) with bias + ReLU; on x86_64 the 24-per-group conv's kernel must have fewer scalar
    (broadcast) loads than vector loads in its LLVM IR."""
    if lib.opencl_target():
        return  # a CPU code path (OpenCL grouped convs: grouped_convs, padded_grouped_convs)
    #         c, groups, hw, stride, pads
    convs = ((48, 2, (9, 11), 1, [1, 1, 1, 1]),    # 24 per group
             (120, 3, (7, 6), 1, [1, 0, 1, 2]),    # 40 per group, asymmetric pads
             (96, 2, (6, 7), 2, [1, 1, 1, 1]),     # 48 per group, stride 2
             (64, 4, (8, 8), 1, [1, 1, 1, 1]),     # 16 per group
             (128, 2, (9, 9), 2, [1, 1, 1, 1]))    # 64 per group, stride 2
    for i, (c, g, hw, s, pads) in enumerate(convs):
        feeds = {"z": randn(1, 8, *hw)}
        nodes = [h.make_node("Conv", ["z", "ws"], ["s"]), h.make_node("Relu", ["s"], ["a"]),
                 h.make_node("Conv", ["a", "w", "b"], ["p"], kernel_shape=[3, 3], group=g, strides=[s, s], pads=pads),
                 h.make_node("Relu", ["p"], ["y"])]
        inits = [("ws", randn(c, 8, 1, 1, scale=8 ** -0.5)), ("w", randn(c, c // g, 3, 3, scale=(2 / (c // g * 9)) ** 0.5)),
                 ("b", randn(c, scale=0.1))]
        check(model(nodes, feeds, ["y"], inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
        if i == 0 and os.environ.get("EDGE_TARGET", "x86_64") == "x86_64":
            ir = WORK / "grouped_tile_loads.ll"
            lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"m{_count[0]}.onnx", "-o", WORK / "grouped_tile.bundle",
                          "--dump-llvm-ir", ir])
            functions = ir.read_text().split("\ndefine ")
            conv = [f for f in functions if "fmul" in f]
            assert len(conv) == 2, f"expected two conv kernels in the LLVM IR, found {len(conv)}"
            scalar, vector = conv[1].count("= load float,"), conv[1].count("= load <8 x float>,")
            assert scalar < vector, f"the grouped conv loads each input pixel per vector: {scalar} scalar loads, {vector} vector loads"


@suite.case
def grouped_convs_in_chunks_of_groups():
    """Grouped convs whose weights outgrow the CPU emitter's cache budget (320 KB): their
    groups run in chunks whose weights fit, the image row-major inside each chunk
    (llvm_emit.cc vector_chunk; each group's own pass over an 80x80x768 image read 96 bytes of
    every 3 KB pixel). 663 KB of 24-per-group 3x3 stride-2 weights (chunks of 264, 264 and 240
    channels: the last one ragged), 12 per group (a vector spanning groups, 85 groups), 1x1 at
    64 per group; the first also a model output (NCHW: its channels split across cores, each
    core's share in chunks). Checked against onnxruntime at 1 thread, 3 threads bit-identical."""
    #         c, groups, kernel, stride, pads
    convs = ((768, 32, 3, 2, [1, 1, 1, 1]),
             (1020, 85, 3, 1, [1, 0, 1, 2]),
             (2048, 32, 1, 1, [0, 0, 0, 0]))
    feeds = {"z": randn(1, 8, 9, 11)}
    nodes, inits, outs = [], [], []
    for i, (c, g, k, s, pads) in enumerate(convs):
        nodes += [h.make_node("Conv", ["z", f"ws{i}"], [f"s{i}"]), h.make_node("Relu", [f"s{i}"], [f"a{i}"]),
                  h.make_node("Conv", [f"a{i}", f"w{i}", f"b{i}"], [f"p{i}"], kernel_shape=[k, k], group=g,
                              strides=[s, s], pads=pads),
                  h.make_node("Relu", [f"p{i}"], [f"q{i}"]),
                  h.make_node("ReduceMean", [f"q{i}"], [f"y{i}"], axes=[2, 3], keepdims=0)]
        inits += [(f"ws{i}", randn(c, 8, 1, 1, scale=8 ** -0.5)),
                  (f"w{i}", randn(c, c // g, k, k, scale=(2 / (c // g * k * k)) ** 0.5)), (f"b{i}", randn(c, scale=0.1))]
        outs.append(f"y{i}")
    outs.append("q0")  # also a model output: written NCHW
    checked_run(model(nodes, feeds, outs, inits, opset=17), feeds, "grouped_chunks", 1e-4, 1e-4)


@suite.case
def grouped_convs_groups_filled_to_the_lanes():
    """Grouped convs whose output channels per group are neither a multiple nor a divisor of
    the vector width (6, 20, 3, 10, 12 per group; fewer output than input channels or as many):
    the CPU targets fill each group up with zero-weight output channels to a width that fits
    the vectors (ops_nn.cc conv_with_lane_padded_groups) and pick the real ones out after; a
    vector of output channels then covers whole groups in a fixed pattern. Without it every
    input load was a gather (0.5-1.4 GFLOP/s, 6-16x onnxruntime: tests/bench/op_cliffs.py
    --random). Strides 1-2, dilation 2, 7x7, asymmetric pads, batch 2, a conv result read by
    the next conv (channels-last) and one that is the model's output; on x86_64 no conv kernel
    gathers."""
    #         c_in, c_out, groups, kernel, stride, dilation, pads, hw, batch
    convs = ((192, 96, 16, 3, 1, 1, [1, 1, 1, 1], (9, 10), 1),    # 12 -> 6 per group
             (40, 40, 2, 7, 1, 2, [6, 6, 6, 6], (15, 13), 1),     # 20 per group, dilated
             (96, 60, 6, 3, 2, 1, [1, 0, 1, 2], (11, 12), 2),     # 16 -> 10, stride 2, asymmetric
             (24, 12, 4, 3, 1, 1, [1, 1, 1, 1], (8, 9), 1),       # 6 -> 3 per group
             (160, 96, 8, 1, 1, 1, [0, 0, 0, 0], (7, 7), 1))      # 20 -> 12 per group, 1x1
    for i, (c, m, g, k, s, d, pads, hw, n) in enumerate(convs):
        feeds = {"z": randn(n, 8, *hw)}
        nodes = [h.make_node("Conv", ["z", "ws"], ["s"]), h.make_node("Relu", ["s"], ["a"]),
                 h.make_node("Conv", ["a", "w", "b"], ["p"], kernel_shape=[k, k], group=g, strides=[s, s],
                             dilations=[d, d], pads=pads),
                 h.make_node("Relu", ["p"], ["r"]),
                 h.make_node("Conv", ["r", "w2"], ["y"], kernel_shape=[1, 1])]
        inits = [("ws", randn(c, 8, 1, 1, scale=8 ** -0.5)),
                 ("w", randn(m, c // g, k, k, scale=(2 / (c // g * k * k)) ** 0.5)), ("b", randn(m, scale=0.1)),
                 ("w2", randn(8, m, 1, 1, scale=m ** -0.5))]
        check(model(nodes, feeds, ["y", "p"], inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
        if os.environ.get("EDGE_TARGET", "x86_64") == "x86_64":
            ir = WORK / f"grouped_lanes_{i}.ll"
            lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"m{_count[0]}.onnx", "-o",
                          WORK / f"grouped_lanes_{i}.bundle", "--dump-llvm-ir", ir])
            gathers = [f.split("(")[0] for f in ir.read_text().split("\ndefine ")[1:] if "fmul" in f and "masked.gather" in f]
            assert not gathers, f"conv {i} ({c} -> {m}, {g} groups): kernels that gather: {gathers}"


@suite.case
def grouped_convs_filled_read_by_a_pool():
    """Grouped convs filled up to the vector width (conv_with_lane_padded_groups) whose result
    is an intermediate, read by a GlobalAveragePool. A dilated one summed over regions (ops_nn.cc
    conv_by_regions) is filled before the split: its regions add up whole groups, stored
    channels-last, and its reader picks the real channels once, with no bounds test (it picked
    them through each region's zero padding; 32 groups of 20 -> 10, 3x1 dilated, 112x112:
    1.7-1.9x onnxruntime). Strides 1-2, 3x1 and 3x3 dilated, a 1x5 strip, a Conv1d,
    asymmetric pads, channels not a multiple of 8, batch 2; on x86_64 no kernel of a 2-D one
    scatters (the regions' sum into (N, G * filled, H, W) did). Not on OpenCL (no vector lanes
    to fill)."""
    if lib.opencl_target():
        return
    #         c_in, c_out, groups, kernel, stride, dilation, pads, hw, batch
    convs = ((80, 40, 4, (3, 1), 1, 2, [2, 0, 2, 0], (13, 9), 1),   # 20 -> 10, dilated: regions
             (60, 30, 3, (3, 3), 2, 1, [1, 0, 1, 2], (11, 12), 2),  # 20 -> 10, stride 2, asymmetric
             (72, 36, 6, (1, 5), 1, 1, [0, 2, 0, 2], (7, 10), 1),   # 12 -> 6, 1x5 strip
             (40, 40, 2, (3, 3), 1, 2, [2, 2, 2, 2], (12, 12), 1),  # 20 per group, 3x3 dilated
             (48, 48, 16, (3,), 1, 1, [1, 2], (19,), 2))             # 3 per group, Conv1d
    for i, (c, m, g, k, s, d, pads, hw, n) in enumerate(convs):
        feeds = {"z": randn(n, 8, *hw)}
        nodes = [h.make_node("Conv", ["z", "ws"], ["s"]), h.make_node("Relu", ["s"], ["a"]),
                 h.make_node("Conv", ["a", "w", "b"], ["p"], kernel_shape=list(k), group=g, strides=[s] * len(k),
                             dilations=[d] * len(k), pads=pads),
                 h.make_node("Relu", ["p"], ["r"]), h.make_node("GlobalAveragePool", ["r"], ["y"])]
        inits = [("ws", randn(c, 8, *[1] * len(k), scale=8 ** -0.5)),
                 ("w", randn(m, c // g, *k, scale=(2 / (c // g * np.prod(k))) ** 0.5)), ("b", randn(m, scale=0.1))]
        check(model(nodes, feeds, ["y"], inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
        if os.environ.get("EDGE_TARGET", "x86_64") != "x86_64" or len(k) == 1:
            continue  # a Conv1d reads (and stores) channels-first, its vectors along the row
        ir = WORK / f"filled_groups_{i}.ll"
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"filled_groups_{i}", ["--dump-llvm-ir", ir])
        scatters = [f.split("(")[0] for f in ir.read_text().split("\ndefine ")[1:] if "masked.scatter" in f]
        assert not scatters, f"conv {i} ({c} -> {m}, {g} groups): kernels that scatter: {scatters}"
        if d > 1:
            pool = next(text for name, text in kernels.items() if name.endswith("_y"))
            assert "inbounds" not in pool, f"conv {i}: the pool reads the regions through their padding:\n{pool}"


@suite.case
def pools_of_the_input_over_padded_copy():
    """Padded MaxPool / AveragePool over the model's NCHW input: the CPU targets copy the input
    with its border first (ops_nn.cc pool_windows) and pool without bounds tests; over the
    input itself every tap's load was bounds-tested and masked (AveragePool 3x3 stride 1 over
    96 x 112 x 112: 2.4x onnxruntime's time). Averages with and without count_include_pad,
    ceil_mode (the overhang is no tap), asymmetric pads, stride 2, rows that are not a multiple
    of the vector width; the pooling kernels of the CPU bundle have no bounds tests."""
    #        op, kernel, strides, pads, extra attrs
    pools = (("AveragePool", 3, 1, [1, 1, 1, 1], {}),
             ("AveragePool", 3, 2, [1, 0, 1, 2], dict(count_include_pad=1)),
             ("AveragePool", 5, 2, [2, 2, 2, 2], dict(ceil_mode=1)),
             ("MaxPool", 3, 2, [1, 1, 1, 1], {}),
             ("MaxPool", 2, 2, [0, 1, 0, 1], dict(ceil_mode=1)))
    for i, (op, k, st, pads, attrs) in enumerate(pools):
        feeds = {"x": randn(2, 5, 13, 19)}
        node = h.make_node(op, ["x"], ["y"], kernel_shape=[k, k], strides=[st, st], pads=pads, **attrs)
        check(model([node], feeds, ["y"], []), feeds, atol=1e-5)
        if not lib.opencl_target():
            kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"pool_copy_{i}")
            guarded = [n for n, text in kernels.items() if "inbounds" in text and "reduce" in text]
            want = 3 if k >= 3 else 2  # a separable pool: the copy, columns, then rows
            assert len(kernels) == want and not guarded, f"{op} {i}: kernels {sorted(kernels)}, bounds-tested {guarded}"


@suite.case
def pools_separable():
    """2-D MaxPools and AveragePools of kernels 3 and up in both dims as the max / sum along
    the columns' windows then along the rows' (ops_nn.cc separable_pool_2d: kh + kw loads per
    output, not kh * kw; 5x5 stride 2 max over 256 x 80 x 80 was 1.86x onnxruntime's time, a
    5x5 stride 2 average over 256 x 40 x 40 1.9x): strides 2 and (1, 2), dilations, ceil_mode,
    asymmetric pads, count_include_pad, int8 and uint8 values, over the model's NCHW input and
    over a conv's channels-last result (YOLO's SPPF: 5x5 stride 1 pad 2, three in a row). The
    CPU dump's pooling kernels each reduce over one dim, and over the conv's result both
    passes write channels-last buffers (a channels-first buffer between them made both passes
    transpose, every load or store gathered: ResNet-18's stem MaxPool took 1.8 ms, 0.2 now);
    MaxPool's indices output keeps the one window (every tap's position)."""
    #        op, kernel, strides, pads, dilations, extra attrs, dtype
    pools = (("MaxPool", [5, 5], [2, 2], [0, 0, 0, 0], [1, 1], {}, np.float32),
             ("MaxPool", [3, 5], [1, 2], [1, 2, 1, 2], [2, 1], {}, np.float32),
             ("MaxPool", [5, 3], [2, 2], [2, 0, 1, 1], [1, 1], dict(ceil_mode=1), np.float32),
             ("MaxPool", [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], {}, np.int8),
             ("MaxPool", [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], {}, np.uint8),
             ("AveragePool", [5, 5], [2, 2], [2, 2, 2, 2], [1, 1], {}, np.float32),
             ("AveragePool", [3, 5], [1, 2], [1, 2, 0, 1], [1, 1], dict(count_include_pad=1), np.float32),
             ("AveragePool", [5, 3], [2, 2], [2, 1, 2, 1], [1, 1], dict(ceil_mode=1), np.float32))
    # rusticl (Mesa 22.3, LLVM 15) dies with SIGSEGV in its own compiler (SelectionDAG type
    # legalization) on any 8-bit 3x3 padded MaxPool kernel, main's one-window form included; PoCL
    # runs them. Tried in opencl_emit.cc without effect: max() for the integer max, the char
    # padding select done in int. A driver crash, so the 8-bit cases are left to PoCL and the CPUs.
    rusticl = lib.opencl_target() and os.environ.get("EDGERT_OPENCL_PLATFORM") == "rusticl"
    for i, (op, k, st, pads, dil, attrs, dt) in enumerate(pools):
        if rusticl and dt != np.float32:
            continue
        x = randn(2, 5, 13, 19) * 40 if dt != np.float32 else randn(2, 5, 13, 19)
        feeds = {"x": np.clip(x, np.iinfo(dt).min, np.iinfo(dt).max).astype(dt) if dt != np.float32 else x}
        if dil != [1, 1]:
            attrs = dict(attrs, dilations=dil)
        node = h.make_node(op, ["x"], ["y"], kernel_shape=k, strides=st, pads=pads, **attrs)
        check(model([node], feeds, ["y"], [], opset=19), feeds, atol=0 if op == "MaxPool" else 1e-5)
        if not lib.opencl_target():
            kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"pool_sep_{i}")
            both = [n for n, text in kernels.items() if re.search(r"reduce Reduce(Max|Sum) over \[\d+,", text)]
            assert not both, f"{op} {i} {k}: kernels reducing over both dims: {both}"
    # SPPF over a 1x1 conv's (channels-last) result, and the indices output.
    feeds = {"x": randn(1, 16, 20, 20)}
    nodes = [h.make_node("Conv", ["x", "w"], ["c"]),
             h.make_node("MaxPool", ["c"], ["p1"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
             h.make_node("MaxPool", ["p1"], ["p2"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
             h.make_node("MaxPool", ["p2"], ["p3"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
             h.make_node("Concat", ["c", "p1", "p2", "p3"], ["y"], axis=1),
             h.make_node("MaxPool", ["x"], ["v", "idx"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])]
    check(model(nodes, feeds, ["y", "v", ("idx", TP.INT64)], [("w", randn(32, 16, 1, 1, scale=0.25))]), feeds)
    if not lib.opencl_target():
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", "pool_sep_sppf")
        passes = {n: text.splitlines()[0] for n, text in kernels.items() if "reduce ReduceMax over [5]" in text}
        stored_nchw = {n: head for n, head in passes.items() if "out[1,20,20,32]" not in head}
        assert len(passes) == 6 and not stored_nchw, f"SPPF's 6 pooling passes, not channels-last: {stored_nchw}"


@suite.case
def grouped_convs_spanning_groups_and_border_taps():
    """Grouped convs whose vector of output channels spans groups (2 and 4 channels per
    group, ResNeXt's first stage) and strided grouped convs whose register tiles touch the
    padded border (8 / 16 per group at stride 2, ResNeXt's and RegNet's downsampling
    blocks), read from channels-last intermediates: 4 per group on 40 channels (the last
    vector ragged), stride 2 with asymmetric pads, batch 2; against onnxruntime, 3 threads
    bit-identical to 1. On x86_64 (llvm_emit.cc): the spanning conv's input channel loop is
    written out, every step picking its channel from one unmasked load of the pixel's span
    (it was a masked load of two elements per multiply-add, half the dense convs' GFLOP/s:
    no llvm.masked.load in its IR), and a border tile tests each tap of its window, running
    the input channel loop unguarded wherever the tap reads no padding (its IR has the step_ blocks;
    the whole tile was guarded) and, where the tap reads padding, with the guard test and the
    load's index outside the loop (no integer select in it)."""
    if lib.opencl_target():
        return  # CPU code paths (OpenCL grouped convs: grouped_convs, padded_grouped_convs)
    #        name, channels, groups, stride, pads
    convs = (("span4", 64, 16, 1, [1, 1, 1, 1]),       # 4 per group: a vector spans 2 groups
             ("span4r", 40, 10, 1, [1, 1, 1, 1]),      # 4 per group, 40 channels: ragged last vector
             ("span2s", 32, 16, 2, [1, 1, 1, 1]),      # 2 per group, stride 2: border tiles
             ("edge8", 24, 3, 2, [0, 1, 1, 0]),        # 8 per group, stride 2, asymmetric pads
             ("edge16", 48, 3, 2, [1, 1, 1, 1]))       # 16 per group, stride 2
    feeds = {"x": randn(2, 8, 13, 11)}
    nodes, inits, outs = [], [], []
    for name, c, g, s, pads in convs:
        nodes += [h.make_node("Conv", ["x", f"{name}_ws"], [f"{name}_s"]), h.make_node("Relu", [f"{name}_s"], [f"{name}_a"]),
                  h.make_node("Conv", [f"{name}_a", f"{name}_w", f"{name}_b"], [f"{name}_p"], kernel_shape=[3, 3], group=g,
                              strides=[s, s], pads=pads),
                  h.make_node("Relu", [f"{name}_p"], [name]),
                  h.make_node("Conv", [name, f"{name}_wo"], [f"{name}_y"])]
        inits += [(f"{name}_ws", randn(c, 8, 1, 1, scale=8 ** -0.5)),
                  (f"{name}_w", randn(c, c // g, 3, 3, scale=(2 / (c // g * 9)) ** 0.5)), (f"{name}_b", randn(c, scale=0.1)),
                  (f"{name}_wo", randn(4, c, 1, 1, scale=c ** -0.5))]
        outs.append(f"{name}_y")
    m = model(nodes, feeds, outs, inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    bundle = WORK / f"m{_count[0]}.bundle"
    one = lib.run_bundle(bundle, feeds, WORK / "span_t1", outs, threads=1)
    three = lib.run_bundle(bundle, feeds, WORK / "span_t3", outs, threads=3)
    for name in outs:
        assert np.array_equal(one[name], three[name]), f"{name}: 3 threads differ from 1"
    if os.environ.get("EDGE_TARGET", "x86_64") != "x86_64":
        return
    ir = WORK / "grouped_span.ll"
    lib.run_tool([lib.find_tool("edgec"), "compile", WORK / f"m{_count[0]}.onnx", "-o", WORK / "grouped_span.bundle",
                  "--dump-llvm-ir", ir])
    kernels = {f.split("(")[0].split("_", 1)[1]: f for f in ir.read_text().split("\ndefine dso_local void @k")[1:]}
    assert "llvm.masked.load" not in kernels["span4"], "the 4-per-group conv loads its input spans masked"
    for name in ("span2s", "edge8", "edge16"):
        assert re.search(r"\bstep_(inside|border|joined)", kernels[name]), f"{name}: the border tiles guard every tap"
        # In a loop over the input channels under a guarded tap the only selects are the
        # padding's zeros (float): the load's index (an integer select) stays out of the loop.
        for block in re.split(r"\n(?=[\w.]+:)", kernels[name]):
            label = block.split(":")[0]
            if re.search(rf"label %{re.escape(label)}\b", block) and "fmul" in block:
                index_selects = re.findall(r"= select (?:<\d+ x )?i1>?[^,]*, (?:<\d+ x )?i(?:32|64)\b", block)
                assert not index_selects, f"{name}: {len(index_selects)} index selects in loop {label}"


@suite.case
def channels_first_convs_over_channels_last_copy():
    """Convs reading channels-first data (ops_nn.cc reads_channels_first): Conv1d (whose
    (N, C, L) inputs are never stored channels-last), dense and stride-1 depthwise convs and
    ConvTransposes of the model's NCHW input (5x5 depthwise ones at stride 2 too), strided grouped convs of it,
    stride-1 grouped ones of more than one tap and grouped ConvTransposes. The CPU targets run them over a channels-last
    copy of the input (padded where the conv pads; one copy for a dilated Conv1d, not one per
    conv_by_regions region): vectors of output channels, no masked row loads; the phases of
    a ConvTranspose with as many outputs each are stacked and interleaved by one permute (they ran at
    1.2-3.6x onnxruntime's time, a stride-2 conv of 4 groups of 64 channels 8x: tests/bench/op_cliffs.py). Channel counts off the vector
    width, kernel 1-7, dilations 1-4, strides 1-2, pads symmetric and not, batch 2."""
    f = lambda *s: randn(*s)  # noqa: E731
    #        name, x shape, op, weight shape, attrs
    cases = (("conv1d_k3", (1, 12, 37), "Conv", (20, 12, 3), dict(pads=[1, 1])),
             ("conv1d_k5_d2", (2, 16, 50), "Conv", (9, 16, 5), dict(pads=[4, 4], dilations=[2])),
             ("conv1d_k7_d4_asym", (1, 10, 64), "Conv", (24, 10, 7), dict(pads=[12, 5], dilations=[4])),
             ("conv1d_k3_s2", (1, 13, 41), "Conv", (17, 13, 3), dict(pads=[1, 1], strides=[2])),
             ("conv1d_k1", (1, 33, 29), "Conv", (16, 33, 1), {}),
             ("conv2d_1x1", (1, 20, 9, 11), "Conv", (12, 20, 1, 1), {}),
             ("conv2d_5x5", (1, 6, 13, 10), "Conv", (10, 6, 5, 5), dict(pads=[2, 1, 2, 3])),
             ("conv2d_3x3_c3", (1, 3, 15, 17), "Conv", (8, 3, 3, 3), dict(pads=[1, 1, 1, 1])),
             ("depthwise_7x7", (1, 20, 15, 13), "Conv", (20, 1, 7, 7), dict(pads=[3, 3, 3, 3], group=20)),
             ("depthwise_5x5", (2, 12, 11, 9), "Conv", (12, 1, 5, 5), dict(pads=[2, 1, 2, 2], group=12)),
             ("depthwise_5x5_s2", (2, 11, 15, 12), "Conv", (11, 1, 5, 5), dict(pads=[2, 2, 1, 2], strides=[2, 2], group=11)),
             ("grouped_s2", (1, 32, 13, 12), "Conv", (32, 8, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2], group=4)),
             ("grouped_s2_unpadded", (1, 24, 9, 10), "Conv", (36, 8, 3, 3), dict(strides=[2, 2], group=3)),
             ("grouped_3x3_unpadded", (1, 32, 11, 12), "Conv", (32, 8, 3, 3), dict(group=4)),
             ("grouped_2x2", (2, 24, 9, 10), "Conv", (36, 12, 2, 2), dict(group=2)),
             ("convT_k4s2p1_g2", (1, 16, 7, 8), "ConvTranspose", (16, 6, 4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1], group=2)),
             ("convT_k3s2p1op1_g3", (1, 12, 9, 7), "ConvTranspose", (12, 5, 3, 3),
              dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], group=3)),
             ("convT_k3s2p1op1", (1, 12, 9, 10), "ConvTranspose", (12, 10, 3, 3),
              dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
             ("convT_k4s2p1", (1, 9, 7, 8), "ConvTranspose", (9, 16, 4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1])))
    for name, xs, op, ws, attrs in cases:
        fan_in = int(np.prod(ws[1:])) if op == "Conv" else ws[0]
        out_channels = ws[0] if op == "Conv" else ws[1] * attrs.get("group", 1)
        inits = [("w", f(*ws) * np.float32(fan_in ** -0.5)), ("b", f(out_channels))]
        feeds = {"x": f(*xs)}
        kernel = dict(kernel_shape=list(ws[2:]))
        check(model([h.make_node(op, ["x", "w", "b"], ["y"], **kernel, **attrs)], feeds, ["y"], inits, opset=17),
              feeds, atol=1e-4, scale_tol=True)
        assert_channels_last_copy(f"channels_first_{name}")
        if op == "ConvTranspose" and not lib.opencl_target():
            # Phases with other taps but as many outputs: stacked and permuted, no kernel summing
            # every phase's buffer through guarded (masked div/mod) loads.
            kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"channels_first_{name}")
            summing = [n for n, text in kernels.items() if text.count(" if ") > 1]
            assert not summing, f"{name}: kernels reading several phases through guards: {summing}"


@suite.case
def padded_copies_transposed_in_register_blocks():
    """The zero-bordered channels-last copy of a conv's NCHW input (ops_nn.cc
    channels_last_padded_spatial) loads rows along the width and transposes them in registers,
    its padding a mask along each row (llvm_emit.cc choose_transposed_blocks): it gathered
    element by element (a third of a stride-2 grouped conv's time, tests/bench/op_cliffs.py).
    Rows wholly in the padding (top, bottom), partly (left, right, asymmetric pads), channel
    counts and widths off the vector width, batch 2; 1 and 3 threads bit-identical; the copy
    kernel's LLVM IR has no gather. CPU code only: not on OpenCL."""
    if lib.opencl_target():
        return
    feeds = {"x": randn(2, 20, 13, 11)}
    #        weight shape, attrs
    convs = (((20, 5, 3, 3), dict(pads=[1, 2, 2, 1], strides=[2, 2], group=4)),
             ((20, 1, 7, 7), dict(pads=[3, 3, 3, 3], group=20)),
             ((10, 20, 5, 5), dict(pads=[2, 0, 1, 4])))
    nodes, inits = [], []
    for i, (ws, attrs) in enumerate(convs):
        nodes.append(h.make_node("Conv", ["x", f"w{i}", f"b{i}"], [f"y{i}"], kernel_shape=list(ws[2:]), **attrs))
        inits += [(f"w{i}", randn(*ws) * np.float32(int(np.prod(ws[1:])) ** -0.5)), (f"b{i}", randn(ws[0]))]
    m = model(nodes, feeds, ["y0", "y1", "y2"], inits, opset=17)
    ir = WORK / "padded_copies.ll"
    with_ir = not lib.target_family("hexagon")
    one = lib.compile_and_run(m, feeds, WORK, name="padded_copies", threads=1,
                              compile_args=("--dump-llvm-ir", ir) if with_ir else ())
    three = lib.run_bundle(WORK / "padded_copies.bundle", feeds, WORK / "padded_copies_3", lib.output_names(m), threads=3)
    for name, want in lib.ort_run(m, feeds).items():
        tol = 1e-4 * max(1.0, float(np.abs(want).max()))
        assert np.allclose(one[name], want, rtol=1e-4, atol=tol), f"{name}: max abs err {np.abs(one[name] - want).max():.3g}"
        assert np.array_equal(one[name], three[name]), f"{name}: 1 and 3 threads differ"
    if with_ir:  # hexagon-v65's HVX has no float lanes: no transposed blocks
        copies = [f for f in ir.read_text().split("\ndefine ")[1:] if "_Pad_" in f.split("(")[0]]
        assert len(copies) >= 3, f"expected a padded copy per conv, the IR has {len(copies)}"
        assert not any("masked.gather" in f for f in copies), "a padded copy gathers its elements"


@suite.case
def conv_split_by_output_channels():
    """Convs whose products (each output times its taps: N x M x O x C/G x K) are more than the
    2^32 elements a graph node may have: DNSMOS's 128 -> 64 channel 3x3 conv over a 900 x 161
    spectrogram has 1.1e10 and was refused. edgec computes them as convs of fewer output
    channels (whole groups) concatenated. An 11x11 conv, 64 -> 56 channels on 100x100 (4.3e9
    products), and a 2-group 11x11 conv, 64 -> 64 on 132x132 (4.3e9): ~4.4 GFLOP each, with
    bias and ReLU. The chunks read one padded channels-last copy of the input, made once
    (each chunk made its own: DNSMOS copied its 41 MB input twice). A dense conv's chunks are
    whole vectors of output channels (x86_64: 8) where that takes no more chunks, 32 + 24 here:
    balanced as 28 + 28, every chunk's last vector had 4 idle lanes (DNSMOS's 128 -> 64 conv as
    24 / 24 / 16, not 22 / 22 / 20: 0.87 of the time, AVX2).
    CPU targets only (on rusticl's OpenCL the run would take most of a minute)."""
    if lib.opencl_target():
        return
    for groups, hw, k in ((1, 100, 56), (2, 132, 64)):
        c = 64
        feeds = {"x": randn(1, c, hw, hw)}
        nodes = [h.make_node("Conv", ["x", "w", "b"], ["a"], kernel_shape=[11, 11], pads=[5, 5, 5, 5], group=groups),
                 h.make_node("Relu", ["a"], ["y"])]
        inits = [("w", randn(k, c // groups, 11, 11, scale=(2 / (121 * c // groups)) ** 0.5)), ("b", randn(k, scale=0.1))]
        check(model(nodes, feeds, ["y"], inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"conv_split_{groups}")
        copies = [n for n in kernels if "_Pad_" in n or "_Permute_" in n]
        convs = [n for n, text in kernels.items() if "reduce ReduceSum" in text]
        assert len(copies) == 1 and len(convs) >= 2, f"groups {groups}: copies {copies}, convs {convs}"
        # x86_64 (the dump's target): each chunk's channels (channels-last, the last dim) in whole vectors
        widths = [int(kernels[n].split("]")[0].split(",")[-1]) for n in convs]
        assert all(w % 8 == 0 for w in widths), f"groups {groups}: chunks of {widths} output channels"


@suite.case
def activation_read_thrice_over_pieces():
    """A LeakyReLU (three ops reading its input: a compare, a multiply, a select) over a value
    assembled from pieces, then a MaxPool, as in PLCMOS: a dilated (2, 1) 3x3 conv with pads
    over a computed input, summed by regions (each region a conv kernel; 16 -> 24 channels on
    22x20, bias). On the CPU targets the activation is computed in the pieces' kernels, cut at
    their ends, as a ReLU (one op) was: the x86_64 dump has no kernel applying it to the whole
    stored sum (a second pass over the conv's result, 0.27 + 0.12 ms of PLCMOS's 14). Not on
    OpenCL (the schedule is the same; rusticl would spend its time building the pieces)."""
    if lib.opencl_target():
        return
    feeds = {"x": randn(1, 16, 22, 20)}
    inits = [("w0", randn(16, 16, 1, 1, scale=0.3)), ("w", randn(24, 16, 3, 3, scale=0.1)), ("b", randn(24, scale=0.2))]
    nodes = [h.make_node("Conv", ["x", "w0"], ["x1"], kernel_shape=[1, 1]),
             h.make_node("Conv", ["x1", "w", "b"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], dilations=[2, 1]),
             h.make_node("LeakyRelu", ["a"], ["r"], alpha=0.1),
             h.make_node("MaxPool", ["r"], ["y"], kernel_shape=[1, 4], strides=[1, 4])]
    check(model(nodes, feeds, ["y"], inits), feeds, rtol=1e-4, atol=1e-5)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "activation_pieces")
    whole = [n for n, text in kernels.items() if "CmpLt" in text and " at [" not in text.splitlines()[0]]
    assert not whole, f"the activation applied to the stored sum: {whole}"


@suite.case
def dense_block_concats():
    """A DenseNet dense block as torchvision exports it: each layer concatenates the block's
    input and every earlier layer's output (a Concat per layer), then BatchNormalization,
    ReLU, a 1x1 conv, BatchNormalization, ReLU and a padded 3x3 conv adds its own channels;
    the block ends in a transition (BN, ReLU, 1x1 conv over the last Concat). Sources of 13,
    8, 5, 24 and 3 channels (multiples of the vector width and not), 10x12 pixels; checked
    again with --winograd 2, where the 24-channel layer's 3x3 conv is a Winograd one whose
    result the Concats read: the CPU targets store it channels-last (it was stored (N, H, C,
    W), 12 floats between channels). The CPU targets cut each Concat's BN + ReLU kernel at the sources' ends
    (kernel_ir.h, split_at_part_boundaries): one kernel per source, no bounds tests left. A
    piece cut one channel off would read the next source's channel with the wrong scale."""
    c0, hh, ww, growths, mid = 13, 10, 12, (8, 5, 24, 3), 16
    feeds = {"x": randn(1, c0, hh, ww)}
    nodes, inits, sources = [], [], ["x"]

    def bn_relu(src, ch, name):
        inits.extend([(f"{name}_s", 1 + randn(ch, scale=0.3)), (f"{name}_b", randn(ch, scale=0.2)),
                      (f"{name}_m", randn(ch, scale=0.2)), (f"{name}_v", 0.5 + RNG.random(ch).astype(np.float32))])
        nodes.extend([h.make_node("BatchNormalization", [src, f"{name}_s", f"{name}_b", f"{name}_m", f"{name}_v"],
                                  [f"{name}_bn"], epsilon=1e-5),
                      h.make_node("Relu", [f"{name}_bn"], [f"{name}_r"])])
        return f"{name}_r"

    channels = c0
    for i, g in enumerate(growths):
        cat = "x" if i == 0 else f"cat{i}"
        if i:
            nodes.append(h.make_node("Concat", list(sources), [cat], axis=1))
        r1 = bn_relu(cat, channels, f"n1_{i}")
        nodes.append(h.make_node("Conv", [r1, f"w1_{i}"], [f"c1_{i}"], kernel_shape=[1, 1]))
        r2 = bn_relu(f"c1_{i}", mid, f"n2_{i}")
        nodes.append(h.make_node("Conv", [r2, f"w2_{i}"], [f"y{i}"], kernel_shape=[3, 3], pads=[1] * 4))
        inits += [(f"w1_{i}", randn(mid, channels, 1, 1, scale=channels ** -0.5)),
                  (f"w2_{i}", randn(g, mid, 3, 3, scale=(9 * mid) ** -0.5))]
        sources.append(f"y{i}")
        channels += g
    nodes.append(h.make_node("Concat", list(sources), ["block"], axis=1))
    rt = bn_relu("block", channels, "transition")
    nodes.append(h.make_node("Conv", [rt, "wt"], ["y"], kernel_shape=[1, 1]))
    inits.append(("wt", randn(channels // 2, channels, 1, 1, scale=channels ** -0.5)))
    m = model(nodes, feeds, ["y"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    winograd = ("--winograd", "2")
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True, compile_args=winograd)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "dense_block", winograd)
    stored = [text.split("\n")[0] for name, text in kernels.items() if name.endswith("_y2")]
    assert stored and f"out[1,{hh},{ww},24]" in stored[0], f"the Winograd result is not stored (N, H, W, C): {stored}"
    # The transition's BN + ReLU over the block's 5 sources: 5 pieces, none with a bounds test.
    pieces = {name: text for name, text in kernels.items() if "transition_r" in name}
    assert len(pieces) == len(sources), f"the last Concat's consumer is not cut per source: {sorted(pieces)}"
    tested = [name for name, text in pieces.items() if "inbounds" in text or " if " in text]
    assert not tested, f"pieces still test bounds: {tested}"

@suite.case
def concat_of_many_sources():
    """torch.stack over an unrolled loop: 100 steps, each Relu(x * c_i) unsqueezed and
    concatenated along a new axis 1 (1, 100, 16), then a Sigmoid over the stack. More sources
    than kernel pieces (64): the CPU targets cut the Sigmoid's kernel into at most 64 pieces
    of one or two sources each (kernel_split.cc, at_most_pieces). Uncut, every element tested
    the bounds of all 100 sources (a 256-source case 16x onnxruntime's time)."""
    steps, width = 100, 16
    feeds = {"x": randn(1, width)}
    nodes, inits, stacked = [], [("axis1", np.array([1], np.int64))], []
    for i in range(steps):
        inits.append((f"c{i}", randn(1, width)))
        nodes += [h.make_node("Mul", ["x", f"c{i}"], [f"m{i}"]), h.make_node("Relu", [f"m{i}"], [f"r{i}"]),
                  h.make_node("Unsqueeze", [f"r{i}", "axis1"], [f"u{i}"])]
        stacked.append(f"u{i}")
    nodes += [h.make_node("Concat", stacked, ["stack"], axis=1), h.make_node("Sigmoid", ["stack"], ["y"])]
    m = model(nodes, feeds, ["y"], inits)
    check(m, feeds)
    if lib.opencl_target() or lib.target_family("hexagon"):
        return  # no CPU kernel dump; Hexagon keeps one kernel (no pieces there yet)
    kernels = _kernels(WORK / f"m{_count[0]}.onnx", "many_sources")
    pieces = {name: text for name, text in kernels.items() if name.endswith("_y") or "_y_" in name}
    assert 2 <= len(pieces) <= 64, f"the stack's kernel is not cut in 2-64 pieces: {sorted(pieces)}"
    tests = max(text.count("inbounds") for text in pieces.values())
    assert tests <= 2 * -(-steps // 64), f"a piece tests the bounds of {tests} sources (100 sources, 64 pieces)"


@suite.case
def tiles_of_rows_no_multiple_of_the_vector():
    """Tile repeating a last dim that is no multiple of 8 (28 four times, 20 three times with
    the rows twice, +1 to keep the Tile out of the output's own copy): each output vector
    straddled a period and gathered its lanes (8.8x onnxruntime's time). The CPU targets cut
    the kernel at the periods' ends (kernel_split.cc, add_period_cuts): one piece per period,
    its loads without a modulo. A 10-wide period (shorter than two vectors) stays one kernel.
    Where the outer dims repeat too (20 by (2, 2, 3), 14 by (3, 2, 4)), the rows are repeated
    first into a buffer of their own (ops_shape.cc lower_tile) and the output copies whole rows:
    its kernel reads the last dim without a modulo (Tile [1,3,2,4] of 256 x 14 x 14 gathered
    in every copy, 2.2x onnxruntime's time). "The vector" is the target's floats (8 on AVX2):
    compiled for AVX-512 and NEON, rows first for 24 on AVX-512, not for 20 on NEON."""
    for shape, repeats, pieces in (((1, 8, 6, 28), (1, 1, 1, 4), 4), ((1, 5, 7, 20), (1, 2, 2, 3), 3),
                                   ((1, 4, 5, 10), (1, 1, 1, 4), 0), ((1, 6, 5, 14), (1, 3, 2, 4), 0)):
        feeds = {"x": randn(*shape)}
        nodes = [h.make_node("Tile", ["x", "r"], ["t"]), h.make_node("Add", ["t", "one"], ["y"])]
        m = model(nodes, feeds, ["y"], [("r", np.array(repeats, np.int64)), ("one", np.array(1, np.float32))])
        check(m, feeds, rtol=0, atol=0)
        if lib.opencl_target() or lib.target_family("hexagon"):
            continue  # no CPU kernel dump; Hexagon keeps one kernel (no pieces there yet)
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"tile_{shape[-1]}")
        cut = {name: text for name, text in kernels.items() if " at [" in text.splitlines()[0]}
        assert len(cut) == pieces, f"Tile of {shape} by {repeats}: {len(cut)} pieces, want {pieces}: {sorted(kernels)}"
        modulo = [name for name, text in cut.items() if f"%{shape[-1]}" in text.replace(" ", "")]
        assert not modulo, f"pieces still read through a modulo of {shape[-1]}: {modulo}"
        if np.prod(repeats[:-1]) > 1:  # the output: one kernel (rows first) or cut at the periods
            out = {name: text for name, text in kernels.items() if re.search(r"_y(_\d+)?$", name)}
            assert out and not any(f"%{shape[-1]}" in text.replace(" ", "") for text in out.values()), \
                f"Tile of {shape} by {repeats}: the output gathers:\n{out}"
    if os.environ.get("EDGE_TARGET", "x86_64") != "x86_64":
        return
    # The vector is the target's (OpContext::vector_floats), compiled here, not run: rows first
    # where the period is no multiple of it (24 on AVX-512's 16 floats; main's rule, % 8, left
    # one kernel gathering (v3)%24 in every copy), one kernel where it is (24 on AVX2: (v3)%24
    # the same in a vector's lanes; 20 on NEON's 4 floats, cut at the periods: no buffer of rows
    # written and read again).
    for target, shape, rows_first in (("x86_64-avx512", (1, 6, 5, 24), True), ("x86_64", (1, 6, 5, 24), False),
                                      ("aarch64", (1, 5, 7, 20), False), ("aarch64", (1, 6, 5, 14), True)):
        feeds = {"x": randn(*shape)}
        nodes = [h.make_node("Tile", ["x", "r"], ["t"]), h.make_node("Add", ["t", "one"], ["y"])]
        m = model(nodes, feeds, ["y"], [("r", np.array((1, 3, 2, 4), np.int64)), ("one", np.array(1, np.float32))])
        path = WORK / f"tile_rows_{target}_{shape[-1]}.onnx"
        onnx.save(m, path)
        kernels = _kernels(path, f"tile_rows_{target}_{shape[-1]}", ("--target", target))
        rows = [name for name in kernels if not re.search(r"_y(_\d+)?$", name)]
        assert bool(rows) == rows_first, \
            f"{target}: Tile of {shape}: rows first {bool(rows)}, want {rows_first}: {sorted(kernels)}"
        gathers = [name for name, text in kernels.items()
                   if name not in rows and f"%{shape[-1]}" in text.replace(" ", "")]
        assert not (rows_first and gathers), f"{target}: Tile of {shape}: the output reads through a modulo: {gathers}"


@suite.case
def if_on_a_condition_computed_at_run_time():
    """An If whose condition the model computes (openWakeWord's wake-word heads run a verifier
    net when their score passes 0.5): both branches are computed and each output selected, so
    the bundle answers as onnxruntime on inputs that take either branch. The branches read outer
    values (a Gemm + Sigmoid score, its input), give a float and an int64 output, one a nested
    If on a constant. Branches whose outputs differ in shape are refused, naming the output
    and the --const-input that would freeze the condition."""
    rng = np.random.default_rng(1190)  # its own: the same data whichever cases ran before
    feeds = {"x": rng.standard_normal((2, 6)).astype(np.float32)}
    w = (rng.standard_normal((6, 1)) * 0.5).astype(np.float32)
    then_nodes = [h.make_node("Mul", ["x", "two"], ["t0"]), h.make_node("Tanh", ["t0"], ["then_y"]),
                  h.make_node("ArgMax", ["x"], ["then_i"], axis=1, keepdims=1)]
    else_nodes = [h.make_node("Sub", ["x", "score"], ["else_y"]),
                  h.make_node("ArgMin", ["x"], ["else_i"], axis=1, keepdims=1)]
    vi = lambda name, t, shape: h.make_tensor_value_info(name, t, shape)  # noqa: E731
    then_g = h.make_graph(then_nodes, "then", [], [vi("then_y", TP.FLOAT, [2, 6]), vi("then_i", TP.INT64, [2, 1])],
                          [nh.from_array(np.array(2, np.float32), "two")])
    else_g = h.make_graph(else_nodes, "else", [], [vi("else_y", TP.FLOAT, [2, 6]), vi("else_i", TP.INT64, [2, 1])])
    nodes = [h.make_node("MatMul", ["x", "w"], ["logits"]), h.make_node("ReduceSum", ["logits"], ["logit"], keepdims=0),
             h.make_node("Sigmoid", ["logit"], ["score"]),
             h.make_node("GreaterOrEqual", ["score", "half"], ["cond"]),
             h.make_node("If", ["cond"], ["y", "i"], then_branch=then_g, else_branch=else_g)]
    inits = [("w", w), ("half", np.array(0.5, np.float32))]
    m = model(nodes, feeds, ["y", ("i", TP.INT64)], inits, opset=13)
    taken = set()
    for scale in (1.0, -1.0, 3.0, -3.0):
        x = feeds["x"] * scale
        taken.add(bool((x @ w).sum() >= 0))
        check(m, {"x": x})
    assert taken == {True, False}, f"the inputs took only {taken} of the branches"
    # Output 1 of the else branch (2, 2) where the then branch gives (2, 1).
    else_wide = h.make_graph([else_nodes[0], h.make_node("TopK", ["x", "k2"], ["v2", "else_i"], axis=1)], "else", [],
                             [vi("else_y", TP.FLOAT, [2, 6]), vi("else_i", TP.INT64, [2, 2])],
                             [nh.from_array(np.array([2], np.int64), "k2")])
    nodes[-1] = h.make_node("If", ["cond"], ["y", "i"], then_branch=then_g, else_branch=else_wide)
    bad = model(nodes, feeds, ["y", ("i", TP.INT64)], inits, opset=13)
    try:
        lib.compile_model(bad, WORK / "if_shapes.bundle")
    except lib.ToolError as e:
        for part in ("If", "output 1", "--const-input x="):
            assert part in e.stderr, f"the refusal does not name {part!r}: {e.stderr}"
    else:
        raise AssertionError("an If whose branches give (2, 1) and (2, 2) compiled")


@suite.case
def dynamic_quantize_lstm():
    """com.microsoft.DynamicQuantizeLSTM (onnxruntime's dynamic quantizer writes it: ddddocr's
    common_old.onnx): 8-bit W (dirs, input, 4*hidden) and R (dirs, hidden, 4*hidden), X and each
    step's h quantized to uint8 over their range. Bidirectional with int8 weights and scales
    per direction; forward with uint8 weights and scales per column."""
    rng = np.random.default_rng(1180)  # its own, not RNG: the same data whatever ran before (seeds 1-6 pass too)
    randn = lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)  # noqa: E731
    for direction, wtype, per_column in (("bidirectional", np.int8, False), ("forward", np.uint8, True)):
        dirs, hid, seq, batch, inp = (2 if direction == "bidirectional" else 1), 8, 6, 2, 5
        qshape = (dirs, 4 * hid) if per_column else (dirs,)
        # int8 weights within +-64: onnxruntime's u8s8 kernels on x86 without VNNI add pairs of
        # products in saturating 16-bit lanes (255 * 127 * 2 > 32767; edge_testlib.exact_weights),
        # and this operator takes no zero point that would let it run them as u8u8.
        lo, hi = (-64, 64) if wtype == np.int8 else (0, 256)
        zp = lambda: np.zeros(qshape, wtype)  # noqa: E731  (onnxruntime refuses others at run time)
        inits = [("W", rng.integers(lo, hi, (dirs, inp, 4 * hid)).astype(wtype)),
                 ("R", rng.integers(lo, hi, (dirs, hid, 4 * hid)).astype(wtype)),
                 ("B", randn(dirs, 8 * hid, scale=0.5)), ("h0", randn(dirs, batch, hid)), ("c0", randn(dirs, batch, hid)),
                 ("ws", (rng.random(qshape) * 0.01 + 0.002).astype(np.float32)), ("wz", zp()),
                 ("rs", (rng.random(qshape) * 0.01 + 0.002).astype(np.float32)), ("rz", zp())]
        names = ["x", "W", "R", "B", "", "h0", "c0", "", "ws", "wz", "rs", "rz"]
        outs = ["Y", "Yh", "Yc"]
        node = h.make_node("DynamicQuantizeLSTM", names, outs, domain="com.microsoft", hidden_size=hid,
                           direction=direction)
        feeds = {"x": randn(seq, batch, inp)}
        g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, feeds["x"].shape)],
                         [h.make_tensor_value_info(o, TP.FLOAT, None) for o in outs],
                         [nh.from_array(v, n) for n, v in inits])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 14), h.make_opsetid("com.microsoft", 1)], ir_version=8)
        check(m, feeds, atol=1e-4)


@suite.case
def lstm_recurrent_weights_stored_once():
    """An LSTM unrolled over 24 steps multiplies by the same R at every step; the folded R
    (and W) are stored once, not once per step (ddddocr's 54 MB OCR model gave a 241 MB bundle)."""
    hid, seq, inp = 64, 24, 16
    inits = [("W", randn(1, 4 * hid, inp, scale=0.3)), ("R", randn(1, 4 * hid, hid, scale=0.3)),
             ("B", randn(1, 8 * hid, scale=0.3))]
    feeds = {"x": randn(seq, 1, inp)}
    m = model([h.make_node("LSTM", ["x", "W", "R", "B"], ["Y"], hidden_size=hid)], feeds, ["Y"], inits, opset=14)
    check(m, feeds, atol=1e-4)
    res = lib.compile_model(m, WORK / "lstm_weights.bundle")
    stored = int(next(line for line in res.stdout.splitlines() if "weights:" in line).split(",")[1].split()[0])
    model_bytes = sum(v.nbytes for _, v in inits)
    assert stored < 2 * model_bytes, f"the bundle stores {stored} weight bytes for a model with {model_bytes}"


@suite.case
def dynamic_quantized_matmul():
    """onnxruntime's quantize_dynamic pattern: DynamicQuantizeLinear of the activations (a zero
    point known at run time), MatMulInteger with symmetric int8 weights, the scales applied
    after. The int32 products are exact; the weights stay 8-bit in the bundle."""
    k, n = 64, 48
    w = RNG.integers(-127, 128, (k, n)).astype(np.int8)
    for rows, shift in ((1, 0.0), (7, 0.3), (7, -0.9)):  # zero points 0, mid-range and high
        nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
                 h.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
                 h.make_node("Cast", ["acc"], ["accf"], to=TP.FLOAT),
                 h.make_node("Mul", ["xs", "ws"], ["s"]), h.make_node("Mul", ["accf", "s"], ["y"])]
        feeds = {"x": (randn(rows, k) + shift).astype(np.float32)}
        inits = [("w", w), ("wz", np.array(0, np.int8)), ("ws", np.array(0.02, np.float32))]
        m = model(nodes, feeds, ["y", ("acc", TP.INT32)], inits, opset=13)
        check(m, feeds, atol=1e-5)
    res = lib.compile_model(m, WORK / "dynamic_matmul.bundle")
    stored = int(next(line for line in res.stdout.splitlines() if "weights:" in line).split(",")[1].split()[0])
    assert stored < 2 * w.nbytes, f"the bundle stores {stored} weight bytes for {w.nbytes} bytes of int8 weights"


@suite.case
def full_reductions_over_channels_last():
    """DynamicQuantizeLinear's range, a ReduceMax to a scalar and a ReduceMin over (C, W) of a
    conv output, which CPU targets store channels-last: the max runs in vectors along the
    channels, innermost (it ran as a scalar chain along the logical order, the channels
    outermost: 0.32 ms for 147,456 floats, 7x the time in memory order; ddddocr's
    quantized OCR spent a quarter of its time there)."""
    # Small integers: the conv's sums are exact in any order, so its outputs (and the
    # quantization's roundings) are those of onnxruntime on every target.
    feeds = {"x": RNG.integers(-3, 4, (1, 64, 16, 48)).astype(np.float32)}
    nodes = [h.make_node("Conv", ["x", "w"], ["c"]), h.make_node("DynamicQuantizeLinear", ["c"], ["y", "s", "z"]),
             h.make_node("ReduceMax", ["c"], ["m"], keepdims=0),
             h.make_node("ReduceMin", ["c"], ["mi"], axes=[1, 3], keepdims=1)]
    w = RNG.integers(-2, 3, (192, 64, 1, 1)).astype(np.float32)
    m = model(nodes, feeds, [("y", TP.UINT8), "s", ("z", TP.UINT8), "m", "mi"], [("w", w)], opset=13)
    check(m, feeds, atol=1e-5)
    if lib.opencl_target() or lib.target_family("hexagon"):
        return  # no LLVM IR; hexagon-v65's HVX has no float lanes
    functions = _llvm_ir(m, "full_reductions").split("\ndefine ")
    path = WORK / "full_reductions.onnx"
    scalar_out = [name for name, text in _kernels(path, "full_reductions").items() if " out[] " in text.split("\n")[0]
                  and "ReduceMax over [192,16,48]" in text]
    assert len(scalar_out) >= 3, f"expected the three reductions to a scalar, got {scalar_out}"
    for name in scalar_out:
        body = next(f for f in functions if f" @{name}(" in f.split("\n")[0])
        assert "load <" in body, f"{name}: no vector loads in its LLVM IR"



@suite.case
def convs_3d_channels_last():
    """3-D convs as video models have them (r3d_18's 3x3x3, R(2+1)D's (1,3,3) + (3,1,1)), strided,
    dilated, grouped, depthwise, pooled, batch 2, 5 / 12 / 20 channels: the CPU targets store the
    (N, C, D, H, W) intermediates channels-last as they do 4-D ones, and the dense convs run over a
    zero-bordered copy (on main each tap of a channels-first kernel was bounds-tested: r3d_18's
    convs at 3-5 GFLOP/s). The dump's conv results are (N, D, H, W, C), the dense convs test no
    bounds, and a 3x3x3 conv over 2 frames is two convs of the 2 depth taps that read a frame
    (conv_by_regions split along the depth alone)."""
    c, m = 5, 12
    feeds = {"x": randn(2, c, 6, 9, 10)}
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[3, 3, 3], pads=[1] * 6),  # the model's input
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], kernel_shape=[1, 3, 3], pads=[0, 1, 1, 0, 1, 1]),
             h.make_node("Conv", ["c2", "w3"], ["c3"], kernel_shape=[3, 1, 1], pads=[1, 0, 0, 1, 0, 0]),
             h.make_node("Add", ["c3", "r1"], ["a3"]),
             h.make_node("Conv", ["a3", "w4"], ["c4"], kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6),
             h.make_node("Conv", ["a3", "w5"], ["c5"], kernel_shape=[3, 3, 3], dilations=[2, 2, 1],
                         pads=[2, 2, 1, 1, 2, 1]),
             h.make_node("Conv", ["a3", "w6"], ["c6"], kernel_shape=[3, 3, 3], group=4, pads=[1] * 6),
             h.make_node("Conv", ["c6", "w7"], ["c7"], kernel_shape=[3, 3, 3], group=m, pads=[1] * 6),
             h.make_node("MaxPool", ["c7"], ["p1"], kernel_shape=[1, 3, 3], strides=[1, 2, 2], pads=[0, 1, 1, 0, 1, 1]),
             h.make_node("AveragePool", ["c5"], ["p2"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
             # 2 frames: a third of the depth taps' products read padding, split by depth
             h.make_node("Conv", ["p2", "w8"], ["c8"], kernel_shape=[3, 3, 3], pads=[1] * 6)]
    inits = [("w1", randn(m, c, 3, 3, 3, scale=0.3)), ("w2", randn(m, m, 1, 3, 3, scale=0.3)),
             ("w3", randn(m, m, 3, 1, 1, scale=0.3)), ("w4", randn(20, m, 3, 3, 3, scale=0.2)),
             ("w5", randn(m, m, 3, 3, 3, scale=0.2)), ("w6", randn(m, 3, 3, 3, 3, scale=0.3)),
             ("w7", randn(m, 1, 3, 3, 3, scale=0.3)), ("w8", randn(16, m, 3, 3, 3, scale=0.2))]
    dump = WORK / "convs_3d.kernels.txt"
    check(model(nodes, feeds, ["c4", "p1", "c8"], inits), feeds, rtol=1e-4, atol=1e-4, scale_tol=True,
          compile_args=("--dump-kernels", str(dump)))
    if lib.opencl_target():
        return
    kernels = _parse_kernels(dump)
    for out in ("r1", "c2", "a3", "c5"):  # c1 and c3 fused into r1 and a3
        heads = [text.split("\n")[0] for name, text in kernels.items() if name.endswith(f"_{out}")]
        assert heads and heads[0].endswith(f",{m}] f32"), f"{out} is not stored (N, D, H, W, C): {heads}"
    dense = [name for name, text in kernels.items()
             if name.endswith(("_r1", "_c2", "_a3", "_c4", "_c5")) and "ReduceSum over" in text]
    assert len(dense) == 5, f"expected the 5 dense convs' kernels, got {dense}"
    tested = [name for name in dense if "inbounds" in kernels[name] or " if " in kernels[name]]
    assert not tested, f"dense 3-D convs test bounds per tap: {tested}"
    # c8 as two convs of the 2 depth taps that read a frame (each (N, 16, 1, 4, 5) of 2 frames)
    depth_regions = [name for name, text in kernels.items() if f"ReduceSum over [{m},2,3,3]" in text]
    assert len(depth_regions) == 2, f"expected c8 split by depth into 2 convs, got {depth_regions}"


@suite.case
def linear_layers_over_flattened_conv_features():
    """Conv features flattened into a Linear layer, no global pooling (AlexNet's and VGG's
    classifiers, LeNet-like heads): conv -> ReLU -> MaxPool -> AveragePool 1x1 (torchvision's
    AdaptiveAvgPool at its own size) -> Flatten -> Gemm (transB 1), and conv -> ReLU -> Reshape
    (N, -1) -> MatMul, and a 3-D conv -> MaxPool -> AveragePool 1x1x1 -> Flatten -> Gemm (a video
    model's head); batch 2, 11, 13 and 7 channels. The CPU targets store the flattened
    features NCHW, so the matrix product reads them in rows (stored channels-last, it gathered
    each reduced element across channels: AlexNet's first Linear ran at 0.65 GFLOP/s, 4.5x
    onnxruntime's time)."""
    feeds = {"x": randn(2, 5, 14, 13)}
    nodes = [h.make_node("Conv", ["x", "wa", "ba"], ["ca"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["ca"], ["ra"]),
             h.make_node("MaxPool", ["ra"], ["pa"], kernel_shape=[2, 2], strides=[2, 2]),  # (2, 11, 7, 6)
             h.make_node("AveragePool", ["pa"], ["qa"], kernel_shape=[1, 1]),
             h.make_node("Flatten", ["qa"], ["fa"]),
             h.make_node("Gemm", ["fa", "ga", "gb"], ["ya"], transB=1),
             h.make_node("Conv", ["x", "wb"], ["cb"], kernel_shape=[3, 3], strides=[2, 2]),  # (2, 13, 6, 6)
             h.make_node("Relu", ["cb"], ["rb"]),
             h.make_node("Reshape", ["rb", "flat"], ["fb"]),
             h.make_node("MatMul", ["fb", "mb"], ["yb"]),
             h.make_node("Conv", ["v", "wc"], ["cc"], kernel_shape=[3, 3, 3], pads=[1] * 6),
             h.make_node("Relu", ["cc"], ["rc"]),
             h.make_node("MaxPool", ["rc"], ["pc"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),  # (2, 7, 2, 3, 3)
             h.make_node("AveragePool", ["pc"], ["qc"], kernel_shape=[1, 1, 1]),
             h.make_node("Flatten", ["qc"], ["fc"]),
             h.make_node("Gemm", ["fc", "gc"], ["yc"], transB=1)]
    inits = [("wa", randn(11, 5, 3, 3, scale=0.3)), ("ba", randn(11, scale=0.1)),
             ("ga", randn(10, 11 * 7 * 6, scale=0.05)), ("gb", randn(10, scale=0.1)),
             ("wb", randn(13, 5, 3, 3, scale=0.3)), ("flat", np.array([2, -1], np.int64)),
             ("mb", randn(13 * 6 * 6, 9, scale=0.05)), ("wc", randn(7, 4, 3, 3, 3, scale=0.2)),
             ("gc", randn(6, 7 * 2 * 3 * 3, scale=0.05))]
    feeds["v"] = randn(2, 4, 4, 6, 6)
    m = model(nodes, feeds, ["ya", "yb", "yc"], inits)
    check(m, feeds, rtol=1e-4, atol=1e-4, scale_tol=True)
    if lib.opencl_target():
        return
    products = {name: text for name, text in _kernels(WORK / f"m{_count[0]}.onnx", "flatten_fc").items()
                if any(f"reduce ReduceSum over [{n}]" in text for n in (462, 468, 126))}
    assert len(products) >= 3, f"expected the three matrix products' kernels, got {list(products)}"
    for name, text in products.items():
        # Each load's index is affine in the loop variables: no div/mod gathering across channels.
        gathers = [line for line in text.splitlines() if " = load " in line and re.search(r"\[[^\]]*[/%]", line)]
        assert not gathers, f"{name} gathers its operand:\n" + "\n".join(gathers)


@suite.case
def cumsum_long_axes():
    """CumSum along axes of 100 to 4100 elements (multiples of 16 and not), along the last axis
    and along middle ones, inclusive / exclusive / reverse, in float32 (within scale_tol of
    onnxruntime) and int64 (exactly; values past 2^40, so nothing may sum them in floating
    point). The axis is summed in blocks, the blocks' totals prefix-summed the same way and added
    back (ops_index.cc prefix_sum): a window as long as the axis cost n adds per element, CumSum
    along 128 channels of 80x80 30-50x onnxruntime's time. The CPU kernels: none reduces over as
    many elements as a long axis (every reduce at most 32); the innermost blocks are one vector
    of the target's floats (compiled for AVX-512: 16, NEON: 4)."""
    configs = (((2, 3, 100), 2, 0, 0), ((2, 3, 100), -1, 1, 1), ((1, 64, 5, 7), 1, 1, 0),
               ((1, 300, 3, 4), 1, 0, 1), ((1, 4100), 1, 1, 1), ((3, 4096), 1, 0, 0), ((260, 2, 9), 0, 1, 1),
               ((2, 37), 1, 0, 1))  # shape, axis, exclusive, reverse
    for dtype in (np.float32, np.int64):
        nodes, inits, outs, feeds = [], [], [], {}
        for i, (shape, axis, excl, rev) in enumerate(configs):
            feeds[f"x{i}"] = (randn(*shape) if dtype == np.float32
                              else RNG.integers(-(1 << 40), 1 << 40, size=shape).astype(np.int64))
            inits.append((f"axis{i}", np.array(axis, np.int64)))
            nodes.append(h.make_node("CumSum", [f"x{i}", f"axis{i}"], [f"y{i}"], exclusive=excl, reverse=rev))
            outs.append(f"y{i}")
        m = model(nodes, feeds, outs, inits, opset=14)
        if dtype == np.float32:
            check(m, feeds, rtol=1e-4, atol=1e-5, scale_tol=True)
        else:
            check(m, feeds, rtol=0, atol=0)
        if lib.opencl_target():
            continue
        kernels = _kernels(WORK / f"m{_count[0]}.onnx", f"cumsum_long_axes_{np.dtype(dtype).name}")
        extents = {name: [int(e) for line in re.findall(r"reduce \w+ over \[([0-9,]+)\]", text) for e in line.split(",")]
                   for name, text in kernels.items()}
        long_sums = {name: e for name, e in extents.items() if e and max(e) > 32}
        assert not long_sums, f"kernels summing a window as long as the axis: {long_sums}"
    if os.environ.get("EDGE_TARGET", "x86_64") != "x86_64":
        return
    # The innermost blocks are one vector of the target's floats (compiled here, not run): 16
    # on AVX-512, 4 on NEON (main's blocks of 8 split AVX-512's vectors between two blocks), a
    # last axis of 100 (AVX-512: 7 blocks of 16; NEON: 25 blocks of 4, their totals 7, then 2).
    feeds = {"x": randn(2, 3, 100)}
    m = model([h.make_node("CumSum", ["x", "axis"], ["y"])], feeds, ["y"], [("axis", np.array(-1, np.int64))], opset=14)
    path = WORK / "cumsum_blocks.onnx"
    onnx.save(m, path)
    for target, lanes in (("x86_64-avx512", 16), ("aarch64", 4)):
        kernels = _kernels(path, f"cumsum_blocks_{target}", ("--target", target))
        sums = {int(e) for text in kernels.values() for line in re.findall(r"reduce \w+ over \[([0-9,]+)\]", text)
                for e in line.split(",")}
        assert lanes in sums and 8 not in sums, f"{target}: CumSum blocks {sorted(sums)}, want {lanes}-element ones"


@suite.case
def pooled_channels_last_rows():
    """GlobalAveragePool, ReduceMean / ReduceSum / ReduceMax over (H, W) of a conv's result,
    which the CPU targets store channels-last (a squeeze-and-excitation block's squeeze, a CNN
    head): 256 channels at 40x40 (1.6 MB), 1000 at 5x5 (125 vectors), 36 (half a vector left
    over) at 9x9 batch 2, 104 at 14x14, 256 at 20x20. Each step of the reduction reads a
    pixel's row of channels; the x86_64 code sums up to 16 vectors of channels per pass over
    the pixels (llvm_emit.cc row_pass_vectors: in one pass, or in several over more
    than twice the core's L2): the AVX2 LLVM IR of the 1.6 MB 256-channel pool loads 16
    vectors per pixel, the 104-channel max 13 in one pass (the register tile loaded 8 or fewer: [1, 112,
    112, 256] in 4-8 passes took 1.6-2.7 ms where onnxruntime's NCHWc pool takes 0.45-0.8).
    2 and 3 threads give the same bits as 1."""
    nodes, inits, outs = [], [], []
    configs = ((256, 40, 1, "GlobalAveragePool"), (1000, 5, 1, "ReduceMean"), (36, 9, 2, "ReduceSum"),
               (104, 14, 1, "ReduceMax"), (256, 20, 1, "ReduceMean"))
    for i, (c, hw, batch, op) in enumerate(configs):
        nodes += [h.make_node("Conv", [f"x{i}", f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[1, 1]),
                  h.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        inits += [(f"w{i}", randn(c, 8, 1, 1, scale=0.4)), (f"b{i}", randn(c, scale=0.1))]
        name = f"pool{c}_{hw}_{op.lower()}"
        if op == "GlobalAveragePool":
            nodes.append(h.make_node(op, [f"r{i}"], [name]))
        else:
            nodes.append(h.make_node(op, [f"r{i}", "axes"], [name], keepdims=int(op != "ReduceSum")))
        outs.append(name)
    inits.append(("axes", np.array([2, 3], np.int64)))
    feeds = {f"x{i}": randn(batch, 8, hw, hw) for i, (c, hw, batch, op) in enumerate(configs)}
    m = model(nodes, feeds, outs, inits, opset=18)
    ir = WORK / "pooled_rows.ll"
    checked_run(m, feeds, "pooled_rows", 1e-5, 1e-5, threads=() if lib.opencl_target() else (2, 3),  # CPU cores
                compile_args=("--dump-llvm-ir", ir))
    if os.environ.get("EDGE_TARGET", "x86_64") != "x86_64":
        return  # the AVX2 code's structure
    text = ir.read_text()
    for name, vectors in (("pool256_40_globalaveragepool", 16), ("pool104_14_reducemax", 13)):
        pool = re.search(r"define [^\n]*@k\d+_" + name + r"\(.*?\n}\n", text, re.S)
        assert pool, f"no kernel of {name} in the LLVM IR"
        loads = pool.group(0).count("load <8 x float>")
        assert loads >= vectors, f"{name} loads {loads} vectors of channels per pass over the pixels, not {vectors}"

if __name__ == "__main__":
    WORK = lib.work_dir("ops_vs_onnxruntime")
    sys.exit(suite.main())
