#!/usr/bin/env python3
"""edgec --target adreno630: kernel IR -> NIR -> Mesa's ir3 (libtinymesa.so) -> a630 machine
code. Compile-only: there is no executor of a6xx shaders, so programs are checked by decoding
(Mesa's disassembler), the end instruction and the a630 limits (the runtime's verifier), and
costed statically; none of this says the code computes the right values.

Cases: the Mesa ABI facts of host_compiler/codegen/ir3_mesa.h against the library's debug
information (gdb); the test CNNs and the fp16 / fp32 driving model compile, decode cleanly
and pass the verifier; the static cost of a reduction grows by exactly its loop body per
extra trip; the per-class cost of an elementwise add and of a
reduction equal what a hand count says (bytes moved, adds, loads and stores per element); edgec's
counter agrees with an independent one (tests/adreno630/a630_cost.py) on every kernel of the test
CNNs and the driving model, which also works out every loop's trip count from the machine code
alone and gets the kernel IR's; the cpu port refuses the bundle naming the kgsl port; a missing or foreign
library is a clear error and other targets do not need it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import edge_testlib as lib  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "adreno630"))
import a630_cost  # noqa: E402  (the independent counter)

ROOT = Path(__file__).resolve().parents[2]
suite = lib.Suite("adreno630")
WORK = lib.work_dir("adreno630")
EDGEC, EDGERT_RUN, _ = lib.tools()


def libtinymesa() -> Path:
    try:
        import tinymesa
    except ImportError as e:
        raise AssertionError("the tinymesa wheel is missing (scripts/setup.sh installs tinymesa==25.2.7.2)") from e
    return Path(tinymesa.libtinymesa)


def batch(models, target="adreno630", env=None):
    listing = WORK / "batch.txt"
    listing.write_text("".join(f"{m}\n" for m in models))
    out = lib.run_cmd([EDGEC, "compile-batch", listing, "--target", target], env=env, timeout=600)
    return [json.loads(line) for line in out.stdout.splitlines() if '"model"' in line]


def check_clean(r):
    assert r["ok"], f"{r['model']}: {r.get('error')}"
    assert r["verified"], f"{r['model']}: verifier: {r['verifier']}"
    assert "kgsl" in r["verifier"], r["verifier"]  # UNSUPPORTED here, for want of the port
    assert r["decode_errors"] == 0 and r["unterminated"] == 0, r
    assert 0 < r["max_full_regs"] <= 64 and r["max_constlen"] <= 256, r


@suite.case
def abi_facts_match_the_library():
    """Every offset, size and enum value ir3_mesa.h declares, asked of the .so's DWARF."""
    header = (ROOT / "host_compiler/codegen/ir3_mesa.h").read_text()

    def block(name):  # the X(...) lines of one #define EDGE_MESA_<name>(X) list
        text = header[header.index(f"#define EDGE_MESA_{name}(X)"):]
        lines = []
        for line in text.splitlines()[1:]:
            lines.append(line)
            if not line.rstrip().endswith("\\"):
                break
        return "\n".join(lines)

    offsets = re.findall(r"X\(([^,()]+), ([\w.]+), (\d+)\)", block("OFFSETS"))
    sizes = re.findall(r"X\(([^,()]+), (\d+)\)", block("SIZES"))
    enums = re.findall(r"X\((\w+), (\d+)\)", block("ENUMS"))
    assert len(offsets) > 50 and len(sizes) > 10 and len(enums) > 20, (len(offsets), len(sizes), len(enums))
    cmds, want = [], []
    for t, m, v in offsets:
        cmds.append(f"print (long)&(({t}*)0)->{m}")
        want.append((f"offsetof({t}, {m})", int(v)))
    for t, v in sizes:
        cmds.append(f"print sizeof({t})")
        want.append((f"sizeof({t})", int(v)))
    for n, v in enums:
        cmds.append(f"print (long){n}")
        want.append((n, int(v)))
    script = WORK / "facts.gdb"
    script.write_text("\n".join(cmds) + "\n")
    out = subprocess.run(["gdb", "-batch", "-nx", "-x", str(script), str(libtinymesa())], capture_output=True,
                         text=True, timeout=300)
    got = [int(x) for x in re.findall(r"^\$\d+ = (-?\d+)", out.stdout, re.M)]
    assert len(got) == len(want), f"gdb answered {len(got)} of {len(want)}: {out.stderr[-1500:]}"
    bad = [f"{name}: header {v}, library {g}" for (name, v), g in zip(want, got) if v != g]
    assert not bad, "ir3_mesa.h disagrees with libtinymesa.so:\n" + "\n".join(bad)
    print(f"  {len(want)} facts hold")


