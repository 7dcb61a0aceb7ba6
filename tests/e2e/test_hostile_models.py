#!/usr/bin/env python3
"""edgec on hostile, broken and sloppy ONNX models.

Refused with an error naming the node (or the graph rule) and exit code 1, never a crash,
a hang or an allocation failure: graphs that break ONNX's single-definition rules, an empty
file, an operator set from the future, shapes past the size limit (Range to 2^60, Resize by
1e9, OneHot of depth 2^40, Expand to 2^80 elements), pooling windows with zero or huge strides,
kernels or dilations or negative pads (found by tests/fuzz/fuzz_onnx); nested Loops past the
unrolling budget, overflowing pads, Tile repeats, blocksizes and split sizes, Col2Im with a zero
stride or 2^60 taps, Resize to a 2^40 dim of an empty output, per-channel parameters of the wrong length, constant indices out of range,
a negative opset and a NUL byte in a name (each compiled, crashed or ran for hours before). A chain of 10,000 dead DequantizeLinear compiles in seconds (minutes before).
Compiled and run, matching onnxruntime: zero-size reductions (MatMul with K = 0, a Conv
with no input channels), a chain of 4,000 elementwise ops and a Sum of 2,000 inputs (deep
recursion in the compiler), Slice with a step of INT64_MIN, and models from the wild that
onnxruntime runs with a warning: an output declared with dim -1 or with a stale shape (a
declared dtype that disagrees is still refused)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_hostile_models")
WORK = None
vi = h.make_tensor_value_info


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, [nh.from_array(v, n) for n, v in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def refused(name, m, must_mention, timeout=120):
    """Compiles m (a ModelProto or raw bytes); expects exit 1 and every word in stderr."""
    path = WORK / f"{name}.onnx"
    path.write_bytes(m if isinstance(m, bytes) else m.SerializeToString())
    edgec, _, _ = lib.tools()
    res = lib.run_cmd([edgec, "compile", path, "-o", WORK / f"{name}.bundle", "-q"], check=False, timeout=timeout)
    assert res.returncode == 1, f"{name}: expected exit 1, got {res.returncode}\n{res.stderr[-2000:]}"
    for word in must_mention:
        assert word.lower() in res.stderr.lower(), f"{name}: error does not mention {word!r}:\n{res.stderr[-2000:]}"
    assert not (WORK / f"{name}.bundle").exists(), f"{name}: a bundle was written"
    print(f"    {res.stderr.strip().splitlines()[-1]}")


def matches_onnxruntime(name, m, feeds, atol=1e-5):
    """Compiles and runs m; compares every output with onnxruntime. Returns edgec's stderr."""
    expected = lib.ort_run(m, feeds)
    actual = lib.compile_and_run(m, feeds, WORK, name=name)
    for out, want in expected.items():
        got = actual[out]
        assert got.shape == want.shape, f"{name}/{out}: shape {got.shape}, onnxruntime {want.shape}"
        assert np.allclose(got, want, rtol=1e-5, atol=atol), f"{name}/{out}: max err {np.abs(got - want).max()}"


@suite.case
def graphs_breaking_single_definition_are_refused():
    x4 = [vi("x", TP.FLOAT, [4])]
    y4 = [vi("y", TP.FLOAT, [4])]
    refused("output_defined_twice", model([h.make_node("Relu", ["x"], ["y"]), h.make_node("Neg", ["x"], ["y"], name="again")],
                                          x4, y4), ["again", "Neg", "'y'", "redefines"])
    refused("node_redefines_input", model([h.make_node("Relu", ["x"], ["x"], name="clobber"),
                                           h.make_node("Neg", ["x"], ["y"])], x4, y4), ["clobber", "graph input"])
    refused("input_declared_twice", model([h.make_node("Add", ["x", "x"], ["y"])], x4 + x4, y4), ["input 'x'", "twice"])
    refused("output_declared_twice", model([h.make_node("Relu", ["x"], ["y"])], x4, y4 + y4), ["output 'y'", "twice"])
    refused("empty_file", b"", ["empty"])
    refused("opset_from_the_future", model([h.make_node("Relu", ["x"], ["y"])], x4, y4, opset=99), ["99", "operator set"])


