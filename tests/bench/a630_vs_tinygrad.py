#!/usr/bin/env python3
"""edgec's adreno630 kernels side by side with tinygrad's on the same compiler (Mesa's ir3
from the tinymesa==25.2.7.2 wheel, Adreno 630): static figures only, nothing runs on a GPU.

  python3 tests/bench/a630_vs_tinygrad.py [MODEL.onnx ...] [--work DIR] [--json OUT]

Without models it builds the fp16 driving model (samples/driving_model/build_model.py) and a
ResNet-18-shaped fp16 model (onnx.helper, seeded weights, batch-norm folded into the convs).

tinygrad runs in its own virtual environment, created here under --work (pip install
tinygrad==0.14.0 tinymesa==25.2.7.2 numpy, or --tinygrad-src DIR: a source tree such as a
snapshot of github.com/tinygrad/tinygrad), never in the product's. It compiles the way
openpilot compiles for a comma device (FLOAT16=1 IMAGE=2 NOLOCALS=1, TinyJit with prune) on
its compile-only NULL device with the IR3 renderer (DEV=NULL:IR3:a630 with the
arch string its QCOM device uses, "a630,IMAGE_PITCH_ALIGNMENT=64", so weights and activations go
through images as on a comma device); see a630_tinygrad_side.py.

Image reads are counted as 4 channels of the sampler's result type (an `isam (f32)` as 16
bytes), which is twice the bytes a half image holds: the texture format is not in the code.

Both sides are counted by one counter (tests/adreno630/a630_cost.py): the disassembly (Mesa's
decoder), each loop body times its trip count worked out from the machine code (the same way
for both; for edgec it is checked against the kernel IR's), times the work-items of the
launch. Per model: kernels, instruction issues per run (ALU / memory / control / nop), memory
instructions, bytes those move, and the registers of the five biggest kernels."""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "adreno630"))
import a630_cost  # noqa: E402

TINYGRAD = "tinygrad==0.14.0"
TINYMESA = "tinymesa==25.2.7.2"
# openpilot's flags; the arch string is what tinygrad's QCOM device gives an a630 with IMAGE set
# (without IMAGE_PITCH_ALIGNMENT tinygrad keeps every tensor in buffers: --tinygrad-buffers).
# JIT=2: no graph batching, so every launch of a run reaches the NULL device's program object.
TINYGRAD_ENV = {"DEV": "NULL:IR3:a630,IMAGE_PITCH_ALIGNMENT=64", "FLOAT16": "1", "IMAGE": "2", "NOLOCALS": "1",
                "JIT": "2"}


def run(cmd, env=None, timeout=3600):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def tinygrad_python(work: Path, src: str | None) -> Path:
    venv = work / "tinygrad-venv"
    py = venv / "bin" / "python"
    stamp = venv / "edge-installed.txt"
    want = f"{src or TINYGRAD} {TINYMESA}"
    if not py.exists() or not stamp.exists() or stamp.read_text() != want:
        run([sys.executable, "-m", "venv", "--clear", venv])
        run([py, "-m", "pip", "install", "-q", src or TINYGRAD, TINYMESA, "numpy"], timeout=1800)
        stamp.write_text(want)
    return py


