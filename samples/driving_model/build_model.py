#!/usr/bin/env python3
"""Builds a stand-in for openpilot's combined driving model ("supercombo"): the same
interface, an architecture in the same spirit, seeded random weights (no download; the same
bytes on every run on a given machine — the batch-norm calibration runs onnxruntime, whose
float rounding may differ between CPUs).

Interface (what modeld feeds it at 20 Hz):
    img, big_img        (1,12,128,256) uint8   road and wide-road camera; 12 channels = the
                                               previous and the current frame, each in the
                                               6-channel YUV 4:2:0 layout (4 Y planes from a
                                               2x2 space-to-depth of the full-res Y, then U, V)
    features_buffer     (1,24,512)  float      hidden_state of the last 24 frames, oldest first
    desire_pulse        (1,25,8)    float      one-hot desire per step (lane change, turn, ...)
    traffic_convention  (1,2)       float      one-hot: right-hand / left-hand traffic
    action_t            (1,2)       float      the last commanded action (curvature, accel)
    -> outputs          (1,2576)    float      2064 head values (plan, lane lines, lead, ...,
                                               unstructured here) then the 512-wide
                                               hidden_state: outputs[:, -512:] becomes the
                                               newest row of the next frame's features_buffer

"float" is float32 in the fp32 build and float16 in the fp16 build (as in the real model,
which takes and returns float16); the two image inputs are uint8 in both builds.

Architecture (fp16 build: weights and activations float16; LayerNormalization keeps its
statistics in float32, stash_type=1). Batch-norm statistics are folded into every conv of
the encoder from onnxruntime runs on seeded frames (see _calibrate), as in a trained
FastViT, so the activations stay O(1) and the images reach the outputs:
  vision encoder, shared by both cameras (they run as a batch of 2 through the same weights):
    Cast uint8 -> float, x/128 - 1
    stem: 4x4 stride-4 patchify conv 12->64 + GELU, a 3x3 depthwise conv (stride 2 with
          the default --stem-stride 8, else 1) + GELU and a 1x1 conv + GELU (FastViT's
          MobileOne stem)
    4 stages of FastViT-S12 blocks, 64/128/256/512 channels, 2/2/6/2 blocks:
          x = x + ls1 * dwconv3x3(x)                                   (RepMixer token mixer)
          x = x + ls2 * conv1x1(GELU(conv1x1_expand3(dwconv7x7(x))))   (ConvFFN, ratio 3)
          between stages a 7x7 stride-2 grouped conv (groups = in channels, 2 outputs per
          group) + GELU and a 1x1 conv + GELU (FastViT's PatchEmbed)
    conv_exp: 3x3 grouped conv 512->1024 (groups 512) with squeeze-excitation (GAP, 1x1
          1024->64, ReLU, 1x1 64->1024, Sigmoid, Mul) + GELU
    global average pool, FC 1024->2048
  policy: both cameras' 2048 features -> FC 4096->512 + GELU = this frame's token;
    25 tokens = features_buffer (24) + this frame; + desire_pulse @ W(8x512)
    + FC(traffic_convention ++ action_t) + learned positional embedding;
    one pre-LayerNorm transformer layer (8 heads of 64, MatMul + Softmax attention; FFN
    512->2048->512 with GELU); final LayerNorm; the last token -> heads:
    FC 512->1024 + GELU -> FC 1024->2064, and FC 512->512 -> hidden_state.
GELU is the exact erf form 0.5 x (1 + erf(x / sqrt 2)) written with Div/Erf/Add/Mul (what
torch exports below opset 20). Opset 17, standard ONNX ops only.

Our code generator is still naive, so the default stem has stride 8 (stage 1 runs at 16x32):
0.96 GFLOP per frame. --stem-stride 4 gives FastViT's usual stride 4, stage 1 at 32x64
(3.0 GFLOP). FLOPs are printed (multiply-adds of Conv/MatMul/Gemm x 2).

    python3 samples/driving_model/build_model.py [--dtype fp32|fp16] [--out PATH]
        [--seed N] [--stem-stride 8|4] [--inputs-dir DIR] [--check]
--inputs-dir writes seeded random inputs as DIR/<name>.npy; --check runs onnxruntime once."""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
IMG_SHAPE = (1, 12, 128, 256)
FEATURE_LEN = 512
HISTORY = 24
DESIRE_LEN = 8
OUTPUT_LEN = 2576
HIDDEN_OFFSET = OUTPUT_LEN - FEATURE_LEN  # outputs[:, 2064:] is hidden_state
STAGES = ((64, 2), (128, 2), (256, 6), (512, 2))
MLP_RATIO = 3
HEADS = 8
OPSET = 17