@suite.case
def shapes_past_the_size_limit_fail_fast_naming_the_node():
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    cases = [
        ("range_2_60", [h.make_node("Range", ["s", "l", "d"], ["y"], name="huge_range")], [vi("x", TP.FLOAT, [1])],
         [("s", i64(0)), ("l", i64(1 << 60)), ("d", i64(1))], 17, ["huge_range", "Range"]),
        ("resize_1e9", [h.make_node("Resize", ["x", "", "sc"], ["y"], name="zoom")], [vi("x", TP.FLOAT, [1, 1, 2, 2])],
         [("sc", np.array([1, 1, 1e9, 1e9], np.float32))], 19, ["zoom", "Resize"]),
        ("onehot_2_40", [h.make_node("OneHot", ["x", "d", "v"], ["y"], name="wide")], [vi("x", TP.INT64, [3])],
         [("d", i64(1 << 40)), ("v", np.array([0, 1], np.float32))], 17, ["wide", "OneHot"]),
        ("expand_2_80", [h.make_node("Expand", ["x", "s"], ["y"], name="blowup")], [vi("x", TP.FLOAT, [1])],
         [("s", i64([1 << 40, 1 << 40]))], 17, ["blowup", "Expand"]),
        # A shape tensor of 3e8 ones (fuzz_onnx: reshape_to_huge_shape_tensor.onnx took 5 GB to
        # evaluate it before the Reshape refused it).
        ("reshape_to_3e8_dims", [h.make_node("ConstantOfShape", ["n"], ["ones"], value=nh.from_array(i64([1]))),
                                 h.make_node("Reshape", ["x", "ones"], ["y"], name="flat")], [vi("x", TP.FLOAT, [1])],
         [("n", i64([300_000_000]))], 17, ["flat", "Reshape"]),
    ]
    for name, nodes, inputs, inits, opset, words in cases:
        refused(name, model(nodes, inputs, [vi("y", TP.FLOAT, None)], inits, opset), words + ["more than"], timeout=60)


