#!/usr/bin/python3
"""Export torchvision models and a few sequence models (random weights, torch.manual_seed) to
ONNX opset 13.

Three sets:
  the check set (the default --models): ResNet-18, SqueezeNet 1.1, MobileNetV2, MobileNetV3-Small,
    EfficientNet-B0, ShuffleNetV2 x1.0, RegNetX-400MF, ResNeXt-50 32x4d (torchvision 0.14 names)
    and "gru" (torch.nn.GRU, 2 layers, 32 -> 64, batch_first, on a (1,16,32) sequence, then a
    Linear on the last step): tests/models/check_torchvision.py.
  the zoo (--models zoo; --list prints it): 25 architectures, full size, for
    `tests/bench/benchmark.py --zoo`. With --small, each is built scaled down (fewer blocks,
    narrower layers, 64x64-ish inputs, 10 classes) but from the same torchvision building
    blocks, so the ONNX op patterns are the same with a fraction of the weights and FLOPs:
    the ctest zoo_vs_onnxruntime checks those.
  the extras (--models extra; --list-extra prints them): 22 more architectures, full size only,
    for cliff sweeps (`benchmark.py --zoo --zoo-models NAME,...`): EXTRA below.

Runs with Debian's /usr/bin/python3 and the apt package python3-torchvision (torch 1.13,
torchvision 0.14; not from pip):   apt-get install python3-torchvision
    /usr/bin/python3 tests/models/export_torchvision.py [--out-dir DIR] [--models resnet18,squeezenet1_1|zoo|extra]
        [--small] [--list] [--list-extra]
Batch-norm statistics: torchvision's random init leaves BN running stats at mean 0 / var 1,
and in eval mode the activations of MobileNet / EfficientNet then shrink layer by layer
(outputs ~1e-9 and ~1e-14: any error would pass atol 1e-4). So, unless --raw-bn, each
BatchNorm first gathers its running statistics (cumulative average, momentum=None) over 4
seeded random batches of 8 in train mode (dropout and stochastic depth stay off), as a
trained network has them; the outputs are then O(0.1-10).
Writes DIR/<model>.onnx and DIR/<model>.input.npy (a seeded float32 input: (1,3,224,224)
for the full-size image models). Input "input", output "output" in every model.
tests/models/check_torchvision.py (pyenv python, onnxruntime) compiles and compares them."""
import argparse
import os
import sys
from functools import partial

import numpy as np
import torch
import torchvision
from torch import nn
from torchvision import models as tvm
from torchvision.models import inception as tv_inception
from torchvision.models import regnet as tv_regnet
from torchvision.models import convnext as tv_convnext
from torchvision.models import efficientnet as tv_efficientnet
from torchvision.models import mobilenetv3 as tv_mobilenetv3
from torchvision.models.detection import ssdlite as tv_ssdlite
from torchvision.models.segmentation import deeplabv3 as tv_deeplab
from torchvision.models.segmentation import fcn as tv_fcn
from torchvision.models._utils import IntermediateLayerGetter

# torchvision.models.googlenet is both a submodule and (as attribute) the constructor function.
tv_googlenet = sys.modules["torchvision.models.googlenet"]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class RecurrentModel(torch.nn.Module):
    """A small sequence model: a 2-layer torch.nn.GRU or LSTM (two ONNX GRU / LSTM nodes), 32
    features in, then a Linear on the last step."""

    def __init__(self, cell, hidden=64):
        super().__init__()
        self.rnn = cell(32, hidden, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(hidden, 10)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


def GRUModel():
    return RecurrentModel(torch.nn.GRU)


def LSTMModel():
    return RecurrentModel(torch.nn.LSTM)


class EncoderModel(torch.nn.Module):
    """A small transformer encoder (nn.TransformerEncoder, post-norm, GELU) + mean-pool + Linear."""

    def __init__(self, d_model=128, layers=2, heads=4):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, 10)

    def forward(self, x):
        return self.fc(self.encoder(x).mean(dim=1))


