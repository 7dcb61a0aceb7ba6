#!/usr/bin/env python3
"""Where an inverted-residual network (MobileNetV2, MNASNet, EfficientNet) spends its time, per
op class, in edgert and in onnxruntime, same run, same thread count (issue 22's AVX2 gap).

Classes, from the ONNX graph:
  expand     1x1 conv that widens (C_out > C_in), with what is fused after it (BN, ReLU6, SiLU)
  depthwise  group == C_in convs, split by kernel size and stride (dw3x3/s1, dw5x5/s2, ...)
  project    1x1 conv that narrows (C_out <= C_in), with its residual add
  se         squeeze-excitation: the global pool, the convs on a 1x1 map, SiLU, sigmoid, and
             the per-channel multiply
  other      everything else (stem conv, last 1x1, classifier, pooling)

edgert: `edgert-bench --profile --json`; a kernel is named after the value it stores, which is
the output of a node or of the chain of elementwise nodes fused after a conv, so the kernel takes
that node's class. onnxruntime: SessionOptions.enable_profiling, per-node kernel times (its fused
nodes keep the name of the conv they start from). Each side's figure per class is the median
over repeats of the per-run time; the columns are ms per run and the ratio edgert / onnxruntime.
The two totals are the sums of kernel times, not wall times (a run's overhead is left out).

    python3 tests/bench/mbconv_classes.py MODEL.onnx ... [--threads 1] [--repeats 3] [--iters 10]

Tools come from EDGEC / EDGERT_BENCH or build/."""
import re
import statistics
import sys
import tempfile
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import edge_testlib as lib  # noqa: E402
from conv_classes import EPILOGUE_OPS, profile, profile_arguments, sanitize  # noqa: E402
from ort_node_profile import node_medians  # noqa: E402

CLASSES = ["expand", "depthwise", "project", "se", "other"]


def node_classes(model):
    """{node name: class} and {value name: class} (a node's outputs take its class)."""
    m = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output)}
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    producers = {o: n for n in m.graph.node for o in n.output}
    consumers = {}
    for n in m.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def spatial_one(value):
        s = shapes.get(value)
        return s is not None and len(s) == 4 and s[2] == 1 and s[3] == 1

    by_node = {}
    for n in m.graph.node:
        if n.op_type in ("GlobalAveragePool", "ReduceMean") and consumers.get(n.output[0]):
            # the SE squeeze: its result feeds a conv on a 1x1 map (not the classifier's flatten)
            if any(c.op_type == "Conv" for c in consumers[n.output[0]]):
                by_node[n.name] = "se"
        if n.op_type != "Conv":
            continue
        group = next((a.i for a in n.attribute if a.name == "group"), 1)
        w = inits.get(n.input[1])
        if w is None:
            continue
        c_out, c_in = w[0], w[1] * group
        kernel = w[2:]
        strides = next((list(a.ints) for a in n.attribute if a.name == "strides"), [1, 1])
        if spatial_one(n.input[0]):
            kind = "se"
        elif group > 1 and group == c_in:
            kind = "depthwise"
        elif kernel == [1, 1] and group == 1 and c_out > c_in:
            kind = "expand"
        elif kernel == [1, 1] and group == 1:
            kind = "project"
        else:
            kind = "other"
        if kind == "depthwise":
            by_node[n.name] = f"dw{kernel[0]}x{kernel[1]}/s{strides[0]}"
        else:
            by_node[n.name] = kind
    # Elementwise nodes (BN, activations, SiLU's sigmoid and multiply, the residual add, SE's
    # scale) take the class of their first input that comes from a classified node: in
    # torchvision's graphs that is the conv they follow (Add(project, skip), Mul(scale, x)).
    value_kind = {}
    for n in m.graph.node:  # ONNX graphs are topologically sorted
        if n.name not in by_node and n.op_type in EPILOGUE_OPS:
            kind = next((value_kind[i] for i in n.input if i in value_kind), None)
            if kind is not None:
                by_node[n.name] = kind
        if n.name in by_node:
            for o in n.output:
                value_kind[o] = by_node[n.name]
    by_value = {sanitize(v): k for v, k in value_kind.items()}
    by_value.update({v: k for v, k in value_kind.items()})
    return by_node, by_value


