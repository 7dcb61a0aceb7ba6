#!/usr/bin/env python3
"""onnxruntime's time per graph node (SessionOptions.enable_profiling): the median over the
timed runs of each node's kernel time, the peer side of `edgert-bench --profile`.

    python3 tests/bench/ort_node_profile.py MODEL.onnx [--threads 1] [--iters 40]

Prints each node's median in ms, slowest first, and their sum (kernel times, not the wall time
of a run). Nodes keep the names onnxruntime gives them after its graph optimizations (NCHWc
convs end in `_nchwc`; its layout reorders are nodes of their own). Wall time: onnxruntime's
profiler reads a wall clock, so on a shared host a node's figure moves between runs."""
import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

import numpy as np


def node_medians(model_path, threads=1, iters=40, warmup=2):
    """{node name: median ms over `iters` timed runs} after `warmup` untimed ones, on seeded
    standard-normal float32 inputs (symbolic dims 1)."""
    import onnxruntime as ort
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.enable_profiling = True
        so.profile_file_prefix = str(Path(tmp) / "ort_profile")
        sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in sess.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in i.shape]
            feeds[i.name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        for _ in range(warmup + iters):
            sess.run(None, feeds)
        path = sess.end_profiling()
        events = json.loads(Path(path).read_text())
        os.unlink(path)
    per_node = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node.setdefault(e["name"][: -len("_kernel_time")], []).append(e["dur"] / 1000.0)
    # the last `iters` executions are the timed runs
    return {node: statistics.median(times[-iters:]) for node, times in per_node.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=40)
    args = ap.parse_args()
    ms = node_medians(args.model, args.threads, args.iters)
    for node, t in sorted(ms.items(), key=lambda kv: -kv[1]):
        print(f"{t:9.4f} ms  {node}")
    print(f"{sum(ms.values()):9.4f} ms  in all ({len(ms)} nodes)")


if __name__ == "__main__":
    main()
