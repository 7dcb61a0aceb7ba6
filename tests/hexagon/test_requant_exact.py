#!/usr/bin/env python3
"""The integer form of requantization that edgec emits for HVX (llvm_emit.cc
emit_requantize_vector), checked against numpy's float32 arithmetic.

The reference is onnxruntime's MlasRequantizeOutput as numpy computes it: float32(x) * s in
float32, rounded half to even (np.rint), plus the zero point, clipped. The integer form is
modelled here operation for operation in 32-bit unsigned arithmetic (np.uint64 masked to 32
bits: the same shifts, the high word of a 32 x 32-bit product, compares and selects) and must
give the same value for:

- every int32 x whose result is not saturated (|x| up to 260 / s, exhaustively) for scales at
  the ends of the supported range [2^-16, 1) and some between, and (--models) for every
  per-channel scale of QDQ models (the torchvision MobileNetV2 / ResNet-18 / EfficientNet-B0
  quantized by tests/models/quantize_models.py) the classes below, exhaustively for one in
  --model-stride;
- 0, +-1, powers of two and their neighbours, exact ties and the float32 windows around them
  (x = (n + 0.5) / s +- k), 2^24 +- k, INT32_MIN / MAX, for thousands of scales;
- millions of random int32 values (uniform over int32 and over the unsaturated range).

Run: python3 tests/hexagon/test_requant_exact.py [--quick] [--models QDQ.onnx ...]
(exit status 0: all equal)
"""
import argparse
import sys

import numpy as np

M32 = np.uint64(0xFFFFFFFF)


def reference(x, s, zp, lo, hi):
    v = np.rint(x.astype(np.float32) * np.float32(s)).astype(np.float32)
    return np.clip(v + np.float32(zp), np.float32(lo), np.float32(hi)).astype(np.int64)


def supported(s):
    ef = (int(np.float32(s).view(np.uint32)) >> 23)
    return 111 <= ef <= 126


def integer_form(x, s, zp, lo, hi):
    """The emitted HVX operations, lane for lane (one scale for all lanes)."""
    u = lambda v: np.uint64(v)
    bits = u(int(np.float32(s).view(np.uint32)))
    ef = bits >> u(23)
    e = u(150) - ef
    m = (bits & u(0x7FFFFF)) | u(0x800000)
    xi = x.astype(np.int64)
    neg = xi < 0
    chain = lambda r: np.clip(np.int64(r) + zp, lo, hi)
    # Where the chain maps -256 as 0 (a ReLU's output, zp at its clamp), no sign: max(x, 0).
    nonneg = chain(-256) == chain(0)
    if nonneg:
        a = np.clip(xi, 0, 1 << 24)
    else:
        a = np.minimum(np.abs(xi), np.int64(0x7FFFFFFF))  # vabs:sat: INT32_MIN -> INT32_MAX
        a = np.minimum(a, 1 << 24)
    # The signed high product of a and m << 8 read as a signed word ((m << 8) - 2^32), plus a
    # (a <= 2^24: exact in int64, >> is floor).
    hi_w = ((a * (int(m << u(8)) - (1 << 32))) >> 32) + a
    a = a.astype(np.uint64)
    hi_w = hi_w.astype(np.uint64)
    lo8 = (a * (m << u(8))) & M32  # the same product's low word: (a m mod 2^24) << 8
    sat_hi = u(1) << (e - u(16))
    # Where the chain gives the same at +-255 as at +-256, hi clamps to 2^(e - 16) - 1 (n = 255,
    # r 255 or 256) instead of a select of 256.
    sat_as_255 = chain(255) == chain(256) and chain(-255) == chain(-256)
    sat = hi_w >= sat_hi
    if sat_as_255:
        hi_w = np.minimum(hi_w, sat_hi - u(1))
        sat = np.zeros_like(sat)
    sh = e - u(24)
    q = (((hi_w << (u(24) - sh)) & M32) | (lo8 >> (sh + u(8)))) & M32
    pow_sh = u(1) << sh
    rem = (lo8 >> u(8)) & (pow_sh - u(1))
    n = q >> u(24)
    f = q & u(0xFFFFFF)
    # The tie window in units of 2^-25: |2F - 2^24| <= w2, F = f + rem / 2^sh, w2 = 2^(32 - clz(n))
    # (clz(0) = 32: half a unit of 2^-24 for n = 0).
    clz = np.array([32 - int(v).bit_length() for v in range(256)], dtype=np.uint64)
    w2 = u(1) << (u(32) - clz[np.minimum(n, u(255)).astype(np.int64)])  # n > 255 only when saturated (unused)
    bit = ((rem << u(1)) >> sh) & M32  # floor(2 rem / 2^sh)
    t = (rem << u(1)) & (pow_sh - u(1))  # what is left below it
    frac_nz = (t + (pow_sh - u(1))) >> sh  # 1 where t > 0 (t < 2^sh)
    g_floor = u(2) * f + bit
    # In the window: 0 <= g_floor - (2^24 - w2) <= 2 w2 - frac_nz, one unsigned 32-bit compare
    from_start = (g_floor + ((w2 - u(1 << 24)) & M32)) & M32
    width = ((w2 << u(1)) - frac_nz) & M32
    iw = from_start <= width
    up = np.where(iw, n, f >> u(23)) & u(1)
    r = np.where(sat, 256, (n + up).astype(np.int64))
    if not nonneg:
        r = np.where(neg, -r, r)
    return chain(r)