INPUTS = {  # name -> (shape, is_image)
    "img": (IMG_SHAPE, True),
    "big_img": (IMG_SHAPE, True),
    "features_buffer": ((1, HISTORY, FEATURE_LEN), False),
    "desire_pulse": ((1, HISTORY + 1, DESIRE_LEN), False),
    "traffic_convention": ((1, 2), False),
    "action_t": ((1, 2), False),
}


def float_dtype(dtype: str):
    return {"fp32": np.float32, "fp16": np.float16}[dtype]


def build(dtype="fp32", seed=0, stem_stride=8):
    """Returns the ModelProto. dtype: "fp32" or "fp16"; stem_stride: 8 or 4.

    The fp16 model is the fp32 model with every float tensor rounded to float16, so the two
    builds compute the same function."""
    if dtype not in ("fp32", "fp16"):
        raise ValueError(f"dtype must be fp32 or fp16, not {dtype!r}")
    if stem_stride not in (4, 8):
        raise ValueError("stem_stride must be 4 or 8")
    model, calib = _build_fp32(seed, stem_stride)
    _calibrate(model, calib, seed)
    return finish(model, dtype, seed, stem_stride)


def finish(fp32_model, dtype, seed=0, stem_stride=8):
    """The build for `dtype` from build("fp32", seed, stem_stride)'s model (a copy), named
    and documented as build(dtype, ...) would: saves the calibration when both are needed."""
    model = to_fp16(fp32_model) if dtype == "fp16" else _copy(fp32_model)
    model.graph.name = f"driving_model_{dtype}"
    model.doc_string = (f"edge sample: stand-in for openpilot's driving model, {dtype}, stem stride {stem_stride}, "
                        f"seed {seed}; outputs[:, {HIDDEN_OFFSET}:] is hidden_state")
    onnx.checker.check_model(model, full_check=True)
    return model