@suite.case
def test_cnns_and_driving_model_compile_and_decode():
    models = []
    for variant in ("basic", "grouped"):
        models.append(lib.save_model(lib.make_cnn(seed=1, variant=variant), WORK / f"cnn_{variant}.onnx"))
    for dtype in ("fp16", "fp32"):
        path = WORK / f"driving_{dtype}.onnx"
        lib.run_cmd([sys.executable, ROOT / "samples/driving_model/build_model.py", "--dtype", dtype, "--out", path],
                    timeout=600)
        models.append(path)
    results = batch(models)
    assert len(results) == len(models), results
    for r in results:
        check_clean(r)
        print(f"  {Path(r['model']).name}: {r['kernels']} kernels, up to {r['max_full_regs']} full registers, "
              f"constlen {r['max_constlen']}")


def reduce_model(k: int) -> Path:
    g = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0, axes=[1])], "sum",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])])
    return lib.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)]), WORK / f"sum{k}.onnx")


def inspect_json(bundle, *flags):
    out = lib.run_cmd([EDGEC, "inspect", bundle, "--json", *flags])
    return json.loads(out.stdout)


@suite.case
def static_cost_counts_the_loop_body_once_per_trip():
    """Two reductions that differ only in their trip count: same code, and the cost differs by
    exactly (16 more trips) x (the loop body's issues). Each output reads its row of x along
    the reduce dim, so the loop takes 4 steps per trip (one 16-byte load)."""
    per_item = {}
    steps = 4
    for k in (64, 128):
        bundle = WORK / f"sum{k}.bundle"
        lib.run_cmd([EDGEC, "compile", reduce_model(k), "-o", bundle, "--target", "adreno630", "-q"])
        info = inspect_json(bundle, "--a630-cost")
        (kernel,) = info["kernels"]
        assert kernel["a630"]["loop_trips"] == [k // steps], kernel["a630"]
        per_item[k] = kernel["a630"]["per_item"]
        lanes = 8 // kernel["a630"]["work_items"]  # outputs one work-item computes
        text = lib.run_cmd([EDGEC, "inspect", bundle, "--a630-cost"]).stdout
        assert "a630 instruction issues per run" in text and re.search(r"^total\s+\d+", text, re.M), text
    d = {key: per_item[128][key] - per_item[64][key] for key in per_item[64]}
    extra = (128 - 64) // steps
    assert d["issues"] > 0 and d["issues"] % extra == 0, d
    body = d["issues"] // extra
    # One 16-byte load of x (4 steps) per trip and output lane.
    assert d["global"] == extra * lanes and d["bytes"] == 64 * 4 * lanes, (d, lanes)
    assert per_item[64]["issues"] - 64 // steps * body == per_item[128]["issues"] - 128 // steps * body
    print(f"  loop body: {body} issues per trip")


def binary_model(n: int) -> Path:
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "add",
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n]) for x in "ab"],
                          [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n])])
    return lib.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), WORK / f"add{n}.onnx")


def a630_kernels(model, name):
    bundle = WORK / f"{name}.bundle"
    lib.run_cmd([EDGEC, "compile", model, "-o", bundle, "--target", "adreno630", "-q"])
    info = inspect_json(bundle, "--a630-cost", "--disasm")
    return bundle, [k for k in info["kernels"] if "a630" in k]


def totals(kernel):
    """Issues of the whole launch by class, from the independent counter; and by mnemonic."""
    a = kernel["a630"]
    cost, _ = a630_cost.work_item_cost(a["disasm"], a["loop_trips"])
    per_mnemonic = {}
    code = a630_cost.parse(a["disasm"])
    loops = a630_cost.loops_of(code)
    for i, ins in enumerate(code):
        times = 1
        for (s, e), t in zip(loops, a["loop_trips"] if loops else []):
            if s <= i <= e: times *= t
        per_mnemonic[ins.mnemonic] = per_mnemonic.get(ins.mnemonic, 0) + ins.repeat * times
    n = a["work_items"]
    return cost.scaled(n), {m: v * n for m, v in per_mnemonic.items()}


