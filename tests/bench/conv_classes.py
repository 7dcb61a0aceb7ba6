#!/usr/bin/env python3
"""GFLOP/s of a model's grouped convs against its dense convs (issue 22: grouped convs as fast
as dense ones per FLOP), from `edgert-bench --profile --json`.

Each profiled kernel is matched to the ONNX Conv it computes (the kernel is named after the
value it stores: the conv's output or that of the elementwise ops fused after it) and counted
as dense (group 1), grouped (1 < group < channels) or depthwise; a class's GFLOP/s is its
FLOPs over its time (so the big convs weigh most). The copies that give padded grouped convs
their zero border (kernels named `Pad_...`) are counted apart, and once more with the grouped
convs' time; `other` is every kernel matched to no conv (pooling, and convs whose stored value
has no ONNX name, such as a 1x1 downsampling conv stored before its residual add). A
kernel's time is its median over the runs of a profile. Repeats the profile and reports the
median of each figure, then the figures once more from each kernel's fastest median over the
profiles (on a loaded machine the long kernels are preempted in most runs).

    python3 tests/bench/conv_classes.py MODEL.onnx ... [--target x86_64] [--threads 1]
        [--repeats 3] [--iters 10] [--edgec-args ARGS] [--baseline-args ARGS] [--baseline-edgec PATH]

--baseline-args also compiles each model with these edgec options and profiles that bundle
in the same repeats, alternating with the first (e.g. --baseline-args
"--padded-grouped-convs 0": what the padded copies change). --baseline-edgec PATH compiles
that bundle with another edgec (e.g. main's build: what a change moved). Under
LD_PRELOAD=cpu_time_clock.so (tests/bench/cpu_time_clock.c) the kernels' times are CPU time.

Tools come from EDGEC / EDGERT_BENCH or build/."""
import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import edge_testlib as lib  # noqa: E402

# Ops that edgec fuses into a conv's epilogue: the kernel may be named after their output.
EPILOGUE_OPS = {"Relu", "BatchNormalization", "Add", "Clip", "Sigmoid", "Mul", "HardSigmoid", "HardSwish", "Gelu"}


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def conv_classes(model_path):
    """{sanitized value name: class} for each conv's output and the epilogue values after it."""
    m = onnx.load(str(model_path), load_external_data=False)
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    consumers = {}
    for n in m.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    classes = {}
    for n in m.graph.node:
        if n.op_type != "Conv":
            continue
        group = next((a.i for a in n.attribute if a.name == "group"), 1)
        w = inits.get(n.input[1])
        c_in = w[1] * group if w else None
        kind = "dense" if group == 1 else "depthwise" if c_in is not None and group == c_in else "grouped"
        out = n.output[0]
        while True:
            classes[sanitize(out)] = kind
            users = consumers.get(out, [])
            if len(users) != 1 or users[0].op_type not in EPILOGUE_OPS:
                break
            out = users[0].output[0]
    return classes


def profile(bench, bundle, threads, iters):
    res = subprocess.run([str(bench), str(bundle), "--profile", "--json", "--threads", str(threads), "--iters",
                          str(iters)], check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


def profile_arguments(doc):
    """The options this script and mbconv_classes.py share: models, target, threads, repeats."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--target", default="x86_64")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--edgec-args", default="", help="extra edgec compile options")
    return ap


def main():
    ap = profile_arguments(__doc__)
    ap.add_argument("--baseline-args", default=None, help="also profile a bundle compiled with these options")
    ap.add_argument("--baseline-edgec", default=None, help="the edgec that compiles that bundle (default: this build's)")
    args = ap.parse_args()
    bench = lib.find_tool("edgert-bench")
    baseline = args.baseline_args is not None or args.baseline_edgec is not None
    variants = [("", args.edgec_args)] + ([("baseline ", args.baseline_args or "")] if baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            classes = conv_classes(model)
            bundles = []
            for i, (_, extra) in enumerate(variants):
                bundle = Path(tmp) / f"{Path(model).stem}.{i}.bundle"
                options = ["-q", "--target", args.target, *extra.split()]
                if i == 1 and args.baseline_edgec:
                    lib.run_tool([args.baseline_edgec, "compile", model, "-o", bundle, *options])
                else:
                    lib.compile_model(model, bundle, options)
                bundles.append(bundle)
            figures = [{} for _ in variants]
            profiles = [[] for _ in variants]
            for _ in range(args.repeats):
                for i, bundle in enumerate(bundles):
                    profiles[i].append(profile(bench, bundle, args.threads, args.iters))
                    for k, v in class_figures(profiles[i][-1], classes).items():
                        figures[i].setdefault(k, []).append(v)
            print(f"{Path(model).name} ({args.target}, {args.threads} thread(s), median of {args.repeats} profiles):")
            for (label, extra), fig, profs in zip(variants, figures, profiles):
                if len(variants) > 1:
                    edgec = f", {args.baseline_edgec}" if label and args.baseline_edgec else ""
                    print(f" {label or 'this'} ({extra or 'no extra edgec options'}{edgec}):")
                for k in sorted(fig):
                    print(f"  {k:36s} {statistics.median(fig[k]):9.3f}   ({', '.join(f'{v:.3f}' for v in fig[k])})")
                # On a loaded machine a kernel longer than the scheduler's time slice is
                # preempted in most runs (ResNeXt-50's 5-10 ms convs): its fastest median is
                # the better estimate.
                fastest = class_figures(fastest_per_command(profs), classes)
                print("  each kernel's fastest median over the profiles: " +
                      ", ".join(f"{k} {fastest[k]:.3f}" for k in sorted(fastest) if "/" in k or k == "total ms"))


def fastest_per_command(profiles):
    """One profile whose commands take their smallest median over `profiles`."""
    return {"profile": [dict(c, median_ms=min(p["profile"][i].get("median_ms", p["profile"][i]["mean_ms"])
                                              for p in profiles))
                        for i, c in enumerate(profiles[0]["profile"])]}


def class_figures(p, classes):
    """{figure: value} of one profile: time and GFLOP/s per class, the grouped / dense ratios."""
    flops, ms = {}, {}
    for cmd in p["profile"]:
        name = re.sub(r"^k\d+_", "", cmd["name"])
        kind = "pad copy" if name.startswith("Pad_") else classes.get(name, "other")
        flops[kind] = flops.get(kind, 0) + cmd["flops"]
        # the command's median over the runs: on a shared machine a preempted run moves the mean
        ms[kind] = ms.get(kind, 0.0) + cmd.get("median_ms", cmd["mean_ms"])
    rate = {k: flops[k] / (ms[k] * 1e6) for k in flops if ms[k] > 0}
    row = {f"{k} GFLOP/s": r for k, r in rate.items() if flops[k] > 0}
    row.update({f"{k} ms": t for k, t in ms.items()})
    row["total ms"] = sum(ms.values())
    if "dense" in rate and "grouped" in rate:
        row["grouped / dense"] = rate["grouped"] / rate["dense"]
        with_copies = flops["grouped"] / ((ms["grouped"] + ms.get("pad copy", 0.0)) * 1e6)
        row["grouped incl. pad copies / dense"] = with_copies / rate["dense"]
    return row


if __name__ == "__main__":
    main()