@suite.case
def tensors_no_runtime_takes_are_refused_naming_them():
    """schema/runtime_limits.h: a model input or output of rank above EDGERT_MAX_RANK (8)
    compiled once and then no runtime opened it; edgec refuses it, naming the tensor."""
    ones = lambda n: [1] * n  # noqa: E731
    refused("input_rank_1000", model([h.make_node("ReduceSum", ["x"], ["y"], keepdims=0)], [vi("x", TP.FLOAT, ones(1000))],
                                     [vi("y", TP.FLOAT, [])]), ["input 'x'", "rank 1000", "at most 8"])
    refused("output_rank_9", model([h.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", TP.FLOAT, [2])],
                                   [vi("y", TP.FLOAT, None)], [("s", np.array(ones(8) + [2], np.int64))]),
            ["output 'y'", "rank 9", "at most 8"])
    # rank 8 is the limit, not past it
    m = model([h.make_node("Relu", ["x"], ["y"])], [vi("x", TP.FLOAT, ones(7) + [3])], [vi("y", TP.FLOAT, ones(7) + [3])])
    matches_onnxruntime("rank_8", m, {"x": np.array([-1, 0, 2], np.float32).reshape(ones(7) + [3])})


@suite.case
def fuzz_findings():
    """What fuzz_onnx found (tests/fuzz/regressions/onnx), checked on the release edgec."""
    x = [vi("x", TP.FLOAT, [1, 1, 8, 8])]
    for name, attrs in [("stride_0", dict(strides=[2, 0], auto_pad="SAME_UPPER")),
                        ("kernel_0", dict(kernel_shape=[0, 3])), ("dilation_0", dict(dilations=[1, 0])),
                        ("stride_2_62", dict(strides=[1, 1 << 62], auto_pad="SAME_LOWER")),
                        ("negative_pad", dict(pads=[0, 0, -1, 0]))]:
        attrs = {"kernel_shape": [3, 3], **attrs}
        refused(f"maxpool_{name}", model([h.make_node("MaxPool", ["x"], ["y"], name="pool", **attrs)], x,
                                         [vi("y", TP.FLOAT, None)]), ["pool", "MaxPool", "must be in"])
    refused("split_num_outputs_0", model([h.make_node("Split", ["x"], ["y"], name="cut", axis=1, num_outputs=0)],
                                         [vi("x", TP.FLOAT, [2, 8])], [vi("y", TP.FLOAT, None)], opset=18),
            ["cut", "Split", "num_outputs 0"])
    # TfIdfVectorizer: a negative output index wrote before the n-gram map; a max_gram_length of
    # 2^62 sized a table by it (fuzz_onnx: tfidf_vectorizer_huge_gram_map.onnx): both refused, as
    # by onnxruntime. A skip count past the row length runs (edgec bounds it by the row; 2^62,
    # which edgec takes, keeps onnxruntime busy for minutes, so the reference uses 100).
    tokens = [vi("x", TP.INT64, [2, 6])]

    def tfidf(indexes, longest, skip):
        return model([h.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", mode="TF", min_gram_length=1,
                                  max_gram_length=longest, max_skip_count=skip, ngram_counts=[0, 2],
                                  ngram_indexes=indexes, pool_int64s=[2, 3, 5, 4])],
                     tokens, [vi("y", TP.FLOAT, None)], opset=9)
    refused("tfidf_negative_index", tfidf([-5, 0, 1], 2, 0), ["tfidf", "TfIdfVectorizer", "ngram_indexes"])
    refused("tfidf_gram_length_2_62", tfidf([0, 1, 2], 1 << 62, 0), ["tfidf", "TfIdfVectorizer", "max_gram_length"])
    feeds = {"x": np.array([[2, 3, 5, 4, 2, 3], [5, 4, 4, 2, 3, 3]], dtype=np.int64)}
    matches_onnxruntime("tfidf_skip_past_the_row", tfidf([0, 1, 2], 2, 100), feeds)
    # An output 1.4e9 columns wide from a 2 x 6 input made 11 GB of constants (fuzz_onnx:
    # tfidf_vectorizer_wide_output.onnx): refused, naming the attribute. Columns without an
    # n-gram are zeros; two n-grams on one column add up.
    refused("tfidf_wide_output", tfidf([0, 1, 1461641213], 2, 0), ["tfidf", "TfIdfVectorizer", "ngram_indexes"])
    matches_onnxruntime("tfidf_sparse_columns", tfidf([4, 0, 9], 2, 0), feeds)
    matches_onnxruntime("tfidf_shared_column", tfidf([1, 0, 1], 2, 1), feeds)
    # A graph input that no output uses (Dropout's ratio in inference): it still gets a buffer.
    m = model([h.make_node("Dropout", ["x", "r"], ["y"])], [vi("x", TP.FLOAT, [2, 3]), vi("r", TP.FLOAT, [])],
              [vi("y", TP.FLOAT, [2, 3])])
    matches_onnxruntime("unused_input", m, {"x": np.arange(6, dtype=np.float32).reshape(2, 3),
                                            "r": np.array(0.5, np.float32)})
    # A reshape of a tensor without elements (GroupNormalization over a zero-size dim): the
    # kernel IR divided by the zero dim, and edgec died of SIGFPE (onnxruntime refuses the
    # model: its GroupNormalization function reshapes to a fixed size).
    m = model([h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
              [vi("x", TP.FLOAT, [3, 4, 0, 2]), vi("s", TP.FLOAT, [4]), vi("b", TP.FLOAT, [4])],
              [vi("y", TP.FLOAT, [3, 4, 0, 2])], opset=21)
    out = lib.compile_and_run(m, {"x": np.zeros((3, 4, 0, 2), np.float32), "s": np.ones(4, np.float32),
                                  "b": np.zeros(4, np.float32)}, WORK, name="reshape_of_nothing")
    assert out["y"].shape == (3, 4, 0, 2), out["y"].shape


@suite.case
def nested_loops_stop_at_the_unrolling_budget():
    """Three Loops of 1,000 trips, one inside the other: 10^9 bodies to unroll (edgec ran
    for hours). Refused once 2^18 body nodes are instantiated, naming the outer Loop."""
    def body(nodes, d):
        return h.make_graph(nodes, f"body{d}", [vi(f"i{d}", TP.INT64, []), vi(f"c{d}", TP.BOOL, []), vi(f"v{d}", TP.FLOAT, [4])],
                            [vi(f"co{d}", TP.BOOL, []), vi(f"vo{d}", TP.FLOAT, [4])])
    inner = body([h.make_node("Identity", ["c3"], ["co3"]), h.make_node("Neg", ["v3"], ["vo3"])], 3)
    for d in (2, 1):
        inner = body([h.make_node("Identity", [f"c{d}"], [f"co{d}"]),
                      h.make_node("Loop", ["trips", "", f"v{d}"], [f"vo{d}"], body=inner)], d)
    m = model([h.make_node("Loop", ["trips", "", "x"], ["y"], name="outer_loop", body=inner)], [vi("x", TP.FLOAT, [4])],
              [vi("y", TP.FLOAT, [4])], [("trips", np.array(1000, np.int64))])
    refused("loops_1000_cubed", m, ["outer_loop", "Loop", "unrolls to more than 262144 nodes"], timeout=60)


@suite.case
def recurrent_layers_stop_at_the_step_limit():
    """An LSTM / GRU / RNN unrolls every step into the graph: 4,194,308 steps (what fuzz_onnx
    made of a zero-size X reshaped) ran edgec out of 8 GB; refused past 16,384, naming the node.
    (Well before that the graph-depth limit stops them: an RNN of 8,192 steps, a GRU or LSTM of
    4,096.) 256 steps still compile and match onnxruntime."""
    for op, gates in (("LSTM", 4), ("GRU", 3), ("RNN", 1)):
        w = np.zeros((1, gates * 2, 3), np.float32)
        r = np.zeros((1, gates * 2, 2), np.float32)
        m = model([h.make_node(op, ["x", "w", "r"], ["y"], name=f"long_{op.lower()}", hidden_size=2)],
                  [vi("x", TP.FLOAT, [4194308, 1, 3])], [vi("y", TP.FLOAT, None)], [("w", w), ("r", r)])
        refused(f"{op.lower()}_4m_steps", m, [f"long_{op.lower()}", op, "exceeds the unrolling limit of 16384"], timeout=60)
    m = model([h.make_node("RNN", ["x", "w", "r"], ["", "yh"], name="rnn_at_limit", hidden_size=2)],
              [vi("x", TP.FLOAT, [256, 1, 3])], [vi("yh", TP.FLOAT, None)],
              [("w", np.full((1, 2, 3), 0.1, np.float32)), ("r", np.full((1, 2, 2), 0.1, np.float32))])
    feeds = {"x": np.random.default_rng(5).standard_normal((256, 1, 3)).astype(np.float32)}
    matches_onnxruntime("rnn_256_steps", m, feeds, atol=1e-4)


@suite.case
def dead_dequantize_chain_is_dropped_in_one_pass():
    """A fused QDQ group (DequantizeLinear -> Reshape -> QuantizeLinear, one scale) and a chain
    of 10,000 DequantizeLinear whose end nothing reads: the QDQ fusion dropped one dead node
    per pass over the graph (8,000 took minutes); now one pass. The output is the input."""
    inits = [("s", np.array(0.5, np.float32)), ("z", np.array(3, np.uint8)), ("shape", np.array([4], np.int64))]
    nodes = [h.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]), h.make_node("Reshape", ["xf", "shape"], ["r"]),
             h.make_node("QuantizeLinear", ["r", "s", "z"], ["y"])]
    nodes += [h.make_node("DequantizeLinear", ["xq" if i == 0 else f"d{i - 1}", "s", "z"], [f"d{i}"]) for i in range(10000)]
    m = model(nodes, [vi("xq", TP.UINT8, [4])], [vi("y", TP.UINT8, [4])], inits)
    xq = np.array([0, 3, 200, 255], np.uint8)
    out = lib.compile_and_run(m, {"xq": xq}, WORK, name="dead_dequantize_chain", timeout=60)
    assert np.array_equal(out["y"], xq), out["y"]


