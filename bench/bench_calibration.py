"""Calibration speed: samples/s of the first run (Top interpreter + histograms)
and the time of other methods computed from the histogram cache.

    python bench/bench_calibration.py                       # ResNet-18 224x224, 16 samples
    python bench/bench_calibration.py --model resnet18 --samples 64

The first run (method kl) runs the model on every sample and writes the
cache; each other method then reads the cache and must take under 5% of the
first run's time (the whole `calibrate` call: hashing the model, weights and
samples, reading the cache, thresholds, writing the table).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from tpuc.calibration import METHODS, calibrate
from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import zoo
from tpuc.transform import transform


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet18_full", choices=sorted([*zoo.ZOO, *zoo.LARGE]))
    p.add_argument("--samples", type=int, default=16)
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        onnx_path = zoo.export(args.model, tmp)
        mlir = transform(args.model, onnx_path, tmp / f"{args.model}.mlir").mlir
        data = tmp / "dataset"
        data.mkdir()
        for k in range(args.samples):
            np.savez(data / f"{k:04d}.npz", **make_test_inputs(onnx_path, seed=k))

        t0 = time.perf_counter()
        first = calibrate(mlir, data, tmp / "kl_table", method="kl", progress=False)
        t_first = time.perf_counter() - t0
        print(f"{args.model}: {args.samples} samples, {len(first.table)} tensors")
        print(f"first run (kl): {t_first:.2f} s, {args.samples / t_first:.2f} samples/s "
              f"({first.collect_seconds:.2f} s running the model and histograms, "
              f"{args.samples / first.collect_seconds:.2f} samples/s)")
        for method in METHODS:
            t0 = time.perf_counter()
            r = calibrate(mlir, data, tmp / f"{method}_table", method=method, progress=False)
            t = time.perf_counter() - t0
            assert r.from_cache
            print(f"{method:<10} from cache: {t * 1e3:7.1f} ms = {100 * t / t_first:5.2f}% of the "
                  f"first run {'PASS' if t < 0.05 * t_first else 'FAIL'} (< 5%)")


if __name__ == "__main__":
    main()
