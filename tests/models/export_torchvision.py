#!/usr/bin/python3
"""Export torchvision ResNet-18 and SqueezeNet 1.1 (random weights, torch.manual_seed) to
ONNX opset 13.

Runs with Debian's /usr/bin/python3 and the apt package python3-torchvision (torch 1.13,
torchvision 0.14; not from pip):   apt-get install python3-torchvision
    /usr/bin/python3 tests/models/export_torchvision.py [--out-dir DIR] [--models resnet18,squeezenet1_1]
Writes DIR/<model>.onnx and DIR/<model>.input.npy (a seeded (1,3,224,224) float32 input).
tests/models/check_torchvision.py (pyenv python, onnxruntime) compiles and compares them."""
import argparse
import os
import sys

import numpy as np
import torch
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {
    "resnet18": lambda: torchvision.models.resnet18(weights=None),
    "squeezenet1_1": lambda: torchvision.models.squeezenet1_1(weights=None),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(REPO, "tests", "generated", "models"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit(f"unknown model {name!r}; choose from {sorted(MODELS)}")
        torch.manual_seed(args.seed)
        model = MODELS[name]().eval()
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(args.seed + 1))
        path = os.path.join(args.out_dir, f"{name}.onnx")
        with torch.no_grad():
            torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                              output_names=["output"], do_constant_folding=True)
        np.save(os.path.join(args.out_dir, f"{name}.input.npy"), x.numpy().astype(np.float32))
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
