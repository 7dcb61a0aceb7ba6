#!/usr/bin/env python3
"""Hexagon DSP end to end, under qemu-hexagon: what scripts/build_hexagon.sh builds.

  - edgert-run for Hexagon is a static Hexagon executable (no interpreter, no NEEDED) that
    defines every symbol it uses (freestanding: no C or C++ library exists for it here), and
    the runtime's code (libedgert.a) stays under 64 KB
  - float CNNs compiled with `edgec --target hexagon-v65` run
    through it under qemu-hexagon, compared with onnxruntime on this machine (rtol 1e-3 /
    atol 1e-4, the CPU targets' tolerance for the self-test); --repeat gives bit-identical runs
  - what the DSP has no instruction for and LLVM would call a helper for, expanded inline by
    edgec: floor / ceil / round / integer division and remainder exact to onnxruntime, sqrt,
    exp, sigmoid, tanh, fmod within the tolerance; float <-> half conversions (in integer
    operations) bit-exact to numpy over every half and every tie
  - a model that would need a helper (double arithmetic) is refused by edgec naming it; a
    Hexagon bundle on this machine's runtime and an x86-64 bundle on the Hexagon one are
    refused naming both sides; --threads 5 is refused (the port runs on at most 4 threads)
  - the hexagon port's worker threads (clone threads under qemu, ports/hexagon/fixed_pool.cc):
    the float CNNs on 2 and 4 threads give outputs bit-identical to 1 thread's
  - the instruction counter (qemu_insn_count/count.py, tests/hexagon/README.md): HVX and
    scalar instructions assembled here are classified as such (immext, duplex); a loop of
    known length counts exactly 2 packets / 4 instructions / 1 HVX per iteration; one run of
    a float CNN: kernels + edgert-run add up, no HVX, the same kernel counts from --repeat 2-1
    and 3-2; the per-vCPU mode counts the known loop the same; on 2 threads each thread's
    packets add up to the run's and the longer is under 55% of one thread's
  - libedgert_skel.so, what the DSP's FastRPC loader opens: a Hexagon shared object exporting
    the skeleton's two entry points, no NEEDED, no TEXTREL, undefined symbols only from
    ports/hexagon/fastrpc/skel_undefined_allowlist.txt, under 64 KB stripped; and its skeleton
    (the same object, in tests/hexagon/fastrpc_call.cc) called as FastRPC calls it: the
    outputs of a bundle opened from a buffer match onnxruntime in both the handle and the
    static form, and malformed calls return their error codes

Environment (set by ctest, see tests/CMakeLists.txt): EDGE_HOST_EDGEC, EDGE_HOST_EDGERT_RUN,
EDGE_HEXAGON_BUILD_DIR (scripts/build_hexagon.sh's folder), EDGE_QEMU_HEXAGON.
    python3 tests/hexagon/test_hexagon.py [case-name substring ...]"""
import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import edge_testlib as lib  # noqa: E402

suite = lib.Suite("hexagon")
RTOL, ATOL = 1e-3, 1e-4


HOST_EDGEC = lib.env_path("EDGE_HOST_EDGEC")
HOST_RUN = lib.env_path("EDGE_HOST_EDGERT_RUN")
XDIR = lib.env_path("EDGE_HEXAGON_BUILD_DIR")
QEMU = os.environ.get("EDGE_QEMU_HEXAGON") or shutil.which("qemu-hexagon") or "qemu-hexagon"
RUN = XDIR / "device_runtime" / "edgert-run"
LIB = XDIR / "device_runtime" / "libedgert.a"
SKEL = XDIR / "device_runtime" / "libedgert_skel.so"
CALL = XDIR / "device_runtime" / "fastrpc-call"
ALLOWLIST = Path(__file__).resolve().parents[2] / "ports" / "hexagon" / "fastrpc" / "skel_undefined_allowlist.txt"
WORK = lib.work_dir("hexagon")


