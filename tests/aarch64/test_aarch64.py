#!/usr/bin/env python3
"""aarch64 end to end, under qemu-user: what the device gets from scripts/build_aarch64.sh.

  - the device tools are aarch64 and fully static (no interpreter, no NEEDED); they and the
    runtime libraries link no LLVM / protobuf; libedgert.so needs only libc-level libraries
  - models compiled with `edgec --target aarch64` (code over a page, so ADRP page
    relocations of the flat linker are exercised) run through the static edgert-run under
    qemu-aarch64 with no QEMU_LD_PREFIX, compared with onnxruntime on this x86-64 machine
    (rtol 1e-4 / atol 1e-5, as tests/e2e/test_cnn.py); the aarch64 and x86-64 results are
    also compared with each other (same tolerance)
  - an application built against the installed package (tests/aarch64/consumer,
    find_package(edgert)) runs with the static and with the shared libedgert (dynamically
    linked: QEMU_LD_PREFIX=/usr/aarch64-linux-gnu), and with libedgert_opencl (the opencl
    component) linked too; without it an OpenCL bundle is refused naming libedgert_opencl,
    with it the bundle passes the port check and fails for want of an OpenCL device
  - target checks: an x86-64 bundle on aarch64 and an aarch64 bundle on x86-64 are refused,
    naming both architectures; an aarch64-fp16 bundle runs on a CPU with FP16 (qemu "max")
    and is refused on a Cortex-A53 (ARMv8.0) naming the bundle's target and the machine's
    features, where the baseline aarch64 bundle of the same model runs; likewise an
    aarch64-dotprod int8 conv (sdot) on "max" and a Cortex-A53, bit-exact to onnxruntime
  - edgert-bench runs under qemu (--json)

Environment (set by ctest, see tests/CMakeLists.txt): EDGE_HOST_EDGEC, EDGE_HOST_EDGERT_RUN,
EDGE_AARCH64_BUILD_DIR (scripts/build_aarch64.sh's folder), EDGE_QEMU, EDGE_AARCH64_SYSROOT.
    python3 tests/aarch64/test_aarch64.py [case-name substring ...]"""
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402

import edge_testlib as lib  # noqa: E402

suite = lib.Suite("aarch64")
RTOL, ATOL = 1e-4, 1e-5


HOST_EDGEC = lib.env_path("EDGE_HOST_EDGEC")
HOST_RUN = lib.env_path("EDGE_HOST_EDGERT_RUN")
XDIR = lib.env_path("EDGE_AARCH64_BUILD_DIR")
QEMU = os.environ.get("EDGE_QEMU") or shutil.which("qemu-aarch64") or "qemu-aarch64"
SYSROOT = os.environ.get("EDGE_AARCH64_SYSROOT", "/usr/aarch64-linux-gnu")
RUN = XDIR / "device_runtime" / "edgert-run"
BENCH = XDIR / "device_runtime" / "edgert-bench"
INSTALL = XDIR / "install"
WORK = lib.work_dir("aarch64")


def cross_tool(name):
    """aarch64-linux-gnu-NAME (binutils for the target)."""
    path = shutil.which(f"aarch64-linux-gnu-{name}")
    if not path:
        raise AssertionError(f"aarch64-linux-gnu-{name} not found (apt-get install binutils-aarch64-linux-gnu)")
    return path


def qemu(cmd, cpu=None, ld_prefix=False, check=True, extra_env=None):
    """Runs an aarch64 program under qemu-user. Without ld_prefix the environment carries no
    QEMU_LD_PREFIX, so only a static binary can run."""
    env = {k: v for k, v in os.environ.items() if k != "QEMU_LD_PREFIX"}
    if ld_prefix:
        env["QEMU_LD_PREFIX"] = SYSROOT
    env.update(extra_env or {})
    return lib.run_cmd([QEMU, *(["-cpu", cpu] if cpu else []), *cmd], check=check, env=env)


def compile_for(model, name, target):
    bundle = WORK / f"{name}.{target}.bundle"
    lib.run_cmd([HOST_EDGEC, "compile", lib.save_model(model, WORK / f"{name}.onnx"), "-o", bundle,
                 "--target", target, "-q"])
    return bundle


