#!/usr/bin/python3
"""Export torchvision models (random weights, torch.manual_seed) and a small GRU model to
ONNX opset 13: ResNet-18, SqueezeNet 1.1, MobileNetV2, MobileNetV3-Small, EfficientNet-B0,
ShuffleNetV2 x1.0, RegNetX-400MF, ResNeXt-50 32x4d (torchvision 0.14 names) and "gru" (torch.nn.GRU, 2
layers, 32 -> 64, batch_first, on a (1,16,32) sequence, then a Linear on the last step).

Runs with Debian's /usr/bin/python3 and the apt package python3-torchvision (torch 1.13,
torchvision 0.14; not from pip):   apt-get install python3-torchvision
    /usr/bin/python3 tests/models/export_torchvision.py [--out-dir DIR] [--models resnet18,squeezenet1_1]
Batch-norm statistics: torchvision's random init leaves BN running stats at mean 0 / var 1,
and in eval mode the activations of MobileNet / EfficientNet then shrink layer by layer
(outputs ~1e-9 and ~1e-14: any error would pass atol 1e-4). So, unless --raw-bn, each
BatchNorm first gathers its running statistics (cumulative average, momentum=None) over 4
seeded random batches of 8 in train mode (dropout and stochastic depth stay off), as a
trained network has them; the outputs are then O(0.1-10).
Writes DIR/<model>.onnx and DIR/<model>.input.npy (a seeded float32 input: (1,3,224,224)
for the image models). Input "input", output "output" in every model.
tests/models/check_torchvision.py (pyenv python, onnxruntime) compiles and compares them."""
import argparse
import os
import sys

import numpy as np
import torch
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class GRUModel(torch.nn.Module):
    """A small sequence model: 2-layer GRU (exported as two ONNX GRU nodes) + Linear."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(32, 64, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.fc(out[:, -1])


IMAGE = (1, 3, 224, 224)
MODELS = {  # name -> (constructor, input shape)
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), IMAGE),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), IMAGE),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), IMAGE),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), IMAGE),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), IMAGE),
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), IMAGE),
    "regnet_x_400mf": (lambda: torchvision.models.regnet_x_400mf(weights=None), IMAGE),
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(weights=None), IMAGE),
    "gru": (GRUModel, (1, 16, 32)),
}


def calibrate_batch_norm(model, shape, seed, batches=4, batch_size=8):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    gen = torch.Generator().manual_seed(seed + 100)
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average
        bn.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, *shape[1:], generator=gen))
    model.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(REPO, "tests", "generated", "models"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--raw-bn", action="store_true", help="keep torchvision's initial BN statistics")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit(f"unknown model {name!r}; choose from {sorted(MODELS)}")
        torch.manual_seed(args.seed)
        make, shape = MODELS[name]
        model = make().eval()
        if not args.raw_bn:
            calibrate_batch_norm(model, shape, args.seed)
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(args.seed + 1))
        path = os.path.join(args.out_dir, f"{name}.onnx")
        with torch.no_grad():
            torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                              output_names=["output"], do_constant_folding=True)
        np.save(os.path.join(args.out_dir, f"{name}.input.npy"), x.numpy().astype(np.float32))
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