@suite.case
def values_no_model_can_mean_are_refused_naming_the_node():
    """Each compiled on main: an overflowing pad (or Tile) wrapped to another output, split sizes for
    more outputs than the node has (or whose sum wraps to the dim) were cut, a per-channel
    parameter of the wrong length broadcast the output to more channels, constant indices out
    of range were clamped, opset -5 ran, a NUL in a name made a bundle no runtime opens."""
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    lo, hi = -(1 << 63), (1 << 63) - 1
    x4 = [vi("x", TP.FLOAT, [1, 1, 8, 8])]
    y = [vi("y", TP.FLOAT, None)]
    refused("pad_int64_max", model([h.make_node("Pad", ["x", "p"], ["y"], name="pad")], x4, y,
                                   [("p", i64([0, 0, hi, 0, 0, 0, hi, 0]))]), ["pad", "Pad", "overflows"])
    refused("pad_int64_min", model([h.make_node("Pad", ["x", "p"], ["y"], name="crop")], x4, y,
                                   [("p", i64([0, 0, lo, 0, 0, 0, 0, 0]))]), ["crop", "Pad", "remove more than the dim"])
    # fuzz_onnx (tile_repeats_product_overflow.onnx): repeats x dim wrapped (UB), here 4 x 2^62 to
    # 0; with a zero dim the output has no elements, so no size check caught the wrapped dims.
    refused("tile_repeats_overflow", model([h.make_node("Tile", ["x", "r"], ["y"], name="tile")], [vi("x", TP.FLOAT, [0, 4])], y,
                                           [("r", i64([1, 1 << 62]))]), ["tile", "Tile", "overflow a dim"])
    # DepthToSpace by 2^32: blocksize squared wrapped to 0 and edgec died of SIGFPE (channels % 0);
    # SpaceToDepth by 2^21 of 2^40 channels (no elements: batch 0) wrapped to 0 channels.
    refused("depth_to_space_2_32", model([h.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=1 << 32)],
                                         [vi("x", TP.FLOAT, [1, 4, 2, 2])], y), ["d2s", "DepthToSpace", "overflows"])
    refused("space_to_depth_wraps", model([h.make_node("SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=1 << 21)],
                                          [vi("x", TP.FLOAT, [0, 1 << 40, 1 << 21, 1 << 21])], y), ["s2d", "SpaceToDepth", "overflows"])
    # Col2Im with a stride of 0 (edgec died of SIGFPE), and 2^60 taps of a [1, 0, 1] input (no
    # elements to bound them: edgec placed taps for hours).
    for name, xshape, block, attrs in (("col2im_stride_0", [1, 4, 9], [2, 2], dict(strides=[0, 1])),
                                       ("col2im_2_60_taps", [1, 0, 1], [1 << 30, 1 << 30], {})):
        refused(name, model([h.make_node("Col2Im", ["x", "im", "bl"], ["y"], name="c2i", **attrs)], [vi("x", TP.FLOAT, xshape)], y,
                            [("im", i64([4, 4] if block == [2, 2] else block)), ("bl", i64(block))], opset=18), ["c2i", "Col2Im"],
                timeout=60)
    # fuzz_onnx (resize_sizes_huge_dim_of_empty_output.onnx): an output of no elements bounds no
    # dim; Resize planned one table entry per position of a 2^40 dim (hours).
    refused("resize_to_2_40_by_0", model([h.make_node("Resize", ["x", "", "", "sz"], ["y"], name="zoom")], x4, y,
                                         [("sz", i64([1, 1, 1 << 40, 0]))], opset=19), ["zoom", "Resize", "output dim 2"],
            timeout=60)
    x6 = [vi("x", TP.FLOAT, [6])]
    for name, sizes, outs in (("split_3_sizes_2_outputs", [2, 2, 2], "yz"), ("split_sizes_wrap", [hi, hi, 8], "yzw")):
        refused(name, model([h.make_node("Split", ["x", "s"], list(outs), name="cut")], x6, [vi(o, TP.FLOAT, None) for o in outs],
                            [("s", i64(sizes))], opset=13), ["cut", "Split", "split sizes"])
    ones3 = np.ones(3, np.float32)
    refused("batchnorm_3_scales_1_channel", model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")],
                                                  x4, y, [(n, ones3) for n in "sbmv"]), ["bn", "'s'", "one value per channel"])
    refused("instancenorm_3_scales_1_channel", model([h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="inorm")],
                                                     x4, y, [("s", ones3), ("b", ones3)]), ["inorm", "'s'", "one value per channel"])
    data = [("d", np.ones((4, 3), np.float32))]
    for op, inputs, idx in (("GatherElements", ["d", "i"], [[0, 9, 0]]), ("GatherND", ["d", "i"], [[1, 9]]),
                            ("ScatterElements", ["d", "i", "u"], [[0, -9, 0]]), ("ScatterND", ["d", "i", "u"], [[7]])):
        inits = data + [("i", i64(idx)), ("u", np.ones((1, 3), np.float32))][:len(inputs) - 1]
        refused(f"{op}_constant_index_out_of_range", model([h.make_node(op, inputs, ["y"], name="pick")], [vi("x", TP.FLOAT, [1])],
                                                          y, inits), ["pick", op, "out of range"])
    refused("opset_minus_5", model([h.make_node("Relu", ["x"], ["y"])], x6, y, opset=-5), ["operator set -5"])
    refused("nul_in_input_name", model([h.make_node("Relu", ["x\0hidden"], ["y"])], [vi("x\0hidden", TP.FLOAT, [6])], y),
            ["input 'x", "NUL byte"])


