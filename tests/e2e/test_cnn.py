#!/usr/bin/env python3
"""End-to-end CNN: build (onnx.helper, seeded numpy), compile with edgec, run with
edgert-run, compare with onnxruntime (rtol 1e-4, atol 1e-5).

Models (tests/edge_testlib.py make_cnn, opset 13):
  basic   conv+bias / batchnorm / relu / maxpool / residual add / conv stride 2 /
          global average pool / flatten / gemm / softmax
  grouped the same skeleton with grouped, dilated and depthwise convs and an average pool
Run directly (uses build/) or via ctest (env EDGEC, EDGERT_RUN, EDGE_WORK_DIR)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
suite = lib.Suite("test_cnn")
WORK = None


def check(variant, seed, batch=1, size=32, threads=None, also_logits=False):
    model = lib.make_cnn(seed=seed, variant=variant, batch=batch, size=size)
    if also_logits:
        # Expose the pre-softmax logits too: softmax squashes errors, logits do not.
        from onnx import TensorProto, helper
        model.graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10]))
    rng = np.random.default_rng(1000 + seed)
    inputs = {"image": rng.standard_normal((batch, 3, size, size)).astype(np.float32)}
    expected = lib.ort_run(model, inputs)
    name = f"{variant}_s{seed}_b{batch}_{size}" + (f"_t{threads}" if threads else "")
    actual = lib.compile_and_run(model, inputs, WORK, name=name, threads=threads)
    lib.assert_close(actual, expected, RTOL, ATOL)
    probs = actual["probabilities"]
    assert np.allclose(probs.sum(axis=-1), 1.0, atol=1e-5), f"softmax rows do not sum to 1: {probs.sum(axis=-1)}"


@suite.case
def basic_cnn():
    check("basic", seed=0)


@suite.case
def basic_cnn_logits_and_probabilities():
    check("basic", seed=1, also_logits=True)


@suite.case
def basic_cnn_batch2_threads2():
    check("basic", seed=2, batch=2, size=40, threads=2)


@suite.case
def grouped_dilated_avgpool_cnn():
    check("grouped", seed=3, also_logits=True)


@suite.case
def grouped_dilated_avgpool_cnn_odd_size_threads2():
    # 33x33: odd spatial size exercises padding/stride edge handling.
    check("grouped", seed=4, size=33, threads=2)


if __name__ == "__main__":
    WORK = lib.work_dir("test_cnn")
    sys.exit(suite.main())