def resnet18_fp16(path: Path) -> Path:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(18)
    inits, nodes = [], []

    def conv(x, cin, cout, k, stride, name, relu=True):
        w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float16)
        b = (0.05 * rng.standard_normal(cout)).astype(np.float16)
        inits.extend([numpy_helper.from_array(w, f"{name}.w"), numpy_helper.from_array(b, f"{name}.b")])
        nodes.append(helper.make_node("Conv", [x, f"{name}.w", f"{name}.b"], [name], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4))
        if not relu: return name
        nodes.append(helper.make_node("Relu", [name], [f"{name}.relu"]))
        return f"{name}.relu"

    x = conv("input", 3, 64, 7, 2, "stem")
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    x, cin = "pool", 64
    for stage, c in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            name = f"layer{stage + 1}.{block}"
            y = conv(x, cin, c, 3, stride, f"{name}.conv1")
            y = conv(y, c, c, 3, 1, f"{name}.conv2", relu=False)
            skip = conv(x, cin, c, 1, stride, f"{name}.down", relu=False) if stride != 1 or cin != c else x
            nodes.append(helper.make_node("Add", [y, skip], [f"{name}.add"]))
            nodes.append(helper.make_node("Relu", [f"{name}.add"], [f"{name}.out"]))
            x, cin = f"{name}.out", c
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    w = (rng.standard_normal((1000, 512)) / np.sqrt(512)).astype(np.float16)
    inits.extend([numpy_helper.from_array(w, "fc.w"), numpy_helper.from_array(np.zeros(1000, np.float16), "fc.b")])
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1))
    g = helper.make_graph(nodes, "resnet18_fp16", [helper.make_tensor_value_info("input", TensorProto.FLOAT16, [1, 3, 224, 224])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT16, [1, 1000])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def count(name, disasm, global_items, consts, ir_trips=None):
    """One kernel: per-class totals of the launch, with trip counts worked out from the code."""
    code = a630_cost.parse(disasm)
    trips = [a630_cost.derive_trips(code, s, e, consts) for s, e in a630_cost.loops_of(code)]
    if ir_trips is not None and trips and [t for t in trips if t is not None] != [t for t, d in zip(ir_trips, trips) if d is not None]:
        raise SystemExit(f"{name}: trip counts from the machine code {trips}, kernel IR {list(ir_trips)}")
    if None in trips and ir_trips is not None:
        trips = list(ir_trips)  # a loop shape the counter does not follow: the kernel IR knows
    cost, _ = a630_cost.work_item_cost(disasm, trips if None not in trips else None, consts)
    return cost.scaled(global_items)


def edgec_side(model: Path, work: Path, edgec: Path):
    bundle = work / (model.stem + ".adreno630.bundle")
    run([edgec, "compile", model, "-o", bundle, "--target", "adreno630", "-q"])
    info = json.loads(run([edgec, "inspect", bundle, "--json", "--disasm"]))
    rows = []
    for k in info["kernels"]:
        a = k["a630"]
        consts = {a["immediates_dword"] + i: v for i, v in enumerate(a["immediates"])}
        rows.append((k["name"], count(k["name"], a["disasm"], math.prod(k["global_size"]), consts, a["loop_trips"]),
                     a["full_regs"], a["half_regs"]))
    return rows


def tinygrad_side(model: Path, work: Path, py: Path, buffers=False):
    side = Path(__file__).resolve().parent / "a630_tinygrad_side.py"
    consts, out = work / (model.stem + ".tinygrad-consts.pkl"), work / (model.stem + ".tinygrad.json")
    env = {k: v for k, v in os.environ.items() if k not in TINYGRAD_ENV and not k.startswith("PYTHON")}
    run([py, side, "consts", model, consts], env=dict(env, DEV="CPU"))
    tg_env = dict(env, **TINYGRAD_ENV)
    if buffers: tg_env["DEV"] = "NULL:IR3:a630"
    try:
        run([py, side, "kernels", model, consts, out], env=tg_env)
    except SystemExit as e:
        if buffers: raise
        # tinygrad 0.14.0's image path fails on some models (ResNet-18 fp16: "UOp verification
        # failed ... Ops.STACK"); its buffer code is then the only tinygrad code there is.
        print(f"{model.stem}: tinygrad's IMAGE compile failed ({str(e).strip().splitlines()[-1][:160]}); "
              "counting its buffer-only kernels", file=sys.stderr)
        tg_env["DEV"] = "NULL:IR3:a630"
        run([py, side, "kernels", model, consts, out], env=tg_env)
        buffers = True
    rows = []
    for k in json.load(open(out))["kernels"]:
        consts_ = {k["immediates_dword"] + i: v for i, v in enumerate(k["immediates"])}
        # tinygrad's global size counts work-groups, edgec's (OpenCL's) work-items.
        items = math.prod(k["global_size"]) * math.prod(k["local_size"])
        rows.append((k["name"], count(k["name"], k["disasm"], items, consts_), k["full_regs"], k["half_regs"]))
    return rows, buffers


def summary(rows):
    total = a630_cost.Cost()
    for _, c, _, _ in rows: total.add(c)
    top = sorted(rows, key=lambda r: -r[1].issues)[:5]
    return {"kernels": len(rows), "issues": total.issues, "alu": total.counts["alu"], "memory": total.memory,
            "global": total.counts["global"], "image": total.counts["image"], "shared": total.counts["shared"],
            "control": total.counts["control"], "nop": total.counts["nop"], "bytes": total.bytes,
            "top5": [{"name": n, "issues": c.issues, "memory": c.memory, "bytes": c.bytes, "full_regs": f, "half_regs": h}
                     for n, c, f, h in top]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "bench-a630")
    ap.add_argument("--edgec", type=Path, default=Path(os.environ.get("EDGEC", ROOT / "build/host_compiler/edgec")))
    ap.add_argument("--baseline-edgec", type=Path, help="another edgec (e.g. an older build): a third row")
    ap.add_argument("--no-tinygrad", action="store_true", help="edgec rows only")
    ap.add_argument("--tinygrad-buffers", action="store_true", help="tinygrad without images (arch a630 alone)")
    ap.add_argument("--tinygrad-src", help="pip-installable tinygrad source instead of " + TINYGRAD)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    models = args.models
    if not models:
        drv = args.work / "driving_model_fp16.onnx"
        if not drv.exists():
            run([sys.executable, ROOT / "samples/driving_model/build_model.py", "--dtype", "fp16", "--out", drv])
        models = [drv, resnet18_fp16(args.work / "resnet18_fp16.onnx")]
    py = None if args.no_tinygrad else tinygrad_python(args.work, args.tinygrad_src)
    report = {}
    for model in models:
        sides = {"edgec": summary(edgec_side(model, args.work, args.edgec))}
        if args.baseline_edgec:
            (args.work / "baseline").mkdir(exist_ok=True)
            sides["baseline"] = summary(edgec_side(model, args.work / "baseline", args.baseline_edgec))
        if py:
            rows, buffers = tinygrad_side(model, args.work, py, args.tinygrad_buffers)
            sides["tinygrad (buffers)" if buffers else "tinygrad"] = summary(rows)
        report[model.stem] = sides
        print(f"\n{model.stem}  (static a630 figures per run: loop bodies x trip counts x work-items)")
        print(f"{'':18} {'kernels':>8} {'issues':>14} {'ALU':>14} {'memory':>12} {'(image)':>12} {'control':>11} "
              f"{'nop':>12} {'bytes moved':>14}")
        for side, s in sides.items():
            print(f"{side:18} {s['kernels']:>8} {s['issues']:>14,} {s['alu']:>14,} {s['memory']:>12,} {s['image']:>12,} "
                  f"{s['control']:>11,} {s['nop']:>12,} {s['bytes']:>14,}")
        for other in [x for x in sides if x != "edgec"]:
            e, t = sides["edgec"], sides[other]
            print(f"edgec / {other}: issues {e['issues'] / t['issues']:.2f}, memory instructions "
                  f"{e['memory'] / t['memory']:.2f}, bytes {e['bytes'] / t['bytes']:.2f}")
        for side, s in sides.items():
            print(f"  {side} five biggest kernels (issues, full / half registers):")
            for k in s["top5"]:
                print(f"    {k['name']:40.40} {k['issues']:>14,}  {k['full_regs']:>2} / {k['half_regs']:>2}")
    if args.json: args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