class SSDLiteShaped(nn.Module):
    """SSDLite's MobileNetV3 feature extractor (C4 split, 4 extra blocks) and its separable
    prediction heads; the per-level (N, A*K, H, W) -> (N, H*W*A, K) reshapes and transposes and
    the concat of the levels are what a detector exports. Output: boxes and class logits
    concatenated on the last axis (no anchors / NMS: those are postprocessing)."""

    def __init__(self, width_mult=1.0, num_classes=91):
        super().__init__()
        norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.03)
        backbone = (tvm.mobilenet_v3_large if width_mult == 1.0 else thin_mobilenet_v3_large)(
            width_mult=width_mult, norm_layer=norm, reduced_tail=True)
        self.features = tv_ssdlite._mobilenet_extractor(backbone, 6, norm)
        with torch.no_grad():
            # a batch of 2: the fresh model is in train mode, whose batch norm needs 2 values
            channels = [t.shape[1] for t in self.features(torch.zeros(2, 3, 64, 64)).values()]
        anchors = [6] * len(channels)
        self.head = tv_ssdlite.SSDLiteHead(channels, anchors, num_classes, norm)

    def forward(self, x):
        out = self.head(list(self.features(x).values()))
        return torch.cat([out["bbox_regression"], out["cls_logits"]], dim=2)


