#!/usr/bin/env python3
"""The model zoo, scaled down, through edgec + edgert-run against onnxruntime (ctest
zoo_vs_onnxruntime).

tests/models/export_torchvision.py --models zoo --small exports the 25 architectures of the zoo
(ResNet, ResNeXt, RegNetX/Y, ShuffleNetV2, MobileNetV2/V3, EfficientNet, ConvNeXt, DenseNet,
Inception-v3, GoogLeNet, MNASNet, SqueezeNet, ViT, Swin, DeepLabV3, FCN, an SSDLite head, GRU,
LSTM, a transformer encoder) built from torchvision's own blocks with few blocks, narrow layers
and small inputs: the ONNX op patterns of the full-size models (which `tests/bench/benchmark.py
--zoo` times) at a small fraction of their FLOPs and weights, so the check stays cheap.
Each model is compiled for the host's default target, run once, and compared with onnxruntime
(CPU, graph optimizations off) on its seeded input: |edgert - ort| <= atol + rtol * |ort| with
rtol 1e-3 and atol 1e-4 + 1e-3 * max|ort output| (random-weight logits reach ~10-100; the
relative part of the tolerance alone would be blind where an output crosses zero).

The export needs Debian's torch stack (scripts/setup.sh --torchvision: python3-torchvision for
/usr/bin/python3; EDGE_TORCH_PYTHON names another interpreter); the rest runs in this one.
    python3 tests/models/zoo_vs_onnxruntime.py [NAME ...]   # all, or the models whose name contains NAME
EXPECTED_FAILURES names the models known to fail, with the reason; one of them that passes
fails the test, so the list cannot go stale."""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

HERE = Path(__file__).resolve().parent
RTOL, ATOL, ATOL_PER_SCALE = 1e-3, 1e-4, 1e-3
# name -> why it fails today (each one a bug to fix, then to remove from here).
EXPECTED_FAILURES = {}


def zoo_names(python):
    out = lib.run_cmd([python, HERE / "export_torchvision.py", "--list"], timeout=300).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def main():
    python = os.environ.get("EDGE_TORCH_PYTHON", "/usr/bin/python3")
    probe = lib.run_cmd([python, "-c", "import torch, torchvision"], check=False, timeout=300)
    if probe.returncode != 0:
        print(f"{python} cannot import torch / torchvision: run scripts/setup.sh --torchvision "
              f"(apt python3-torchvision) or set EDGE_TORCH_PYTHON\n{probe.stderr.strip()[-400:]}")
        return 1
    names = zoo_names(python)
    selected = [n for n in names if not sys.argv[1:] or any(a in n for a in sys.argv[1:])]
    unknown = set(EXPECTED_FAILURES) - set(names)
    if unknown:
        print(f"EXPECTED_FAILURES names models not in the zoo: {sorted(unknown)}")
        return 1
    work = lib.work_dir("zoo_vs_onnxruntime")
    models = work / "models"
    t0 = time.time()
    lib.run_cmd([python, HERE / "export_torchvision.py", "--small", "--out-dir", models,
                 "--models", ",".join(selected)], timeout=900)
    print(f"exported {len(selected)} scaled-down models in {time.time() - t0:.1f}s", flush=True)

    suite = lib.Suite("zoo")
    results = {}

    def check(name):
        model = models / f"{name}.onnx"
        inputs = {"input": np.load(models / f"{name}.input.npy")}
        try:
            expected = lib.ort_run(model, inputs)
            lib.compile_model(model, work / f"{name}.bundle", timeout=900)
            actual = lib.run_bundle(work / f"{name}.bundle", inputs, work / f"{name}_out", list(expected))
            scale = max(float(np.abs(v).max()) for v in expected.values())
            lib.assert_close(actual, expected, RTOL, ATOL + ATOL_PER_SCALE * scale)
        except (AssertionError, lib.ToolError) as e:
            results[name] = "fail"
            if name in EXPECTED_FAILURES:
                print(f"    expected failure ({EXPECTED_FAILURES[name]}): {str(e).splitlines()[0][:300]}")
                return
            raise
        results[name] = "pass"
        if name in EXPECTED_FAILURES:
            raise AssertionError(f"{name} passes: remove it from EXPECTED_FAILURES ({EXPECTED_FAILURES[name]})")

    for name in selected:
        case = (lambda n: lambda: check(n))(name)
        case.__name__ = name
        suite.case(case)
    status = suite.main([])
    passed = sum(1 for r in results.values() if r == "pass")
    print(f"zoo: {passed} of {len(selected)} models match onnxruntime; expected failures: "
          + (", ".join(f"{n} ({r})" for n, r in EXPECTED_FAILURES.items() if n in selected) or "none"))
    return status


if __name__ == "__main__":
    sys.exit(main())