def llvm_tool(name):
    path = shutil.which(f"{name}-19") or shutil.which(name)
    if not path:
        raise AssertionError(f"{name}-19 not found (apt-get install llvm-19)")
    return path


def qemu(args, check=True):
    return lib.run_cmd([QEMU, RUN, *args], check=check)


def compile_for(model, name, target, check=True):
    bundle = WORK / f"{name}.{target}.bundle"
    res = lib.run_cmd([HOST_EDGEC, "compile", lib.save_model(model, WORK / f"{name}.onnx"), "-o", bundle,
                       "--target", target], check=check)
    return bundle if check else res


def run_hexagon(bundle, inputs, out_name, output_names, extra=()):
    out_dir = WORK / out_name
    shutil.rmtree(out_dir, ignore_errors=True)
    qemu([bundle, *lib.write_inputs(inputs, WORK / f"{out_name}_in"), "--output-dir", out_dir, *extra])
    return lib.read_outputs(out_dir, output_names)


def refused(res, *words):
    text = res.stderr + res.stdout
    assert res.returncode == 1, f"expected exit 1, got {res.returncode}:\n{text}"
    for w in words:
        assert w in text, f"message does not mention {w!r}:\n{text}"
    print("    refused: " + text.strip().splitlines()[0])


def image(seed=7):
    return np.random.default_rng(seed).standard_normal((1, 3, 32, 32)).astype(np.float32)


# ---------------------------------------------------------------- the binaries

@suite.case
def edgert_run_is_a_static_freestanding_hexagon_program():
    readelf = llvm_tool("llvm-readelf")
    header = lib.run_cmd([readelf, "-h", RUN]).stdout
    assert re.search(r"Machine:\s+Qualcomm Hexagon", header), f"{RUN}: not Hexagon\n{header}"
    program = lib.run_cmd([readelf, "-l", "-d", RUN]).stdout
    assert "INTERP" not in program and "(NEEDED)" not in program, f"{RUN} is not static:\n{program}"
    undefined = [l for l in lib.run_cmd([llvm_tool("llvm-nm"), "-u", RUN]).stdout.splitlines() if l.strip()]
    assert not undefined, f"{RUN} leaves symbols undefined: {undefined}"
    # What a DSP application links: the runtime library's code and data (no tool, no libc).
    size = lib.run_cmd([llvm_tool("llvm-size"), "-t", LIB]).stdout.strip().splitlines()[-1].split()
    text, data = int(size[0]), int(size[1])
    print(f"    libedgert.a: {text} bytes of code, {data} of data; edgert-run {RUN.stat().st_size} bytes (not stripped)")
    assert text + data < 64 * 1024, f"the Hexagon runtime is {text + data} bytes, over 64 KB"
    usage = qemu(["--help"]).stdout
    assert "--input NAME=FILE.npy" in usage and "--output-dir" in usage, usage


# ---------------------------------------------------------------- models vs onnxruntime

@suite.case
def float_cnns_match_onnxruntime():
    x = {"image": image()}
    for variant, targets in (("basic", ("hexagon-v65",)), ("grouped", ("hexagon-v65",))):
        model = lib.make_cnn(seed=3, variant=variant)
        expected = lib.ort_run(model, x)
        for target in targets:
            bundle = compile_for(model, f"cnn_{variant}", target)
            info = lib.run_cmd([HOST_EDGEC, "inspect", bundle, "--json"]).stdout
            assert '"Hexagon"' in info and '"hexagon"' in info, info[:400]
            print(f"    {variant} on {target}:")
            got = run_hexagon(bundle, x, f"cnn_{variant}_{target}", list(expected), extra=["--repeat", "2"])
            lib.assert_close(got, expected, rtol=RTOL, atol=ATOL)
            # Each thread runs its fixed share of every parallel launch: the same bits.
            for threads in ("2", "4"):
                split = run_hexagon(bundle, x, f"cnn_{variant}_{target}_t{threads}", list(expected),
                                    extra=["--repeat", "2", "--threads", threads])
                for name in expected:
                    assert split[name].tobytes() == got[name].tobytes(), f"{variant}: --threads {threads} differs in {name}"
            print(f"    {variant}: --threads 2 and 4 bit-identical to 1")


