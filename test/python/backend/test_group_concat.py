"""A Concat along the last axis inside a layer group: each operand's
columns are copied into the result's within their lanes (the matrix view
keeps a row's elements in one lane), so two matmuls, their Concat and the
ops after it form one group, and the cmodel's output matches onnxruntime
on both chips in F32 and F16."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tpuc.deploy import deploy
from tpuc.transform import transform

ROWS, K, N = 16, 24, 8


def concat_model(path: Path, rng) -> None:
    inits = {
        "w0": (rng.standard_normal((K, N)) * K ** -0.5).astype(np.float32),
        "w1": (rng.standard_normal((K, 2 * N)) * K ** -0.5).astype(np.float32),
        "w2": (rng.standard_normal((3 * N, N)) * (3 * N) ** -0.5).astype(np.float32),
    }
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w0"], ["a"]),
        n("MatMul", ["x", "w1"], ["b"]),
        n("Concat", ["a", "b"], ["c"], axis=-1),
        n("Tanh", ["c"], ["t"]),
        n("MatMul", ["t", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "group_concat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, ROWS, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, ROWS, N])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(path))


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("concat")
    rng = np.random.default_rng(3)
    concat_model(tmp / "c.onnx", rng)
    x = rng.standard_normal((1, ROWS, K)).astype(np.float32)
    np.savez(tmp / "in.npz", x=x)
    transform("concat", tmp / "c.onnx", tmp / "c.mlir")
    ref = ort.InferenceSession(str(tmp / "c.onnx")).run(None, {"x": x})[0]
    np.savez(tmp / "ref.npz", y=ref)
    return tmp


@pytest.mark.parametrize("chip", ["tpu_edge", "tpu_pro"])
@pytest.mark.parametrize("mode", ["F32", "F16"])
def test_concat_in_group_matches_onnxruntime(model, chip, mode):
    r = deploy(model / "c.mlir", quantize=mode, chip=chip,
               model_path=model / f"c_{chip}_{mode}.bmodel", test_input=model / "in.npz",
               test_reference=model / "ref.npz", tolerance=(0.999, 0.98))
    final = r.final_mlir.read_text()
    groups = re.findall(r"tpu\.Group.*?tpu\.Yield", final, re.S)
    assert any('"tpu.Concat"' in g for g in groups)
    assert r.passed