def coarse(kind):
    return "depthwise" if kind.startswith("dw") else kind


def edgert_profile(bench, bundle, threads, iters, by_value):
    ms, flops = {}, {}
    for cmd in profile(bench, bundle, threads, iters)["profile"]:
        name = re.sub(r"^k\d+_", "", cmd["name"])
        kind = by_value.get(name, "other")
        ms[kind] = ms.get(kind, 0.0) + cmd["median_ms"]
        flops[kind] = flops.get(kind, 0) + cmd["flops"]
    return ms, flops


def ort_node_class(node, by_node, by_value):
    """The class of one of onnxruntime's (possibly rewritten) nodes: fused nodes keep the ONNX
    node's name (`.../Mul/QuickGeluFusion/` for SiLU), NCHWc convs are named after the value
    they compute (`..._nchwc`); its layout reorders are `other`."""
    node = re.sub(r"/[A-Za-z]+Fusion/$", "", node)
    node = re.sub(r"_nchwc$", "", node)
    return by_node.get(node) or by_value.get(node) or "other"


def ort_profile(model_path, threads, iters, by_node, by_value):
    """onnxruntime's ms per class (ort_node_profile.node_medians, each node's class summed)."""
    ms = {}
    for node, t in node_medians(model_path, threads, iters).items():
        kind = ort_node_class(node, by_node, by_value)
        ms[kind] = ms.get(kind, 0.0) + t
    return ms


def main():
    ap = profile_arguments(__doc__)
    ap.add_argument("--fine", action="store_true", help="split depthwise convs by kernel size and stride")
    args = ap.parse_args()
    bench = lib.find_tool("edgert-bench")
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            by_node, by_value = node_classes(onnx.load(str(model)))
            if not args.fine:
                by_node = {k: coarse(v) for k, v in by_node.items()}
                by_value = {k: coarse(v) for k, v in by_value.items()}
            bundle = Path(tmp) / f"{Path(model).stem}.bundle"
            lib.compile_model(model, bundle, ["-q", "--target", args.target, *args.edgec_args.split()])
            e_ms, o_ms, e_flops = {}, {}, {}
            for _ in range(args.repeats):  # alternating, so both see the same machine load
                ms, flops = edgert_profile(bench, bundle, args.threads, args.iters, by_value)
                for k, v in ms.items():
                    e_ms.setdefault(k, []).append(v)
                e_flops = flops
                for k, v in ort_profile(model, args.threads, args.iters, by_node, by_value).items():
                    o_ms.setdefault(k, []).append(v)
            kinds = sorted(set(e_ms) | set(o_ms), key=lambda k: (CLASSES.index(coarse(k)), k))
            print(f"{Path(model).name} ({args.target}, {args.threads} thread(s), median of {args.repeats} "
                  f"profiles of {args.iters} runs; kernel ms per run)")
            print(f"  {'class':14s} {'edgert ms':>10s} {'ort ms':>9s} {'ratio':>6s} {'edgert GFLOP/s':>15s}")
            te = to = 0.0
            for k in kinds:
                e = statistics.median(e_ms.get(k, [0.0]))
                o = statistics.median(o_ms.get(k, [0.0]))
                te, to = te + e, to + o
                rate = e_flops.get(k, 0) / (e * 1e6) if e > 0 else 0.0
                ratio = f"{e / o:6.2f}" if o > 0 else "     -"
                print(f"  {k:14s} {e:10.3f} {o:9.3f} {ratio} {rate:15.1f}")
            print(f"  {'total':14s} {te:10.3f} {to:9.3f} {te / to:6.2f}")


if __name__ == "__main__":
    main()