def elementwise_model():
    shape = [4, 37]
    nodes = [helper.make_node("Mul", ["x", "x"], ["x2"])]
    outs = []
    for op in ("Sqrt", "Floor", "Ceil", "Round", "Exp", "Sigmoid", "Tanh"):
        nodes.append(helper.make_node(op, ["x" if op != "Sqrt" else "x2"], [op.lower()]))
        outs.append(helper.make_tensor_value_info(op.lower(), TensorProto.FLOAT, shape))
    nodes.append(helper.make_node("Mod", ["x", "y"], ["fmod"], fmod=1))
    outs.append(helper.make_tensor_value_info("fmod", TensorProto.FLOAT, shape))
    for op, name, attrs in (("Div", "idiv", {}), ("Mod", "imod", {}), ("Mod", "ifmod", {"fmod": 1})):
        nodes.append(helper.make_node(op, ["a", "b"], [name], **attrs))
        outs.append(helper.make_tensor_value_info(name, TensorProto.INT32, shape))
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
           helper.make_tensor_value_info("y", TensorProto.FLOAT, shape),
           helper.make_tensor_value_info("a", TensorProto.INT32, shape),
           helper.make_tensor_value_info("b", TensorProto.INT32, shape)]
    model = helper.make_model(helper.make_graph(nodes, "hexagon_inline_helpers", ins, outs),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


@suite.case
def inline_expansions_match_onnxruntime():
    rng = np.random.default_rng(11)
    x = rng.uniform(-20, 20, (4, 37)).astype(np.float32)
    # Halves (round to even), signed zeros, integral values past 2^23, a small value.
    x[0, :10] = [0.5, -0.5, 1.5, 2.5, -2.5, 0.0, -0.0, 1e-3, -1e-3, 3.0]
    x[1, :6] = [3e7, -3e7, 16777216.0, 8388608.5, 8388607.5, -8388607.5]
    y = rng.uniform(0.5, 7, (4, 37)).astype(np.float32) * np.where(rng.random((4, 37)) < 0.5, -1, 1).astype(np.float32)
    a = rng.integers(-100000, 100000, (4, 37)).astype(np.int32)
    a[0, :4] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, -7, 7]
    b = rng.integers(-40, 40, (4, 37)).astype(np.int32)
    b[b == 0] = 9
    b[0, :4] = [3, -3, 2, -2]
    inputs = {"x": x, "y": y, "a": a, "b": b}
    model = elementwise_model()
    expected = lib.ort_run(model, inputs)
    for target in ("hexagon-v65",):
        got = run_hexagon(compile_for(model, "inline", target), inputs, f"inline_{target}", list(expected))
        exact = ("floor", "ceil", "round", "idiv", "imod", "ifmod")
        lib.assert_close({k: got[k] for k in exact}, {k: expected[k] for k in exact}, rtol=0, atol=0)
        rest = [k for k in expected if k not in exact]
        lib.assert_close({k: got[k] for k in rest}, {k: expected[k] for k in rest}, rtol=RTOL, atol=ATOL)


