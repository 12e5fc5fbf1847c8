"""Full-size models for the cmodel benchmark: exported to ONNX, transformed
to top.mlir and calibrated (min-max on two random samples: the figures are
about speed, not accuracy). torchvision's model definitions are pure Python;
they load without its C extension, which needs a CUDA torch."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from tpuc.calibration.driver import calibrate
from tpuc.testing import zoo
from tpuc.testing.real_models import torchvision_models
from tpuc.transform import transform

from _timing import best_of

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "bert")


@dataclass
class Prepared:
    dir: Path
    onnx: Path
    mlir: Path
    table: Path
    inputs: dict


def _export_torchvision(name: str, path: Path) -> None:
    import torch
    torch.manual_seed(0)
    module = getattr(torchvision_models(), name)(weights=None).eval()
    with torch.no_grad():  # BN statistics away from identity
        for m in module.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 224, 224)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(module, (x,), str(path), dynamo=False, opset_version=17,
                              input_names=["input"], output_names=["output"])


def prepare_model(name: str, work_dir) -> Prepared:
    d = Path(work_dir) / name
    d.mkdir(parents=True, exist_ok=True)
    if name == "bert":
        onnx_path = zoo.export("bert_base_layer", d)
        shape = zoo.LARGE["bert_base_layer"].inputs["input"]
    else:
        onnx_path = d / f"{name}.onnx"
        if not onnx_path.exists():
            _export_torchvision(name, onnx_path)
        shape = (1, 3, 224, 224)
    rng = np.random.default_rng(0)
    dataset = d / "dataset"
    dataset.mkdir(exist_ok=True)
    for k in range(2):
        np.savez(dataset / f"{k}.npz", input=rng.standard_normal(shape).astype(np.float32))
    inputs = {"input": rng.standard_normal(shape).astype(np.float32)}
    mlir = d / f"{name}.mlir"
    table = d / "cali_table"
    if not mlir.exists():
        transform(name, onnx_path, mlir)
    if not table.exists():
        calibrate(mlir, dataset, table, input_num=2, method="minmax", progress=False)
    return Prepared(d, onnx_path, mlir, table, inputs)


def ort_runner(m: Prepared, threads: int):
    """A warmed-up call of onnxruntime on `threads` threads (0: all cores)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    sess = ort.InferenceSession(str(m.onnx), options, providers=["CPUExecutionProvider"])
    sess.run(None, m.inputs)  # warm up
    return lambda: sess.run(None, m.inputs)


def run_ort(m: Prepared, threads: int, repeat: int) -> float:
    """Best wall seconds of onnxruntime on `threads` threads (0: all cores)."""
    return best_of(ort_runner(m, threads), repeat)[0]
