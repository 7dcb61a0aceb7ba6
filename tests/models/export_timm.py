#!/usr/bin/python3
"""Export timm architectures (random weights, torch.manual_seed) to ONNX opset 13, for cliff
sweeps in building blocks the zoo and its extras (export_torchvision.py) do not have:
`tests/bench/benchmark.py --zoo --zoo-models NAME,...` exports and times them.

TIMM below: ~40 architectures, each at an input size it accepts, smaller than its default
where it accepts any size (a short run); --list prints them. Any other name timm 0.9.16 knows
(timm.list_models()) exports too, at 224x224: --models NAME[,NAME...] [--size 160].

Runs with Debian's /usr/bin/python3 (torch 1.13, python3-torchvision) and timm 0.9.16, the
pure-Python wheel unpacked without its dependencies (it imports none of them for these
models): scripts/setup.sh --timm puts it in tests/generated/timm-0.9.16 (EDGE_TIMM_DIR
overrides), which this script puts on sys.path.
    /usr/bin/python3 tests/models/export_timm.py [--out-dir DIR] [--models NAME,...|all] [--list]
The export itself is export_torchvision.py's (BN statistics gathered on seeded batches, opset
13, input "input", output "output", a seeded DIR/<name>.input.npy)."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TIMM_DIR = os.environ.get("EDGE_TIMM_DIR", os.path.join(REPO, "tests", "generated", "timm-0.9.16"))


def image(size):
    return (1, 3, size, size)


# name -> (input shape, timm.create_model keyword arguments). 160x160 where the architecture takes
# any size; the transformers with a fixed grid (position embeddings, attention biases, windows)
# at their own size, or at img_size=160 where timm rebuilds the grid for it. torch 1.13 cannot
# export halonet (Unfold of a padded input) nor convmixer (padding="same": aten::_convolution_mode).
TIMM = {
    # re-parameterizable / multi-branch convs
    "repvgg_a0": (image(160), {}),
    "mobileone_s0": (image(160), {}),
    "fastvit_t8": (image(160), {}),
    "repvit_m0_9": (image(160), {}),
    # cross-stage partial, dense aggregation, multi-resolution
    "cspresnet50": (image(160), {}),
    "dla34": (image(160), {}),
    "hrnet_w18_small": (image(160), {}),
    "ese_vovnet19b_dw": (image(160), {}),
    "dpn68": (image(160), {}),
    "selecsls42b": (image(160), {}),
    "hgnetv2_b0": (image(160), {}),
    # split / grouped / selective-kernel / split-attention
    "res2net50_14w_8s": (image(160), {}),
    "skresnet18": (image(160), {}),
    "resnest14d": (image(160), {}),
    "regnetz_b16": (image(160), {}),
    "gernet_s": (image(160), {}),
    "mixnet_s": (image(160), {}),
    # channel attention, space-to-depth, anti-aliasing, weight standardization
    "ecaresnet26t": (image(160), {}),
    "tresnet_m": (image(160), {}),
    "nf_regnet_b0": (image(160), {}),
    "xception41": (image(160), {}),
    # cheap-op / mobile blocks
    "ghostnet_100": (image(160), {}),
    "ghostnetv2_100": (image(160), {}),
    "rexnet_100": (image(160), {}),
    "lcnet_100": (image(160), {}),
    "efficientvit_b0": (image(160), {}),
    "edgenext_x_small": (image(160), {}),
    # big depthwise kernels, pooling mixers
    "inception_next_tiny": (image(160), {}),
    "poolformer_s12": (image(160), {}),
    # MLPs
    "mixer_s16_224": (image(160), {"img_size": 160}),
    "resmlp_12_224": (image(160), {"img_size": 160}),
    # attention in conv nets, hybrids
    "mobilevit_xs": (image(192), {}),
    "mobilevitv2_050": (image(192), {}),
    "botnet26t_256": (image(256), {}),
    "efficientformer_l1": (image(224), {}),
    "levit_128s": (image(224), {}),
    "efficientvit_m0": (image(224), {}),
    "tiny_vit_5m_224": (image(224), {}),
    # vision transformers
    "deit_tiny_patch16_224": (image(224), {}),
    "xcit_nano_12_p16_224": (image(224), {}),
    "pvt_v2_b0": (image(160), {}),
    "twins_svt_small": (image(224), {}),
    "coat_lite_tiny": (image(224), {}),
}


def import_timm():
    if os.path.isdir(TIMM_DIR):
        sys.path.insert(0, TIMM_DIR)
    try:
        import timm
    except ImportError as e:
        sys.exit(f"export_timm.py: no timm ({e}); scripts/setup.sh --timm unpacks timm 0.9.16 into {TIMM_DIR}")
    return timm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(REPO, "tests", "generated", "zoo"))
    ap.add_argument("--models", default="all", help="comma-separated timm names, or 'all' for the list below")
    ap.add_argument("--size", type=int, default=224, help="input size of a name not in the list")
    ap.add_argument("--list", action="store_true", help="print the names and input shapes")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.list:
        for name, (shape, _) in TIMM.items():
            print(f"{name:<28} {shape}")
        return
    timm = import_timm()
    import torch
    sys.path.insert(0, HERE)
    from export_torchvision import export_module

    names = list(TIMM) if args.models == "all" else args.models.split(",")
    os.makedirs(args.out_dir, exist_ok=True)
    failed = []
    for name in names:
        shape, kwargs = TIMM.get(name, (image(args.size), {}))
        torch.manual_seed(args.seed)
        try:
            model = timm.create_model(name, pretrained=False, **kwargs).eval()
            path, _ = export_module(model, name, shape, args.out_dir, args.seed)
        except Exception as e:  # one architecture torch cannot export does not stop the others
            failed.append(name)
            print(f"{name}: export failed: {type(e).__name__}: {str(e).strip().splitlines()[0]}", file=sys.stderr,
                  flush=True)
            continue
        print(f"wrote {path} ({os.path.getsize(path)} bytes)", flush=True)
    if failed:
        sys.exit(f"export_timm.py: {len(failed)} not exported: {','.join(failed)}")


if __name__ == "__main__":
    main()
