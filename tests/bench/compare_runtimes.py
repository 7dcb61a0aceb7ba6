#!/usr/bin/env python3
"""Same-run speed of two runtimes on the same bundles: edgert-bench of build A and of build B
(e.g. main's and a branch's), alternating A and B every round with the order flipped each
round, pinned to one core at 1 thread. Per bundle: the median over rounds of each run's
median, the median of the per-round ratios B/A, and the fastest run of each.

    python3 tests/bench/compare_runtimes.py --a A/edgert-bench --b B/edgert-bench \\
        [--rounds 21] [--iters 500] [--threads 1] BUNDLE...

The bundles must be of a format both runtimes read (compile them with one edgec)."""
import argparse
import json
import os
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="edgert-bench of runtime A")
    ap.add_argument("--b", required=True, help="edgert-bench of runtime B")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("bundles", nargs="+")
    args = ap.parse_args()
    pin = ["taskset", "-c", "1"] if args.threads == 1 and os.path.exists("/usr/bin/taskset") else []
    for bundle in args.bundles:
        runs = {"A": [], "B": []}
        for r in range(args.rounds):
            for which in ("A", "B") if r % 2 == 0 else ("B", "A"):
                cmd = pin + [args.a if which == "A" else args.b, bundle, "--iters", str(args.iters), "--warmup", "5",
                             "--threads", str(args.threads), "--json"]
                j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
                runs[which].append((j["median_ms"], j["min_ms"]))
        med = {k: statistics.median(m for m, _ in v) for k, v in runs.items()}
        fastest = {k: min(f for _, f in v) for k, v in runs.items()}
        ratio = statistics.median(b[0] / a[0] for a, b in zip(runs["A"], runs["B"]))
        print(f"{os.path.basename(bundle)}, {args.threads} thread(s), {args.rounds} rounds x {args.iters} runs: "
              f"median A {med['A']:.4f} ms, B {med['B']:.4f} ms; B/A median of round ratios {ratio:.3f}, "
              f"fastest runs {fastest['B'] / fastest['A']:.3f}", flush=True)


if __name__ == "__main__":
    main()
