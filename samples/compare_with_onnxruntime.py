#!/usr/bin/env python3
"""Runs MODEL.onnx with onnxruntime on the given inputs and compares with the .npy outputs
edgert-run wrote to OUTPUT_DIR; prints the max abs difference per output and exits 1 when
an output differs by more than --atol + --rtol * |reference|.

    python3 samples/compare_with_onnxruntime.py MODEL.onnx OUTPUT_DIR --input image=image.npy"""
import argparse
import os
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("output_dir")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--time", action="store_true", help="also time onnxruntime (median of 50 runs, 1 thread)")
    args = ap.parse_args()
    feeds = {}
    for item in args.input:
        name, _, path = item.partition("=")
        feeds[name] = np.load(path)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    ref = dict(zip(names, sess.run(names, feeds)))
    ok = True
    for name, expected in ref.items():
        path = os.path.join(args.output_dir, name.replace("/", "_") + ".npy")
        if not os.path.exists(path):
            print(f"{name}: edgert-run wrote no {path}")
            ok = False
            continue
        got = np.load(path)
        if got.shape != expected.shape:
            print(f"{name}: shape {got.shape} != onnxruntime {expected.shape}")
            ok = False
            continue
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        within = bool(np.all(diff <= args.atol + args.rtol * np.abs(expected)))
        ok &= within
        print(f"{name}: max abs difference vs onnxruntime {diff.max():.3g} "
              f"({'within' if within else 'OUTSIDE'} rtol {args.rtol:g} / atol {args.atol:g}); "
              f"argmax edgert {int(np.argmax(got))}, onnxruntime {int(np.argmax(expected))}")
    if args.time:
        for _ in range(5):
            sess.run(names, feeds)
        times = []
        for _ in range(50):
            t0 = time.perf_counter()
            sess.run(names, feeds)
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"onnxruntime (1 thread): median {np.median(times):.3f} ms over 50 runs")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