def _build_fp32(seed, stem_stride):
    """The float32 graph with seeded weights, and the layers to calibrate:
    [(conv or gemm node name, "channel" | "tensor")]."""
    np_dt = np.float32
    onnx_dt = TensorProto.FLOAT
    calib = []
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    counter = [0]

    def uid(prefix):
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def const(name, array, np_type=None):
        inits.append(numpy_helper.from_array(np.asarray(array, dtype=np_type or np_dt), name))
        return name

    def scalar(value):
        return const(uid("c"), np.array(value), np_dt)

    def ints(values):
        return const(uid("i"), np.array(values, dtype=np.int64), np.int64)

    def node(op, ins, name, **attrs):
        out = f"{name}.y"
        nodes.append(helper.make_node(op, list(ins), [out], name=name, **attrs))
        return out

    def gelu(x, name):
        # 0.5 x (1 + erf(x / sqrt 2)), as torch.onnx exports nn.GELU at opset < 20.
        d = node("Div", [x, scalar(np.sqrt(2.0))], f"{name}.div")
        e = node("Erf", [d], f"{name}.erf")
        a = node("Add", [e, scalar(1.0)], f"{name}.add")
        m = node("Mul", [x, a], f"{name}.mul")
        return node("Mul", [m, scalar(0.5)], f"{name}.half")

    def conv(x, name, cin, cout, k, stride=1, group=1, bn=True):
        """Conv + bias with FastViT's padding (k // 2; none for a k == stride patchify).
        bn: a folded batch norm (calibrated per channel, see _calibrate)."""
        fan_in = (cin // group) * k * k
        w = const(f"{name}.weight", rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in))
        b = const(f"{name}.bias", 0.02 * rng.standard_normal(cout))
        if bn:
            calib.append((name, "channel"))
        pad = 0 if k == stride else k // 2
        return node("Conv", [x, w, b], name, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group)

    def layer_scale(x, name, c):
        s = const(f"{name}.layer_scale", rng.uniform(0.05, 0.3, (c, 1, 1)))
        return node("Mul", [x, s], f"{name}.ls")

    def gemm(x, name, fin, fout, gain=1.0, calibrate=False):
        w = const(f"{name}.weight", rng.standard_normal((fout, fin)) * gain / np.sqrt(fin))
        b = const(f"{name}.bias", 0.02 * rng.standard_normal(fout))
        if calibrate:
            calib.append((name, "tensor"))
        return node("Gemm", [x, w, b], name, transB=1)

    def matmul_bias(x, name, fin, fout, gain=1.0):
        w = const(f"{name}.weight", rng.standard_normal((fin, fout)) * gain / np.sqrt(fin))
        b = const(f"{name}.bias", 0.02 * rng.standard_normal(fout))
        return node("Add", [node("MatMul", [x, w], f"{name}.matmul"), b], f"{name}.add")

    def layer_norm(x, name, c):
        g = const(f"{name}.scale", 1.0 + 0.1 * rng.standard_normal(c))
        b = const(f"{name}.bias", 0.05 * rng.standard_normal(c))
        return node("LayerNormalization", [x, g, b], name, axis=-1, epsilon=1e-5, stash_type=1)

    def reshape(x, shape, name):
        return node("Reshape", [x, ints(shape)], name)

    # ---- vision encoder: both cameras as one batch of 2 through the same weights
    cat = node("Concat", ["img", "big_img"], "vision.concat_cameras", axis=0)           # (2,12,128,256) u8
    x = node("Cast", [cat], "vision.cast", to=onnx_dt)
    x = node("Sub", [node("Mul", [x, scalar(1.0 / 128.0)], "vision.scale"), scalar(1.0)], "vision.normalize")
    x = gelu(conv(x, "stem.patchify", 12, 64, 4, 4), "stem.patchify.gelu")              # (2,64,32,64)
    x = gelu(conv(x, "stem.dw", 64, 64, 3, stem_stride // 4, group=64), "stem.dw.gelu")
    x = gelu(conv(x, "stem.pw", 64, 64, 1), "stem.pw.gelu")
    cin = 64
    for si, (c, blocks) in enumerate(STAGES):
        if si > 0:  # PatchEmbed: 7x7 stride-2 grouped conv (2 outputs per group), 1x1 conv
            x = gelu(conv(x, f"stage{si}.down.conv7x7", cin, c, 7, 2, group=cin), f"stage{si}.down.gelu1")
            x = gelu(conv(x, f"stage{si}.down.pw", c, c, 1), f"stage{si}.down.gelu2")
        cin = c
        for bi in range(blocks):
            p = f"stage{si}.block{bi}"
            t = conv(x, f"{p}.mixer.dw3x3", c, c, 3, group=c)
            x = node("Add", [x, layer_scale(t, f"{p}.mixer", c)], f"{p}.mixer.residual")
            h = conv(x, f"{p}.ffn.dw7x7", c, c, 7, group=c)
            h = gelu(conv(h, f"{p}.ffn.fc1", c, c * MLP_RATIO, 1), f"{p}.ffn.gelu")
            h = conv(h, f"{p}.ffn.fc2", c * MLP_RATIO, c, 1)
            x = node("Add", [x, layer_scale(h, f"{p}.ffn", c)], f"{p}.ffn.residual")
    # conv_exp: grouped 3x3 (2 outputs per group) with squeeze-excitation
    x = conv(x, "conv_exp.conv", 512, 1024, 3, group=512)
    se = node("GlobalAveragePool", [x], "conv_exp.se.pool")
    se = node("Relu", [conv(se, "conv_exp.se.reduce", 1024, 64, 1, bn=False)], "conv_exp.se.relu")
    se = node("Sigmoid", [conv(se, "conv_exp.se.expand", 64, 1024, 1, bn=False)], "conv_exp.se.sigmoid")
    x = gelu(node("Mul", [x, se], "conv_exp.se.scale"), "conv_exp.gelu")
    x = node("Flatten", [node("GlobalAveragePool", [x], "vision.pool")], "vision.flatten", axis=1)  # (2,1024)
    x = gemm(x, "vision.fc", 1024, 2048, calibrate=True)                                                  # (2,2048)
    vision = reshape(x, [1, 2 * 2048], "vision.features")                                 # (1,4096)

    # ---- policy: one transformer layer over 24 past hidden states + this frame's token
    d, heads, dh, ntok = FEATURE_LEN, HEADS, FEATURE_LEN // HEADS, HISTORY + 1
    tok = gelu(gemm(vision, "policy.vision_proj", 2 * 2048, d, calibrate=True), "policy.vision_proj.gelu")
    tok = reshape(tok, [1, 1, d], "policy.token")
    x = node("Concat", ["features_buffer", tok], "policy.tokens", axis=1)                 # (1,25,512)
    desire = node("MatMul", ["desire_pulse", const("policy.desire_embed", rng.standard_normal((DESIRE_LEN, d)) * 0.5)],
                  "policy.desire")
    cond = node("Concat", ["traffic_convention", "action_t"], "policy.cond_in", axis=1)    # (1,4)
    cond = reshape(gemm(cond, "policy.cond", 4, d), [1, 1, d], "policy.cond_token")
    x = node("Add", [x, desire], "policy.add_desire")
    x = node("Add", [x, cond], "policy.add_cond")
    x = node("Add", [x, const("policy.pos_embed", 0.1 * rng.standard_normal((1, ntok, d)))], "policy.add_pos")

    p = "policy.layer0"
    h = layer_norm(x, f"{p}.ln1", d)
    qkv = matmul_bias(h, f"{p}.attn.qkv", d, 3 * d)                                       # (1,25,1536)

    def head_split(i, perm, name):
        s = node("Slice", [qkv, ints([i * d]), ints([(i + 1) * d]), ints([2])], f"{p}.attn.{name}.slice")
        return node("Transpose", [reshape(s, [1, ntok, heads, dh], f"{p}.attn.{name}.reshape")], f"{p}.attn.{name}.heads",
                    perm=perm)

    q = head_split(0, [0, 2, 1, 3], "q")                                                   # (1,8,25,64)
    k = head_split(1, [0, 2, 3, 1], "k")                                                   # (1,8,64,25)
    v = head_split(2, [0, 2, 1, 3], "v")                                                   # (1,8,25,64)
    scores = node("Mul", [node("MatMul", [q, k], f"{p}.attn.qk"), scalar(1.0 / np.sqrt(dh))], f"{p}.attn.scale")
    attn = node("Softmax", [scores], f"{p}.attn.softmax", axis=-1)
    o = node("MatMul", [attn, v], f"{p}.attn.av")                                          # (1,8,25,64)
    o = reshape(node("Transpose", [o], f"{p}.attn.merge", perm=[0, 2, 1, 3]), [1, ntok, d], f"{p}.attn.concat")
    x = node("Add", [x, matmul_bias(o, f"{p}.attn.out", d, d)], f"{p}.attn.residual")
    h = layer_norm(x, f"{p}.ln2", d)
    h = gelu(matmul_bias(h, f"{p}.ffn.fc1", d, 4 * d), f"{p}.ffn.gelu")
    x = node("Add", [x, matmul_bias(h, f"{p}.ffn.fc2", 4 * d, d)], f"{p}.ffn.residual")
    x = layer_norm(x, "policy.ln_final", d)
    last = reshape(node("Slice", [x, ints([ntok - 1]), ints([ntok]), ints([1])], "policy.last_token"), [1, d],
                   "policy.last")
    heads_out = gemm(gelu(gemm(last, "heads.fc1", d, 1024), "heads.gelu"), "heads.fc2", 1024,
                     HIDDEN_OFFSET)
    hidden = gemm(last, "hidden_state", d, d)
    nodes.append(helper.make_node("Concat", [heads_out, hidden], ["outputs"], name="outputs", axis=1))

    graph_inputs = [
        helper.make_tensor_value_info(name, TensorProto.UINT8 if is_img else onnx_dt, list(shape))
        for name, (shape, is_img) in INPUTS.items()]
    graph = helper.make_graph(nodes, "driving_model", graph_inputs,
                              [helper.make_tensor_value_info("outputs", onnx_dt, [1, OUTPUT_LEN])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="edge-samples")
    model.ir_version = 8
    return model, calib


def _calibrate(model, calib, seed):
    """Folds batch-norm statistics into the vision encoder, as a trained FastViT has them
    folded into its convs: with random weights the activations would otherwise shrink
    layer by layer (GELU halves small values) and the images would hardly reach the
    outputs. Layer by layer, in order, onnxruntime measures each listed Conv's output on a
    seeded random frame pair (per channel: mean, std) and the conv is rescaled to std 1
    around a small random per-channel mean (BN's beta); each listed Gemm gets one scale for
    std 1. The weights being calibrated are graph inputs of a probe model, so one session
    serves every step. In place."""
    import onnxruntime as ort
    rng = np.random.default_rng(seed + 1000)
    inits = {i.name: i for i in model.graph.initializer}
    params = {}
    for name, _ in calib:
        for part in ("weight", "bias"):
            params[f"{name}.{part}"] = numpy_helper.to_array(inits[f"{name}.{part}"]).astype(np.float64)
    frame = {k: v for k, v in random_inputs("fp32", seed + 2000).items()}
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    kept = [i for i in probe.graph.initializer if i.name not in params]
    del probe.graph.initializer[:]
    probe.graph.initializer.extend(kept)
    for pname, value in params.items():
        probe.graph.input.append(helper.make_tensor_value_info(pname, TensorProto.FLOAT, list(value.shape)))
    del probe.graph.output[:]
    for name, _ in calib:
        probe.graph.output.append(helper.make_tensor_value_info(f"{name}.y", TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1  # the same sums in the same order on every run
    sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
    for j, (name, mode) in enumerate(calib):
        feeds = dict(frame, **{k: v.astype(np.float32) for k, v in params.items()})
        y = sess.run([f"{name}.y"], feeds)[0].astype(np.float64)  # (N, C, ...)
        w, b = params[f"{name}.weight"], params[f"{name}.bias"]
        if mode == "channel":
            axes = (0,) + tuple(range(2, y.ndim))
            mean, std = y.mean(axis=axes), y.std(axis=axes) + 1e-3
            params[f"{name}.weight"] = w / std.reshape((-1,) + (1,) * (w.ndim - 1))
            params[f"{name}.bias"] = (b - mean) / std + 0.1 * rng.standard_normal(mean.shape)
        else:
            std = y.std() + 1e-3
            params[f"{name}.weight"], params[f"{name}.bias"] = w / std, b / std
    for pname, value in params.items():
        inits[pname].CopyFrom(numpy_helper.from_array(value.astype(np.float32), pname))


def _copy(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


def to_fp16(model):
    """Every float32 initializer, input, output and Cast target becomes float16."""
    m = _copy(model)
    for i in m.graph.initializer:
        if i.data_type == TensorProto.FLOAT:
            i.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(i).astype(np.float16), i.name))
    for vi in list(m.graph.input) + list(m.graph.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in m.graph.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    return m


def count_flops(model):
    """FLOPs of one run: 2 x multiply-adds of Conv, MatMul and Gemm (elementwise ops,
    pooling and normalization, a few percent, are not counted). Returns (total, {prefix: n})."""
    inferred = shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)
    parts = {}
    for n in model.graph.node:
        if n.op_type == "Conv":
            w = shapes[n.input[1]]
            macs = int(np.prod(shapes[n.output[0]])) * int(np.prod(w[1:]))
        elif n.op_type in ("MatMul", "Gemm"):
            a = shapes[n.input[0]]
            k = a[0] if n.op_type == "Gemm" and any(at.name == "transA" and at.i for at in n.attribute) else a[-1]
            macs = int(np.prod(shapes[n.output[0]])) * k
        else:
            continue
        key = n.name.split(".")[0]
        key = "vision encoder (2 cameras)" if key.startswith(("stem", "stage", "conv_exp", "vision")) else "policy"
        parts[key] = parts.get(key, 0) + 2 * macs
    return sum(parts.values()), parts


def random_inputs(dtype="fp32", seed=1):
    """Seeded inputs with realistic ranges: images uniform uint8, features ~N(0,1),
    one-hot desire and traffic convention, small actions."""
    rng = np.random.default_rng(seed)
    dt = float_dtype(dtype)
    desire = np.zeros((1, HISTORY + 1, DESIRE_LEN), dt)
    desire[0, np.arange(HISTORY + 1), rng.integers(0, DESIRE_LEN, HISTORY + 1)] = 1
    return {
        "img": rng.integers(0, 256, IMG_SHAPE, dtype=np.uint8),
        "big_img": rng.integers(0, 256, IMG_SHAPE, dtype=np.uint8),
        "features_buffer": rng.standard_normal((1, HISTORY, FEATURE_LEN)).astype(dt),
        "desire_pulse": desire,
        "traffic_convention": np.array([[1, 0]], dt),
        "action_t": rng.uniform(-0.5, 0.5, (1, 2)).astype(dt),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", choices=("fp32", "fp16"), default="fp16")
    ap.add_argument("--out", default=None, help="default: samples/generated/driving_model_<dtype>.onnx")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stem-stride", type=int, choices=(4, 8), default=8)
    ap.add_argument("--inputs-dir", default=None, help="also write seeded random inputs as DIR/<input name>.npy")
    ap.add_argument("--check", action="store_true", help="run the model once with onnxruntime")
    args = ap.parse_args()
    out = args.out or os.path.join(HERE, "..", "generated", f"driving_model_{args.dtype}.onnx")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    model = build(args.dtype, args.seed, args.stem_stride)
    onnx.save(model, out)
    params = sum(int(np.prod(i.dims)) for i in model.graph.initializer)
    total, parts = count_flops(model)
    print(f"wrote {os.path.normpath(out)} ({args.dtype}, {len(model.graph.node)} nodes, {params / 1e6:.2f} M parameters, "
          f"{os.path.getsize(out) / 1e6:.1f} MB)")
    print(f"FLOPs per frame: {total / 1e9:.3f} G (" +
          ", ".join(f"{k} {v / 1e9:.3f} G" for k, v in sorted(parts.items(), reverse=True)) +
          "; 2 x multiply-adds of Conv/MatMul/Gemm)")
    inputs = random_inputs(args.dtype, args.seed + 1)
    if args.inputs_dir:
        os.makedirs(args.inputs_dir, exist_ok=True)
        for name, value in inputs.items():
            np.save(os.path.join(args.inputs_dir, f"{name}.npy"), value)
    if args.check:
        import time
        import onnxruntime as ort
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        t0 = time.perf_counter()
        (y,) = sess.run(["outputs"], inputs)
        ms = (time.perf_counter() - t0) * 1e3
        dt, y = y.dtype, y.astype(np.float64)
        print(f"onnxruntime: outputs {y.shape} {dt}: heads mean {y[0, :HIDDEN_OFFSET].mean():+.3f} "
              f"std {y[0, :HIDDEN_OFFSET].std():.3f}, hidden_state mean {y[0, HIDDEN_OFFSET:].mean():+.3f} "
              f"std {y[0, HIDDEN_OFFSET:].std():.3f}, finite: {bool(np.isfinite(y).all())} ({ms:.1f} ms, first run)")
        if not np.isfinite(y).all():
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
