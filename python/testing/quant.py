"""A zoo model (or any ONNX file) prepared for the quantized modes:
exported, transformed (with the Top interpreter's float reference) and
calibrated on random samples, as the tests of the lowering and of the
codegen both need."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..calibration.driver import calibrate
from ..transform import transform
from . import zoo


@dataclass
class Prepared:
    mlir: Path  # top.mlir
    test_input: Path  # one more random sample (.npz)
    reference: Path  # the Top interpreter's tensors on it (.npz)
    table: Path  # calibration table (KL)


def prepare(name: str, out_dir: str | Path, samples: int = 16,
            seed: int = 0) -> Prepared:
    """Zoo model `name` in `out_dir`, calibrated on `samples` standard
    normal samples drawn (then the test input) from `seed`."""
    out = Path(out_dir)
    spec = zoo.ZOO.get(name) or zoo.LARGE[name]
    return prepare_onnx(name, zoo.export(name, out), spec.inputs, out, samples, seed)


def prepare_onnx(name: str, onnx_path: str | Path, inputs: dict[str, tuple],
                 out_dir: str | Path, samples: int = 16, seed: int = 0) -> Prepared:
    """The ONNX model at `onnx_path`, whose float32 inputs have the shapes
    `inputs`, transformed and calibrated in `out_dir` as prepare does."""
    out = Path(out_dir)
    rng = np.random.default_rng(seed)

    def sample():
        return {k: rng.standard_normal(s).astype(np.float32)
                for k, s in inputs.items()}
    dataset = out / "dataset"
    dataset.mkdir(exist_ok=True)
    for k in range(samples):
        np.savez(dataset / f"{k:02d}.npz", **sample())
    p = Prepared(out / f"{name}.mlir", out / "test_input.npz",
                 out / "top_outputs.npz", out / "cali_table")
    np.savez(p.test_input, **sample())
    transform(name, onnx_path, p.mlir, test_input=p.test_input, test_result=p.reference)
    calibrate(p.mlir, dataset, p.table, input_num=samples, progress=False)
    return p
