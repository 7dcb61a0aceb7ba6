#!/usr/bin/env python3
"""Ports as separately linked pieces: libedgert (the core and the cpu port) holds no OpenCL
code; libedgert_opencl (static and shared) is the opencl port, registering itself with the
core when an application links it; find_package(edgert) gives it as a component.

  - libedgert.so / libedgert.a define no OpenCL symbol and name no OpenCL library (the same
    check finds them in libedgert_opencl, so it can fail)
  - the runtime built here is installed (cmake --install build/device_runtime) and
    tests/aarch64/consumer, a find_package(edgert OPTIONAL_COMPONENTS opencl) application,
    is built for this machine against it: consumer_{static,shared} link the core only,
    consumer_opencl_{static,shared} link edgert::opencl / edgert::opencl_shared; a required
    component the runtime lacks fails the configure
  - the core-only consumers run a CPU bundle and refuse an OpenCL bundle with a message that
    names libedgert_opencl and its CMake target
  - the opencl consumers run the same CPU bundle and an OpenCL bundle prepared on PoCL
    (edgert-prepare; skipped without an OpenCL device unless EDGE_REQUIRE_OPENCL=1), against
    onnxruntime; the shared one needs libedgert_opencl.so although nothing calls into it
    (gcc here links with --as-needed by default)"""
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_port_libraries")
WORK = lib.work_dir("test_port_libraries")
# The port's code: its functions (edgert::opencl::..., edgert_opencl_register) and what it
# loads (libOpenCL, clGetPlatformIDs, ...). The core's verifier names the OpenCL code formats
# of bundle.fbs in its messages: those strings are not OpenCL code.
OPENCL_SYMBOL = re.compile(r"(?i:opencl)|^cl[A-Z]\w+$")
OPENCL_STRING = re.compile(r"libOpenCL|clGetPlatformIDs|clEnqueueNDRangeKernel")
RTOL, ATOL = 1e-4, 1e-5


def runtime_dir() -> Path:
    return lib.build_dir() / "device_runtime"


def opencl_built() -> bool:
    return any(runtime_dir().glob("libedgert_opencl.*"))


def opencl_findings(path: Path):
    """Symbols (nm, nm -D) and strings of `path` that belong to OpenCL code."""
    found = []
    for args in (["nm"], ["nm", "-D"]):
        res = lib.run_cmd([*args, path], check=False)
        found += [ln.split()[-1] for ln in res.stdout.splitlines()
                  if ln.split() and OPENCL_SYMBOL.search(ln.split()[-1])]
    found += [s for s in lib.run_cmd(["strings", "-n", "6", path]).stdout.splitlines() if OPENCL_STRING.search(s)]
    return found


@suite.case
def core_library_holds_no_opencl_code():
    core = [runtime_dir() / "libedgert.a"] + sorted(runtime_dir().glob("libedgert.so.*.*"))
    for f in core:
        found = opencl_findings(f)
        print(f"    {f.name}: {len(found)} OpenCL symbols or strings {found[:3]}")
        assert not found, f"{f} holds OpenCL code: {found[:10]}"
    if not opencl_built():
        raise lib.Skip("EDGE_PORTS has no opencl: no libedgert_opencl to check the detector on")
    for f in [runtime_dir() / "libedgert_opencl.a"] + sorted(runtime_dir().glob("libedgert_opencl.so.*.*")):
        found = opencl_findings(f)
        print(f"    {f.name}: {len(found)} OpenCL symbols or strings")
        assert found, f"the detector finds no OpenCL code in {f}: the check above proves nothing"


def install_and_build_consumer() -> Path:
    prefix, consumer = WORK / "install", WORK / "consumer"
    cache = (lib.build_dir() / "CMakeCache.txt").read_text()
    generator = re.search(r"^CMAKE_GENERATOR:INTERNAL=(.*)$", cache, re.M).group(1)
    lib.run_cmd(["cmake", "--install", runtime_dir(), "--prefix", prefix])
    lib.run_cmd(["cmake", "-S", lib.REPO_ROOT / "tests/aarch64/consumer", "-B", consumer, "-G", generator,
                 "-DCMAKE_BUILD_TYPE=Release", f"-Dedgert_DIR={prefix}/lib/cmake/edgert"])
    lib.run_cmd(["cmake", "--build", consumer])
    return consumer


CONSUMER = None


def consumer_dir() -> Path:
    global CONSUMER
    if CONSUMER is None:
        CONSUMER = install_and_build_consumer()
    return CONSUMER


