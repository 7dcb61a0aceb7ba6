#!/usr/bin/env python3
"""Open time of a ~50 MB bundle (manual, not in CI): private copy vs --map-in-place, unsigned
mode (content hash) vs signed mode (BLAKE2b digest + Ed25519), all in the same run.

    python3 tests/bench/open_time.py [--mb 50] [--opens 21] [--rounds 3]

Builds a model whose weights are one MB x MB-sized float32 matrix (a matrix-vector product),
compiles and signs it, then alternates the four ways for --rounds rounds of
`edgert-bench --open-iters N` (the file stays in the page cache: this is the CPU cost of
opening, not the disk). Prints the median over all opens of each way.

Then, where the build has tests/edge-fsverity-open (EDGE_SIGNATURES on Linux), the fs-verity
path in place against the two in-place ways above, alternating in one process: the digest is
injected through the runtime's test seam, as this machine's kernel has no fs-verity, so the
FS_IOC_MEASURE_VERITY call itself (a copy of a digest the kernel keeps) is not in the figure."""
import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402


def model(n):
    from onnx import TensorProto, helper, numpy_helper
    w = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "big_weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
        [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--opens", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    work = lib.work_dir("open_time")
    n = int((args.mb * 1e6 / 4) ** 0.5) // 16 * 16
    edgec = lib.find_tool("edgec")
    lib.compile_model(model(n), work / "big.bundle", timeout=1800)
    if not (work / "k.key").exists():
        lib.run_cmd([edgec, "keygen", "-o", work / "k"])
    lib.run_cmd([edgec, "sign", work / "big.bundle", "--key", work / "k.key", "-o", work / "big_signed.bundle",
                 "--fsverity"])
    size = (work / "big_signed.bundle").stat().st_size
    ways = {
        "private copy, unsigned mode": (work / "big.bundle", []),
        "map in place, unsigned mode": (work / "big.bundle", ["--map-in-place"]),
        "private copy, signed mode": (work / "big_signed.bundle", ["--trusted-key", work / "k.pub"]),
        "map in place, signed mode": (work / "big_signed.bundle", ["--trusted-key", work / "k.pub", "--map-in-place"]),
    }
    times = {w: [] for w in ways}
    bench = lib.find_tool("edgert-bench")
    for _ in range(args.rounds):
        for way, (bundle, extra) in ways.items():
            res = lib.run_cmd([bench, bundle, *extra, "--warmup", "0", "--iters", "1", "--open-iters",
                               str(args.opens), "--json"])
            times[way].append(json.loads(res.stdout)["open_median_ms"])
    print(f"bundle: {size / 1e6:.1f} MB ({n} x {n} float32 weights); median of {args.rounds} rounds "
          f"x median of {args.opens} opens")
    for way, t in times.items():
        print(f"  {way:30s} {statistics.median(t):8.2f} ms   (rounds: {', '.join(f'{x:.2f}' for x in t)})")
    fsverity_open = lib.find_tool("edge-fsverity-open", required=False)
    if fsverity_open:
        signed = work / "big_signed.bundle"
        res = lib.run_cmd([fsverity_open, signed, "--trusted-key", work / "k.pub", "--fsverity-signature",
                           f"{signed}.fsvsig", "--compute-digest", "--bench", str(args.opens), str(args.rounds)])
        print(res.stdout, end="")


if __name__ == "__main__":
    main()