def check(x, s, zp, lo, hi, what):
    x = np.asarray(x, dtype=np.int64)
    x = x[(x >= -2**31) & (x < 2**31)]
    got = integer_form(x, s, zp, lo, hi)
    want = reference(x.astype(np.int32), s, zp, lo, hi)
    bad = np.nonzero(got != want)[0]
    if bad.size:
        i = bad[0]
        print(f"MISMATCH {what}: s={float(s)!r} zp={zp} x={int(x[i])} got {int(got[i])} want {int(want[i])} ({bad.size} values)")
        return False
    return True


def special_values(s):
    xs = [0, 1, -1, 2**31 - 1, -2**31, 2**31 - 2, -2**31 + 1]
    for p in range(32):
        for k in (-2, -1, 0, 1, 2):
            xs += [2**p + k, -(2**p + k)]
    for k in range(-64, 65):
        xs += [2**24 + k, -(2**24 + k)]
    # Ties and their float32 windows: x near (n + 0.5) / s for every n in [0, 257].
    n = np.arange(0, 258, dtype=np.float64)
    centre = np.round((n + 0.5) / float(s)).astype(np.int64)
    for k in range(-3, 4):
        xs += list(centre + k) + list(-(centre + k))
    whole = np.round(n / float(s)).astype(np.int64)
    for k in range(-2, 3):
        xs += list(whole + k) + list(-(whole + k))
    return np.array(xs, dtype=np.int64)


def zero_points():
    return [(0, 0, 255), (128, 0, 255), (255, 0, 255), (3, 0, 255), (0, -128, 127), (-128, -128, 127), (127, -128, 127),
            (-5, -128, 127)]


