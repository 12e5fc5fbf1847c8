"""A small zoo CNN as top.mlir and a few random samples, shared by the tests."""
import numpy as np
import pytest

from tpuc.testing import zoo
from tpuc.transform import transform


@pytest.fixture(scope="session")
def cnn(tmp_path_factory):
    """(top.mlir path, input name, input shape) of zoo's cnn_bn (1x3x32x32)."""
    d = tmp_path_factory.mktemp("cnn")
    onnx_path = zoo.export("cnn_bn", d)
    result = transform("cnn_bn", onnx_path, d / "cnn_bn.mlir")
    return result.mlir, "input", (1, 3, 32, 32)


@pytest.fixture(scope="session")
def dataset(tmp_path_factory, cnn):
    """Four .npz samples for the cnn."""
    d = tmp_path_factory.mktemp("dataset")
    rng = np.random.default_rng(0)
    for k in range(4):
        np.savez(d / f"s{k}.npz", input=rng.standard_normal(cnn[2]).astype(np.float32))
    return d