@suite.case
def half_conversions_bit_exact_to_numpy():
    """The DSP has no float <-> half instruction: edgec converts in integer operations. Every
    one of the 65536 halves to float and back, the midpoints between neighbouring halves (ties
    to even), values just off them, past the largest half (65504 -> 65520 -> inf), subnormals
    and NaN payloads, bit-exact to numpy's conversions (NaN compared as NaN)."""
    every = np.arange(65536, dtype=np.uint16).view(np.float16)
    finite = np.sort(np.unique(every[np.isfinite(every)].astype(np.float32)))
    mid = (finite[:-1].astype(np.float64) + finite[1:]) / 2  # exact in float32: 11 + 1 bits
    mid = mid.astype(np.float32)
    xs = np.concatenate([every.astype(np.float32), mid, np.nextafter(mid, np.float32(np.inf)),
                         np.nextafter(mid, np.float32(-np.inf)),
                         np.float32([65504, 65519.99, 65520, 1e9, -1e9, np.inf, -np.inf, 1e-8, -1e-8, 2.9e-8,
                                     3e-8, 1e-40, -0.0])]).astype(np.float32)
    n = len(xs)
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["hin"], ["f"], to=TensorProto.FLOAT)]
    model = helper.make_model(helper.make_graph(
        nodes, "half_conversions",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("hin", TensorProto.FLOAT16, [65536])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT16, [n]),
         helper.make_tensor_value_info("f", TensorProto.FLOAT, [65536])]), opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    got = run_hexagon(compile_for(model, "half", "hexagon-v65"), {"x": xs, "hin": every}, "half", ["h", "f"])
    with np.errstate(over="ignore"):  # past 65520: inf, as intended
        to_half = xs.astype(np.float16)
    for name, actual, expected in (("float -> half", got["h"], to_half),
                                   ("half -> float", got["f"], every.astype(np.float32))):
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(actual), nan), f"{name}: NaN positions differ"
        bits = {2: np.uint16, 4: np.uint32}[expected.itemsize]
        wrong = np.flatnonzero(actual[~nan].view(bits) != expected[~nan].view(bits))
        assert wrong.size == 0, f"{name}: {wrong.size} differ, first {actual[~nan][wrong[0]]} vs {expected[~nan][wrong[0]]}"
        print(f"    {name}: {actual.size} values bit-exact to numpy ({int(nan.sum())} NaN)")


# ---------------------------------------------------------------- instruction counting (qemu_insn_count/)

sys.path.insert(0, str(Path(__file__).resolve().parent / "qemu_insn_count"))
import count as insn_count  # noqa: E402

# Each packet with (instructions, HVX instructions) as the counter must see them.
HVX_SNIPPET = [("{ v0.w = vadd(v1.w,v2.w) }", 1, 1), ("{ v1:0.w = vadd(v3:2.w,v5:4.w) }", 1, 1),
               ("{ v0 = vmem(r0+#0) }", 1, 1), ("{ vmem(r1+#1) = v2 }", 1, 1),
               ("{ v0.w = vrmpy(v1.ub,r2.b) }", 1, 1), ("{ v0.w += vrmpy(v1.ub,v2.b) }", 1, 1),
               ("{ v0 = vsplat(r1) }", 1, 1), ("{ r0 = vextract(v1,r2) }", 1, 1),
               ("{ q0 = vcmp.gt(v1.w,v2.w) }", 1, 1), ("{ v0 = vmux(q0,v1,v2) }", 1, 1),
               ("{ vtmp.h = vgather(r0,m0,v1.h).h\n vmem(r2+#0) = vtmp.new }", 2, 2),
               ("{ v0.cur = vmem(r0+#0)\n v3.w = vadd(v0.w,v1.w) }", 2, 2),
               ("{ v0 = vand(q0,r1) }", 1, 1), ("{ v1:0 = vshuff(v2,v3,r4) }", 1, 1)]
SCALAR_SNIPPET = [("{ r0 = add(r1,r2) }", 1, 0), ("{ r1:0 = vaddh(r3:2,r5:4) }", 1, 0),
                  ("{ r1:0 = vrmpyh(r3:2,r5:4) }", 1, 0), ("{ r0 = vsplatb(r1) }", 1, 0),
                  ("{ r0 = ##12345678 }", 1, 0),  # immext + transfer: one instruction
                  ("{ r0 = add(r0,#1); r1 = add(r1,#1) }", 2, 0),  # a duplex: one word, two
                  ("{ r0 = sfmpy(r1,r2) }", 1, 0), ("{ r0 = memw(r1+#4) }", 1, 0),
                  ("{ p0 = any8(vcmpb.eq(r1:0,r3:2)) }", 1, 0),
                  ("{ r0 = #0; r1 = #1 }", 2, 0),  # a duplex whose word lies in HVX-load space
                  ("{ r2 = add(r2,#1)\n v0.w = vadd(v1.w,v2.w) }", 2, 1)]


