"""Simulated cycles of the exported real architectures against their
roofline and latency bounds, on every chip.

    python bench/bench_real_models.py [--models resnet18,vit] [--size 224] [--quantize F32]
    python bench/bench_real_models.py --quantize INT8   # KL-calibrated on random samples

The torchvision CNNs of `tpuc.testing.real_models` are exported with random
weights at `--size` x `--size` and compared on cycles only; the transformer
encoders (transformers definitions, small configurations) are exported as
the real-models tests do and their outputs are checked against onnxruntime
through the cmodel. Prints cycles, the roofline bound, their ratio, the
latency bound (the roofline plus the DDR latency of the first load and the
last store) and the ratio to it, then the median and largest ratios per chip
and family, and over all the models of a chip. INT8 calibrates each model
on `--calibration_samples` random inputs (the CNNs) or on the exported
inputs (the transformers) first, and is compared against the INT8 peak.
"""
from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import warnings
from pathlib import Path

import numpy as np

from tpuc.calibration.driver import calibrate
from tpuc.compiler import CompileError
from tpuc.deploy import deploy
from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import real_models
from tpuc.transform import transform

CNNS = ("resnet18", "mobilenet_v3_small", "efficientnet_b0", "regnet_y_400mf",
        "shufflenet_v2_x0_5", "densenet121", "convnext")
TRANSFORMERS = ("vit", "swin", "bert", "gpt2", "whisper_encoder")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(CNNS + TRANSFORMERS))
    p.add_argument("--chips", default="tpu_edge,tpu_pro")
    p.add_argument("--size", type=int, default=224, help="image size of the CNNs")
    p.add_argument("--quantize", default="F32", help="F32, F16, BF16 or INT8")
    p.add_argument("--calibration_samples", type=int, default=4,
                   help="random inputs INT8 calibrates the CNNs on")
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore")
    chips = args.chips.split(",")
    ratios: dict[tuple[str, str], list[tuple[float, float]]] = {}
    print(f"{'model':<20} {'chip':<9} {'cycles':>10} {'roofline':>10} {'ratio':>6} "
          f"{'lat.bound':>10} {'ratio':>6} {'check':>5}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            d = Path(tmp) / name
            d.mkdir()
            mlir = d / f"{name}.mlir"
            checked = name not in CNNS
            if checked:
                path, inputs = real_models.export(name, d)
                np.savez(d / "in.npz", **inputs)
                transform(name, path, mlir, test_input=d / "in.npz", test_result=d / "top.npz")
                check = dict(test_input=d / "in.npz", test_reference=d / "top.npz",
                             tolerance=(0.99, 0.9))
            else:
                path, _ = real_models.export(name, d, image_size=args.size)
                transform(name, path, mlir)
                check = {}
            family = "transformer" if checked else "cnn"
            if args.quantize.upper() == "INT8":
                dataset = d / "dataset"
                dataset.mkdir()
                samples = ([make_test_inputs(path, seed=k) for k in range(args.calibration_samples)]
                           if not checked else [inputs])
                for k, sample in enumerate(samples):
                    np.savez(dataset / f"{k:02d}.npz", **sample)
                calibrate(mlir, dataset, d / "cali_table", progress=False)
                check = dict(check, calibration_table=d / "cali_table")
                if checked:
                    check["tolerance"] = (0.9, 0.5)
            for chip in chips:
                try:
                    r = deploy(mlir, args.quantize, chip, d / f"{name}_{chip}.bmodel", **check)
                except CompileError as e:  # one model failing does not end the table
                    print(f"{name:<20} {chip:<9} failed: {str(e).splitlines()[-1].strip()}",
                          flush=True)
                    continue
                ratios.setdefault((chip, family), []).append((r.roofline_ratio, r.latency_ratio))
                verdict = ("PASS" if r.passed else "FAIL") if checked else "-"
                print(f"{name:<20} {chip:<9} {r.cycles:10d} {r.roofline.cycles:10.0f} "
                      f"{r.roofline_ratio:5.2f}x {r.roofline.latency_bound:10.0f} "
                      f"{r.latency_ratio:5.2f}x {verdict:>5}", flush=True)
    for chip in dict.fromkeys(c for c, _ in ratios):
        families = sorted(f for c, f in ratios if c == chip)
        # The acceptance median is over every architecture together.
        groups = [(f + "s", ratios[(chip, f)]) for f in families]
        if len(families) > 1:
            groups.append(("all", [x for f in families for x in ratios[(chip, f)]]))
        for label, rs in groups:
            print(f"{chip} {label}: median {statistics.median(r for r, _ in rs):.2f}x the "
                  f"roofline, {statistics.median(l for _, l in rs):.2f}x the latency bound; "
                  f"largest {max(r for r, _ in rs):.2f}x / {max(l for _, l in rs):.2f}x "
                  f"over {len(rs)} models")

if __name__ == "__main__":
    main()
