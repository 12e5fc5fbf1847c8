"""Simulated cycles of the real CNN architectures against their roofline.

    python bench/bench_real_models.py [--models resnet18,efficientnet_b0] [--size 224]

Builds each torchvision architecture of tpuc.testing.real_models with random
weights, exports it at `--size` x `--size`, compiles it in F32 for every chip
(layer groups on) and prints the cycles of one run on the cmodel against the
roofline bound, with the median and the largest ratio per chip.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import warnings
from pathlib import Path

import numpy as np

from tpuc.deploy import deploy
from tpuc.testing import real_models
from tpuc.transform import transform

CNNS = ("resnet18", "mobilenet_v3_small", "efficientnet_b0", "regnet_y_400mf",
        "shufflenet_v2_x0_5", "densenet121", "convnext")


def export(name: str, size: int, out: Path) -> Path:
    import torch
    spec = real_models.MODELS[name]
    model = real_models.randomize(spec.build())
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(
        (1, 3, size, size)).astype(np.float32))
    path = out / f"{name}.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(path), dynamo=False, opset_version=real_models.OPSET,
                          input_names=["input"], output_names=list(spec.output_names))
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(CNNS))
    p.add_argument("--chips", default="tpu_edge,tpu_pro")
    p.add_argument("--size", type=int, default=224)
    args = p.parse_args()
    chips = args.chips.split(",")
    ratios: dict[str, list[float]] = {c: [] for c in chips}
    print(f"{'model':<20} {'chip':<9} {'cycles':>10} {'roofline':>10} {'bound':>7} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.models.split(","):
            mlir = tmp / f"{name}.mlir"
            transform(name, export(name, args.size, tmp), mlir)
            for chip in chips:
                r = deploy(mlir, "F32", chip, tmp / f"{name}_{chip}.bmodel")
                ratios[chip].append(r.roofline_ratio)
                print(f"{name:<20} {chip:<9} {r.cycles:10d} {r.roofline.cycles:10.0f} "
                      f"{r.roofline.bound:>7} {r.roofline_ratio:5.2f}x", flush=True)
    for chip, rs in ratios.items():
        if rs:
            print(f"{chip}: median {statistics.median(rs):.2f}x, largest {max(rs):.2f}x "
                  f"over {len(rs)} models")


if __name__ == "__main__":
    main()
