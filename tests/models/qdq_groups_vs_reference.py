#!/usr/bin/env python3
"""Manual: where does a QDQ model's int8 result part from the ONNX spec? Runs each quantized
group (the DequantizeLinear inputs -> op -> QuantizeLinear of every uint8 / int8 tensor) alone,
all fed the same quantized inputs (the whole model's tensors from onnxruntime with u8u8
weights, edge_testlib.exact_weights), with the ONNX reference evaluator, onnxruntime u8u8 and
onnxruntime's default session (int8 weights: u8s8 kernels, which saturate pairs of products
on x86 without VNNI), and prints per group how many elements differ from the reference and
by how many quantization steps at most. With --bundle it also compiles the model with every
quantized tensor as an output (edgec, $EDGEC or build/), runs it (edgert-run) and counts the
tensors not equal to onnxruntime u8u8's. README "Quantized (int8) models" has its figures
for the budget test's MobileNetV2:

    python3 tests/models/qdq_groups_vs_reference.py MODEL.qdq.onnx INPUT.npy [--bundle]

(about 20 s for a 224x224 MobileNetV2 on a loaded 2-core machine, without --bundle)."""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import edge_testlib as lib  # noqa: E402
import quantize_models as qm  # noqa: E402


def main():
    import onnx
    import onnxruntime as ort
    from onnx import helper
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("input", help=".npy for the model's one input")
    ap.add_argument("--bundle", action="store_true", help="also compare edgec's tensors with onnxruntime u8u8's")
    args = ap.parse_args()
    model, x = onnx.load(args.model), np.load(args.input)
    in_name = model.graph.input[0].name
    producer = {o: n for n in model.graph.node for o in n.output}
    inits = {t.name for t in model.graph.initializer}
    quantizers = [n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] != in_name]
    qtype = lambda n: onnx.TensorProto.INT8 if len(n.input) > 2 and any(
        t.name == n.input[2] and t.data_type == onnx.TensorProto.INT8 for t in model.graph.initializer) else onnx.TensorProto.UINT8

    whole = onnx.ModelProto()
    whole.CopyFrom(model)
    for q in quantizers:
        whole.graph.output.append(helper.make_tensor_value_info(q.output[0], qtype(q), None))
    names = [o.name for o in whole.graph.output]
    u8u8_all = dict(zip(names, qm.ort_session(whole).run(names, {in_name: x})))

    def group(q):
        """The nodes from the quantized inputs (or the model input) to q, and those inputs."""
        nodes, inputs, stack = [], [], [q]
        while stack:
            n = stack.pop()
            if n in nodes:
                continue
            nodes.append(n)
            for i in n.input:
                p = producer.get(i)
                if not i or i in inits:
                    continue
                if p is None or (p.op_type == "QuantizeLinear" and p is not q and p.input[0] != in_name):
                    inputs.append(i)
                else:
                    stack.append(p)
        return [n for n in model.graph.node if n in nodes], list(dict.fromkeys(inputs))

    def steps(a, b):
        return int((a != b).sum()), int(np.abs(a.astype(np.int32) - b.astype(np.int32)).max())

    differing, worst = [0, 0], [0, 0]  # u8u8, default: elements differing from the reference, max steps
    print(f"{'tensor':40s} {'op':18s} {'elements':>9s}  u8u8 vs reference  default vs reference  (differing, max steps)")
    for q in quantizers:
        nodes, inputs = group(q)
        feeds = {i: (x if i == in_name else u8u8_all[i]) for i in inputs}
        vis = [helper.make_tensor_value_info(i, onnx.TensorProto.FLOAT if i == in_name else qtype(producer[i]), None) for i in inputs]
        g = helper.make_graph(nodes, "group", vis, [helper.make_tensor_value_info(q.output[0], qtype(q), None)],
                              [t for t in model.graph.initializer if any(t.name in n.input for n in nodes)])
        m = helper.make_model(g, opset_imports=model.opset_import)
        m.ir_version = model.ir_version
        ref = qm.onnx_reference_run(m, feeds)[q.output[0]]
        u8u8 = qm.ort_session(m).run(None, feeds)[0]
        default = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        a, b = steps(u8u8, ref), steps(default, ref)
        for k, (n_diff, n_steps) in enumerate((a, b)):
            differing[k] += n_diff
            worst[k] = max(worst[k], n_steps)
        ops = "+".join(n.op_type for n in nodes if n.op_type not in ("QuantizeLinear", "DequantizeLinear"))
        print(f"{q.output[0]:40s} {ops:18s} {ref.size:9d}  {str(a):18s} {str(b)}")
    print(f"all groups: u8u8 differs from the reference in {differing[0]} elements (max {worst[0]} steps), "
          f"the default session in {differing[1]} (max {worst[1]} steps)")
    if args.bundle:
        work = Path(tempfile.mkdtemp(prefix="qdq_groups_"))
        got = lib.compile_and_run(whole, {in_name: x}, work, name="whole", timeout=3600)
        bad = [k for k in names if not np.array_equal(got[k], u8u8_all[k])]
        print(f"edgec: {len(names) - len(bad)} of {len(names)} outputs equal to onnxruntime u8u8's"
              + (f"; differing: {', '.join(bad)}" if bad else ""))


if __name__ == "__main__":
    main()