@suite.case
def elementwise_add_cost_by_hand():
    """c = a + b over N floats: whatever the tiling, the launch moves exactly 12 N bytes (two
    4-byte loads and one store per element), issues exactly N float adds, and its loads and
    stores carry 2 N and N elements. The table's totals are the per-item cost x work-items."""
    n = 4096
    _, (k,) = a630_kernels(binary_model(n), "add")
    cost, per_mnemonic = totals(k)
    assert cost.bytes == 12 * n, (cost.bytes, 12 * n)
    assert per_mnemonic.get("add.f", 0) == n, per_mnemonic
    code = a630_cost.parse(k["a630"]["disasm"])
    elements = {"ldg": 0, "stg": 0}
    for ins in code:
        base = ins.mnemonic.split(".")[0]
        if base in elements:
            elements[base] += ins.repeat * a630_cost.memory_bytes(ins, "global") // 4
    assert elements["ldg"] * k["a630"]["work_items"] == 2 * n and elements["stg"] * k["a630"]["work_items"] == n, elements
    assert cost.counts["global"] * 4 <= 3 * n * 4 and cost.counts["control"] == k["a630"]["work_items"], cost.counts
    pi = k["a630"]["per_item"]
    assert {c: pi[c] * k["a630"]["work_items"] for c in a630_cost.CLASSES} == cost.counts, (pi, cost.counts)
    print(f"  {n} adds: {cost.issues} issues ({cost.counts['alu']} ALU, {cost.counts['global']} global), "
          f"{cost.bytes} bytes")


@suite.case
def reduction_cost_by_hand():
    """ReduceSum of (8, K) over K: 8 K float adds and 4 (8 K + 8) bytes moved, K / 4 times the
    loop body per lane (4 steps per trip, one 16-byte load; the trip count K / 4 worked out from
    the machine code too)."""
    k_ = 96
    _, (k,) = a630_kernels(reduce_model(k_), "sum96")
    cost, per_mnemonic = totals(k)
    assert cost.bytes == 4 * (8 * k_ + 8), cost.bytes
    assert per_mnemonic.get("add.f", 0) == 8 * k_, per_mnemonic
    a = k["a630"]
    code = a630_cost.parse(a["disasm"])
    consts = {a["immediates_dword"] + i: v for i, v in enumerate(a["immediates"])}
    assert [a630_cost.derive_trips(code, s, e, consts) for s, e in a630_cost.loops_of(code)] == [k_ // 4], a["disasm"]
    print(f"  8 x {k_} sum: {cost.issues} issues, {cost.bytes} bytes")


def half_matmul_model(m: int, k: int, n: int) -> Path:
    g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "mm",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT16, [m, k]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT16, [k, n])],
                          [helper.make_tensor_value_info("c", TensorProto.FLOAT16, [m, n])])
    return lib.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), WORK / f"mm{m}x{k}x{n}.onnx")


