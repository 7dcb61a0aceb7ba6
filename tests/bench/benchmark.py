#!/usr/bin/env python3
"""Latency of edgert against onnxruntime on the same models, in the same run.

For each model: compile with edgec, then alternate ROUNDS times between K timed edgert runs
and K timed onnxruntime runs (same inputs, same thread count, onnxruntime with its default
graph optimizations). Each round gives one median per engine; the table shows the median over
rounds and the ratio edgert / onnxruntime (below 1: edgert is faster). Alternating keeps both
engines under the same machine load, which matters on shared hosts; each engine's block starts
after SETTLE_S of sleep, so that the other's threads (onnxruntime's spin after its runs) are idle.

edgert runs in this process through the Python binding (edgert: the build's staged package,
else an installed one): ctx.run(inputs, out=arrays), timed from Python like onnxruntime's
sess.run, after 2 warm-up runs. --cli times `edgert-bench --iters K` instead (a subprocess per
round; the time edgert-bench measures itself). --baseline-build DIR implies --cli, for both
builds: another build may have no binding, and both sides are timed the same way. The JSON
says which with "edgert_via" ("binding" or "cli").

    python3 tests/bench/benchmark.py MODEL.onnx ... [--threads 1[,2...]] [--rounds 5] [--iters 20]
        [--target x86_64] [--markdown OUT.md] [--json OUT.json] [--baseline-build DIR] [--cli]

--baseline-build DIR also compiles and runs each model with the edgec and edgert-bench of
another build (e.g. of an older commit) in the same alternating rounds, and reports this
build's median against it: how a change moved the speed. --baseline-args "ARGS" adds edgec
options to the baseline's compile (with this build when no --baseline-build is given:
e.g. --baseline-args "--winograd 0" measures what Winograd gains). --edgec-args "ARGS" adds
edgec options to this build's compile (e.g. --edgec-args "--precision bf16" --baseline-args
"--precision fp32": what bf16 gains). --profile also runs `edgert-bench --profile` once per model and thread count after the rounds
and lists the kernels it marks SLOW (the rule is the tool's, device_runtime/tools/slow_kernels.h:
slow per FLOP, below 1/4 of the FLOP-weighted mean GFLOP/s of the other kernels, over 3% of the
time, at least 0.1% of the FLOPs, over 20% of the time or below 1/100 of that mean, or 5% of the
FLOPs below 1/4 of the fastest kernel with 1%; and per byte, below 1/4 of the other streaming
kernels' GB/s; each command's median time), with the model's FLOP-weighted mean and streaming
GB/s; --json then carries them per model.
--zoo adds the model zoo (tests/models/export_torchvision.py --models zoo: 25 architectures,
full size, random weights), exported on first use into --zoo-dir with Debian's torch
(/usr/bin/python3, or EDGE_TORCH_PYTHON; scripts/setup.sh --torchvision); --zoo-models picks some
of them, or of the architectures beyond it (export_torchvision.py --list-extra: wider RegNets,
ResNeXt-101, video ResNets, AlexNet / VGG, ...; tests/models/export_timm.py --list: ~40 timm
architectures, scripts/setup.sh --timm). Every run ends with the geometric mean and the worst of edgert / onnxruntime per thread
count; a model edgec cannot compile is reported as failed and the run goes on.
--check-outputs first runs each compiled model once (edgert-run) on the inputs it is timed on and
compares every output with onnxruntime's: a model whose largest difference exceeds --tolerance
(default 1e-3) times the output's largest magnitude (at least 1) is reported as failed and not
timed (tests/bench/real_models.py uses it).
--cpu-time times each call by this thread's CPU time (time.thread_time) instead of the wall
clock: at --threads 1 edgert's binding and onnxruntime (one intra-op thread) both run in this
thread, so the time other work takes the core away does not count (a loaded shared machine);
not with more threads, --cli or --baseline-build.
--openvino also times OpenVINO (pip openvino) in the
same rounds with its default CPU settings (on a CPU with AVX512_BF16 that is bf16 inference)
and the given thread count.
"""
import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import edge_testlib as lib  # noqa: E402