@suite.case
def zero_size_reductions_give_the_identity():
    a, b = np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)
    matches_onnxruntime("matmul_k0", model([h.make_node("MatMul", ["a", "b"], ["y"])],
                                           [vi("a", TP.FLOAT, [2, 0]), vi("b", TP.FLOAT, [0, 3])],
                                           [vi("y", TP.FLOAT, [2, 3])]), {"a": a, "b": b})
    bias = np.array([0.5, -2.0], np.float32)
    matches_onnxruntime("conv_no_channels", model([h.make_node("Conv", ["x", "w", "bias"], ["y"])],
                                                  [vi("x", TP.FLOAT, [1, 0, 4, 4])], [vi("y", TP.FLOAT, [1, 2, 2, 2])],
                                                  [("w", np.zeros((2, 0, 3, 3), np.float32)), ("bias", bias)]),
                        {"x": np.zeros((1, 0, 4, 4), np.float32)})


@suite.case
def deep_graphs_compile():
    nodes, prev = [], "x"
    for i in range(4000):
        op = ("Neg", "Relu", "Abs", "Sqrt")[i % 4]
        nodes.append(h.make_node(op, [prev], [f"t{i}"]))
        prev = f"t{i}"
    nodes.append(h.make_node("Identity", [prev], ["y"]))
    x = np.random.default_rng(1).standard_normal(8).astype(np.float32)
    matches_onnxruntime("chain_4000", model(nodes, [vi("x", TP.FLOAT, [8])], [vi("y", TP.FLOAT, [8])]), {"x": x})
    names = [f"x{i % 7}" for i in range(2000)]
    feeds = {f"x{i}": np.random.default_rng(i).standard_normal(4).astype(np.float32) for i in range(7)}
    matches_onnxruntime("sum_2000", model([h.make_node("Sum", names, ["y"])], [vi(n, TP.FLOAT, [4]) for n in feeds],
                                          [vi("y", TP.FLOAT, [4])]), feeds, atol=1e-3)


