#!/usr/bin/env python3
"""Quantizes fp32 ONNX models with onnxruntime's quantize_static into QDQ models: per-channel
int8 weights (QInt8, symmetric), uint8 activations (QUInt8), calibrated (MinMax) on a few
seeded random inputs. Used by tests/e2e/test_int8.py on small CNNs, and by hand on the
torchvision exports of tests/models/export_torchvision.py:

    python3 tests/models/quantize_models.py tests/generated/models/resnet18.onnx \
        [more.onnx ...] [--out-dir DIR] [--calibration 8] [--seed 0] [--compare]

writes DIR/<model>.qdq.onnx (default: next to the input). --compare also compiles each with
edgec, runs it with edgert-run on <model>.input.npy (or a seeded random input) and compares
with onnxruntime on the same QDQ model (default session options: ORT fuses DQ -> Conv -> Q
into integer kernels): the fraction of output elements equal and the largest difference in
output quantization steps.

Needs onnxruntime (and its quantization dependency ml_dtypes)."""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import edge_testlib as lib  # noqa: E402


def seeded_feeds(model, rng):
    """One seeded input per graph input: standard normal floats, integers over their range."""
    from onnx import helper
    init = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in init:
            continue
        shape = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            feeds[vi.name] = rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


class SeededReader:
    """onnxruntime CalibrationDataReader over `count` seeded inputs (seeded_feeds)."""

    def __init__(self, model, count, seed):
        rng = np.random.default_rng(seed)
        self.batches = [seeded_feeds(model, rng) for _ in range(count)]
        self.it = iter(self.batches)

    def get_next(self):
        return next(self.it, None)

    def rewind(self):
        self.it = iter(self.batches)


def quantize(model, out_path, calibration=4, seed=0, per_channel=True, weight_type=None, extra_options=None):
    """model: ModelProto or path. Writes the QDQ model to out_path; returns out_path.
    weight_type: a QuantType (default QInt8, symmetric)."""
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static
    if isinstance(model, (str, Path)):
        model = onnx.load(str(model))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "fp32.onnx"
        onnx.save(model, str(src))
        quantize_static(str(src), str(out_path), SeededReader(model, calibration, seed),
                        quant_format=QuantFormat.QDQ, per_channel=per_channel,
                        activation_type=QuantType.QUInt8, weight_type=weight_type or QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax, extra_options=extra_options or {})
    return out_path


def ort_session(model, optimized_path=None):
    """onnxruntime on a QDQ model with default optimizations (its integer kernels, fed exact
    weights: edge_testlib.exact_weights), 1 thread."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    if optimized_path:
        so.optimized_model_filepath = str(optimized_path)
    return ort.InferenceSession(lib.exact_weights(model).SerializeToString(), so, providers=["CPUExecutionProvider"])


def onnx_reference_run(model, inputs):
    """The ONNX reference evaluator (onnx.reference) on model, {output name: ndarray}. onnx
    1.17's evaluator implements DequantizeLinear from opset 19 only; QuantizeLinear /
    DequantizeLinear 19 differ from 13 in the float8 types alone, so the opset is raised to 19
    (the other ops of these tests, Conv, Gemm, Add, GlobalAveragePool, Flatten, kept their
    semantics from 13 to 19)."""
    import onnx
    from onnx.reference import ReferenceEvaluator
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = max(o.version, 19)
    m.ir_version = max(m.ir_version, 9)
    names = [o.name for o in m.graph.output]
    return dict(zip(names, ReferenceEvaluator(m).run(names, inputs)))


def output_quant(model, output_name):
    """(scale, zero point) of the DequantizeLinear that produces output_name, or None."""
    import onnx.numpy_helper as nh
    init = {t.name: nh.to_array(t) for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "DequantizeLinear" and n.output[0] == output_name:
            scale = float(init[n.input[1]])
            zp = int(init[n.input[2]]) if len(n.input) > 2 and n.input[2] else 0
            return scale, zp, n.input[0]
    return None


def step_stats(actual, expected, scale):
    """(fraction equal, max |difference| in quantization steps)."""
    a = np.asarray(actual, np.float64)
    e = np.asarray(expected, np.float64)
    steps = np.abs(a - e) / scale if scale else np.abs(a - e)
    return float(np.mean(a == e)), float(np.round(steps.max(), 3)) if steps.size else 0.0


def compare_model(qdq_path, input_npy=None, seed=0):
    import onnx
    model = onnx.load(str(qdq_path))
    feeds = seeded_feeds(model, np.random.default_rng(seed + 7))
    if input_npy and Path(input_npy).exists() and len(feeds) == 1:
        feeds = {next(iter(feeds)): np.load(input_npy)}
    work = Path(tempfile.mkdtemp(prefix="int8_"))
    outs = [o.name for o in model.graph.output]
    expected = dict(zip(outs, ort_session(model).run(outs, feeds)))
    actual = lib.compile_and_run(model, feeds, work, name=Path(qdq_path).stem.replace(".", "_"), timeout=3600)
    for o in outs:
        q = output_quant(model, o)
        scale = q[0] if q else 0.0
        eq, steps = step_stats(actual[o], expected[o], scale)
        print(f"{qdq_path}: {o}: {eq * 100:.3f}% equal, max diff {steps} steps (scale {scale:g}, "
              f"{actual[o].size} elements)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--out-dir")
    ap.add_argument("--calibration", type=int, default=4, help="number of seeded random calibration inputs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare", action="store_true")
    args = ap.parse_args()
    for m in args.models:
        m = Path(m)
        out = Path(args.out_dir or m.parent) / (m.stem + ".qdq.onnx")
        quantize(m, out, args.calibration, args.seed)
        print(f"wrote {out}")
        if args.compare:
            compare_model(out, m.with_suffix(".input.npy"), args.seed)


if __name__ == "__main__":
    main()