@suite.case
def insn_counter_classifies_hvx_and_scalar_instructions():
    # Assembled here, split into packets from the bytes and disassembled as count.py does.
    snippet = HVX_SNIPPET + SCALAR_SNIPPET
    src = WORK / "classify.s"
    src.write_text("".join(text + "\n" for text, _, _ in snippet))
    obj, text_bin = WORK / "classify.o", WORK / "classify.bin"
    lib.run_cmd([llvm_tool("llvm-mc"), "-triple=hexagon", "-mcpu=hexagonv65", "-mattr=+hvxv65,+hvx-length128b",
                 "-filetype=obj", src, "-o", obj])
    lib.run_cmd([llvm_tool("llvm-objcopy"), "-O", "binary", "--only-section=.text", obj, text_bin])
    packets = insn_count.split_packets(text_bin.read_bytes())
    assert len(packets) == len(snippet), f"{len(packets)} packets for {len(snippet)}"
    disasm = insn_count.disassemble([raw for _, raw in packets])
    for (text, insns, hvx), (_, raw) in zip(snippet, packets):
        got = insn_count.packet_counts(disasm[raw], raw)
        assert got == (insns, hvx), f"{text!r} ({raw.hex()}): {got} instructions/HVX, expected {(insns, hvx)}: {disasm[raw]}"
    print(f"    {len(snippet)} packets: {sum(h for _, _, h in snippet)} HVX instructions found as HVX, scalar ones not")


def known_loop(iters, per_vcpu=False):
    exe = WORK / f"known_loop_{iters}"
    lib.run_cmd(["clang-19", "--target=hexagon-unknown-linux-musl", "-mcpu=hexagonv65", "-mhvx=v65", "-mhvx-length=128b",
                 "-O1", "-ffreestanding", "-nostdlib", "-static", "-fuse-ld=lld", f"-DITERS={iters}",
                 Path(__file__).resolve().parent / "qemu_insn_count" / "known_loop.c", "-o", exe])
    return insn_count.count_program(exe, [], QEMU, WORK / "insn_count", per_vcpu=per_vcpu)


@suite.case
def insn_counter_counts_a_known_loop():
    # Per iteration 2 packets, 4 instructions, 1 HVX (known_loop.c), so the difference of two
    # runs is exact; each whole run is the loop plus a few packets of start and exit.
    (small, small_pk), (big, _) = known_loop(1000), known_loop(3000)
    print(f"    1000 iterations: {small}; 3000: {big}")
    assert big["packets"] - small["packets"] == 2 * 2000, (small, big)
    assert big["instructions"] - small["instructions"] == 4 * 2000, (small, big)
    assert big["hvx"] - small["hvx"] == 2000, (small, big)
    assert 4000 <= small["instructions"] <= 4000 + 16 and small["hvx"] == 1000, small
    loop = {addr: (n, insns) for addr, (n, insns) in small_pk.items() if n == 1000}
    assert len(loop) == 2, f"expected the loop's two packets to run 1000 times each: {small_pk}"
    kinds = sorted(sum(insn_count.is_hvx(i) for i in insns) for _, insns in loop.values())
    assert kinds == [0, 1], f"the loop's packets: {loop}"
    # The per-vCPU mode (count.py --threads) counts blocks, not packets: the same counts.
    per_vcpu, per_vcpu_pk = known_loop(1000, per_vcpu=True)
    assert per_vcpu == small and per_vcpu_pk == small_pk, (per_vcpu, small)


