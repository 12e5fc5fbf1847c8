"""Models with one planted outlier layer, for the quantize table search.

Each scales one output channel of the planted layer by ``OUTLIER`` and its
consumer's matching input weights by ``IMPORTANCE / OUTLIER``: one channel
of the planted tensor is huge and matters downstream, as outlier features
do. A per-tensor INT8 scale either clips that channel or rounds the others
to almost nothing.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from tpuc.calibration.driver import calibrate
from tpuc.transform import transform

OUTLIER = 300.0
IMPORTANCE = 10.0  # the planted channel weighs this much more than the others downstream


class OutlierCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)  # planted
        self.conv3 = nn.Conv2d(16, 16, 3, padding=1)
        self.conv4 = nn.Conv2d(16, 8, 3, padding=1)
        with torch.no_grad():
            self.conv2.weight[0] *= OUTLIER
            self.conv2.bias[0] *= OUTLIER
            self.conv3.weight[:, 0] *= IMPORTANCE / OUTLIER

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        return self.conv4(x)


class OutlierAttention(nn.Module):
    """A pre-LN transformer block whose value projection is planted."""

    def __init__(self, hidden=32, heads=2, ffn=64):
        super().__init__()
        self.heads, self.dim = heads, hidden // heads
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.query, self.key = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)  # planted
        self.out = nn.Linear(hidden, hidden)
        self.ffn_in, self.ffn_out = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        with torch.no_grad():
            self.value.weight[0] *= OUTLIER
            self.value.bias[0] *= OUTLIER
            self.out.weight[:, 0] *= IMPORTANCE / OUTLIER

    def heads_first(self, x):
        b, s, _ = x.shape
        return x.reshape(b, s, self.heads, self.dim).permute(0, 2, 1, 3)

    def forward(self, x):
        b, s, h = x.shape
        y = self.ln1(x)
        q, k, v = (self.heads_first(f(y)) for f in (self.query, self.key, self.value))
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dim), dim=-1)
        x = x + self.out((p @ v).permute(0, 2, 1, 3).reshape(b, s, h))
        return x + self.ffn_out(torch.relu(self.ffn_in(self.ln2(x))))


MODELS = {"outlier_cnn": (OutlierCnn, (1, 3, 16, 16)),
          "outlier_attention": (OutlierAttention, (1, 8, 32))}


def prepare(name: str, out: Path, samples: int = 8):
    """(top.mlir, dataset dir, calibration table) of planted model `name`."""
    cls, shape = MODELS[name]
    torch.manual_seed(0)
    model = cls().eval()
    onnx_path = out / f"{name}.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn(shape),), str(onnx_path), dynamo=False,
                          input_names=["x"], output_names=["y"], opset_version=17)
    rng = np.random.default_rng(0)
    data = out / "data"
    data.mkdir(exist_ok=True)
    for k in range(samples):
        np.savez(data / f"{k:02d}.npz", x=rng.standard_normal(shape).astype(np.float32))
    mlir = out / f"{name}.mlir"
    transform(name, onnx_path, mlir)
    table = out / f"{name}_cali_table"
    calibrate(mlir, data, table, progress=False)
    return mlir, data, table