def run_with(runner, bundle, inputs, out_name, output_names, cpu=None):
    """edgert-run (host path, or the aarch64 one under qemu) -> {output: ndarray}."""
    out_dir = WORK / out_name
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    args = [bundle, *lib.write_inputs(inputs, WORK / f"{out_name}_in"), "--output-dir", out_dir]
    if runner == "aarch64":
        qemu([RUN, *args], cpu=cpu)
    else:
        lib.run_cmd([HOST_RUN, *args])
    return lib.read_outputs(out_dir, output_names)


def code_size(bundle):
    import json
    info = json.loads(lib.run_cmd([HOST_EDGEC, "inspect", bundle, "--json"]).stdout)
    assert info["target"]["arch"] == "AArch64", info["target"]
    return sum(s["size"] for s in info["sections"] if s["kind"] == "Code")


def refused(res, *words):
    text = res.stderr + res.stdout
    assert res.returncode == 1, f"expected exit 1, got {res.returncode}:\n{text}"
    for w in words:
        assert w in text, f"message does not mention {w!r}:\n{text}"
    print("    refused: " + text.strip().splitlines()[0])


def image(batch=1, size=32, seed=7):
    return np.random.default_rng(seed).standard_normal((batch, 3, size, size)).astype(np.float32)


# ---------------------------------------------------------------- the binaries

@suite.case
def device_tools_are_static_aarch64():
    readelf = cross_tool("readelf")
    for tool in (RUN, BENCH, INSTALL / "bin" / "edgert-run", INSTALL / "bin" / "edgert-bench"):
        header = lib.run_cmd([readelf, "-h", tool]).stdout
        assert re.search(r"Machine:\s+AArch64", header), f"{tool}: not aarch64\n{header}"
        program = lib.run_cmd([readelf, "-l", "-d", tool]).stdout
        assert "INTERP" not in program and "(NEEDED)" not in program, f"{tool} is not static:\n{program}"
    for f in ("bin/edgert-run", "bin/edgert-bench", "lib/libedgert.so", "lib/libedgert.a"):
        how = "installed" if f.endswith(".a") else "installed, stripped"
        print(f"    {f} ({how}): {(INSTALL / f).resolve().stat().st_size} bytes")


@suite.case
def runtime_links_no_llvm_or_protobuf():
    readelf, nm = cross_tool("readelf"), cross_tool("nm")
    allowed = re.compile(r"^(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux-aarch64)\.so[.\d]*$")
    shared = (INSTALL / "lib" / "libedgert.so").resolve()
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", lib.run_cmd([readelf, "-d", shared]).stdout)
    bad = [n for n in needed if not allowed.match(n)]
    assert not bad, f"libedgert.so needs {bad}"
    print(f"    libedgert.so NEEDED: {needed}")
    exported = [ln.split()[0] for ln in
                lib.run_cmd([nm, "-D", "--defined-only", "--format=posix", shared]).stdout.splitlines() if ln.strip()]
    others = [s for s in exported if not s.startswith("edgert_")]
    assert "edgert_run" in exported and not others, f"libedgert.so exports more than the C API: {others[:10]}"
    print(f"    libedgert.so exports {len(exported)} symbols, all edgert_*")
    for path in (RUN, BENCH, INSTALL / "lib" / "libedgert.a", shared):
        symbols = lib.run_cmd([nm, "-A", path], check=False).stdout
        hits = [ln for ln in symbols.splitlines() if re.search(r"llvm|protobuf", ln.split(":")[-1], re.I)]
        assert not hits, f"{path}: {hits[:5]}"


# ---------------------------------------------------------------- models vs onnxruntime

@suite.case
def cnn_across_code_pages_matches_onnxruntime():
    for variant in ("basic", "grouped"):
        model = lib.make_cnn(seed=3, variant=variant, batch=2, size=33)
        bundle = compile_for(model, f"cnn_{variant}", "aarch64")
        size = code_size(bundle)
        # Over one page: the kernels at the start reach constants after the code with ADRP
        # page deltas > 0 (tests/unit/compiler_link_aarch64_test.cc checks the arithmetic).
        assert size > 4096, f"code is {size} bytes: too small to need ADRP across pages"
        inputs = {"image": image(batch=2, size=33)}
        expected = lib.ort_run(model, inputs)
        actual = run_with("aarch64", bundle, inputs, f"cnn_{variant}_a64", list(expected))
        print(f"    {variant}: {size} bytes of aarch64 code")
        lib.assert_close(actual, expected, RTOL, ATOL)
        host = run_with("x86", compile_for(model, f"cnn_{variant}", "x86_64"), inputs, f"cnn_{variant}_x86",
                        list(expected))
        for name in expected:
            diff = float(np.abs(actual[name].astype(np.float64) - host[name]).max())
            print(f"    {name}: aarch64 vs x86-64 max abs difference {diff:.3g}")
        lib.assert_close(actual, host, RTOL, ATOL)