def model_scales(paths):
    """The per-channel requantization factors float32(float32(x_scale * w_scale[c]) / y_scale)
    (onnxruntime's ComputeOutputScale) of every Conv / MatMul / Gemm of QDQ models: the
    scales of the DequantizeLinear nodes in front of its input and weight and of the
    QuantizeLinear after it (through one Relu / Clip)."""
    import onnx
    from onnx import numpy_helper
    scales = []
    for path in paths:
        g = onnx.load(str(path)).graph
        init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        producer = {o: n for n in g.node for o in n.output}
        consumers = {}
        for n in g.node:
            for i in n.input:
                consumers.setdefault(i, []).append(n)

        def dq_scale(name):
            n = producer.get(name)
            return init.get(n.input[1]) if n is not None and n.op_type == "DequantizeLinear" else None

        for node in g.node:
            if node.op_type not in ("Conv", "MatMul", "Gemm"):
                continue
            xs, ws = dq_scale(node.input[0]), dq_scale(node.input[1])
            out = node.output[0]
            nxt = consumers.get(out, [])
            if len(nxt) == 1 and nxt[0].op_type in ("Relu", "Clip"):
                out = nxt[0].output[0]
                nxt = consumers.get(out, [])
            q = [n for n in nxt if n.op_type == "QuantizeLinear"]
            if xs is None or ws is None or not q or q[0].input[1] not in init:
                continue
            ys = np.float32(init[q[0].input[1]])
            for w in np.atleast_1d(ws).astype(np.float32):
                scales.append(np.float32(np.float32(np.float32(xs) * w) / ys))
    return scales


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", nargs="*", default=[],
                    help="QDQ models: every per-channel scale of their convs and matrix products exhaustively "
                         "below saturation (e.g. tests/generated/models/qdq/*.qdq.onnx)")
    ap.add_argument("--model-stride", type=int, default=100,
                    help="every this many distinct model scales (in order) is checked exhaustively; the others "
                         "over the ties' windows, the boundary classes and 1000 random values")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    ok = True
    # Scales: the supported range's ends, powers of two, real-model-like values, random ones.
    scales = [np.float32(2.0**-16), np.nextafter(np.float32(1.0), np.float32(0)), np.float32(0.5), np.float32(2.0**-10),
              np.float32(1e-3), np.float32(0.0123), np.float32(0.25), np.float32(0.999)]
    scales += list(np.float32(2.0) ** rng.uniform(-16, 0, 3000 if not args.quick else 300).astype(np.float32))
    scales = [s for s in scales if supported(s)]
    exhaustive = scales[:6] + scales[-40:] if not args.quick else scales[:3]
    tested = 0
    for i, s in enumerate(scales):
        zp, lo, hi = zero_points()[i % len(zero_points())]
        ok &= check(special_values(s), s, zp, lo, hi, "special")
        ok &= check(rng.integers(-2**31, 2**31, 2000 if not args.quick else 500), s, zp, lo, hi, "random int32")
        limit = int(260 / float(s)) + 4
        ok &= check(rng.integers(-limit, limit + 1, 2000 if not args.quick else 500), s, zp, lo, hi, "random unsaturated")
        tested += 1
    for s in exhaustive:
        limit = min(int(260 / float(s)) + 4, 2**24 + 64)
        for zp, lo, hi in zero_points()[:2] + zero_points()[4:5]:
            for start in range(-limit, limit + 1, 1 << 22):
                ok &= check(np.arange(start, min(start + (1 << 22), limit + 1)), s, zp, lo, hi, "exhaustive")
    mscales = sorted({float(v) for v in model_scales(args.models)})
    unsupported = [v for v in mscales if not supported(np.float32(v))]
    for i, v in enumerate(v for v in mscales if supported(np.float32(v))):
        s = np.float32(v)
        zp, lo, hi = zero_points()[i % len(zero_points())]
        ok &= check(special_values(s), s, zp, lo, hi, "model scale, special")
        ok &= check(rng.integers(-int(260 / float(s)), int(260 / float(s)) + 1, 1000), s, zp, lo, hi, "model scale, random")
        if i % args.model_stride == 0:  # every int32 below saturation
            limit = min(int(260 / float(s)) + 4, 2**24 + 64)
            for start in range(-limit, limit + 1, 1 << 22):
                ok &= check(np.arange(start, min(start + (1 << 22), limit + 1)), s, zp, lo, hi, "model scale, exhaustive")
    if args.models:
        checked = len(mscales) - len(unsupported)
        print(f"models: {len(mscales)} distinct scales, {checked} checked ({(checked + args.model_stride - 1) // args.model_stride} "
              f"of them exhaustively below saturation), {len(unsupported)} outside [2^-16, 1) (the scalar path): {unsupported[:5]}")
    print(f"{tested} scales ({len(exhaustive)} exhaustively below saturation): {'all equal' if ok else 'MISMATCHES'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
