#!/usr/bin/env python3
"""The opencl port beyond numerics (those run as the opencl_* copies of the e2e suites):
no compiling on the device once a bundle is prepared, device identity checks, code that
only an Adreno runs compiled by clang's OpenCL front end, and clear errors.

Implementations here: PoCL (platform "Portable Computing Language") and Mesa's rusticl on
llvmpipe (platform "rusticl", needs RUSTICL_ENABLE=llvmpipe). Neither has cl_khr_fp16.
References come from onnxruntime.

    python3 tests/opencl/test_opencl.py [case-name substring ...]"""
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402

import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_opencl")
WORK = lib.work_dir("opencl")
RTOL, ATOL = 1e-4, 1e-5
POCL = "Portable"
RUSTICL = "rusticl"


def env_for(platform):
    env = dict(os.environ)
    env["EDGERT_OPENCL_PLATFORM"] = platform
    env["RUSTICL_ENABLE"] = "llvmpipe"
    return env


def has_platform(platform):
    res = lib.run_cmd(["clinfo", "-l"], check=False, env=env_for(platform))
    lines = res.stdout.splitlines()
    for i, line in enumerate(lines):
        if platform.lower() in line.lower() and line.startswith("Platform"):
            return i + 1 < len(lines) and "Device" in lines[i + 1]
    return False


def cnn_model():
    model = lib.make_cnn(seed=5, variant="basic", size=24)
    rng = np.random.default_rng(5)
    inputs = {"image": rng.standard_normal((1, 3, 24, 24)).astype(np.float32)}
    return model, inputs


def compile_for(model, name, target):
    bundle = WORK / f"{name}.bundle"
    lib.run_cmd([lib.find_tool("edgec"), "compile", lib.save_model(model, WORK / f"{name}.onnx"), "-o", bundle,
                 "--target", target, "--dump-source", WORK / f"{name}.cl"])
    return bundle


def run(bundle, inputs, out, platform, extra=(), check=True):
    cmd = [lib.find_tool("edgert-run"), bundle, *lib.write_inputs(inputs, WORK / f"{out}_in"),
           "--output-dir", WORK / out, *extra]
    shutil.rmtree(WORK / out, ignore_errors=True)
    (WORK / out).mkdir(parents=True)
    return lib.run_cmd(cmd, check=check, env=env_for(platform))


def bench_json(bundle, platform, extra=()):
    res = lib.run_cmd([lib.find_tool("edgert-bench"), bundle, "--json", "--warmup", 1, "--iters", 3, *extra],
                      env=env_for(platform))
    return json.loads(res.stdout.strip().splitlines()[-1])


@suite.case
def prepared_bundle_builds_no_program():
    model, inputs = cnn_model()
    bundle = compile_for(model, "cnn", "opencl")
    prepared = WORK / "cnn.pocl.bundle"
    res = lib.run_cmd([lib.find_tool("edgert-prepare"), bundle, "-o", prepared], env=env_for(POCL))
    print("    " + res.stdout.strip().replace("\n", "\n    "))
    info = json.loads(lib.run_cmd([lib.find_tool("edgec"), "inspect", prepared, "--json"]).stdout)
    assert "Portable" in info["prepared"]["platform"], info["prepared"]
    assert any(s["format"] == "OpenCLBinary" for s in info["sections"]), info["sections"]
    unprepared = bench_json(bundle, POCL)
    stats = bench_json(prepared, POCL)
    print(f"    unprepared: {unprepared['programs_built']} built; prepared: {stats['programs_built']} built, "
          f"{stats['programs_loaded']} loaded")
    assert unprepared["programs_built"] >= 1, unprepared
    assert stats["programs_built"] == 0 and stats["programs_loaded"] >= 1, stats
    # Same numbers as from source, and as onnxruntime.
    expected = lib.ort_run(model, inputs)
    run(prepared, inputs, "prepared_out", POCL, ["--require-prepared", "--repeat", 3])
    run(bundle, inputs, "source_out", POCL)
    a = lib.read_outputs(WORK / "prepared_out", lib.output_names(model))
    b = lib.read_outputs(WORK / "source_out", lib.output_names(model))
    for k in a:
        assert np.array_equal(a[k], b[k]), f"{k}: prepared and from-source runs differ"
    lib.assert_close(a, expected, RTOL, ATOL)


@suite.case
def unprepared_bundle_refused_when_prepared_is_required():
    model, inputs = cnn_model()
    bundle = compile_for(model, "cnn_req", "opencl")
    res = run(bundle, inputs, "req_out", POCL, ["--require-prepared"], check=False)
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert "edgert-prepare" in res.stderr, res.stderr


