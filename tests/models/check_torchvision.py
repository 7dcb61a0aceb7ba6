#!/usr/bin/env python3
"""Manual model check: torchvision models (random weights) and a small GRU model through
edgec + edgert-run, compared with onnxruntime (rtol 1e-3, atol 1e-4): ResNet-18,
SqueezeNet 1.1, MobileNetV2, MobileNetV3-Small, EfficientNet-B0, ShuffleNetV2 x1.0,
RegNetX-400MF, gru (see export_torchvision.py).

Needs Debian's python3-torchvision for the export (apt-get install python3-torchvision, or
./scripts/setup.sh --torchvision); this script calls
/usr/bin/python3 tests/models/export_torchvision.py when the .onnx files are missing, then
uses this interpreter (pyenv python3 with onnx + onnxruntime) for the rest.
    python3 tests/models/check_torchvision.py [--models resnet18,gru,...] [--threads N] [--bench]
Prints per model the max abs error against onnxruntime and a summary table last; exits 1
if any model fails (compile error: the first line of edgec's message, naming node and op).
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
ALL_MODELS = ("resnet18,squeezenet1_1,mobilenet_v2,mobilenet_v3_small,efficientnet_b0,shufflenet_v2_x1_0,"
              "regnet_x_400mf,gru")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=ALL_MODELS)
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
    summary = []
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
            max_err = max(float(np.abs(actual[k].astype(np.float64) - expected[k].astype(np.float64)).max())
                          for k in expected)
            scale = max(float(np.abs(v).max()) for v in expected.values())
            summary.append((name, (max_err, scale), None))
            lib.assert_close(actual, expected, RTOL, ATOL)
            if expected["output"].shape[-1] == 1000:
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
            reason = e.first_line() if isinstance(e, lib.ToolError) else str(e).splitlines()[0][:200]
            if summary and summary[-1][0] == name:
                summary[-1] = (name, summary[-1][1], reason)
            else:
                summary.append((name, None, reason))
            print(f"  {type(e).__name__}: {e}")
            print(f"[ FAIL ] {name}", flush=True)
    # max |output| shows the scale the error is measured against (atol 1e-4 means little
    # for outputs of 1e-9, which is why the export calibrates batch-norm statistics).
    print(f"\n{'model':<20} {'max abs err':>12} {'max |output|':>13}  result")
    for name, err, reason in summary:
        e, sc = ("-", "-") if err is None else (f"{err[0]:.3g}", f"{err[1]:.3g}")
        print(f"{name:<20} {e:>12} {sc:>13}  {'pass' if reason is None else 'FAIL: ' + reason}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