@suite.case
def installed_package_gives_components():
    exes = sorted(p.name for p in consumer_dir().iterdir() if p.name.startswith("consumer_") and p.is_file())
    print(f"    built: {exes}")
    want = {"consumer_static", "consumer_shared"}
    if opencl_built():
        want |= {"consumer_opencl_static", "consumer_opencl_shared"}
    assert want <= set(exes), f"expected {sorted(want)}, built {exes}"
    # A component this runtime does not have is not found.
    probe = WORK / "probe"
    probe.mkdir(exist_ok=True)
    (probe / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(probe LANGUAGES C)\n"
        "find_package(edgert REQUIRED CONFIG COMPONENTS cpu nosuchport)\n")
    res = lib.run_cmd(["cmake", "-S", probe, "-B", probe / "b", f"-Dedgert_DIR={WORK}/install/lib/cmake/edgert"],
                      check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "nosuchport" in out, f"a missing component was accepted:\n{out[-2000:]}"
    print("    COMPONENTS nosuchport: refused at configure")


def cnn_case():
    model = lib.make_cnn(seed=5, variant="basic", batch=1, size=32)
    rng = np.random.default_rng(11)
    image = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    expected = lib.ort_run(model, {"image": image})["probabilities"]
    in_bin = WORK / "image.bin"
    image.tofile(in_bin)
    return model, in_bin, expected


def run_consumer(name, bundle, in_bin, expected, env=None):
    out_bin = WORK / f"{name}_{Path(bundle).stem}.bin"
    res = lib.run_cmd([consumer_dir() / name, bundle, in_bin, out_bin], env=env)
    actual = np.fromfile(out_bin, dtype=np.float32).reshape(expected.shape)
    lib.assert_close({"probabilities": actual}, {"probabilities": expected}, RTOL, ATOL)
    print(f"    {name} {Path(bundle).name}: {res.stdout.strip()}")


@suite.case
def core_runs_cpu_bundles_and_names_the_opencl_library():
    model, in_bin, expected = cnn_case()
    cpu_bundle = WORK / "cnn.bundle"
    lib.compile_model(model, cpu_bundle)
    for name in ("consumer_static", "consumer_shared"):
        run_consumer(name, cpu_bundle, in_bin, expected)
    cl_bundle = WORK / "cnn_opencl.bundle"
    lib.compile_model(model, cl_bundle, ["--target", "opencl"])
    for name in ("consumer_static", "consumer_shared"):
        res = lib.run_cmd([consumer_dir() / name, cl_bundle, in_bin, WORK / "x.bin"], check=False)
        print(f"    {name} {cl_bundle.name}: exit {res.returncode}: {res.stderr.strip()}")
        assert res.returncode == 1, f"{name} on an OpenCL bundle: exit {res.returncode}"
        assert "libedgert_opencl" in res.stderr and "edgert::opencl" in res.stderr, res.stderr


@suite.case
def opencl_library_runs_both():
    if not opencl_built():
        raise lib.Skip("EDGE_PORTS has no opencl")
    needed = lib.run_cmd(["readelf", "-d", consumer_dir() / "consumer_opencl_shared"]).stdout
    assert "libedgert_opencl.so" in needed, f"libedgert_opencl.so was dropped from the link:\n{needed}"
    model, in_bin, expected = cnn_case()
    cpu_bundle = WORK / "cnn.bundle"
    lib.compile_model(model, cpu_bundle)
    for name in ("consumer_opencl_static", "consumer_opencl_shared"):
        run_consumer(name, cpu_bundle, in_bin, expected)
    env = dict(os.environ)
    env.setdefault("EDGERT_OPENCL_PLATFORM", "Portable")  # PoCL (scripts/setup.sh installs it)
    cl_bundle = WORK / "cnn_opencl.bundle"
    lib.compile_model(model, cl_bundle, ["--target", "opencl"])
    prepared = WORK / "cnn_opencl.prepared.bundle"
    res = lib.run_cmd([lib.find_tool("edgert-prepare"), cl_bundle, "-o", prepared], env=env, check=False)
    if res.returncode != 0:
        if os.environ.get("EDGE_REQUIRE_OPENCL") == "1" or "no OpenCL device" not in res.stderr:
            raise lib.ToolError(f"edgert-prepare failed: {res.stderr}")
        raise lib.Skip(f"no OpenCL device: {res.stderr.strip()}")
    for name in ("consumer_opencl_static", "consumer_opencl_shared"):
        run_consumer(name, prepared, in_bin, expected, env=env)


if __name__ == "__main__":
    if not shutil.which("cmake"):
        print("cmake not on PATH")
        sys.exit(1)
    sys.exit(suite.main())