@suite.case
def installed_package_static_and_shared():
    model = lib.make_cnn(seed=5, variant="basic", batch=1, size=32)
    bundle = compile_for(model, "consumer_cnn", "aarch64")
    inputs = {"image": image(seed=11)}
    expected = lib.ort_run(model, inputs)["probabilities"]
    in_bin = WORK / "consumer_in.bin"
    inputs["image"].tofile(in_bin)
    opencl_bundle = compile_for(model, "consumer_cnn", "opencl")
    for kind in ("static", "shared", "opencl_static", "opencl_shared"):
        exe = XDIR / "consumer" / f"consumer_{kind}"
        out_bin = WORK / f"consumer_{kind}.bin"
        res = qemu([exe, bundle, in_bin, out_bin], ld_prefix=True)
        print(f"    consumer_{kind}: {res.stdout.strip()}")
        actual = np.fromfile(out_bin, dtype=np.float32).reshape(expected.shape)
        lib.assert_close({"probabilities": actual}, {"probabilities": expected}, RTOL, ATOL)
        # The opencl port is there only where libedgert_opencl is linked (no OpenCL under qemu).
        res = qemu([exe, opencl_bundle, in_bin, out_bin], ld_prefix=True, check=False)
        print(f"    consumer_{kind} on an OpenCL bundle: {res.stderr.strip()}")
        assert res.returncode == 1, res
        if kind.startswith("opencl"):
            assert "no OpenCL device" in res.stderr, res.stderr
        else:
            assert "libedgert_opencl" in res.stderr, res.stderr
    # The shared one really loads libedgert.so: without the target's root qemu cannot run it.
    res = qemu([XDIR / "consumer" / "consumer_shared", bundle, in_bin, WORK / "x.bin"], check=False)
    assert res.returncode != 0, "consumer_shared ran without QEMU_LD_PREFIX: is it dynamically linked?"
    needed = lib.run_cmd([cross_tool("readelf"), "-d", XDIR / "consumer" / "consumer_shared"]).stdout
    assert "libedgert.so" in needed, needed


# ---------------------------------------------------------------- target checks

def fp16_model():
    """float16 Max / Min / IsNaN-select: code that differs with +fullfp16, exact results."""
    import onnx
    from onnx import TensorProto, helper
    shape = [4, 37]
    nodes = [helper.make_node("Max", ["a", "b"], ["mx"]), helper.make_node("Min", ["a", "b"], ["mn"]),
             helper.make_node("IsNaN", ["a"], ["nan"]), helper.make_node("Where", ["nan", "mn", "mx"], ["y"])]
    graph = helper.make_graph(nodes, "fp16_minmax",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT16, shape) for n in ("a", "b")],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape).astype(np.float16)
    a[0, :5] = np.nan
    return model, {"a": a, "b": rng.standard_normal(shape).astype(np.float16)}


@suite.case
def fp16_target_runs_with_fp16_and_is_refused_without():
    model, inputs = fp16_model()
    expected = lib.ort_run(model, inputs)
    fp16 = compile_for(model, "fp16", "aarch64-fp16")
    base = compile_for(model, "fp16", "aarch64")
    actual = run_with("aarch64", fp16, inputs, "fp16_max", ["y"])  # qemu "max": has FP16
    lib.assert_close(actual, expected, 0, 0)
    res = qemu([RUN, fp16, *lib.write_inputs(inputs, WORK / "fp16_a53_in"), "--output-dir", WORK],
               cpu="cortex-a53", check=False)
    refused(res, "bundle targets AArch64 (cpu generic, features neon,fp16,fullfp16)", "this machine lacks",
            "(AArch64, features neon,")
    lib.assert_close(run_with("aarch64", base, inputs, "fp16_base_a53", ["y"], cpu="cortex-a53"), expected, 0, 0)


