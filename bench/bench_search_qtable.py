"""Quantize-table search on torchvision's MobileNetV2: wall time, float
layers chosen, final cosine, and the speedup of 2 worker processes.

    python bench/bench_search_qtable.py                      # 224x224, target 0.998
    python bench/bench_search_qtable.py --expected_cos 0.999 --size 160

The model is torchvision's definition with random weights and randomised
BN statistics (``tpuc.testing.real_models.randomize``, variances
log-uniform over ``--var_decades``), calibrated (KL) on 8 random samples;
the search runs on 4. Random weights quantize better than trained ones
(plain INT8 reaches about 0.997 here), hence a target above 0.99.
Both searches start from empty float-reference caches (the histogram cache
of the calibration is shared), so each pays for its references; the ratio
is of two runs in this process, one after the other.
"""
from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from tpuc.calibration import calibrate
from tpuc.quant import search_qtable
from tpuc.testing import real_models
from tpuc.transform import transform


def prepare(out: Path, size: int, samples: int,
            var_decades: float) -> tuple[Path, Path, Path]:
    model = real_models.randomize(real_models.torchvision_models().mobilenet_v2(weights=None),
                                         var_decades=var_decades)
    shape = (1, 3, size, size)
    onnx_path = out / "mobilenet_v2.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn(shape),), str(onnx_path), dynamo=False,
                          input_names=["input"], output_names=["output"], opset_version=17)
    data = out / "dataset"
    data.mkdir()
    rng = np.random.default_rng(0)
    for k in range(samples):
        np.savez(data / f"{k:04d}.npz", input=rng.standard_normal(shape).astype(np.float32))
    mlir = transform("mobilenet_v2", onnx_path, out / "mobilenet_v2.mlir").mlir
    table = out / "mobilenet_v2_cali_table"
    calibrate(mlir, data, table, progress=False)
    return mlir, data, table


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--expected_cos", type=float, default=0.998)
    p.add_argument("--var_decades", type=float, default=2.0,
                   help="BN variances log-uniform over this many decades")
    p.add_argument("--calibration_samples", type=int, default=8)
    p.add_argument("--input_num", type=int, default=4, help="samples the search runs")
    p.add_argument("--chip", default="tpu_edge")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        mlir, data, table = prepare(tmp, args.size, args.calibration_samples,
                                   args.var_decades)
        print(f"MobileNetV2 {args.size}x{args.size}: exported, transformed and calibrated "
              f"on {args.calibration_samples} samples in {time.perf_counter() - t0:.1f} s")
        runs = {}
        for workers in (1, 2):
            cache = tmp / f"cache{workers}"
            t0 = time.perf_counter()
            r = search_qtable(mlir, data, table, tmp / f"qtable{workers}", chip=args.chip,
                              expected_cos=args.expected_cos, input_num=args.input_num,
                              workers=workers, cache_dir=cache)
            runs[workers] = wall = time.perf_counter() - t0
            phases = ", ".join(f"{k} {v:.1f} s" for k, v in r.timings.items())
            print(f"workers={workers}: {wall:.1f} s ({phases}); {r.evaluations} end-to-end "
                  f"evaluations; target {args.expected_cos} "
                  f"{'reached' if r.reached else 'NOT reached'}: cos {r.cosine:.6f} "
                  f"(all INT8 {r.int8_cosine:.6f}) with {len(r.modes)} float layers "
                  f"of {len(r.layers)}: {', '.join(r.modes) or 'none'}")
            if r.int8_cycles is not None:
                print(f"  cycles on {args.chip}: all INT8 {r.int8_cycles}, with the table "
                      f"{r.mixed_cycles} ({(r.mixed_cycles / r.int8_cycles - 1):+.1%})")
        print(f"speedup with 2 workers: {runs[1] / runs[2]:.2f}x ({runs[1]:.1f} s -> "
              f"{runs[2]:.1f} s)")


if __name__ == "__main__":
    main()
