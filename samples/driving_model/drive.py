#!/usr/bin/env python3
"""drive.py: the driving demo (driving_demo.cc) in Python, through the edgert package.

openpilot's modeld loop: a driving model compiled by edgec (build_model.py has the interface)
runs on a 20 Hz schedule over synthetic camera frames, each frame's hidden_state pushed into the
next frame's features_buffer, and the per-frame latency of the run is reported against the
20 ms budget. As in the C demo, every array is allocated once: a frame renders the cameras into
the bound input arrays in place (Camera: float32 scratch planes, in-place ufuncs), calls
ctx.run(inputs, out=outputs) (zero copy in, written in place out, GIL released) and shifts the
hidden_state into the history; only the run is timed, by the wall clock and by the calling
thread's CPU time (which leaves out the time it spent preempted, as driving_demo reports too).

    python3 samples/driving_model/drive.py samples/generated/driving_model_fp16.bundle --frames 50
    # against the C demo on the same bundle: 10 Python blocks between 11 C blocks, paired ratios
    python3 samples/driving_model/drive.py BUNDLE --no-sleep --quiet --frames 200 --blocks 10 \
        --compare-with build/samples/driving_demo

The camera scene is driving_demo.cc's (sky, road, dashed lanes, curvature, noise); the noise
comes from numpy's generator, so the pixels differ from the C demo's.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from statistics import median

import numpy as np

import edgert

PERIOD_S = 0.050  # modeld runs at 20 Hz


class Camera:
    """One synthetic camera (driving_demo.cc's render_camera) rendered with numpy into buffers
    allocated once: a frame is a fixed sequence of in-place ufunc calls (out=, where=) over
    float32 scratch planes, so the loop allocates no array, as the C demo's pixel loop does not,
    and reuses the same ~3 MB of planes every frame. The frame-independent parts of the scene
    (row depths, the sky, the verge texture) are computed here once."""

    LINE_W = 0.03

    def __init__(self, h, w, zoom, rng):
        H, W = 2 * h, 2 * w
        self.h, self.w, self.rng = h, w, rng
        self.horizon = 0.40 * H
        y = np.arange(H, dtype=np.float32)[:, None]
        x = np.arange(W, dtype=np.float32)[None, :]
        self.u = (x / W - 0.5) / np.float32(zoom)  # (1, W)
        self.n_sky = int(np.count_nonzero(y[:, 0] <= self.horizon))  # rows 0..n_sky-1 are sky
        depth = np.where(y > self.horizon, (y - self.horizon) / (H - self.horizon), 0.0).astype(np.float32)
        self.far2 = ((1 - depth) ** 2).astype(np.float32)  # (H, 1): the curve's weight per row
        self.half_road = (0.05 + 0.6 * depth).astype(np.float32)
        self.dash_phase = (1.0 / (depth + 0.05)).astype(np.float32)
        self.sky = (150.0 + 60.0 * (1.0 - y[: self.n_sky] / self.horizon)).astype(np.float32)
        self.verge = (100.0 + 20.0 * np.sin(40.0 * self.u + y * 0.1)).astype(np.float32)  # (H, W)
        sky_c = (2 * np.arange(h) <= self.horizon)[:, None]
        self.chroma_base = [np.broadcast_to(np.where(sky_c, s, r).astype(np.float32), (h, w)).copy()
                            for s, r in ((150.0, 124.0), (115.0, 130.0))]  # U, V
        # scratch, reused every frame
        f32 = lambda *s: np.empty(s, np.float32)
        self.centre, self.row, self.dash = f32(H, 1), f32(H, 1), np.empty((H, 1), bool)
        self.luma, self.d, self.t, self.noise = f32(H, W), f32(H, W), f32(H, W), f32(H, W)
        self.mask = np.empty((H, W), bool)
        self.cnoise, self.chroma = f32(h, w), f32(h, w)

    def _uniform_int(self, out, lo, hi):
        """out = integers uniform in [lo, hi], drawn in place (Generator.integers has no out=)."""
        self.rng.random(out=out, dtype=np.float32)
        np.multiply(out, hi - lo + 1, out=out)
        np.floor(out, out=out)
        np.minimum(out, hi - lo, out=out)  # float32 rounding must not reach hi + 1
        np.add(out, lo, out=out)

    def render(self, dst, frame):
        """One camera frame in openpilot's 6-channel YUV 4:2:0 layout into dst (6, h, w): channels
        0-3 the full-resolution (2h, 2w) Y plane split 2x2, then U and V."""
        curve = np.float32(0.15 * math.sin(0.05 * frame))
        travel = np.float32(0.35 * frame)
        luma, d, t, mask = self.luma, self.d, self.t, self.mask
        # |d|: the distance from the road's centre line in half road widths, per pixel
        np.multiply(self.far2, curve, out=self.centre)
        np.subtract(self.u, self.centre, out=d)
        np.divide(d, self.half_road, out=d)
        np.abs(d, out=d)
        np.copyto(luma, self.verge)
        np.less(d, 1.2, out=mask)
        np.copyto(luma, 70.0, where=mask)  # asphalt
        np.subtract(d, 1.0, out=t)
        np.abs(t, out=t)
        np.less(t, self.LINE_W, out=mask)
        np.copyto(luma, 220.0, where=mask)  # solid edges
        np.add(self.dash_phase, travel, out=self.row)
        np.fmod(self.row, 2.0, out=self.row)
        np.less(self.row, 1.0, out=self.dash)
        np.less(d, self.LINE_W * 1.5, out=mask)
        np.logical_and(mask, self.dash, out=mask)
        np.copyto(luma, 230.0, where=mask)  # dashed centre
        luma[: self.n_sky] = self.sky
        self._uniform_int(self.noise, -8, 8)  # sensor noise
        np.add(luma, self.noise, out=luma)
        np.add(luma, 0.5, out=luma)
        np.clip(luma, 0.0, 255.0, out=luma)
        for c, (ry, rx) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
            np.copyto(dst[c], luma[ry::2, rx::2], casting="unsafe")  # truncates, as the C cast does
        for c, base in ((4, self.chroma_base[0]), (5, self.chroma_base[1])):
            self._uniform_int(self.cnoise, -2, 2)
            np.add(base, self.cnoise, out=self.chroma)
            np.add(self.chroma, 0.5, out=self.chroma)
            np.clip(self.chroma, 0.0, 255.0, out=self.chroma)
            np.copyto(dst[c], self.chroma, casting="unsafe")


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


def percentile_nearest_rank(sorted_ms, q):
    n = len(sorted_ms)
    return sorted_ms[max(0, math.ceil(q / 100 * n) - 1)]


def ratio(a, b):
    return a / b if b > 0 else math.nan  # the C demo prints 0.01 ms steps: a tiny model reads 0


class DrivingLoop:
    """driving_demo.cc's loop: every array allocated and bound once, a frame writes the bound
    arrays in place (two camera frames, the desire and action rows), runs, and shifts the
    hidden_state into features_buffer. frame() allocates no array: the shifts go through
    scratch rows (numpy copies an overlapping slice assignment through a new temporary)."""

    def __init__(self, args):
        self.args = args
        self.bundle = edgert.Bundle(args.bundle)
        check_interface(self.bundle)
        self.ctx = self.bundle.context(threads=args.threads, allow_source_build=args.allow_source_build,
                                       device=args.device)
        self.inputs = {t.name: np.zeros(t.shape, t.dtype) for t in self.bundle.inputs}
        self.outputs = self.ctx.empty_outputs()
        ins, out = self.inputs, self.outputs["outputs"]
        self.img, self.big, self.feat = ins["img"], ins["big_img"], ins["features_buffer"]
        self.desire, self.action = ins["desire_pulse"], ins["action_t"]
        self.out = out
        self.nfeat = self.feat.shape[2]
        self.hidden = out[0, -self.nfeat:]  # a view: the newest hidden_state after each run
        self.feat_scratch = np.empty_like(self.feat[0, 1:])
        self.desire_scratch = np.empty_like(self.desire[0, 1:])
        ins["traffic_convention"][0] = (1.0, 0.0)  # right-hand traffic
        rng = np.random.default_rng(args.seed)
        _, _, h, w = self.img.shape
        self.cameras = ((self.img, Camera(h, w, 1.0, rng)), (self.big, Camera(h, w, 0.5, rng)))
        for dst, cam in self.cameras:
            cam.render(dst[0, 6:], -1)  # the first frame's "previous" half: frame -1
        self.f = 0  # the next frame's number

    def frame(self):
        """One frame; returns the run's latency and the calling thread's CPU time in it (ms)."""
        f = self.f
        # -- this frame's inputs, in place in the bound arrays
        for dst, cam in self.cameras:
            dst[0, :6] = dst[0, 6:]  # the previous frame becomes channels 0-5
            cam.render(dst[0, 6:], f)
        desire = self.desire
        np.copyto(self.desire_scratch, desire[0, 1:])
        np.copyto(desire[0, :-1], self.desire_scratch)
        desire[0, -1] = 0
        if f % 40 == 20:
            desire[0, -1, 3] = 1.0  # a lane-change-left pulse now and then
        self.action[0, 0] = 0.002 * math.sin(0.05 * f)  # desired curvature
        self.action[0, 1] = 0.3 * math.cos(0.03 * f)  # desired acceleration

        # -- the timed region, as in driving_demo.cc: the run and nothing else
        c0 = time.thread_time_ns()
        t0 = time.perf_counter_ns()
        self.ctx.run(self.inputs, out=self.outputs)
        t1 = time.perf_counter_ns()
        c1 = time.thread_time_ns()

        if self.args.dump:  # a test hook: file I/O, outside the timed region
            for name, a in list(self.inputs.items()) + list(self.outputs.items()):
                np.save(os.path.join(self.args.dump, f"frame{f:03d}_{name}.npy"), a)
        # -- the hidden_state joins the history, oldest row out (modeld's features_buffer)
        np.copyto(self.feat_scratch, self.feat[0, 1:])
        np.copyto(self.feat[0, :-1], self.feat_scratch)
        self.feat[0, -1] = self.hidden
        self.f += 1
        return (t1 - t0) / 1e6, (c1 - c0) / 1e6

    def run_frames(self, warmup, frames):
        """warmup untimed frames, then frames timed ones, on the 20 Hz schedule unless --no-sleep;
        returns (latencies, cpu times, dropped camera frames)."""
        a = self.args
        lat, cpu = [], []
        dropped = 0
        total = warmup + frames
        tick = time.monotonic()
        for k in range(total):
            ms, cpu_ms = self.frame()
            warm = k < warmup
            if not warm:
                lat.append(ms)
                cpu.append(cpu_ms)
            if not a.quiet:
                h = self.hidden.astype(np.float64)
                verdict = "within budget" if ms <= a.budget_ms else "over budget  "
                print(f"  frame {self.f - 1:3d}{' (warm-up)' if warm else '          '} {ms:9.2f} ms (cpu {cpu_ms:6.2f})  "
                      f"{verdict}  hidden_state mean {h.mean():+.4f} max|.| {np.abs(h).max():.3f}  "
                      f"out[0] {float(self.out[0, 0]):+.4f}")
                sys.stdout.flush()
            # -- 20 Hz: wait for the next camera frame; frames that came while we ran are dropped
            if a.sleep and k + 1 < total:
                tick += PERIOD_S
                now = time.monotonic()
                if now > tick:
                    missed = int((now - tick) / PERIOD_S) + 1
                    dropped += missed
                    tick += missed * PERIOD_S
                time.sleep(max(0.0, tick - time.monotonic()))
        return lat, cpu, dropped


def summary(lat, cpu):
    s = sorted(lat)
    return {"median": median(s), "p99": percentile_nearest_rank(s, 99), "min": s[0], "max": s[-1],
            "frames": len(s), "cpu_median": median(cpu), "cpu_min": min(cpu)}


def report(args, lat, cpu, dropped, what="ctx.run"):
    r = summary(lat, cpu)
    print(f"\nper-frame latency ({what}, {r['frames']} frames): median {r['median']:.2f} ms, p99 {r['p99']:.2f} ms, "
          f"min {r['min']:.2f} ms, max {r['max']:.2f} ms")
    print(f"per-frame CPU time (the calling thread): median {r['cpu_median']:.2f} ms, min {r['cpu_min']:.2f} ms")
    if args.sleep:
        print(f"20 Hz schedule: {dropped} camera frame(s) dropped while the model was still running")
    p99 = r["p99"]
    if p99 <= args.budget_ms:
        print(f"budget: {args.budget_ms:.1f} ms per frame (openpilot's modeld at 20 Hz): MET "
              f"(p99 {p99:.2f} ms, {100 * p99 / args.budget_ms:.0f}% of the budget)")
    else:
        over = sum(v > args.budget_ms for v in lat)
        print(f"budget: {args.budget_ms:.1f} ms per frame (openpilot's modeld at 20 Hz): NOT MET (p99 {p99:.2f} ms = "
              f"{p99 / args.budget_ms:.1f}x the budget; {over} of {len(lat)} frames over)")
    return r


def print_header(loop):
    a, img, feat, desire, out = loop.args, loop.img, loop.feat, loop.desire, loop.out
    print(f"drive.py: {a.bundle}")
    print(f"  inputs: img, big_img uint8 {img.shape}; features_buffer {feat.dtype} {feat.shape}; desire_pulse "
          f"{desire.shape}; traffic_convention, action_t (1,2)")
    print(f"  output: outputs {out.dtype} {out.shape}, hidden_state = the last {loop.nfeat} values")
    print(f"  arena {loop.bundle.arena_size} bytes, {a.threads} thread(s), {a.warmup} warm-up + {a.frames} timed "
          f"frames, {'20 Hz schedule (one frame per 50 ms)' if a.sleep else 'back to back (--no-sleep)'}")
    sys.stdout.flush()


C_FRAME = re.compile(r"^\s*frame\s+\d+(?P<warm> \(warm-up\))?\s+(?P<ms>[\d.]+) ms \(cpu\s+(?P<cpu>[\d.]+)\)", re.M)


def run_c_block(args, frames):
    """The C demo (driving_demo.cc) on the same bundle for one block: a fresh process, the same
    warm-up, threads and schedule; its per-frame latencies and CPU times (ms, 0.01 ms steps)."""
    cmd = [args.compare_with, args.bundle, "--frames", str(frames), "--warmup", str(args.warmup),
           "--threads", str(args.threads), "--seed", str(args.seed)] + ([] if args.sleep else ["--no-sleep"])
    if args.allow_source_build:
        cmd.append("--allow-source-build")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"drive.py: {' '.join(cmd)} failed:\n{proc.stderr}")
    timed = [(float(m["ms"]), float(m["cpu"])) for m in C_FRAME.finditer(proc.stdout) if not m["warm"]]
    if len(timed) != frames:
        sys.exit(f"drive.py: expected {frames} timed frame lines (with 'cpu') from the C demo, got {len(timed)}:\n"
                 f"{proc.stdout}")
    return " ".join(cmd), [t[0] for t in timed], [t[1] for t in timed]


def compare(args, loop):
    """K blocks of Python frames interleaved with K + 1 blocks of the C demo (C, Py, C, ..., Py, C),
    each block `--warmup` untimed frames then frames/K timed ones. Each Python block is paired with
    the mean of the two C blocks either side, so the machine's drift (other processes, frequency)
    falls on both sides of each ratio; the spread of the K ratios says what this run can resolve."""
    k = min(args.blocks, args.frames)
    n = args.frames // k
    c_blocks, py_blocks = [], []
    dropped = 0
    for i in range(k):
        cmd, lat, cpu = run_c_block(args, n)
        c_blocks.append((lat, cpu))
        if args.calibrate:  # the same measurement with C in the Python blocks' place: its noise floor
            _, lat, cpu = run_c_block(args, n)
        else:
            lat, cpu, d = loop.run_frames(args.warmup, n)
            dropped += d
        py_blocks.append((lat, cpu))
    _, lat, cpu = run_c_block(args, n)
    c_blocks.append((lat, cpu))
    if not args.calibrate:
        report(args, [v for b in py_blocks for v in b[0]], [v for b in py_blocks for v in b[1]], dropped)

    rows = []
    for i, (py_lat, py_cpu) in enumerate(py_blocks):
        c_med = (median(c_blocks[i][0]) + median(c_blocks[i + 1][0])) / 2
        c_cpu = (median(c_blocks[i][1]) + median(c_blocks[i + 1][1])) / 2
        rows.append({"c_median": c_med, "python_median": median(py_lat), "ratio": ratio(median(py_lat), c_med),
                     "c_cpu_median": c_cpu, "python_cpu_median": median(py_cpu), "cpu_ratio": ratio(median(py_cpu), c_cpu)})
    all_c = summary([v for b in c_blocks for v in b[0]], [v for b in c_blocks for v in b[1]])
    all_py = summary([v for b in py_blocks for v in b[0]], [v for b in py_blocks for v in b[1]])

    def spread(key):
        r = sorted(row[key] for row in rows if not math.isnan(row[key]))
        if not r:
            return {k: math.nan for k in ("median", "min", "max", "q25", "q75")}
        q = lambda p: r[min(len(r) - 1, int(p * len(r)))]
        return {"median": median(r), "min": r[0], "max": r[-1], "q25": q(0.25), "q75": q(0.75)}

    ratios = {"latency": spread("ratio"), "cpu": spread("cpu_ratio"),
              "min_latency": ratio(all_py["min"], all_c["min"]), "min_cpu": ratio(all_py["cpu_min"], all_c["cpu_min"])}
    print(f"\ninterleaved with the C demo ({cmd.replace(f'--frames {n}', '--frames N')}):")
    print(f"  {k} Python blocks of {n} frames between {k + 1} C blocks, each block after {args.warmup} warm-up frame(s)")
    if args.calibrate:
        print("  --calibrate: the C demo ran in the Python blocks' place (every 'Python' figure below is C's)")
    print("  block   C (mean of the blocks either side)   Python          Python / C")
    print("          latency   cpu                      latency   cpu     latency  cpu")
    for i, r in enumerate(rows):
        print(f"  {i:5d}   {r['c_median']:7.2f}  {r['c_cpu_median']:7.2f}                   {r['python_median']:7.2f}  "
              f"{r['python_cpu_median']:7.2f}   {r['ratio']:.3f}   {r['cpu_ratio']:.3f}")
    for key, name in (("latency", "latency"), ("cpu", "CPU time")):
        q = ratios[key]
        print(f"  Python / C, {name} (per-block medians): median {q['median']:.3f}x, quartiles "
              f"{q['q25']:.3f}-{q['q75']:.3f}x, range {q['min']:.3f}-{q['max']:.3f}x")
    print(f"  all frames: C median {all_c['median']:.2f} ms, min {all_c['min']:.2f} ms, CPU min {all_c['cpu_min']:.2f} ms; "
          f"Python median {all_py['median']:.2f} ms, min {all_py['min']:.2f} ms, CPU min {all_py['cpu_min']:.2f} ms")
    print(f"  Python / C, minima: latency {ratios['min_latency']:.3f}x ({all_py['min'] - all_c['min']:+.3f} ms), "
          f"CPU time {ratios['min_cpu']:.3f}x ({all_py['cpu_min'] - all_c['cpu_min']:+.3f} ms)")
    print(f"  load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return {"c": all_c, "python": all_py, "blocks": rows, "ratio": ratios, "c_command": cmd, "calibrate": args.calibrate}


def arguments():
    """The command line's parser; also what tests and tests/bench/drive_in_process.py build a
    DrivingLoop's options from (parse_args([BUNDLE, ...]): these defaults, not copies of them)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("--frames", type=int, default=10, help="timed frames (default 10)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed frames first (default 1; with --compare-with: "
                    "before every block, on both sides)")
    ap.add_argument("--threads", type=int, default=1, help="split each kernel across N cores (default 1)")
    ap.add_argument("--device", type=int, default=0, help="OpenCL bundles: the N-th OpenCL device")
    ap.add_argument("--allow-source-build", action="store_true", help="OpenCL bundles: build unprepared programs")
    ap.add_argument("--no-sleep", dest="sleep", action="store_false", help="frames back to back, not at 20 Hz")
    ap.add_argument("--budget-ms", type=float, default=20.0, help="latency budget per frame (default 20)")
    ap.add_argument("--seed", type=int, default=1, help="camera noise seed (default 1)")
    ap.add_argument("--quiet", action="store_true", help="no per-frame lines, only the summary")
    ap.add_argument("--compare-with", metavar="DRIVING_DEMO",
                    help="also run the C demo (build/samples/driving_demo) on the same bundle, in blocks "
                         "interleaved with this loop's, and print the paired Python / C ratios")
    ap.add_argument("--blocks", type=int, default=10, help="with --compare-with: the frames in K Python blocks "
                    "between K + 1 C blocks (default 10)")
    ap.add_argument("--calibrate", action="store_true", help="with --compare-with: run the C demo in the Python "
                    "blocks' place too, for the ratios' noise floor on this machine now (C against C)")
    ap.add_argument("--json", metavar="FILE", help="write the latency figures as JSON")
    ap.add_argument("--dump", metavar="DIR", help="write every frame's inputs and output as DIR/frameNNN_<name>.npy "
                    "(a test hook, outside the timed region)")
    return ap


def main():
    ap = arguments()
    args = ap.parse_args()
    if args.frames < 1 or args.warmup < 0 or args.threads < 1 or args.blocks < 1:
        ap.error("--frames >= 1, --warmup >= 0, --threads >= 1, --blocks >= 1")
    loop = DrivingLoop(args)
    print_header(loop)
    if args.compare_with:
        result = compare(args, loop)
    else:
        lat, cpu, dropped = loop.run_frames(args.warmup, args.frames)
        result = {"python": report(args, lat, cpu, dropped)}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
