"""Simulated cycles of every quantization mode against its own roofline.

    python bench/bench_quant.py [--models resnet18_full,bert_base_layer] [--samples 16]

For each model (ResNet-18 at 224x224 and the BERT-base encoder layer by
default) and chip: calibrates on random samples (KL), deploys F32, F16, BF16,
INT8 and INT8 asymmetric, runs each bmodel on the cmodel with every tensor
checked (INT8 bit-exact against the Tpu interpreter), and prints cycles,
the roofline bound at the mode's peak (the chip file's MACs per lane for
that dtype), their ratio, the latency bound (the roofline plus the DDR
latency of the first load and the last store) and the ratio to it, the
speedup over F32, the bmodel size and the
output cosine against the float (Top) reference.
"""
from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path

import numpy as np

from tpuc.calibration.driver import calibrate
from tpuc.deploy import deploy
from tpuc.testing import zoo
from tpuc.transform import transform

MODES = (("F32", False), ("F16", False), ("BF16", False), ("INT8", False), ("INT8", True))


def cosine(a, b) -> float:
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def bench(name: str, chips: list[str], samples: int, tmp: Path) -> None:
    spec = zoo.ZOO.get(name) or zoo.LARGE[name]
    onnx_path = zoo.export(name, tmp)
    rng = np.random.default_rng(0)

    def sample():
        return {k: rng.standard_normal(s).astype(np.float32) for k, s in spec.inputs.items()}
    dataset = tmp / "dataset"
    dataset.mkdir()
    for k in range(samples):
        np.savez(dataset / f"{k:02d}.npz", **sample())
    np.savez(tmp / "in.npz", **sample())
    mlir = tmp / f"{name}.mlir"
    transform(name, onnx_path, mlir, test_input=tmp / "in.npz", test_result=tmp / "top.npz")
    cal = calibrate(mlir, dataset, tmp / "cali_table", input_num=samples, progress=False)
    ref = np.load(tmp / "top.npz")
    print(f"\n{name}: calibrated on {samples} samples in {cal.seconds:.1f} s")
    print(f"{'chip':<9} {'mode':<10} {'cycles':>10} {'roofline':>10} {'bound':>7} "
          f"{'ratio':>6} {'lat.bound':>10} {'ratio':>6} {'vs F32':>6} {'bmodel KB':>9} "
          f"{'cosine':>9} {'check':>9}")
    for chip in chips:
        f32 = None
        for mode, asym in MODES:
            label = mode + (" asym" if asym else "")
            r = deploy(mlir, quantize=mode, chip=chip,
                       model_path=tmp / f"{chip}_{mode}{'_asym' if asym else ''}.bmodel",
                       test_input=tmp / "in.npz",
                       calibration_table=tmp / "cali_table" if mode == "INT8" else None,
                       asymmetric=asym, tolerance=(0.9, 0.5))
            out = dict(np.load(r.model_outputs))
            cos = min(cosine(out[k], ref[k]) for k in spec.outputs)
            f32 = f32 or r.cycles
            check = ("bit-exact" if not r.int_mismatches else "MISMATCH") if mode == "INT8" else \
                ("PASS" if r.passed else "FAIL")
            print(f"{chip:<9} {label:<10} {r.cycles:10d} {r.roofline.cycles:10.0f} "
                  f"{r.roofline.bound:>7} {r.roofline_ratio:5.2f}x "
                  f"{r.roofline.latency_bound:10.0f} {r.latency_ratio:5.2f}x {f32 / r.cycles:5.2f}x "
                  f"{r.bmodel.stat().st_size / 1024:9.0f} {cos:9.6f} {check:>9}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet18_full,bert_base_layer")
    p.add_argument("--chips", default="tpu_edge,tpu_pro")
    p.add_argument("--samples", type=int, default=16)
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            bench(name, args.chips.split(","), args.samples, Path(tmp))
    print("\nratio: simulated cycles / roofline bound at the mode's peak, then / the latency "
          "bound (roofline + the first load's and last store's DDR latency and GDMA issue); "
          "vs F32: F32 cycles / this mode's cycles")


if __name__ == "__main__":
    main()
