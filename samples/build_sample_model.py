#!/usr/bin/env python3
"""Builds the sample classifier: a small residual CNN made with onnx.helper and seeded numpy
random weights (no download, same bytes every time).

    image (1,3,64,64) float32
      -> conv 3x3 (16) + batchnorm + relu -> maxpool 2x2
      -> residual block: [conv 3x3 + bn + relu, conv 3x3 + bn] + skip -> add -> relu
      -> conv 3x3 stride 2 (32) + bn + relu
      -> residual block (32)
      -> global average pool -> flatten -> gemm (10) -> softmax
    -> probabilities (1,10)

Writes OUT_DIR/classifier.onnx and a deterministic input OUT_DIR/image.npy
(default OUT_DIR: samples/generated, which git ignores).

    python3 samples/build_sample_model.py [--out-dir DIR] [--seed N] [--size 64]"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def build(seed=0, size=64, classes=10):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def param(name, array):
        inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv_bn(x, name, cin, cout, stride=1, relu=True):
        w = rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9))
        nodes.append(helper.make_node("Conv", [x, param(f"{name}.weight", w), param(f"{name}.bias", 0.05 * rng.standard_normal(cout))],
                                      [f"{name}.conv"], name=f"{name}.conv", kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1], strides=[stride, stride]))
        nodes.append(helper.make_node(
            "BatchNormalization",
            [f"{name}.conv", param(f"{name}.bn.scale", 1 + 0.1 * rng.standard_normal(cout)),
             param(f"{name}.bn.bias", 0.1 * rng.standard_normal(cout)),
             param(f"{name}.bn.mean", 0.1 * rng.standard_normal(cout)),
             param(f"{name}.bn.var", rng.uniform(0.5, 1.5, cout))],
            [f"{name}.bn"], name=f"{name}.bn", epsilon=1e-5))
        if not relu:
            return f"{name}.bn"
        nodes.append(helper.make_node("Relu", [f"{name}.bn"], [f"{name}.relu"], name=f"{name}.relu"))
        return f"{name}.relu"

    def residual(x, name, c):
        h = conv_bn(x, f"{name}.a", c, c)
        h = conv_bn(h, f"{name}.b", c, c, relu=False)
        nodes.append(helper.make_node("Add", [h, x], [f"{name}.add"], name=f"{name}.add"))
        nodes.append(helper.make_node("Relu", [f"{name}.add"], [f"{name}.out"], name=f"{name}.out"))
        return f"{name}.out"

    h = conv_bn("image", "stem", 3, 16)
    nodes.append(helper.make_node("MaxPool", [h], ["stem.pool"], name="stem.pool", kernel_shape=[2, 2], strides=[2, 2]))
    h = residual("stem.pool", "block1", 16)
    h = conv_bn(h, "down", 16, 32, stride=2)
    h = residual(h, "block2", 32)
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["features"], name="flatten", axis=1))
    fc_w = param("fc.weight", rng.standard_normal((classes, 32)) * np.sqrt(1.0 / 32))
    fc_b = param("fc.bias", 0.05 * rng.standard_normal(classes))
    nodes.append(helper.make_node("Gemm", ["features", fc_w, fc_b], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1))
    graph = helper.make_graph(
        nodes, "edge_sample_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="edge-samples")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "generated"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=64)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    model = build(args.seed, args.size)
    model_path = os.path.join(args.out_dir, "classifier.onnx")
    onnx.save(model, model_path)
    image = np.random.default_rng(args.seed + 1).uniform(-1, 1, (1, 3, args.size, args.size)).astype(np.float32)
    np.save(os.path.join(args.out_dir, "image.npy"), image)
    params = sum(int(np.prod(i.dims)) for i in model.graph.initializer)
    print(f"wrote {model_path} ({len(model.graph.node)} nodes, {params} parameters, "
          f"{os.path.getsize(model_path)} bytes) and image.npy {image.shape}")


if __name__ == "__main__":
    main()