@suite.case
def insn_counter_one_run_of_a_float_cnn():
    bundle = compile_for(lib.make_cnn(seed=3, variant="basic"), "cnn_count", "hexagon-v65")
    inputs = [str(a) for a in lib.write_inputs({"image": image()}, WORK / "count_in")]
    figures = []
    for base in (1, 2):
        out = WORK / f"count_r{base}.json"
        args = [str(bundle), *inputs, "--repeat", str(base), "--runner", str(RUN),
                "--edgec", str(HOST_EDGEC), "--qemu", str(QEMU), "--work", str(WORK / "insn_count"), "--json", str(out)]
        assert insn_count.main(args) == 0
        figures.append(json.loads(out.read_text()))
    one, again = figures
    total = one["one_run"]["instructions"]
    kernels = sum(k["instructions"] for k in one["kernels"])
    assert kernels + one["edgert_run"]["instructions"] == total, one
    # Float on v65 is scalar; the kernels are nearly all of a run; start-up is not in it.
    assert one["one_run"]["hvx"] == 0, one["one_run"]
    assert kernels >= 0.99 * total, (kernels, total)
    assert one["whole_process"]["instructions"] > total, one
    # Two differences, (2)-(1) and (3)-(2), count the same kernel instructions.
    assert [k["instructions"] for k in one["kernels"]] == [k["instructions"] for k in again["kernels"]], \
        (one["kernels"], again["kernels"])
    # On 2 threads (count.py --threads 2): each thread's packets, adding up to the run's; the
    # kernels' work split about evenly (each takes one share), the split costing little.
    out = WORK / "count_t2.json"
    assert insn_count.main([str(bundle), *inputs, "--threads", "2", "--runner", str(RUN), "--edgec", str(HOST_EDGEC),
                            "--qemu", str(QEMU), "--work", str(WORK / "insn_count_t2"), "--json", str(out)]) == 0
    two = json.loads(out.read_text())
    threads = [t["packets"] for t in two["per_thread"]]
    assert len(threads) == 2 and sum(threads) == two["one_run"]["packets"], two["per_thread"]
    assert two["longest_thread"]["packets"] == max(threads)
    assert max(threads) < 0.55 * one["one_run"]["packets"], (threads, one["one_run"])
    assert two["one_run"]["packets"] < 1.02 * one["one_run"]["packets"], (two["one_run"], one["one_run"])
    print(f"    2 threads: {threads} packets (1 thread: {one['one_run']['packets']})")


# ---------------------------------------------------------------- refusals

@suite.case
def a_model_needing_a_helper_is_refused_naming_it():
    # Double arithmetic: LLVM calls __hexagon_adddf3, which no DSP program here has.
    shape = [8]
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["p", "q"], ["r"])], "f64_add",
        [helper.make_tensor_value_info("p", TensorProto.DOUBLE, shape),
         helper.make_tensor_value_info("q", TensorProto.DOUBLE, shape)],
        [helper.make_tensor_value_info("r", TensorProto.DOUBLE, shape)]), opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    res = compile_for(model, "f64_add", "hexagon-v65", check=False)
    text = res.stderr + res.stdout
    assert res.returncode != 0, f"edgec accepted a model whose code calls a helper:\n{text}"
    assert "calls '__hexagon_" in text and "float64" in text, f"the error does not name the helper:\n{text}"
    assert re.search(r"kernel k\d+_r calls", text), f"the error does not name the kernel (computing r):\n{text}"
    print("    refused: " + [l for l in text.splitlines() if "calls '" in l][0])


