#!/usr/bin/env python3
"""ctest hexagon_quantize_linear_exact: QuantizeLinear from float32 with a constant scale on
hexagon-v65 (under qemu-hexagon), equal to numpy's definition for every input tried.

edgec replaces the division x / s there by a table of float thresholds per output code
(host_compiler/codegen/llvm_emit.cc quantize_thresholds / threshold_quantize); this test holds
it to the ONNX definition, computed by numpy independently of edgec:

    q = clip(rint(float32(x) / float32(s)) + zp, lo, hi)

(np.float32 division is the correctly rounded float32 quotient, np.rint rounds half to even;
NaN gives the type's lowest value, lo, as the division's form gives on Hexagon: ONNX leaves it
open). One model with a
QuantizeLinear per case (scale, zero point, type: the MobileNetV2 input scales of the int8
suite's models and odd ones: powers of two, 1/255, 1.0, large and tiny, 16-bit outputs and
scales outside the range the tables take, which keep the division) reads one input holding:

- every case's thresholds t_k (the smallest float x with rint(x / s) >= k, found here by a
  nextafter search with numpy's division) and the 2 floats either side of each;
- the floats whose quotient is an exact tie k + 0.5 (where one exists) and their neighbours;
- +-0, +-inf, NaN, +-FLT_MAX, denormals (the smallest, the largest, some between), +-1;
- random floats: uniform over all finite bit patterns and uniform over each case's
  unsaturated range (--random N of each, default 1,000,000; --quick 50,000).

A threshold one ulp off in edgec's table makes its neighbour in the input differ (checked by
hand when this was written: README "Hexagon DSP").

Environment: EDGE_HOST_EDGEC (edgec), EDGE_HEXAGON_BUILD_DIR (the freestanding edgert-run),
EDGE_QEMU_HEXAGON, EDGE_WORK_DIR (default build/test-work/hexagon-quantize).
    python3 tests/hexagon/test_quantize_exact.py [--quick] [--random N]"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent.parent

# (scale, zero point, ONNX element type name). The first: the input QuantizeLinear of the
# int8 QDQ models (tests/models/quantize_models.py: MobileNetV2, ResNet-18, EfficientNet-B0
# and the budget test's MobileNetV2 all calibrate their input to this).
CASES = [
    (0.03657234460115433, 126, "uint8"),
    (0.0186584368348121643, 114, "uint8"),
    (1.0 / 255.0, 0, "uint8"),
    (2.0 ** -7, 128, "uint8"),
    (1.0, 255, "uint8"),
    (0.1, 0, "int8"),
    (0.0078431377187371254, -3, "int8"),
    (3.0e-5, 127, "int8"),
    (123.456, -128, "int8"),
    (7.0e29, 10, "uint8"),
    (3.0e-32, 0, "int8"),       # below 2^-100: the division's form
    (2.5e31, 0, "uint8"),       # above 2^100: the division's form
    (0.0123, 30000, "uint16"),  # 16-bit: no table (over 1024 codes)
    (0.5, -7, "int16"),
]

RANGES = {"uint8": (0, 255), "int8": (-128, 127), "uint16": (0, 65535), "int16": (-32768, 32767)}


def reference(x, s, zp, kind):
    lo, hi = RANGES[kind]
    with np.errstate(all="ignore"):
        q = np.rint(x.astype(np.float32) / np.float32(s)).astype(np.float64)
    out = np.clip(q + zp, lo, hi)
    out[np.isnan(out)] = lo
    return out.astype(np.dtype(kind))


def reaches(x, s, k):
    with np.errstate(all="ignore"):
        return np.rint(x / np.float32(s)) >= k


def thresholds(s, k):
    """The smallest float32 x with rint(x / s) >= k, for an array of codes k (numpy's division)."""
    k = np.asarray(k, dtype=np.float64)
    big = np.finfo(np.float32).max
    x = np.clip((k - 0.5) * float(s), -float(big), float(big)).astype(np.float32)
    for _ in range(200):  # up while not reached, then down while the one below still reaches
        move = ~reaches(x, s, k) & (x < np.inf)
        if not move.any():
            break
        x[move] = np.nextafter(x[move], np.float32(np.inf))
    for _ in range(200):
        below = np.nextafter(x, np.float32(-np.inf))
        move = reaches(below, s, k) & (x > -np.inf)
        if not move.any():
            break
        x[move] = below[move]
    return x


def neighbours(x, n):
    """x and the n floats either side of each."""
    out, up, down = [x], x.copy(), x.copy()
    for _ in range(n):
        up, down = np.nextafter(up, np.float32(np.inf)), np.nextafter(down, np.float32(-np.inf))
        out += [up, down]
    return np.concatenate(out)


def inputs(random_n, rng):
    f32 = np.float32
    parts = [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, np.finfo(f32).max, -np.finfo(f32).max,
                       np.finfo(f32).tiny, -np.finfo(f32).tiny], f32)]
    denormals = np.array([1, 2, 3, 1000, 0x7FFFFF, 0x400000], np.uint32)
    parts += [denormals.view(f32), (denormals | np.uint32(0x80000000)).view(f32)]
    for s, zp, kind in CASES:
        lo, hi = RANGES[kind]
        codes = np.arange(lo - zp - 2, hi - zp + 3)
        codes = codes[np.abs(codes) <= 2000]  # 16-bit cases: the codes near 0 and near the ends do
        t = thresholds(s, codes)
        parts.append(neighbours(t[np.isfinite(t)], 2))
        # Exact ties: x with float32(x / s) == k + 0.5, near (k + 0.5) * s.
        near = neighbours(((codes + 0.5) * s).astype(f32), 3)
        with np.errstate(all="ignore"):
            parts.append(near[np.modf(near / f32(s))[0] == 0.5] if near.size else near)
            parts.append(near[np.abs(np.modf(near / f32(s))[0]) == 0.5])
        span = np.array([(lo - zp - 3) * s, (hi - zp + 3) * s], np.float64)
        parts.append(rng.uniform(span[0], span[1], random_n).astype(f32))
    bits = rng.integers(0, 2 ** 32, random_n, dtype=np.uint64).astype(np.uint32)
    parts.append(bits.view(f32))
    return np.concatenate(parts)