def random_inputs(session, seed):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        kind = i.type
        if "uint8" in kind:
            feeds[i.name] = rng.integers(0, 256, size=shape, dtype=np.uint8)
        elif "float16" in kind:
            feeds[i.name] = rng.uniform(-1, 1, size=shape).astype(np.float16)
        elif "float" in kind:
            feeds[i.name] = rng.uniform(-1, 1, size=shape).astype(np.float32)
        elif "int64" in kind or "int32" in kind:
            feeds[i.name] = rng.integers(0, 4, size=shape, dtype=np.int64 if "int64" in kind else np.int32)
        else:
            raise SystemExit(f"benchmark: input {i.name} has unsupported type {kind}")
    return feeds


def import_edgert():
    """The build's staged edgert package (BUILD/python, scripts/build.sh makes it: the same
    build as the edgec that compiled the bundles), else one installed with pip."""
    staged = lib.build_dir() / "python"
    if (staged / "edgert" / "__init__.py").is_file():
        sys.path.insert(0, str(staged))
    import edgert
    return edgert


# The clock around each timed call: the wall clock, or with --cpu-time this thread's CPU time.
CLOCK = time.perf_counter


# Before each engine's block of timed runs: long enough for the other engine's threads to go
# idle. onnxruntime's intra-op workers spin for about 50 ms after its last run (measured: 5
# ticks of CPU time in the 0.5 s after a block, none after 0.2 s); with 2 threads on 2 cores
# they took a core from edgert's next block (RegNetX-400MF: its first 3 runs 16-25 ms instead
# of 8-10, the block's median 11-13.5 ms against 7-8.5 without onnxruntime in the process).
SETTLE_S = 0.15


def timed_median_ms(run, iters):
    """The median of iters timed calls of run(), in ms (CLOCK around each call), after
    SETTLE_S of sleep."""
    time.sleep(SETTLE_S)
    times = []
    for _ in range(iters):
        t0 = CLOCK()
        run()
        times.append((CLOCK() - t0) * 1e3)
    return statistics.median(times)


def binding_runner(edgert, bundle, threads, feeds, iters):
    """A function that times `iters` runs of the bundle through the binding and returns their
    median in ms (the inputs bound in place, the outputs written into arrays made once)."""
    b = edgert.Bundle(str(bundle))
    # As edgert-bench without --require-prepared: an OpenCL bundle may build its kernels from source.
    ctx = b.context(threads=threads, allow_source_build=True)
    inputs = {t.name: np.ascontiguousarray(feeds[t.name], dtype=t.dtype) for t in b.inputs}
    out = ctx.empty_outputs()
    for _ in range(2):
        ctx.run(inputs, out=out)

    return lambda: timed_median_ms(lambda: ctx.run(inputs, out=out), iters)


def zoo_models(zoo_dir, only=None):
    """The zoo's .onnx paths, exporting the missing ones with Debian's torch."""
    python = os.environ.get("EDGE_TORCH_PYTHON", "/usr/bin/python3")
    models = lib.REPO_ROOT / "tests" / "models"
    export, export_timm = models / "export_torchvision.py", models / "export_timm.py"

    def listed(script, flag):
        listing = subprocess.run([python, str(script), flag], capture_output=True, text=True)
        if listing.returncode != 0:
            raise SystemExit(f"benchmark: --zoo needs torchvision in {python} (scripts/setup.sh --torchvision):\n"
                             + listing.stderr[-400:])
        return [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]

    names = listed(export, "--list")
    timm_names = []
    if only:
        # The zoo's 25, or the architectures beyond it (EXTRA there, TIMM in export_timm.py),
        # which only --zoo-models names.
        timm_names = listed(export_timm, "--list")
        every = names + listed(export, "--list-extra") + timm_names
        unknown = set(only.split(",")) - set(every)
        if unknown:
            raise SystemExit(f"benchmark: --zoo-models: not in the zoo, its extras or export_timm.py's list: "
                             f"{sorted(unknown)}")
        names = [n for n in every if n in only.split(",")]
    missing = [n for n in names if not (zoo_dir / f"{n}.onnx").exists()]
    for script, todo in ((export, [n for n in missing if n not in timm_names]),
                         (export_timm, [n for n in missing if n in timm_names])):
        if todo:
            print(f"exporting {len(todo)} zoo model(s) into {zoo_dir} ({script.name})", flush=True)
            subprocess.run([python, str(script), "--models", ",".join(todo), "--out-dir", str(zoo_dir)],
                           check=True, stdout=subprocess.DEVNULL)
    return [str(zoo_dir / f"{n}.onnx") for n in names]