@suite.case
def bundles_for_the_other_machine_are_refused():
    model = lib.make_cnn(seed=3, variant="basic")
    x = {"image": image()}
    hexagon = compile_for(model, "cnn_refuse", "hexagon-v65")
    x86 = compile_for(model, "cnn_refuse", "x86_64")
    inputs = lib.write_inputs(x, WORK / "refuse_in")
    refused(lib.run_cmd([HOST_RUN, hexagon, *inputs, "--output-dir", WORK / "refuse_out"], check=False),
            "Hexagon", "hexagon")
    refused(qemu([x86, *inputs, "--output-dir", WORK / "refuse_out"], check=False), "X86_64", "hexagon")
    # v66 code (dfadd, ...) on a v65 DSP: the runtime here is built for v65
    v66 = compile_for(model, "cnn_refuse", "hexagon-v66")
    refused(qemu([v66, *inputs, "--output-dir", WORK / "refuse_out"], check=False), "v66")
    refused(qemu([hexagon, *inputs, "--output-dir", WORK / "refuse_out", "--threads", "5"], check=False),
            "at most 4 threads")
    refused(qemu([hexagon, "--output-dir", WORK / "refuse_out"], check=False), "image", "not given")


# ---------------------------------------------------------------- the FastRPC skeleton

def stripped_size(path):
    out = WORK / (path.name + ".stripped")
    lib.run_cmd([llvm_tool("llvm-strip"), "-o", out, path])
    return out.stat().st_size


@suite.case
def fastrpc_skel_is_a_hexagon_shared_object_under_64kb():
    readelf = llvm_tool("llvm-readelf")
    header = lib.run_cmd([readelf, "-h", SKEL]).stdout
    assert re.search(r"Type:\s+DYN", header), f"{SKEL}: not a shared object\n{header}"
    assert re.search(r"Machine:\s+Qualcomm Hexagon", header), f"{SKEL}: not Hexagon\n{header}"
    dynamic = lib.run_cmd([readelf, "-d", SKEL]).stdout
    assert "(NEEDED)" not in dynamic, f"{SKEL} needs libraries the DSP may not have:\n{dynamic}"
    assert "TEXTREL" not in dynamic, f"{SKEL} has relocations in its code:\n{dynamic}"
    assert "[libedgert_skel.so]" in dynamic, f"{SKEL}: no SONAME libedgert_skel.so\n{dynamic}"
    nm = llvm_tool("llvm-nm")
    exported = {l.split()[-1] for l in lib.run_cmd([nm, "-D", "--defined-only", SKEL]).stdout.splitlines()
                if re.search(r" [TtWw] ", l)}
    assert exported == {"edgert_skel_invoke", "edgert_skel_handle_invoke"}, f"exported functions: {sorted(exported)}"
    allowed = {l.split("#")[0].strip() for l in ALLOWLIST.read_text().splitlines()} - {""}
    undefined = {l.split()[-1] for l in lib.run_cmd([nm, "-D", "--undefined-only", SKEL]).stdout.splitlines() if l.strip()}
    assert undefined <= allowed, f"undefined and not in {ALLOWLIST.name}: {sorted(undefined - allowed)}"
    size = stripped_size(SKEL)
    print(f"    exports {sorted(exported)}; {len(undefined)} undefined, all allow-listed; {size} bytes stripped")
    assert size < 64 * 1024, f"libedgert_skel.so is {size} bytes stripped, over 64 KB"


NP_DTYPES = {"F32": np.float32, "I32": np.int32, "I64": np.int64, "U8": np.uint8, "I8": np.int8, "BOOL": np.bool_,
             "F16": np.float16}


def bundle_tensors(bundle):
    """The bundle's inputs and outputs in its order: [(name, numpy dtype, shape)] each."""
    import json
    info = json.loads(lib.run_cmd([HOST_EDGEC, "inspect", bundle, "--json"]).stdout)
    return tuple([(t["name"], np.dtype(NP_DTYPES[t["dtype"]]), tuple(t["shape"])) for t in info[key]]
                 for key in ("inputs", "outputs"))


def packed_offsets(tensors):
    """Where each tensor goes in a run buffer (edgert.idl: each at an offset rounded up to 64)."""
    offsets, end = [], 0
    for _, dtype, shape in tensors:
        start = (end + 63) // 64 * 64
        offsets.append(start)
        end = start + dtype.itemsize * int(np.prod(shape, dtype=np.int64))
    return offsets, end


