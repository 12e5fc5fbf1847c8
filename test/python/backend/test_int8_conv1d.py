"""INT8 1-D convolutions (whisper's audio stem: Conv1d, GELU, Conv1d with
stride 2) calibrated on random samples: the chip convolves in 2-D, so the
lowering views each conv's input at height 1 through a reshape that the
calibration table does not name; that view takes its operand's calibrated
type. The cmodel equals the Tpu interpreter bit for bit on every INT8
tensor, and the output keeps cosine >= 0.99 against onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from backendutil import CHIPS
from test_quant_e2e import compare_stages, cosine
from tpuc import compiler
from tpuc import runtime as rt
from tpuc.calibration.driver import calibrate
from tpuc.transform import transform

C_IN, C, T = 8, 16, 64


def build(path) -> None:
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in (
        ("w1", rng.standard_normal((C, C_IN, 3)) / np.sqrt(3 * C_IN)),
        ("b1", rng.standard_normal(C) * 0.1),
        ("w2", rng.standard_normal((C, C, 3)) / np.sqrt(3 * C)),
        ("b2", rng.standard_normal(C) * 0.1))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3], pads=[1, 1]),
        helper.make_node("Gelu", ["c1"], ["g1"]),
        helper.make_node("Conv", ["g1", "w2", "b2"], ["y"], kernel_shape=[3], pads=[1, 1],
                         strides=[2]),
    ]
    graph = helper.make_graph(
        nodes, "conv1d_stem",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C_IN, T])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, T // 2])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), path)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    d = tmp_path_factory.mktemp("conv1d")
    build(d / "conv1d.onnx")
    rng = np.random.default_rng(7)
    (d / "dataset").mkdir()
    for k in range(8):
        np.savez(d / "dataset" / f"{k}.npz",
                 x=rng.standard_normal((1, C_IN, T)).astype(np.float32))
    x = rng.standard_normal((1, C_IN, T)).astype(np.float32)
    transform("conv1d", d / "conv1d.onnx", d / "conv1d.mlir")
    calibrate(d / "conv1d.mlir", d / "dataset", d / "cali_table", progress=False)
    return d, {"x": x}


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_conv1d(prepared, chip):
    d, inputs = prepared
    (want,) = ort.InferenceSession(str(d / "conv1d.onnx")).run(None, inputs)
    with compiler.make_context() as ctx:
        m = compiler.load_module(d / "conv1d.mlir", ctx)
        compiler.run_pipeline(m, "top-to-tpu-pipeline{mode=INT8 chip=%s calibration-table=%s}"
                              % (chip, d / "cali_table"))
        text = str(m)
        ref = compiler.interpret(m, inputs, all_tensors=True)
        bm = d / f"conv1d_{chip}.bmodel"
        compiler.run_pipeline(m, f"tpu-codegen-pipeline{{chip={chip} bmodel={bm} "
                                 "layer-group=false}")
    assert text.count('"tpu.Conv"') == 2
    assert "tensor<1x16x1x32x!quant.uniform<i8" in text, "the second conv computes in INT8"
    r = rt.Model(bm).run(inputs, dump_all_tensors=True)
    got = {**r.tensors, **r.outputs}
    assert compare_stages(ref, got, chip) >= 1, "no INT8 tensor was compared"
    c = cosine(want, got["y"])
    assert c >= 0.99, c
