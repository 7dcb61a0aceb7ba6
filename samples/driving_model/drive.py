#!/usr/bin/env python3
"""drive.py: the driving demo (driving_demo.cc) in Python, through the edgert package.

openpilot's modeld loop: a driving model compiled by edgec (build_model.py has the interface)
runs on a 20 Hz schedule over synthetic camera frames, each frame's hidden_state pushed into the
next frame's features_buffer, and the per-frame latency of the run is reported against the
20 ms budget. As in the C demo, every array is allocated once: a frame writes the bound input
arrays in place, calls ctx.run(inputs, out=outputs) (zero copy in, written in place out, GIL
released) and copies the hidden_state; only the run is timed.

    python3 samples/driving_model/drive.py samples/generated/driving_model_fp16.bundle --frames 50
    # the C demo on the same bundle in the same run, for the binding's cost:
    python3 samples/driving_model/drive.py BUNDLE --no-sleep --frames 200 --compare-with build/samples/driving_demo

The camera scene is driving_demo.cc's (sky, road, dashed lanes, curvature, noise), rendered
with numpy; the noise comes from numpy's generator, so the pixels differ from the C demo's.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np

import edgert

PERIOD_S = 0.050  # modeld runs at 20 Hz


def render_camera(dst, frame, zoom, rng):
    """One camera frame in openpilot's 6-channel YUV 4:2:0 layout into dst (6, h, w): channels
    0-3 the full-resolution (2h, 2w) Y plane split 2x2, then U and V (driving_demo.cc)."""
    _, h, w = dst.shape
    H, W = 2 * h, 2 * w
    horizon = 0.40 * H
    curve = 0.15 * math.sin(0.05 * frame)
    travel = 0.35 * frame
    y = np.arange(H, dtype=np.float32)[:, None]
    x = np.arange(W, dtype=np.float32)[None, :]
    u = (x / W - 0.5) / zoom
    depth = np.where(y > horizon, (y - horizon) / (H - horizon), 0.0).astype(np.float32)
    centre = curve * (1 - depth) ** 2
    half_road = 0.05 + 0.6 * depth
    d = (u - centre) / half_road
    luma = np.where(np.abs(d) < 1.2, 70.0, 100.0 + 20.0 * np.sin(40.0 * u + y * 0.1))
    dash = np.fmod(1.0 / (depth + 0.05) + travel, 2.0) < 1.0
    line_w = 0.03
    luma = np.where(np.abs(np.abs(d) - 1.0) < line_w, 220.0, luma)
    luma = np.where(dash & (np.abs(d) < line_w * 1.5), 230.0, luma)
    sky = np.broadcast_to(150.0 + 60.0 * (1.0 - y / horizon), (H, W))
    luma = np.where(y <= horizon, sky, luma)
    luma = luma + rng.integers(-8, 9, (H, W))
    Y = np.clip(luma + 0.5, 0, 255).astype(np.uint8)
    dst[0], dst[1], dst[2], dst[3] = Y[0::2, 0::2], Y[1::2, 0::2], Y[0::2, 1::2], Y[1::2, 1::2]
    sky_c = (2 * np.arange(h) <= horizon)[:, None]
    dst[4] = np.clip(np.where(sky_c, 150.0, 124.0) + rng.integers(-2, 3, (h, w)) + 0.5, 0, 255).astype(np.uint8)
    dst[5] = np.clip(np.where(sky_c, 115.0, 130.0) + rng.integers(-2, 3, (h, w)) + 0.5, 0, 255).astype(np.uint8)


def check_interface(bundle):
    ins = {t.name: t for t in bundle.inputs}
    outs = {t.name: t for t in bundle.outputs}
    need = ["img", "big_img", "features_buffer", "desire_pulse", "traffic_convention", "action_t"]
    missing = [n for n in need if n not in ins]
    if missing or set(ins) != set(need) or list(outs) != ["outputs"]:
        sys.exit(f"drive.py: not the driving model's interface (inputs {list(ins)}, outputs {list(outs)})")
    for cam in ("img", "big_img"):
        t = ins[cam]
        if t.dtype != np.uint8 or len(t.shape) != 4 or t.shape[:2] != (1, 12):
            sys.exit(f"drive.py: input '{cam}' is {t.dtype} {t.shape}, expected uint8 (1,12,H,W)")
    fdt = ins["features_buffer"].dtype
    if fdt not in (np.float32, np.float16):
        sys.exit("drive.py: features_buffer must be float32 or float16")
    return ins, outs["outputs"]


def percentile_nearest_rank(sorted_ms, q):
    n = len(sorted_ms)
    return sorted_ms[max(0, math.ceil(q / 100 * n) - 1)]


def drive(args):
    bundle = edgert.Bundle(args.bundle)
    ins, out_info = check_interface(bundle)
    ctx = bundle.context(threads=args.threads, allow_source_build=args.allow_source_build, device=args.device)
    # ---- memory: everything allocated and bound once
    inputs = {t.name: np.zeros(t.shape, t.dtype) for t in bundle.inputs}
    outputs = ctx.empty_outputs()
    img, big, feat = inputs["img"], inputs["big_img"], inputs["features_buffer"]
    desire, traffic, action = inputs["desire_pulse"], inputs["traffic_convention"], inputs["action_t"]
    out = outputs["outputs"]
    _, history, nfeat = feat.shape
    ndesire = desire.shape[2]
    hidden = out[0, -nfeat:]  # a view: the newest hidden_state after each run
    traffic[0] = (1.0, 0.0)  # right-hand traffic
    rng = np.random.default_rng(args.seed)
    render_camera(img[0, 6:], -1, 1.0, rng)  # the first frame's "previous" half: frame -1
    render_camera(big[0, 6:], -1, 0.5, rng)

    print(f"drive.py: {args.bundle}")
    print(f"  inputs: img, big_img uint8 {img.shape}; features_buffer {feat.dtype} {feat.shape}; desire_pulse "
          f"{desire.shape}; traffic_convention, action_t (1,2)")
    print(f"  output: outputs {out.dtype} {out.shape}, hidden_state = the last {nfeat} values")
    print(f"  arena {bundle.arena_size} bytes, {args.threads} thread(s), {args.warmup} warm-up + {args.frames} timed "
          f"frames, {'20 Hz schedule (one frame per 50 ms)' if args.sleep else 'back to back (--no-sleep)'}")
    sys.stdout.flush()

    lat = []
    dropped = 0
    total = args.warmup + args.frames
    clock = time.perf_counter_ns
    tick = time.monotonic()
    for f in range(total):
        # -- this frame's inputs, in place in the bound arrays
        for cam, zoom in ((img, 1.0), (big, 0.5)):
            cam[0, :6] = cam[0, 6:]  # the previous frame becomes channels 0-5
            render_camera(cam[0, 6:], f, zoom, rng)
        desire[0, :-1] = desire[0, 1:].copy()
        desire[0, -1] = 0
        if f % 40 == 20:
            desire[0, -1, 3] = 1.0  # a lane-change-left pulse now and then
        action[0] = (0.002 * math.sin(0.05 * f), 0.3 * math.cos(0.03 * f))

        t0 = clock()
        ctx.run(inputs, out=outputs)
        ms = (clock() - t0) / 1e6

        if args.dump:  # a test hook: file I/O, outside the timed region
            for name, a in list(inputs.items()) + list(outputs.items()):
                np.save(os.path.join(args.dump, f"frame{f:03d}_{name}.npy"), a)
        # -- the hidden_state joins the history, oldest row out (modeld's features_buffer)
        feat[0, :-1] = feat[0, 1:].copy()
        feat[0, -1] = hidden
        warm = f < args.warmup
        if not warm:
            lat.append(ms)
        if not args.quiet:
            h = hidden.astype(np.float64)
            verdict = "within budget" if ms <= args.budget_ms else "over budget  "
            print(f"  frame {f:3d}{' (warm-up)' if warm else '          '} {ms:9.2f} ms  {verdict}  hidden_state mean "
                  f"{h.mean():+.4f} max|.| {np.abs(h).max():.3f}  out[0] {float(out[0, 0]):+.4f}")
            sys.stdout.flush()
        # -- 20 Hz: wait for the next camera frame; frames that came while we ran are dropped
        if args.sleep and f + 1 < total:
            tick += PERIOD_S
            now = time.monotonic()
            if now > tick:
                missed = int((now - tick) / PERIOD_S) + 1
                dropped += missed
                tick += missed * PERIOD_S
            time.sleep(max(0.0, tick - time.monotonic()))

    s = sorted(lat)
    n = len(s)
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    p99 = percentile_nearest_rank(s, 99)
    print(f"\nper-frame latency (ctx.run, {n} frames): median {median:.2f} ms, p99 {p99:.2f} ms, "
          f"min {s[0]:.2f} ms, max {s[-1]:.2f} ms")
    if args.sleep:
        print(f"20 Hz schedule: {dropped} camera frame(s) dropped while the model was still running")
    over = sum(v > args.budget_ms for v in lat)
    if p99 <= args.budget_ms:
        print(f"budget: {args.budget_ms:.1f} ms per frame (openpilot's modeld at 20 Hz): MET "
              f"(p99 {p99:.2f} ms, {100 * p99 / args.budget_ms:.0f}% of the budget)")
    else:
        print(f"budget: {args.budget_ms:.1f} ms per frame (openpilot's modeld at 20 Hz): NOT MET (p99 {p99:.2f} ms = "
              f"{p99 / args.budget_ms:.1f}x the budget; {over} of {n} frames over)")
    return {"median": median, "p99": p99, "min": s[0], "max": s[-1], "frames": n}


def run_c_demo(args):
    """The C demo (driving_demo.cc) on the same bundle, same frames and threads; its summary."""
    cmd = [args.compare_with, args.bundle, "--frames", str(args.frames), "--warmup", str(args.warmup),
           "--threads", str(args.threads), "--quiet"] + ([] if args.sleep else ["--no-sleep"])
    if args.allow_source_build:
        cmd.append("--allow-source-build")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"drive.py: {' '.join(cmd)} failed:\n{proc.stderr}")
    m = re.search(r"median ([\d.]+) ms, p99 ([\d.]+) ms, min ([\d.]+) ms, max ([\d.]+) ms", proc.stdout)
    if not m:
        sys.exit(f"drive.py: no latency summary in the C demo's output:\n{proc.stdout}")
    return " ".join(cmd), dict(zip(("median", "p99", "min", "max"), map(float, m.groups())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("--frames", type=int, default=10, help="timed frames (default 10)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed frames first (default 1)")
    ap.add_argument("--threads", type=int, default=1, help="split each kernel across N cores (default 1)")
    ap.add_argument("--device", type=int, default=0, help="OpenCL bundles: the N-th OpenCL device")
    ap.add_argument("--allow-source-build", action="store_true", help="OpenCL bundles: build unprepared programs")
    ap.add_argument("--no-sleep", dest="sleep", action="store_false", help="frames back to back, not at 20 Hz")
    ap.add_argument("--budget-ms", type=float, default=20.0, help="latency budget per frame (default 20)")
    ap.add_argument("--seed", type=int, default=1, help="camera noise seed (default 1)")
    ap.add_argument("--quiet", action="store_true", help="no per-frame lines, only the summary")
    ap.add_argument("--compare-with", metavar="DRIVING_DEMO",
                    help="also run the C demo (build/samples/driving_demo) on the same bundle, before and after "
                         "this loop, and print both latencies")
    ap.add_argument("--json", metavar="FILE", help="write the latency figures as JSON")
    ap.add_argument("--dump", metavar="DIR", help="write every frame's inputs and output as DIR/frameNNN_<name>.npy "
                    "(a test hook, outside the timed region)")
    args = ap.parse_args()
    if args.frames < 1 or args.warmup < 0 or args.threads < 1:
        ap.error("--frames >= 1, --warmup >= 0, --threads >= 1")
    result = {}
    if args.compare_with:
        cmd, result["c_before"] = run_c_demo(args)
    result["python"] = drive(args)
    if args.compare_with:
        _, result["c_after"] = run_c_demo(args)
        print(f"\nthe C demo on the same bundle ({cmd}), before and after the Python loop:")
        for k in ("c_before", "c_after"):
            r = result[k]
            print(f"  driving_demo ({k[2:]:6s}): median {r['median']:.2f} ms, p99 {r['p99']:.2f} ms, min {r['min']:.2f} ms")
        py = result["python"]
        c_med = (result["c_before"]["median"] + result["c_after"]["median"]) / 2
        c_min = min(result["c_before"]["min"], result["c_after"]["min"])
        print(f"  drive.py          : median {py['median']:.2f} ms, p99 {py['p99']:.2f} ms, min {py['min']:.2f} ms")
        ratio = lambda a, b: f"{a / b:.3f}x" if b > 0 else "n/a"  # the C demo prints 0.01 ms steps
        print(f"  Python / C: median {ratio(py['median'], c_med)} ({py['median'] - c_med:+.3f} ms), "
              f"min {ratio(py['min'], c_min)} ({py['min'] - c_min:+.3f} ms)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