def skel_run(bundle, inputs, name, static=False):
    ins, outs = bundle_tensors(bundle)
    in_offsets, in_len = packed_offsets(ins)
    blob = bytearray(in_len)
    for (tname, dtype, shape), off in zip(ins, in_offsets):
        a = np.ascontiguousarray(inputs[tname])
        assert a.dtype == dtype and a.shape == shape, f"{tname}: {a.dtype}{a.shape} vs the bundle's {dtype}{shape}"
        blob[off:off + a.nbytes] = a.tobytes()
    (WORK / f"{name}.in").write_bytes(bytes(blob))
    out_offsets, out_len = packed_offsets(outs)
    out_file = WORK / f"{name}.out"
    out_file.unlink(missing_ok=True)
    res = lib.run_cmd([QEMU, CALL, "run", bundle, WORK / f"{name}.in", out_file, str(out_len),
                       *(["--static"] if static else [])], check=False)
    assert res.returncode == 0, f"fastrpc-call failed ({res.returncode}):\n{res.stdout}{res.stderr}"
    raw = out_file.read_bytes()
    assert len(raw) == out_len, f"{len(raw)} output bytes, expected {out_len}"
    return {tname: np.frombuffer(raw, dtype, int(np.prod(shape, dtype=np.int64)), off).reshape(shape)
            for (tname, dtype, shape), off in zip(outs, out_offsets)}, (in_len, out_len)


@suite.case
def fastrpc_skel_calls_match_onnxruntime():
    # The CNN (one input, one output) and the model of mixed float / int32 inputs and outputs
    # (several tensors per buffer, at their 64-byte offsets).
    model = lib.make_cnn(seed=3, variant="basic")
    x = {"image": image(seed=5)}
    expected = lib.ort_run(model, x)
    bundle = compile_for(model, "cnn_skel", "hexagon-v65")
    for static in (False, True):
        got, sizes = skel_run(bundle, x, f"cnn_skel_{static}", static)
        print(f"    cnn, {'static' if static else 'handle'} form, {sizes[0]} bytes in, {sizes[1]} out:")
        lib.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    rng = np.random.default_rng(5)
    inputs = {"x": rng.uniform(-20, 20, (4, 37)).astype(np.float32),
              "y": rng.uniform(0.5, 7, (4, 37)).astype(np.float32),
              "a": rng.integers(-1000, 1000, (4, 37)).astype(np.int32),
              "b": rng.integers(1, 40, (4, 37)).astype(np.int32)}
    model = elementwise_model()
    expected = lib.ort_run(model, inputs)
    got, sizes = skel_run(compile_for(model, "inline_skel", "hexagon-v65"), inputs, "inline_skel")
    print(f"    {len(inputs)} inputs and {len(expected)} outputs, handle form, {sizes[0]} bytes in, {sizes[1]} out:")
    exact = ("floor", "ceil", "round", "idiv", "imod", "ifmod")
    lib.assert_close({k: got[k] for k in exact}, {k: expected[k] for k in exact}, rtol=0, atol=0)
    lib.assert_close({k: got[k] for k in expected if k not in exact},
                     {k: expected[k] for k in expected if k not in exact}, rtol=RTOL, atol=ATOL)


@suite.case
def fastrpc_skel_refuses_malformed_calls():
    bundle = compile_for(lib.make_cnn(seed=3, variant="basic"), "cnn_skel_bad", "hexagon-v65")
    ins, outs = bundle_tensors(bundle)
    res = lib.run_cmd([QEMU, CALL, "malformed", bundle, str(packed_offsets(ins)[1]), str(packed_offsets(outs)[1])],
                      check=False)
    text = res.stdout + res.stderr
    print("    " + "\n    ".join(text.strip().splitlines()))
    assert res.returncode == 0 and "UNEXPECTED" not in text, f"fastrpc-call malformed: exit {res.returncode}"
    assert text.count("(as expected)") >= 20, "fewer calls than the program makes: did it stop early?"


if __name__ == "__main__":
    sys.exit(suite.main())
