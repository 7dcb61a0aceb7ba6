"""Fixtures of the Python package's tests (tests/python/): small ONNX models built with
onnx.helper, compiled once per session with edgec.compile. ctest runs these with the staged
package of the build (build/python on PYTHONPATH, tests/CMakeLists.txt)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import edgec
import edgert

OPSET = [helper.make_opsetid("", 17)]

# Every dtype the runtime's C API names that ONNX graph inputs can carry (edgec compiles no
# BFLOAT16 graph inputs).
ROUND_TRIP_TYPES = {
    "f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "f64": TensorProto.DOUBLE,
    "i8": TensorProto.INT8, "u8": TensorProto.UINT8, "i16": TensorProto.INT16,
    "u16": TensorProto.UINT16, "i32": TensorProto.INT32, "u32": TensorProto.UINT32,
    "i64": TensorProto.INT64, "u64": TensorProto.UINT64, "b": TensorProto.BOOL,
}


def identity_model():
    """x_<t> -> Identity -> y_<t> for every dtype of ROUND_TRIP_TYPES, shape (2, 3)."""
    ins, outs, nodes = [], [], []
    for k, t in ROUND_TRIP_TYPES.items():
        ins.append(helper.make_tensor_value_info("x_" + k, t, [2, 3]))
        outs.append(helper.make_tensor_value_info("y_" + k, t, [2, 3]))
        nodes.append(helper.make_node("Identity", ["x_" + k], ["y_" + k], name="id_" + k))
    return helper.make_model(helper.make_graph(nodes, "round_trip", ins, outs), opset_imports=OPSET)


def cnn_model():
    """A small CNN with two inputs and two outputs: Conv -> Relu -> global pool -> Gemm (+ bias
    input) -> Softmax, and the conv features scaled. Seeded weights."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32), "w")
    cb = numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "cb")
    fw = numpy_helper.from_array((rng.standard_normal((8, 5)) * 0.5).astype(np.float32), "fw")
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    nodes = [
        helper.make_node("Conv", ["image", "w", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "fw"], ["m"], name="fc"),
        helper.make_node("Add", ["m", "bias"], ["logits"], name="add_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
        helper.make_node("Mul", ["r", "two"], ["features"], name="scale"),
    ]
    graph = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16]),
         helper.make_tensor_value_info("bias", TensorProto.FLOAT, [1, 5])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 5]),
         helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 8, 16, 16])],
        initializer=[w, cb, fw, two])
    model = helper.make_model(graph, opset_imports=OPSET)
    onnx.checker.check_model(model)
    return model


def cnn_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {"image": rng.standard_normal((1, 3, 16, 16)).astype(np.float32),
            "bias": rng.standard_normal((1, 5)).astype(np.float32)}


def ort_run(model, inputs):
    """onnxruntime's outputs (graph optimizations off): the independent reference."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


@pytest.fixture(scope="session")
def cnn():
    return cnn_model()


@pytest.fixture(scope="session")
def cnn_bundle_bytes(cnn):
    # --embed-reference: the same bundle serves self_test()
    return edgec.compile(cnn, target="x86_64", embed_reference=True)


@pytest.fixture()
def cnn_bundle(cnn_bundle_bytes):
    b = edgert.Bundle(cnn_bundle_bytes)
    yield b
    b.close()
