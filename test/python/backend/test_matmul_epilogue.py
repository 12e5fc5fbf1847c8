"""Matmul epilogue groups: a matmul whose weight does not fit local memory
with the GELU after it (a BERT-style FFN on tpu_edge: GELU(x W1 + b) W2)
runs fused with the second matmul, in chunks of the hidden columns with the
GELU applied to each chunk in local memory. The compiled module groups the
three (tile_epilogue), the cmodel's output matches
onnxruntime in F32 and F16, and in INT8 (GELU as a lookup table) every
tensor equals the Tpu interpreter's bit for bit."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tpuc.calibration.driver import calibrate
from tpuc.deploy import deploy
from tpuc.transform import transform

M, K, N, P = 64, 512, 1024, 128  # an F32 weight of 2 MiB: more than tpu_edge's LMEM


def ffn_model(path: Path, rng) -> None:
    w = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32)
    b = (rng.standard_normal(N) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((N, P)) / np.sqrt(N)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="ffn_mm"),
             helper.make_node("Add", ["mm", "b"], ["pre"], name="ffn_bias"),
             helper.make_node("Gelu", ["pre"], ["h"], name="gelu"),
             helper.make_node("MatMul", ["h", "w2"], ["y"], name="ffn_out")]
    graph = helper.make_graph(
        nodes, "ffn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, M, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, M, P])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(w2, "w2")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), str(path))


@pytest.fixture(scope="module")
def ffn(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ffn")
    rng = np.random.default_rng(3)
    ffn_model(tmp / "ffn.onnx", rng)
    data = tmp / "data"
    data.mkdir()
    for k in range(4):
        np.savez(data / f"{k}.npz", x=rng.standard_normal((1, M, K)).astype(np.float32))
    x = rng.standard_normal((1, M, K)).astype(np.float32)
    np.savez(tmp / "in.npz", x=x)
    transform("ffn", tmp / "ffn.onnx", tmp / "ffn.mlir")
    calibrate(tmp / "ffn.mlir", data, tmp / "cali", input_num=4, progress=False)
    ref = ort.InferenceSession(str(tmp / "ffn.onnx")).run(None, {"x": x})[0]
    return tmp, ref


@pytest.mark.parametrize("chip", ["tpu_edge", "tpu_pro"])
@pytest.mark.parametrize("mode,min_cos", [("F32", 0.99999), ("F16", 0.9999), ("INT8", 0.99)])
def test_gelu_epilogue_matches_onnxruntime(ffn, chip, mode, min_cos):
    """On tpu_edge the FFN is a fused matmul pair; on tpu_pro (in
    F16 and INT8) the whole FFN is one group of whole tensors whose wide
    weights load in parts of their columns, each matmul part waiting for
    its own."""
    tmp, ref = ffn
    r = deploy(tmp / "ffn.mlir", quantize=mode, chip=chip,
               model_path=tmp / f"ffn_{chip}_{mode}.bmodel", test_input=tmp / "in.npz",
               calibration_table=tmp / "cali" if mode == "INT8" else None,
               tolerance=(0.99, 0.9))
    final = r.final_mlir.read_text()
    if chip == "tpu_edge":
        # The second matmul closes the chain: the pair runs fused in chunks
        # of the hidden columns, the GELU's result never in DDR.
        group = final[final.index("tile_epilogue = true"):]
        group = group[:group.index("tpu.Yield")]
        assert group.count('"tpu.MatMul"') == 2
        assert ('"tpu.Lut"' if mode == "INT8" else '"tpu.Active"') in group
    elif mode != "F32":
        assert "tpu.Group" in final and "tile_epilogue" not in final
    assert r.passed
    if mode == "INT8":
        assert r.int_mismatches == []
    got = np.load(r.model_outputs)["y"].astype(np.float64).ravel()
    want = ref.astype(np.float64).ravel()
    cos = got @ want / (np.linalg.norm(got) * np.linalg.norm(want))
    assert cos >= min_cos, f"{mode}: cosine {cos} against onnxruntime"
    if mode == "F32":
        np.testing.assert_allclose(got, want, atol=1e-4 * np.abs(want).max())


def test_epilogue_saves_ddr_round_trip(ffn):
    """The fused GELU removes the matmul result's store and reload."""
    tmp, _ = ffn
    cycles = {}
    for group in (True, False):
        r = deploy(tmp / "ffn.mlir", quantize="F32", chip="tpu_edge",
                   model_path=tmp / f"ffn_lg{group}.bmodel", test_input=tmp / "in.npz",
                   layer_group=group)
        cycles[group] = r.cycles
    assert cycles[True] < cycles[False]