def model(n):
    from onnx import TensorProto, helper
    nodes, inits, outputs = [], [], []
    for i, (s, zp, kind) in enumerate(CASES):
        t = helper.np_dtype_to_tensor_dtype(np.dtype(kind))
        inits += [helper.make_tensor(f"s{i}", TensorProto.FLOAT, [], [float(np.float32(s))]),
                  helper.make_tensor(f"z{i}", t, [], [zp])]
        nodes.append(helper.make_node("QuantizeLinear", ["x", f"s{i}", f"z{i}"], [f"q{i}"]))
        outputs.append(helper.make_tensor_value_info(f"q{i}", t, [n]))
    g = helper.make_graph(nodes, "quantize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])], outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="50,000 random floats of each kind")
    ap.add_argument("--random", type=int, default=None, help="random floats of each kind (default 1,000,000)")
    args = ap.parse_args()
    import onnx
    edgec = os.environ.get("EDGE_HOST_EDGEC", str(REPO / "build" / "host_compiler" / "edgec"))
    hexagon = Path(os.environ.get("EDGE_HEXAGON_BUILD_DIR", REPO / "build" / "hexagon"))
    qemu = os.environ.get("EDGE_QEMU_HEXAGON", "qemu-hexagon")
    work = Path(os.environ.get("EDGE_WORK_DIR", REPO / "build" / "test-work" / "hexagon-quantize"))
    work.mkdir(parents=True, exist_ok=True)
    random_n = args.random if args.random is not None else (50_000 if args.quick else 1_000_000)
    x = inputs(random_n, np.random.default_rng(7))
    onnx.save(model(x.size), work / "quantize.onnx")
    np.save(work / "x.npy", x)
    bundle, out = work / "quantize.hexagon-v65.bundle", work / "out"
    for cmd in ([edgec, "compile", work / "quantize.onnx", "-o", bundle, "--target", "hexagon-v65", "-q"],
                [qemu, hexagon / "device_runtime" / "edgert-run", bundle, "--input", f"x={work / 'x.npy'}",
                 "--output-dir", out]):
        res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        if res.returncode != 0:
            print(f"{' '.join(map(str, cmd))} exited with {res.returncode}:\n{res.stderr[-4000:]}{res.stdout[-4000:]}")
            return 1
    failed = False
    for i, (s, zp, kind) in enumerate(CASES):
        got, want = np.load(out / f"q{i}.npy"), reference(x, s, zp, kind)
        bad = np.flatnonzero(got != want)
        print(f"scale {np.float32(s)!r:>14} zp {zp:>6} {kind:>6}: {x.size:,} inputs, {bad.size} differ"
              + "".join(f"; x={x[j]!r} ({x[j:j+1].view(np.uint32)[0]:#010x}) got {got[j]} want {want[j]}" for j in bad[:3]))
        failed = failed or bad.size > 0
    print("FAIL" if failed else "all equal")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