@suite.case
def bundle_prepared_on_one_implementation_is_refused_by_the_other():
    if not has_platform(RUSTICL):
        raise lib.Skip("no rusticl device (mesa-opencl-icd with RUSTICL_ENABLE=llvmpipe)")
    model, inputs = cnn_model()
    bundle = compile_for(model, "cnn_x", "opencl")
    for made_on, run_on in ((POCL, RUSTICL), (RUSTICL, POCL)):
        prepared = WORK / f"cnn_x.{made_on}.bundle"
        lib.run_cmd([lib.find_tool("edgert-prepare"), bundle, "-o", prepared], env=env_for(made_on))
        res = run(prepared, inputs, "x_out", run_on, ["--require-prepared"], check=False)
        print(f"    prepared on {made_on}, run on {run_on}: exit {res.returncode}: {res.stderr.strip()[:160]}")
        assert res.returncode == 1 and "prepared for" in res.stderr, (res.returncode, res.stderr)
        # On its own implementation it runs and compiles nothing.
        stats = bench_json(prepared, made_on, ["--require-prepared"])
        assert stats["programs_built"] == 0, stats


@suite.case
def image_mode_keeps_tensors_in_images():
    model, inputs = cnn_model()
    expected = lib.ort_run(model, inputs)
    bundle = compile_for(model, "cnn_img", "opencl-image")
    info = json.loads(lib.run_cmd([lib.find_tool("edgec"), "inspect", bundle, "--json"]).stdout)
    images = [b for b in info["buffers"] if b["memory"] == "Image2D"]
    assert images, "opencl-image put no buffer in an image"
    for b in images:
        assert b["image_width"] * b["image_height"] * 4 >= int(np.prod(b["shape"] or [1])), b
    stats = bench_json(bundle, POCL)
    print(f"    {len(images)} image buffers; device memory: {stats['image_bytes']} bytes in images, "
          f"{stats['buffer_bytes']} in buffers")
    assert stats["image_bytes"] > 0, stats
    run(bundle, inputs, "img_out", POCL)
    lib.assert_close(lib.read_outputs(WORK / "img_out", lib.output_names(model)), expected, RTOL, ATOL)


@suite.case
def adreno630_kernels_compile_with_clang_and_need_fp16():
    clang = shutil.which("clang-19")
    if not clang:
        raise AssertionError("clang-19 is missing (scripts/setup.sh installs it)")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "samples" / "driving_model"))
    import build_model as bm
    models = {"cnn_a630": cnn_model()[0], "driving_fp16_a630": bm.finish(bm.build("fp32"), "fp16")}
    for name, model in models.items():
        bundle = compile_for(model, name, "opencl-adreno630")
        source = WORK / f"{name}.cl"
        text = source.read_text()
        assert "cl_khr_fp16" in text and ("read_image" in text or "image2d_t" in text), \
            f"{name}: the Adreno program uses no half arithmetic or no images"
        res = lib.run_cmd([clang, "-x", "cl", "-cl-std=CL1.2", "-fsyntax-only", "-Xclang", "-finclude-default-header",
                           "-Xclang", "-cl-ext=+cl_khr_fp16", source], check=False)
        assert res.returncode == 0, f"clang rejects {source}:\n{res.stderr[-3000:]}"
        kernels = text.count("__kernel")
        print(f"    {name}: {kernels} kernels, {len(text)} bytes of OpenCL C: clang accepts them")
        info = json.loads(lib.run_cmd([lib.find_tool("edgec"), "inspect", bundle, "--json"]).stdout)
        assert "cl_khr_fp16" in info["target"]["features"], info["target"]
    # PoCL has no cl_khr_fp16: the bundle is refused, naming the extension.
    res = run(WORK / "cnn_a630.bundle", cnn_model()[1], "a630_out", POCL, check=False)
    assert res.returncode == 1 and "cl_khr_fp16" in res.stderr, (res.returncode, res.stderr)


@suite.case
def no_opencl_platform_is_a_clear_error():
    model, inputs = cnn_model()
    bundle = compile_for(model, "cnn_none", "opencl")
    env = env_for(POCL)
    env["OCL_ICD_VENDORS"] = str(WORK / "no_vendors")  # the ICD loader finds no implementation
    (WORK / "no_vendors").mkdir(exist_ok=True)
    cmd = [lib.find_tool("edgert-run"), bundle, *lib.write_inputs(inputs, WORK / "none_in"),
           "--output-dir", WORK / "none_out"]
    res = lib.run_cmd(cmd, check=False, env=env)
    print(f"    exit {res.returncode}: {res.stderr.strip()[:200]}")
    assert res.returncode == 1 and "OpenCL" in res.stderr, (res.returncode, res.stderr)


if __name__ == "__main__":
    sys.exit(suite.main())