@suite.case
def half_products_accumulate_with_one_fma_each():
    """An fp16 MatMul (16 x K) (K x 16): every multiply-add is one float `mad.f32` (the halves
    widened, their product exact in float), none is a half multiply and a float add; the
    reduce loop takes 4 steps per trip (K / 4 trips, worked out from the machine code too)."""
    m, k_, n = 16, 64, 16
    _, (k,) = a630_kernels(half_matmul_model(m, k_, n), "mm")
    _, per_mnemonic = totals(k)
    assert per_mnemonic.get("mad.f32", 0) == m * n * k_, per_mnemonic
    assert per_mnemonic.get("mul.f", 0) == 0 and per_mnemonic.get("add.f", 0) == 0, per_mnemonic
    a = k["a630"]
    code = a630_cost.parse(a["disasm"])
    consts = {a["immediates_dword"] + i: v for i, v in enumerate(a["immediates"])}
    assert a["loop_trips"] == [k_ // 4], a["loop_trips"]
    assert [a630_cost.derive_trips(code, s, e, consts) for s, e in a630_cost.loops_of(code)] == [k_ // 4], a["disasm"]
    # Each half is widened once where it is loaded, not once per product: with 4 x 4 output
    # tiles, 8 per 16 multiply-adds.
    assert per_mnemonic.get("cov.f16f32", 0) <= m * n * k_ // 2, per_mnemonic
    print(f"  {m} x {k_} x {n}: {per_mnemonic['mad.f32']} mad.f32, {per_mnemonic.get('cov.f16f32', 0)} cov.f16f32")


@suite.case
def two_counters_agree_on_the_test_models():
    """edgec's counter (ir3_cost.cc) and the independent one give the same per-class cost for
    every kernel of the test CNNs and the fp16 driving model; the trip counts the independent
    one works out from the machine code are the kernel IR's. The per-class tables are printed."""
    models = [lib.save_model(lib.make_cnn(seed=1, variant=v), WORK / f"cnn_{v}.onnx") for v in ("basic", "grouped")]
    path = WORK / "driving_fp16.onnx"
    if not path.exists():
        lib.run_cmd([sys.executable, ROOT / "samples/driving_model/build_model.py", "--dtype", "fp16", "--out", path],
                    timeout=600)
    models.append(path)
    for model in models:
        bundle, kernels = a630_kernels(model, Path(model).stem)
        derived_loops = 0
        for k in kernels:
            a = k["a630"]
            cost, trips = a630_cost.work_item_cost(a["disasm"], a["loop_trips"])
            mine = dict(cost.counts, issues=cost.issues, bytes=cost.bytes)
            theirs = {c: a["per_item"][c] for c in mine}
            assert mine == theirs, f"{k['name']}: independent {mine}, edgec {theirs}"
            consts = {a["immediates_dword"] + i: v for i, v in enumerate(a["immediates"])}
            code = a630_cost.parse(a["disasm"])
            derived = [a630_cost.derive_trips(code, s, e, consts) for s, e in a630_cost.loops_of(code)]
            assert not derived or derived == a["loop_trips"], (k["name"], derived, a["loop_trips"])
            derived_loops += len(derived)
        table = lib.run_cmd([EDGEC, "inspect", bundle, "--a630-cost"]).stdout
        assert "alu" in table and "global" in table and "image" in table, table
        print(f"  {Path(model).name}: {len(kernels)} kernels, {derived_loops} loops, both counters agree")
        table = table[table.index("a630 instruction issues per run"):]
        print("\n".join("    " + line for line in table.splitlines() if line.strip()))


@suite.case
def runtime_refuses_it_naming_the_kgsl_port():
    bundle = WORK / "sum64.bundle"
    if not bundle.exists():
        lib.run_cmd([EDGEC, "compile", reduce_model(64), "-o", bundle, "--target", "adreno630", "-q"])
    r = lib.run_cmd([EDGERT_RUN, bundle, "--output-dir", WORK / "out"], check=False)
    assert r.returncode != 0 and "kgsl" in (r.stdout + r.stderr), r.stdout + r.stderr


@suite.case
def missing_or_foreign_library_is_a_clear_error():
    model = reduce_model(64)
    env = dict(os.environ, EDGE_TINYMESA="/nonexistent/libtinymesa.so")
    r = lib.run_cmd([EDGEC, "compile", model, "-o", WORK / "x.bundle", "--target", "adreno630"], env=env,
                    check=False)
    assert r.returncode != 0 and "tinymesa==25.2.7.2" in r.stderr and "missing" in r.stderr, r.stderr
    env["EDGE_TINYMESA"] = sys.executable  # an ELF file with another build id
    r = lib.run_cmd([EDGEC, "compile", model, "-o", WORK / "x.bundle", "--target", "adreno630"], env=env,
                    check=False)
    assert r.returncode != 0 and "build id" in r.stderr and "tinymesa==25.2.7.2" in r.stderr, r.stderr
    # Every other target compiles without the library (and without Python finding it).
    env = dict(os.environ, EDGE_TINYMESA="/nonexistent/libtinymesa.so", EDGE_PYTHON="/bin/false")
    for target in ("x86_64", "opencl-adreno630"):
        lib.run_cmd([EDGEC, "compile", model, "-o", WORK / f"{target}.bundle", "--target", target, "-q"],
                    env=env)
    listed = lib.run_cmd([EDGEC, "--list-targets"]).stdout
    assert re.search(r"^adreno630\s+.*compile-only", listed, re.M), listed


if __name__ == "__main__":
    sys.exit(suite.main())