class SegmentationOut(nn.Module):
    """torchvision's segmentation models return a dict; export its "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def narrow_conv(conv_class, divisor):
    """A conv_block for torchvision's Inception modules that builds every conv with 1/divisor of
    the channels it is asked for (the image's 3 stay 3): the blocks hard-code their widths, and
    dividing all of them alike keeps the branches and concats consistent."""
    return lambda c_in, c_out, **kw: conv_class(c_in if c_in == 3 else c_in // divisor, c_out // divisor, **kw)


def small_inception_v3():
    """One or two of each Inception-v3 block (A: 1x1/5x5/double 3x3 + avg-pool branch, B: grid
    reduction, C: factorized 1x7/7x1, D: reduction, E: expanded 1x3/3x1), a quarter of the
    channels, behind a 2-conv stem (Inception3's own sizes, each / 4)."""
    b = tv_inception
    conv = narrow_conv(b.BasicConv2d, 4)
    return nn.Sequential(
        conv(3, 64, kernel_size=3, stride=2), conv(64, 192, kernel_size=3), nn.MaxPool2d(3, stride=2),
        b.InceptionA(192, 32, conv_block=conv), b.InceptionA(256, 64, conv_block=conv),
        b.InceptionB(288, conv_block=conv), b.InceptionC(768, 128, conv_block=conv),
        b.InceptionD(768, conv_block=conv), b.InceptionE(1280, conv_block=conv),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048 // 4, 10))


def small_googlenet():
    """GoogLeNet's stem and three of its Inception blocks (1x1 / 3x3 / 3x3-as-5x5 / pool
    branches), a quarter of the channels."""
    b = tv_googlenet
    conv = narrow_conv(b.BasicConv2d, 4)
    inc = partial(b.Inception, conv_block=conv)
    return nn.Sequential(
        conv(3, 64, kernel_size=7, stride=2, padding=3), nn.MaxPool2d(3, stride=2, ceil_mode=True),
        conv(64, 64, kernel_size=1), conv(64, 192, kernel_size=3, padding=1), nn.MaxPool2d(3, stride=2, ceil_mode=True),
        inc(192, 64, 96, 128, 16, 32, 32), inc(256, 128, 128, 192, 32, 96, 64), nn.MaxPool2d(3, stride=2, ceil_mode=True),
        inc(480, 192, 96, 208, 16, 48, 64),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(512 // 4, 10))


def narrow_resnet(block, layers, widths=(16, 32, 64, 128), num_classes=10, **kw):
    """torchvision's ResNet with stage widths `widths` instead of 64..512 (its _make_layer takes
    the width; the constructor does not)."""
    m = tvm.ResNet(block, layers, num_classes=num_classes, **kw)
    m.inplanes, m.dilation = widths[0], 1
    m.conv1 = nn.Conv2d(3, widths[0], kernel_size=7, stride=2, padding=3, bias=False)
    m.bn1 = nn.BatchNorm2d(widths[0])
    dilate = kw.get("replace_stride_with_dilation") or [False] * 3
    m.layer1 = m._make_layer(block, widths[0], layers[0])
    for i in range(1, 4):
        setattr(m, f"layer{i + 1}", m._make_layer(block, widths[i], layers[i], stride=2, dilate=dilate[i - 1]))
    m.fc = nn.Linear(widths[3] * block.expansion, num_classes)
    return m


def thin_mobilenet_v3_large(width_mult, **kw):
    """MobileNetV3-Large without the blocks that repeat their predecessor exactly (3 of 15):
    every kind of block is still there (residual or not, SE or not, ReLU / hard-swish, 3x3 / 5x5,
    strided, dilated), at 4/5 of the compile time."""
    setting, last = tv_mobilenetv3._mobilenet_v3_conf("mobilenet_v3_large", width_mult=width_mult,
                                                      dilated=kw.pop("dilated", False),
                                                      reduced_tail=kw.pop("reduced_tail", False))
    key = lambda c: (c.input_channels, c.kernel, c.expanded_channels, c.out_channels, c.use_se,  # noqa: E731
                     c.use_hs, c.stride, c.dilation)
    setting = [c for i, c in enumerate(setting) if i == 0 or key(c) != key(setting[i - 1])]
    return tv_mobilenetv3.MobileNetV3(setting, last, **kw)


def regnet(depth, w_0, w_a, w_m, group_width, se_ratio=None, num_classes=1000):
    params = tv_regnet.BlockParams.from_init_params(depth=depth, w_0=w_0, w_a=w_a, w_m=w_m,
                                                    group_width=group_width, se_ratio=se_ratio)
    return tv_regnet.RegNet(params, num_classes=num_classes,
                            norm_layer=partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))


def efficientnet(width_mult, depth_mult, dropout, num_classes=1000):
    setting, last = tv_efficientnet._efficientnet_conf("efficientnet_b0", width_mult=width_mult,
                                                       depth_mult=depth_mult)
    return tv_efficientnet.EfficientNet(setting, dropout, last_channel=last, num_classes=num_classes)


def convnext(widths, depths, num_classes=1000):
    cfg = tv_convnext.CNBlockConfig
    setting = [cfg(w, widths[i + 1] if i + 1 < len(widths) else None, d) for i, (w, d) in enumerate(zip(widths, depths))]
    return tv_convnext.ConvNeXt(setting, stochastic_depth_prob=0.0, num_classes=num_classes)


def deeplabv3_mobilenet(width_mult, num_classes, aspp_channels=256):
    """torchvision's deeplabv3_mobilenet_v3_large (dilated last stage, output stride 16, ASPP with
    rates 12/24/36 and image pooling, bilinear upsampling); aspp_channels other than 256 (the
    scaled-down one) narrows DeepLabHead (same layers: ASPP, 3x3 conv, BN, ReLU, 1x1
    classifier) and thins the backbone."""
    backbone = (tvm.mobilenet_v3_large if aspp_channels == 256 else thin_mobilenet_v3_large)(
        width_mult=width_mult, dilated=True)
    model = tv_deeplab._deeplabv3_mobilenetv3(backbone, num_classes, aux=False)
    if aspp_channels != 256:
        c_in = model.classifier[0].convs[0][0].in_channels
        model.classifier = nn.Sequential(
            tv_deeplab.ASPP(c_in, [12, 24, 36], aspp_channels),
            nn.Conv2d(aspp_channels, aspp_channels, 3, padding=1, bias=False), nn.BatchNorm2d(aspp_channels),
            nn.ReLU(), nn.Conv2d(aspp_channels, num_classes, 1))
    return SegmentationOut(model)


def small_fcn():
    """FCN: a dilated bottleneck ResNet (output stride 8) and FCNHead's 3x3 conv + 1x1 classifier,
    with one block per stage, a quarter of the widths, and a narrow head (FCNHead's in/4)."""
    backbone = narrow_resnet(tvm.resnet.Bottleneck, [1, 1, 1, 1], replace_stride_with_dilation=[False, True, True])
    backbone = IntermediateLayerGetter(backbone, return_layers={"layer4": "out"})
    head = nn.Sequential(nn.Conv2d(512, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Dropout(0.1), nn.Conv2d(32, 10, 1))
    return SegmentationOut(tv_fcn.FCN(backbone, head))


IMAGE = (1, 3, 224, 224)
SMALL = (1, 3, 64, 64)
ATTENTION = "grad"  # exported with gradients on: see export_model
# name -> (full-size constructor, input shape, scaled-down constructor, input shape[, export mode])
ZOO = {
    "resnet18": (lambda: tvm.resnet18(), IMAGE,
                 lambda: narrow_resnet(tvm.resnet.BasicBlock, [1, 1, 1, 1]), SMALL),
    "resnet50": (lambda: tvm.resnet50(), IMAGE,
                 lambda: narrow_resnet(tvm.resnet.Bottleneck, [1, 1, 1, 1]), SMALL),
    "resnext50_32x4d": (lambda: tvm.resnext50_32x4d(), IMAGE,
                        # 8 groups of 4 to 32 channels, as resnext50_32x4d's 32 groups of 4 to 32
                        lambda: narrow_resnet(tvm.resnet.Bottleneck, [1, 1, 1, 1], groups=8, width_per_group=16), SMALL),
    "regnet_x_400mf": (lambda: tvm.regnet_x_400mf(), IMAGE,
                       lambda: regnet(4, 24, 24.48, 2.54, 8, num_classes=10), SMALL),
    "regnet_y_400mf": (lambda: tvm.regnet_y_400mf(), IMAGE,
                       lambda: regnet(4, 24, 27.89, 2.09, 8, se_ratio=0.25, num_classes=10), SMALL),
    "shufflenet_v2_x1_0": (lambda: tvm.shufflenet_v2_x1_0(), IMAGE,
                           lambda: tvm.ShuffleNetV2([1, 2, 1], [16, 32, 64, 128, 256], num_classes=10), SMALL),
    "mobilenet_v2": (lambda: tvm.mobilenet_v2(), IMAGE,
                     # one block less per stage (11 of 17)
                     lambda: tvm.mobilenet_v2(width_mult=0.25, num_classes=10, inverted_residual_setting=[
                         [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2], [6, 64, 2, 2], [6, 96, 1, 1], [6, 160, 2, 2],
                         [6, 320, 1, 1]]), SMALL),
    "mobilenet_v3_small": (lambda: tvm.mobilenet_v3_small(), IMAGE,
                           lambda: tvm.mobilenet_v3_small(width_mult=0.5, num_classes=10), SMALL),
    "mobilenet_v3_large": (lambda: tvm.mobilenet_v3_large(), IMAGE,
                           lambda: thin_mobilenet_v3_large(0.25, num_classes=10), SMALL),
    "efficientnet_b0": (lambda: tvm.efficientnet_b0(), IMAGE,
                        lambda: efficientnet(0.25, 0.25, 0.2, num_classes=10), SMALL),
    "efficientnet_b3": (lambda: tvm.efficientnet_b3(), (1, 3, 300, 300),
                        lambda: efficientnet(0.3, 0.3, 0.3, num_classes=10), (1, 3, 80, 80)),
    "convnext_tiny": (lambda: tvm.convnext_tiny(), IMAGE,
                      lambda: convnext([16, 32, 64, 128], [1, 1, 2, 1], num_classes=10), SMALL),
    "densenet121": (lambda: tvm.densenet121(), IMAGE,
                    lambda: tvm.DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16,
                                         num_classes=10), SMALL),
    "inception_v3": (lambda: tvm.inception_v3(aux_logits=False, init_weights=True), (1, 3, 299, 299),
                     small_inception_v3, (1, 3, 75, 75)),
    "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True), IMAGE, small_googlenet, SMALL),
    "mnasnet1_0": (lambda: tvm.mnasnet1_0(), IMAGE, lambda: tvm.MNASNet(0.25, num_classes=10), SMALL),
    "squeezenet1_1": (lambda: tvm.squeezenet1_1(), IMAGE, lambda: tvm.squeezenet1_1(num_classes=10), SMALL),
    "vit_b_16": (lambda: tvm.vit_b_16(), IMAGE,
                 lambda: tvm.VisionTransformer(64, 16, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128,
                                               num_classes=10), SMALL, ATTENTION),
    "swin_t": (lambda: tvm.swin_t(), IMAGE,  # stochastic depth: identity in eval mode
               lambda: tvm.SwinTransformer([4, 4], 16, [2, 1, 1, 1], [1, 2, 4, 8], [4, 4], stochastic_depth_prob=0.0,
                                           num_classes=10), SMALL),
    "deeplabv3_mobilenet": (lambda: deeplabv3_mobilenet(1.0, 21), (1, 3, 256, 256),
                            lambda: deeplabv3_mobilenet(0.25, 10, aspp_channels=32), (1, 3, 96, 96)),
    "fcn_resnet50": (lambda: SegmentationOut(tvm.segmentation.fcn_resnet50(weights=None, weights_backbone=None,
                                                                           aux_loss=False)), IMAGE,
                     small_fcn, SMALL),
    "ssdlite_head": (lambda: SSDLiteShaped(1.0), (1, 3, 320, 320),
                     lambda: SSDLiteShaped(0.25, num_classes=10), (1, 3, 96, 96)),
    "gru": (GRUModel, (1, 16, 32), GRUModel, (1, 8, 32)),
    "lstm": (LSTMModel, (1, 16, 32), LSTMModel, (1, 8, 32)),
    "transformer_encoder": (lambda: EncoderModel(128, 2, 4), (1, 32, 128),
                            lambda: EncoderModel(64, 2, 4), (1, 16, 64), ATTENTION),
}
# Architectures beyond the zoo, full size only, for sweeps that look for cliffs in shapes nobody
# tuned for (`benchmark.py --zoo --zoo-models NAME,...` exports and times them; `--zoo` alone
# stays the 25 above): the wider RegNets (24-48 channels per group), ResNeXt-101 64x4d (64 groups
# of 4), the video ResNets (Conv3d: r3d 3x3x3, r(2+1)d (1,3,3) + (3,1,1)), the classic Flatten ->
# Linear heads (AlexNet, VGG), DeepLabV3's ASPP over 2048 channels, and more of each family.
# BENCHMARKS.md, "Architectures beyond the zoo": what they found (4.6x onnxruntime at worst).
VIDEO = (1, 3, 8, 112, 112)
EXTRA = {
    "regnet_x_800mf": (lambda: tvm.regnet_x_800mf(), IMAGE),
    "regnet_y_800mf": (lambda: tvm.regnet_y_800mf(), IMAGE),
    "regnet_x_1_6gf": (lambda: tvm.regnet_x_1_6gf(), IMAGE),
    "regnet_y_1_6gf": (lambda: tvm.regnet_y_1_6gf(), IMAGE),
    "resnext101_64x4d": (lambda: tvm.resnext101_64x4d(), IMAGE),
    "wide_resnet50_2": (lambda: tvm.wide_resnet50_2(), IMAGE),
    "efficientnet_b1": (lambda: tvm.efficientnet_b1(), IMAGE),
    "efficientnet_v2_s": (lambda: tvm.efficientnet_v2_s(), IMAGE),
    "mnasnet0_5": (lambda: tvm.mnasnet0_5(), IMAGE),
    "shufflenet_v2_x0_5": (lambda: tvm.shufflenet_v2_x0_5(), IMAGE),
    "shufflenet_v2_x2_0": (lambda: tvm.shufflenet_v2_x2_0(), IMAGE),
    "squeezenet1_0": (lambda: tvm.squeezenet1_0(), IMAGE),
    "densenet161": (lambda: tvm.densenet161(), IMAGE),
    "convnext_small": (lambda: tvm.convnext_small(), IMAGE),
    "maxvit_t": (lambda: tvm.maxvit_t(), IMAGE, ATTENTION),
    "vit_b_32": (lambda: tvm.vit_b_32(), IMAGE, ATTENTION),
    "alexnet": (lambda: tvm.alexnet(), IMAGE),
    "vgg11_bn": (lambda: tvm.vgg11_bn(), IMAGE),
    "lraspp_mobilenet_v3": (lambda: SegmentationOut(tvm.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), IMAGE),
    "deeplabv3_resnet50": (lambda: SegmentationOut(tvm.segmentation.deeplabv3_resnet50(
        weights=None, weights_backbone=None, aux_loss=False)), IMAGE),
    "r3d_18": (lambda: tvm.video.r3d_18(), VIDEO),
    "r2plus1d_18": (lambda: tvm.video.r2plus1d_18(), VIDEO),
}

CHECK_SET = ("resnet18,squeezenet1_1,mobilenet_v2,mobilenet_v3_small,efficientnet_b0,shufflenet_v2_x1_0,"
             "regnet_x_400mf,resnext50_32x4d,gru")


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


def export_model(name, out_dir, seed=0, small=False, raw_bn=False):
    if name in EXTRA:  # full size only: (constructor, input shape[, export mode])
        if small:
            sys.exit(f"{name} has no scaled-down variant (only the zoo's models have)")
        make, shape = EXTRA[name][:2]
        entry = (make, shape, None, None) + EXTRA[name][2:]
    else:
        entry = ZOO[name]
        make, shape = (entry[2], entry[3]) if small else (entry[0], entry[1])
    torch.manual_seed(seed)
    return export_module(make().eval(), name, shape, out_dir, seed, raw_bn,
                         with_grad=len(entry) > 4 and entry[4] == ATTENTION)


def export_module(model, name, shape, out_dir, seed=0, raw_bn=False, with_grad=False):
    """Writes out_dir/<name>.onnx (opset 13, input "input", output "output") and its seeded input
    out_dir/<name>.input.npy; the BN statistics first gathered on seeded batches unless raw_bn.
    Shared with export_timm.py."""
    if not raw_bn:
        calibrate_batch_norm(model, shape, seed)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 1))
    # Under torch.no_grad in eval mode, torch 1.13's nn.MultiheadAttention / TransformerEncoderLayer
    # take their fused "fast path" (torch._native_multi_head_attention), which has no ONNX
    # symbolic: the export fails. With gradients enabled (their weights require grad) they run
    # the ordinary ops, still in eval mode: the same function. (Train mode does not help:
    # torch.onnx.export switches the model to eval mode.)
    grad = torch.enable_grad() if with_grad else torch.no_grad()
    path = os.path.join(out_dir, f"{name}.onnx")
    with grad:
        torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    np.save(os.path.join(out_dir, f"{name}.input.npy"), x.numpy().astype(np.float32))
    return path, shape


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(REPO, "tests", "generated", "models"))
    ap.add_argument("--models", default=CHECK_SET,
                    help="comma-separated names, 'zoo' for the zoo's 25 or 'extra' for the architectures beyond it")
    ap.add_argument("--small", action="store_true", help="the scaled-down variants (the ctest's)")
    ap.add_argument("--list", action="store_true", help="print the zoo's names and input shapes")
    ap.add_argument("--list-extra", action="store_true", help="print the names and input shapes of the extras")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--raw-bn", action="store_true", help="keep torchvision's initial BN statistics")
    args = ap.parse_args()
    if args.list:
        for name, entry in ZOO.items():
            print(f"{name:<22} full {entry[1]}  small {entry[3]}")
        return
    if args.list_extra:
        for name, entry in EXTRA.items():
            print(f"{name:<22} full {entry[1]}")
        return
    names = list(ZOO) if args.models == "zoo" else list(EXTRA) if args.models == "extra" else args.models.split(",")
    for name in names:
        if name not in ZOO and name not in EXTRA:
            sys.exit(f"unknown model {name!r}; choose from {sorted(ZOO) + sorted(EXTRA)}")
    os.makedirs(args.out_dir, exist_ok=True)
    for name in names:
        path, _ = export_model(name, args.out_dir, args.seed, args.small, args.raw_bn)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)", flush=True)


if __name__ == "__main__":
    main()
