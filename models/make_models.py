"""Regenerates the models shipped in models/ from their zoo definitions.

    python models/make_models.py
"""
from pathlib import Path

import numpy as np

from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import zoo

HERE = Path(__file__).resolve().parent
SHIPPED = {"mobilenetv2": "mobilenetv2_tiny"}

for zoo_name, name in SHIPPED.items():
    path = zoo.export(zoo_name, HERE)
    path.rename(HERE / f"{name}.onnx")
    inputs = make_test_inputs(HERE / f"{name}.onnx", seed=0)
    np.savez(HERE / f"{name}_input.npz", **inputs)
    print(f"wrote {name}.onnx and {name}_input.npz")
