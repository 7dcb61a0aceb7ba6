#!/usr/bin/env python3
"""Manual model check: torchvision ResNet-18 and SqueezeNet 1.1 (random weights) through
edgec + edgert-run, compared with onnxruntime (rtol 1e-3, atol 1e-4).

Needs Debian's python3-torchvision for the export (apt-get install python3-torchvision, or
./scripts/setup.sh --torchvision); this script calls
/usr/bin/python3 tests/models/export_torchvision.py when the .onnx files are missing, then
uses this interpreter (pyenv python3 with onnx + onnxruntime) for the rest.
    python3 tests/models/check_torchvision.py [--models resnet18,squeezenet1_1] [--threads N] [--bench]
Not part of ctest (the export needs the apt torch stack); see README."""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4
HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet18,squeezenet1_1")
    ap.add_argument("--model-dir", default=str(lib.REPO_ROOT / "tests" / "generated" / "models"))
    ap.add_argument("--export-python", default="/usr/bin/python3")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--bench", action="store_true", help="also run edgert-bench and time onnxruntime")
    args = ap.parse_args()
    model_dir = Path(args.model_dir)
    names = args.models.split(",")
    missing = [n for n in names if not (model_dir / f"{n}.onnx").exists() or not (model_dir / f"{n}.input.npy").exists()]
    if missing:
        print(f"exporting {missing} with {args.export_python}", flush=True)
        lib.run_cmd([args.export_python, HERE / "export_torchvision.py", "--out-dir", model_dir,
                     "--models", ",".join(missing)], timeout=900)
    work = lib.work_dir("check_torchvision")
    passed = failed = 0
    for name in names:
        model_path = model_dir / f"{name}.onnx"
        inputs = {"input": np.load(model_dir / f"{name}.input.npy")}
        print(f"[ RUN  ] {name}", flush=True)
        try:
            expected = lib.ort_run(model_path, inputs)
            t0 = time.time()
            res = lib.compile_model(model_path, work / f"{name}.bundle", timeout=1800)
            print(f"    compiled in {time.time() - t0:.1f}s")
            for line in res.stdout.splitlines():
                if "arena" in line or "kernel" in line:
                    print("    edgec: " + line.strip())
            actual = lib.run_bundle(work / f"{name}.bundle", inputs, work / f"{name}_out",
                                    list(expected), threads=args.threads)
            lib.assert_close(actual, expected, RTOL, ATOL)
            top_e = int(np.argmax(expected["output"])); top_a = int(np.argmax(actual["output"]))
            print(f"    top-1: edgert {top_a}, onnxruntime {top_e}")
            if args.bench and lib.find_tool("edgert-bench", required=False):
                cmd = [lib.find_tool("edgert-bench"), work / f"{name}.bundle", "--json", "--iters", "20",
                       "--input", f"input={model_dir / (name + '.input.npy')}"]
                if args.threads:
                    cmd += ["--threads", str(args.threads)]
                out = lib.run_cmd(cmd, timeout=900).stdout
                med = json.loads(out[out.index("{"):out.rindex("}") + 1])["median_ms"]
                import onnxruntime as ort
                so = ort.SessionOptions()
                if args.threads:
                    so.intra_op_num_threads = args.threads
                sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
                for _ in range(3):
                    sess.run(None, inputs)
                times = []
                for _ in range(20):
                    t = time.perf_counter(); sess.run(None, inputs); times.append((time.perf_counter() - t) * 1e3)
                ort_med = float(np.median(times))
                print(f"    median: edgert {med:.3f} ms, onnxruntime {ort_med:.3f} ms (edgert takes {med / ort_med:.2f}x onnxruntime's time)")
            passed += 1
            print(f"[  OK  ] {name}", flush=True)
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"  {type(e).__name__}: {e}")
            print(f"[ FAIL ] {name}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
