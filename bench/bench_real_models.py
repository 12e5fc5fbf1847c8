"""Simulated cycles of the exported real architectures against their
roofline and latency bounds, on every chip.

    python bench/bench_real_models.py [--models vit,swin,bert,gpt2,whisper_encoder] [--quantize F32]

Each model of `tpuc.testing.real_models` (torchvision / transformers
definitions, random weights, small configurations) is exported, transformed
and deployed with its outputs checked against onnxruntime through the cmodel;
prints cycles, the roofline bound, their ratio, the latency bound (the
roofline plus the DDR latency of the first load and the last store) and the
ratio to it, then the median ratios. The default models are the transformer
encoders.
"""
from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import warnings
from pathlib import Path

import numpy as np

from tpuc.deploy import deploy
from tpuc.testing import real_models
from tpuc.transform import transform

TRANSFORMERS = ("vit", "swin", "bert", "gpt2", "whisper_encoder")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(TRANSFORMERS))
    p.add_argument("--chips", default="tpu_edge,tpu_pro")
    p.add_argument("--quantize", default="F32", help="a float mode (F32, F16, BF16)")
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore")
    ratios: dict[str, list[tuple[float, float]]] = {c: [] for c in args.chips.split(",")}
    print(f"{'model':<18} {'chip':<9} {'cycles':>9} {'roofline':>9} {'ratio':>6} "
          f"{'lat.bound':>9} {'ratio':>6} {'check':>5}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            d = Path(tmp) / name
            path, inputs = real_models.export(name, d)
            np.savez(d / "in.npz", **inputs)
            mlir = d / f"{name}.mlir"
            transform(name, path, mlir, test_input=d / "in.npz", test_result=d / "top.npz")
            for chip in ratios:
                r = deploy(mlir, args.quantize, chip, d / f"{name}_{chip}.bmodel",
                           test_input=d / "in.npz", test_reference=d / "top.npz",
                           tolerance=(0.99, 0.9))
                ratios[chip].append((r.roofline_ratio, r.latency_ratio))
                print(f"{name:<18} {chip:<9} {r.cycles:9d} {r.roofline.cycles:9.0f} "
                      f"{r.roofline_ratio:5.2f}x {r.roofline.latency_bound:9.0f} "
                      f"{r.latency_ratio:5.2f}x {'PASS' if r.passed else 'FAIL':>5}", flush=True)
    for chip, rs in ratios.items():
        print(f"{chip}: median {statistics.median(r for r, _ in rs):.2f}x the roofline, "
              f"{statistics.median(l for _, l in rs):.2f}x the latency bound; "
              f"max {max(r for r, _ in rs):.2f}x / {max(l for _, l in rs):.2f}x")


if __name__ == "__main__":
    main()