def qlinear_conv_model():
    """Two QLinearConvs (uint8 activations, per-channel int8 weights, 3x3 padded: the border
    reads the zero point) and their inputs. The second reads an intermediate, stored
    channels-last: its channel groups are what a dot instruction loads."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(11)
    w = rng.integers(-127, 128, size=(8, 8, 3, 3)).astype(np.int8)
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "sx"), numpy_helper.from_array(np.array(131, np.uint8), "zx"),
             numpy_helper.from_array(w, "w"), numpy_helper.from_array(rng.uniform(0.001, 0.004, 8).astype(np.float32), "sw"),
             numpy_helper.from_array(np.zeros(8, np.int8), "zw"), numpy_helper.from_array(np.array(0.3, np.float32), "sy"),
             numpy_helper.from_array(np.array(120, np.uint8), "zy"),
             numpy_helper.from_array(rng.integers(-3000, 3000, 8).astype(np.int32), "b")]
    nodes = [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"], ["h"], pads=[1, 1, 1, 1]),
             helper.make_node("QLinearConv", ["h", "sy", "zy", "w", "sw", "zw", "sy", "zy", "b"], ["y"], pads=[1, 1, 1, 1])]
    graph = helper.make_graph(nodes, "qconv", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 8, 9, 9])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 8, 9, 9])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model, {"x": rng.integers(0, 256, size=(1, 8, 9, 9)).astype(np.uint8)}


@suite.case
def dotprod_target_runs_with_dotprod_and_is_refused_without():
    """aarch64-dotprod's int8 conv (sdot) runs on qemu "max" bit-exact to onnxruntime and to
    the plain aarch64 bundle; a Cortex-A53 (ARMv8.0, no HWCAP_ASIMDDP) refuses it naming
    dotprod and runs the aarch64 one."""
    model, inputs = qlinear_conv_model()
    expected = lib.ort_run(model, inputs)
    dot = compile_for(model, "qconv", "aarch64-dotprod")
    base = compile_for(model, "qconv", "aarch64")
    lib.assert_close(run_with("aarch64", dot, inputs, "qconv_dot_max", ["y"], cpu="max"), expected, 0, 0)
    lib.assert_close(run_with("aarch64", base, inputs, "qconv_base_max", ["y"], cpu="max"), expected, 0, 0)
    res = qemu([RUN, dot, *lib.write_inputs(inputs, WORK / "qconv_a53_in"), "--output-dir", WORK],
               cpu="cortex-a53", check=False)
    refused(res, "bundle targets AArch64 (cpu generic, features neon,dotprod)", "this machine lacks", "dotprod")
    lib.assert_close(run_with("aarch64", base, inputs, "qconv_base_a53", ["y"], cpu="cortex-a53"), expected, 0, 0)


@suite.case
def wrong_architecture_is_refused_naming_both():
    model = lib.make_simple_model([("x", (2, 3)), ("z", (2, 3))], "Add", name="add")
    inputs = {"x": np.ones((2, 3), np.float32), "z": np.ones((2, 3), np.float32)}
    x86 = compile_for(model, "add", "x86_64")
    a64 = compile_for(model, "add", "aarch64")
    args = lambda b, tag: [b, *lib.write_inputs(inputs, WORK / f"{tag}_in"), "--output-dir", WORK]  # noqa: E731
    refused(qemu([RUN, *args(x86, "x86_on_a64")], check=False), "bundle targets X86_64", "this machine is AArch64")
    refused(lib.run_cmd([HOST_RUN, *args(a64, "a64_on_x86")], check=False), "bundle targets AArch64",
            "this machine is X86_64")


@suite.case
def bench_runs_under_qemu():
    import json
    bundle = compile_for(lib.make_cnn(seed=1, size=16), "bench", "aarch64")
    res = qemu([BENCH, bundle, "--json", "--warmup", "1", "--iters", "3"])
    line = [ln for ln in res.stdout.splitlines() if ln.strip().startswith("{")][-1]
    stats = json.loads(line)
    assert stats["median_ms"] > 0, stats
    print(f"    median {stats['median_ms']:.2f} ms under qemu (emulated: not a device figure)")


if __name__ == "__main__":
    sys.exit(suite.main())
