"""Conv tile epilogues: a conv whose filter does not fit local memory (a
ResNet layer3 conv on tpu_edge) takes the residual Add and ReLU after it as
an epilogue: each output tile adds the residual's tile, loaded next to it,
before its store. The compiled module groups them (tile_epilogue), the
cmodel's output matches onnxruntime in F32, and in INT8 every tensor
equals the Tpu interpreter's bit for bit."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tpuc.calibration.driver import calibrate
from tpuc.compare import cosine
from tpuc.deploy import deploy
from tpuc.transform import transform

C, H = 512, 7  # a 512x512x3x3 filter: 2.25 MiB in INT8, more than tpu_edge's LMEM


def block_model(path: Path, rng) -> None:
    w = (rng.standard_normal((C, C, 3, 3)) / np.sqrt(9 * C)).astype(np.float32)
    b = (rng.standard_normal(C) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1],
                              kernel_shape=[3, 3]),
             helper.make_node("Add", ["c", "r"], ["s"], name="residual"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    shape = [1, C, H, H]
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
                         helper.make_tensor_value_info("r", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("block")
    rng = np.random.default_rng(5)
    block_model(tmp / "block.onnx", rng)

    def sample():
        return {k: rng.standard_normal((1, C, H, H)).astype(np.float32) for k in ("x", "r")}
    data = tmp / "data"
    data.mkdir()
    for k in range(2):
        np.savez(data / f"{k}.npz", **sample())
    inputs = sample()
    np.savez(tmp / "in.npz", **inputs)
    transform("block", tmp / "block.onnx", tmp / "block.mlir")
    calibrate(tmp / "block.mlir", data, tmp / "cali", input_num=2, progress=False)
    ref = ort.InferenceSession(str(tmp / "block.onnx")).run(None, inputs)[0]
    return tmp, ref


@pytest.mark.parametrize("mode,min_cos", [("F32", 0.99999), ("INT8", 0.99)])
def test_residual_epilogue_matches_onnxruntime(block, mode, min_cos):
    tmp, ref = block
    r = deploy(tmp / "block.mlir", quantize=mode, chip="tpu_edge",
               model_path=tmp / f"block_{mode}.bmodel", test_input=tmp / "in.npz",
               calibration_table=tmp / "cali" if mode == "INT8" else None,
               tolerance=(0.99, 0.9))
    assert "tile_epilogue = true" in r.final_mlir.read_text()
    assert r.passed and r.int_mismatches == []
    got = np.load(r.model_outputs)["y"]
    assert cosine(got, ref) >= min_cos, f"{mode} against onnxruntime"
    if mode == "F32":
        np.testing.assert_allclose(got, ref, atol=1e-4 * np.abs(ref).max())


def test_residual_epilogue_beats_separate_ops(block):
    """The fused Add saves the conv result's store and the Add's own pass
    over DDR: fewer cycles than every op on its own."""
    tmp, _ = block
    grouped, alone = (deploy(tmp / "block.mlir", quantize="F32", chip="tpu_edge",
                             model_path=tmp / f"block_{lg}.bmodel", test_input=tmp / "in.npz",
                             layer_group=lg).cycles for lg in (True, False))
    assert grouped < alone
