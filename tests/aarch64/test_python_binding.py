#!/usr/bin/env python3
"""The Python binding on aarch64: the runtime module cross-built by scripts/build_aarch64.sh
(EDGE_AARCH64_BUILD_DIR/python: edgert/_edgert.so and the package's .py files), imported by
Debian's arm64 python3.11 with its numpy (the root scripts/setup_aarch64_python.sh unpacks),
under qemu-aarch64.

  - the interpreter and the module are aarch64 (platform.machine(); the module loaded is the
    cross-built one, and readelf says AArch64)
  - a CNN compiled with `edgec --target aarch64` on this machine, run through the binding,
    matches onnxruntime computed here on x86-64 (rtol 1e-4 / atol 1e-5, as test_aarch64.py)
  - run(inputs), run(inputs, out=arrays) and run(float64 inputs, copy=True) give identical
    results, and out= writes into the caller's arrays
  - a float64 input without copy=True is an InvalidArgumentError naming the input

One qemu process does all the aarch64 work (starting python and numpy under qemu costs seconds).
Environment (set by ctest, see tests/CMakeLists.txt): EDGE_HOST_EDGEC, EDGE_AARCH64_BUILD_DIR,
EDGE_AARCH64_PYTHON_ROOT, EDGE_QEMU.
    python3 tests/aarch64/test_python_binding.py"""
import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402

import edge_testlib as lib  # noqa: E402

suite = lib.Suite("aarch64_python")
RTOL, ATOL = 1e-4, 1e-5

# Runs on aarch64 (argv: the bundle, the work folder): writes each way of running as an .npz
# and report.json.
ARM_SIDE = r'''
import json, platform, sys
from pathlib import Path
import numpy as np
import edgert

bundle_path, work = sys.argv[1], Path(sys.argv[2])
report = {"machine": platform.machine(), "python": platform.python_version(),
          "numpy": np.__version__, "module": edgert._edgert.__file__}
bundle = edgert.Bundle(bundle_path)
report["target"] = bundle.target["arch"]
report["inputs"] = [[t.name, str(t.dtype), list(t.shape)] for t in bundle.inputs]
inputs = dict(np.load(work / "inputs.npz"))
with bundle.context(threads=1) as ctx:
    plain = ctx.run(inputs)
    out = ctx.empty_outputs()
    returned = ctx.run(inputs, out=out)
    report["out_is_callers"] = all(returned[k] is out[k] for k in out)
    as_f64 = {k: v.astype(np.float64) for k, v in inputs.items()}
    copied = ctx.run(as_f64, copy=True)
    try:
        ctx.run(as_f64)
        report["float64_error"] = None
    except edgert.InvalidArgumentError as e:
        report["float64_error"] = str(e)
for name, result in (("plain", plain), ("out", out), ("copy", copied)):
    np.savez(work / f"{name}.npz", **result)
(work / "report.json").write_text(json.dumps(report))
'''


@suite.case
def binding_runs_a_model_under_qemu():
    edgec = lib.env_path("EDGE_HOST_EDGEC")
    pkg = lib.env_path("EDGE_AARCH64_BUILD_DIR") / "python"
    root = lib.env_path("EDGE_AARCH64_PYTHON_ROOT")
    qemu = os.environ.get("EDGE_QEMU") or shutil.which("qemu-aarch64") or "qemu-aarch64"
    module = pkg / "edgert" / "_edgert.so"
    python = root / "usr" / "bin" / "python3.11"
    assert python.is_file(), f"{python} missing: run scripts/setup_aarch64_python.sh"
    assert module.is_file(), f"{module} missing: scripts/build_aarch64.sh builds it when {root} exists"
    header = lib.run_cmd(["aarch64-linux-gnu-readelf", "-h", module]).stdout
    assert re.search(r"Machine:\s+AArch64", header), f"{module} is not aarch64:\n{header}"

    work = lib.work_dir("aarch64_python")
    model = lib.make_cnn(seed=4, variant="basic", batch=2, size=32)
    bundle = work / "cnn.aarch64.bundle"
    lib.run_cmd([edgec, "compile", lib.save_model(model, work / "cnn.onnx"), "-o", bundle,
                 "--target", "aarch64", "-q"])
    inputs = {"image": np.random.default_rng(9).standard_normal((2, 3, 32, 32)).astype(np.float32)}
    np.savez(work / "inputs.npz", **inputs)
    expected = lib.ort_run(model, inputs)
    script = work / "arm_side.py"
    script.write_text(ARM_SIDE)

    # The root's python3.11 finds its standard library and numpy from its own path; only the
    # package under test is added. No QEMU_LD_PREFIX from outside: -L names the root.
    env = {k: v for k, v in os.environ.items() if k not in ("QEMU_LD_PREFIX", "PYTHONHOME")}
    env["PYTHONPATH"] = str(pkg)
    res = lib.run_cmd([qemu, "-L", root, python, script, bundle, work], env=env)
    print(res.stdout, end="")
    report = json.loads((work / "report.json").read_text())
    print(f"    {report}")
    assert report["machine"] == "aarch64", report
    assert Path(report["module"]).resolve() == module.resolve(), report
    assert report["target"] == "aarch64", report
    assert report["inputs"] == [["image", "float32", [2, 3, 32, 32]]], report

    results = {name: dict(np.load(work / f"{name}.npz")) for name in ("plain", "out", "copy")}
    lib.assert_close(results["plain"], expected, RTOL, ATOL)
    for name in ("out", "copy"):
        for k, v in results["plain"].items():
            assert np.array_equal(results[name][k], v), f"run(..., {name}) differs from run() in {k}"
    assert report["out_is_callers"], "run(out=...) did not return the caller's arrays"
    error = report["float64_error"]
    assert error is not None, "a float64 input was accepted without copy=True"
    assert "image" in error, f"the error does not name the input: {error}"
    print(f"    float64 input refused: {error}")


if __name__ == "__main__":
    sys.exit(suite.main())
