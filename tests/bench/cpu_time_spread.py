#!/usr/bin/env python3
"""Spread of edgert's and onnxruntime's times on a shared host: CPU time of the calling thread
(time.thread_time) per run, bundles and onnxruntime alternating in blocks of 5 runs, 1 thread;
prints each one's min, 10th / 25th percentile and median in ms.

    python3 tests/bench/cpu_time_spread.py MODEL.onnx A.bundle [B.bundle ...] [--blocks 30]

The input is MODEL.input.npy beside the model (tests/models/export_torchvision.py writes one);
the bundles take it as their first input. The minimum is what a run costs when nothing else
disturbs it; the median adds the host's noise (BENCHMARKS.md, session 41)."""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmark import import_edgert  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--blocks", type=int, default=30)
    args = ap.parse_args()
    edgert = import_edgert()
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    x = np.load(args.model.replace(".onnx", ".input.npy")).astype(np.float32)
    runners = {}
    for path in args.bundles:
        b = edgert.Bundle(path)
        ctx = b.context(threads=1)
        out, feeds = ctx.empty_outputs(), {b.inputs[0].name: x}
        runners[path] = lambda ctx=ctx, feeds=feeds, out=out: ctx.run(feeds, out=out)
    name = sess.get_inputs()[0].name
    runners["onnxruntime"] = lambda: sess.run(None, {name: x})
    for run in runners.values():
        run(), run()
    times = {k: [] for k in runners}
    for _ in range(args.blocks):
        for k, run in runners.items():
            for _ in range(5):
                t0 = time.thread_time()
                run()
                times[k].append((time.thread_time() - t0) * 1e3)
    for k, t in times.items():
        t.sort()
        print(f"{k}: min {t[0]:.2f}  p10 {t[len(t) // 10]:.2f}  p25 {t[len(t) // 4]:.2f}  "
              f"median {statistics.median(t):.2f} ms")


if __name__ == "__main__":
    main()