def output_mismatch(model, bundle, work, tolerance):
    """None when edgert's outputs on random_inputs(seed 0) match onnxruntime's within tolerance
    (relative to each output's largest magnitude, at least 1); else a line saying which differs.
    The reference is edge_testlib's (exact weights for integer products, optimizations off)."""
    import onnx
    import onnxruntime as ort
    feeds = random_inputs(ort.InferenceSession(model, providers=["CPUExecutionProvider"]), 0)
    ref = lib.ort_run(onnx.load(model), feeds)
    try:
        got = lib.run_bundle(bundle, feeds, Path(work) / (Path(bundle).stem + ".check"), output_names=list(ref))
    except lib.ToolError as e:
        return f"edgert-run failed: {str(e).strip().splitlines()[-1] if str(e).strip() else e}"
    for name, want in ref.items():
        if name not in got:
            return f"output {name}: missing from edgert's outputs"
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        ok, message = lib.compare(got[name], want, rtol=0.0, atol=tolerance * scale, name=f"output {name}")
        if not ok:
            return message
    return None


def summarize(rows, thread_counts):
    """{threads: {"geomean": g, "worst": [model, ratio], "models": n}} of edgert / onnxruntime."""
    out = {}
    for t in thread_counts:
        ratios = {n: e / o for n, tt, e, o, *_ in rows if tt == t}
        if ratios:
            worst = max(ratios, key=ratios.get)
            out[t] = {"geomean": math.exp(statistics.fmean(math.log(r) for r in ratios.values())),
                      "worst": [worst, ratios[worst]], "models": len(ratios)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", default="1", help="thread count, or several (1,2): each bundle is compiled once")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--target", default="x86_64", help="edgec --target (default x86_64)")
    ap.add_argument("--markdown", help="append the table to this file")
    ap.add_argument("--json", help="write the medians (ms) per model to this file (tests/bench/current_tables.py)")
    ap.add_argument("--baseline-build", help="build dir of another edgec/edgert-bench to compare with")
    ap.add_argument("--baseline-args", default="", help="extra edgec compile options for the baseline")
    ap.add_argument("--edgec-args", default="", help="extra edgec compile options for this build's bundle")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time this thread's CPU time, not the wall clock (--threads 1, the binding only)")
    ap.add_argument("--openvino", action="store_true", help="also time OpenVINO (its default CPU precision)")
    ap.add_argument("--cli", action="store_true",
                    help="time edgert with edgert-bench subprocesses instead of the Python binding")
    ap.add_argument("--profile", action="store_true",
                    help="also list the kernels edgert-bench --profile marks SLOW (far below the model's mean GFLOP/s and GB/s)")
    ap.add_argument("--check-outputs", action="store_true",
                    help="compare each model's outputs with onnxruntime's before timing it; a mismatch is a failure")
    ap.add_argument("--tolerance", type=float, default=1e-3,
                    help="--check-outputs: largest difference allowed, relative to the output's largest magnitude")
    ap.add_argument("--zoo", action="store_true", help="also the full-size model zoo (exported on first use)")
    ap.add_argument("--zoo-dir", default=str(lib.REPO_ROOT / "tests" / "generated" / "zoo"))
    ap.add_argument("--zoo-models", help="only these zoo models (comma-separated; export_torchvision.py --list, "
                    "--list-extra, export_timm.py --list)")
    args = ap.parse_args()
    if args.zoo:
        args.models += zoo_models(Path(args.zoo_dir), args.zoo_models)
    if not args.models:
        ap.error("no models: name some, or --zoo")
    import onnxruntime as ort
    thread_counts = [int(t) for t in str(args.threads).split(",")]

    edgec, bench = lib.find_tool("edgec"), lib.find_tool("edgert-bench")
    use_cli = args.cli or bool(args.baseline_build)
    if args.cpu_time:
        if use_cli or args.openvino or thread_counts != [1]:
            ap.error("--cpu-time: only at --threads 1 through the binding (no --cli, --baseline-build, --openvino)")
        global CLOCK
        CLOCK = time.thread_time
    edgert = None if use_cli else import_edgert()
    base = None
    if args.baseline_build:
        bdir = Path(args.baseline_build)
        base = (bdir / "host_compiler" / "edgec", bdir / "device_runtime" / "edgert-bench")
        for tool in base:
            if not tool.is_file():
                raise SystemExit(f"benchmark: {tool} does not exist")
    elif args.baseline_args:
        base = (edgec, bench)
    rows = []
    profiles = {}
    failed = {}  # model -> why it was not measured (edgec's first error line, or the outputs' mismatch)
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            name = Path(model).stem
            bundle = Path(tmp) / f"{name}.bundle"
            res = subprocess.run([str(edgec), "compile", model, "-o", str(bundle), "-q", "--target", args.target,
                                  *shlex.split(args.edgec_args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
            if res.returncode != 0:
                failed[name] = "edgec failed: " + (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[0]
                print(f"{name}: {failed[name]}", flush=True)
                continue
            if args.check_outputs:
                mismatch = output_mismatch(model, bundle, tmp, args.tolerance)
                if mismatch:
                    failed[name] = f"outputs differ: {mismatch}"
                    print(f"{name}: {failed[name]}", flush=True)
                    continue
                print(f"{name}: outputs match onnxruntime (tolerance {args.tolerance:g})", flush=True)
            base_bundle = Path(tmp) / f"{name}.baseline.bundle"
            if base:
                subprocess.run([str(base[0]), "compile", model, "-o", str(base_bundle), "-q", "--target", args.target,
                                *shlex.split(args.baseline_args)], check=True, stdout=subprocess.DEVNULL)
            for threads in thread_counts:
                so = ort.SessionOptions()
                so.intra_op_num_threads = threads
                so.inter_op_num_threads = 1
                sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
                feeds = random_inputs(sess, 0)
                in_args = []
                for k, v in feeds.items():
                    path = Path(tmp) / f"{name}.{len(in_args)}.npy"
                    np.save(path, v)
                    in_args += ["--input", f"{k}={path}"]
                for _ in range(3):
                    sess.run(None, feeds)
                ov_request = None
                if args.openvino:
                    import openvino as ov
                    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": threads})
                    ov_request = compiled.create_infer_request()
                    for _ in range(3):
                        ov_request.infer(feeds)

                def timed(run):
                    return timed_median_ms(run, args.iters)
                def bench_median(tool, b):
                    time.sleep(SETTLE_S)
                    out = subprocess.run([str(tool), str(b), "--json", "--threads", str(threads),
                                          "--warmup", "2", "--iters", str(args.iters), *in_args],
                                         check=True, capture_output=True, text=True).stdout
                    return json.loads(out.strip().splitlines()[-1])["median_ms"]

                if use_cli:
                    edge_run = lambda: bench_median(bench, bundle)  # noqa: E731
                    base_run = lambda: bench_median(base[1], base_bundle)  # noqa: E731
                else:
                    edge_run = binding_runner(edgert, bundle, threads, feeds, args.iters)
                    base_run = binding_runner(edgert, base_bundle, threads, feeds, args.iters) if base else None
                edge_medians, ort_medians, base_medians, ov_medians = [], [], [], []
                for _ in range(args.rounds):
                    edge_medians.append(edge_run())
                    if base:
                        base_medians.append(base_run())
                    ort_medians.append(timed(lambda: sess.run(None, feeds)))
                    if ov_request:
                        ov_medians.append(timed(lambda: ov_request.infer(feeds)))
                e, o = statistics.median(edge_medians), statistics.median(ort_medians)
                b = statistics.median(base_medians) if base else None
                v = statistics.median(ov_medians) if ov_request else None
                if args.profile:
                    out = subprocess.run([str(bench), str(bundle), "--json", "--profile", "--threads", str(threads),
                                          "--warmup", "2", "--iters", str(args.iters), *in_args],
                                         check=True, capture_output=True, text=True).stdout
                    prof = json.loads(out.strip().splitlines()[-1])
                    # each command's median over the runs (mean_ms: an edgert-bench before the medians)
                    ms = lambda c: c.get("median_ms", c["mean_ms"])  # noqa: E731
                    total = sum(ms(c) for c in prof["profile"]) or 1.0
                    slow = [dict(c, share=ms(c) / total, gflops=c["flops"] / (ms(c) * 1e6),
                                 gbytes=c.get("bytes", 0) / (ms(c) * 1e6))
                            for c in prof["profile"] if c.get("slow")]
                    profiles[(name, threads)] = {"flop_weighted_gflops": prof["flop_weighted_gflops"],
                                                 "streaming_gbs": prof.get("streaming_gbs", 0.0), "slow": slow}
                    print(f"  profile: FLOP-weighted mean {prof['flop_weighted_gflops']:.1f} GFLOP/s, streaming kernels "
                          f"{prof.get('streaming_gbs', 0.0):.1f} GB/s; {len(slow)} SLOW kernel(s)" + "".join(
                              f"\n    SLOW {c['name']}: {c['gflops']:.1f} GFLOP/s, {c['gbytes']:.1f} GB/s, "
                              f"{100 * c['share']:.1f}% of the time"
                              for c in sorted(slow, key=lambda c: -c["mean_ms"])), flush=True)
                rows.append((name, threads, e, o, b, v))
                print(f"{name}, {threads} thread(s): edgert {e:.3f} ms, onnxruntime {o:.3f} ms, ratio {e / o:.2f}"
                      + (f"; baseline {b:.3f} ms, this / baseline {e / b:.3f}" if base else "")
                      + (f"; openvino {v:.3f} ms, edgert / openvino {e / v:.2f}" if v else ""), flush=True)
    header = ["model"] + (["threads"] if len(thread_counts) > 1 else []) + ["edgert median ms"]
    if base:
        header += ["baseline median ms", "edgert / baseline"]
    header += ["onnxruntime median ms", "edgert / onnxruntime"]
    if args.openvino:
        header += ["openvino median ms", "edgert / openvino"]
    table = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for n, t, e, o, b, v in rows:
        cells = [n] + ([str(t)] if len(thread_counts) > 1 else []) + [f"{e:.2f}"]
        if base:
            cells += [f"{b:.2f}", f"{e / b:.3f}"]
        cells += [f"{o:.2f}", f"{e / o:.2f}"]
        if args.openvino:
            cells += [f"{v:.2f}", f"{e / v:.2f}"]
        table.append("| " + " | ".join(cells) + " |")
    text = "\n".join(table)
    via = "cli" if use_cli else "binding"
    summary = summarize(rows, thread_counts)
    print(f"\ntarget {args.target}, threads {args.threads}, {args.rounds} rounds x {args.iters} runs, alternating; "
          f"edgert through the {'edgert-bench CLI' if use_cli else 'Python binding'}"
          f"{', CPU time of the calling thread' if args.cpu_time else ''}\n{text}")
    for t, s in summary.items():
        print(f"{t} thread(s): edgert / onnxruntime geometric mean {s['geomean']:.2f}x over {s['models']} models, "
              f"worst {s['worst'][0]} {s['worst'][1]:.2f}x")
    for n, why in failed.items():
        print(f"{n}: not measured: {why}")
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "target": args.target, "threads": thread_counts, "rounds": args.rounds, "iters": args.iters,
            "edgert_via": via, "cpu_time": args.cpu_time,
            "summary": {str(t): v for t, v in summary.items()}, "failed": failed,
            "models": [{"model": n, "threads": t, "edgert_ms": e, "onnxruntime_ms": o, "baseline_ms": b,
                        "openvino_ms": v, **({"profile": profiles[(n, t)]} if (n, t) in profiles else {})}
                       for n, t, e, o, b, v in rows]}, indent=1) + "\n")


if __name__ == "__main__":
    main()