@suite.case
def slice_with_extreme_steps():
    x = np.arange(6, dtype=np.float32)
    lo, hi = -(1 << 63), (1 << 63) - 1
    for name, start, end, step in (("min_step", -1, lo, lo), ("max_step", 0, hi, hi), ("min_step_mid", 3, lo, lo + 1)):
        inits = [("st", np.array([start], np.int64)), ("en", np.array([end], np.int64)),
                 ("ax", np.array([0], np.int64)), ("sp", np.array([step], np.int64))]
        matches_onnxruntime(f"slice_{name}", model([h.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
                                                   [vi("x", TP.FLOAT, [6])], [vi("y", TP.FLOAT, None)], inits), {"x": x})


@suite.case
def declared_output_shapes_from_the_wild():
    x = np.random.default_rng(2).standard_normal(4).astype(np.float32)
    for name, declared in (("dim_minus_one", [-1]), ("stale_shape", [5]), ("stale_rank", [2, 2])):
        m = model([h.make_node("Relu", ["x"], ["out_of_" + name])], [vi("x", TP.FLOAT, [4])],
                  [vi("out_of_" + name, TP.FLOAT, declared)])
        matches_onnxruntime(name, m, {"x": x})
        res = lib.compile_model(m, WORK / f"{name}_warned.bundle")
        assert "warning" in res.stderr and "out_of_" + name in res.stderr, f"{name}: no warning naming the output:\n{res.stderr}"
    refused("wrong_dtype", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", TP.FLOAT, [4])], [vi("y", TP.INT32, [4])]),
            ["'y'", "i32"])


if __name__ == "__main__":
    WORK = lib.work_dir("hostile_models")
    sys.exit(suite.main())
