"""Conv tile prologues: a BatchNorm and ReLU (a per-channel scale, bias
and relu) feeding only a conv too big to share a layer group with it (a
DenseNet transition on tpu_edge) run on each input tile of the conv right
after its load, so the normalized feature map never goes through DDR. The
compiled module groups the pair (tile_epilogue) and the cmodel's output
matches onnxruntime in F32, F16 and BF16, with padding (the pad rows stay
zero after the prologue) and without."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tpuc.compare import cosine
from tpuc.deploy import deploy
from tpuc.transform import transform

# (input channels, output channels, kernel, size): a 1024->512 1x1 filter
# takes 2 MiB in F32 and a 256x256x3x3 one 2.25 MiB, more than tpu_edge's
# LMEM.
CASES = {"transition": (1024, 512, 1, 14), "padded3x3": (256, 256, 3, 14)}


def transition_model(path: Path, ic: int, oc: int, k: int, h: int, rng) -> None:
    w = (rng.standard_normal((oc, ic, k, k)) / np.sqrt(k * k * ic)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, ic).astype(np.float32)
    # Shifts of both signs, so the relu clips part of every channel.
    shift = (rng.standard_normal(ic) * 0.5).astype(np.float32)
    mean = (rng.standard_normal(ic) * 0.2).astype(np.float32)
    var = rng.uniform(0.5, 2.0, ic).astype(np.float32)
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"],
                              name="norm"),
             helper.make_node("Relu", ["n"], ["a"], name="relu"),
             helper.make_node("Conv", ["a", "w"], ["y"], name="conv", kernel_shape=[k, k],
                              pads=[k // 2] * 4)]
    graph = helper.make_graph(
        nodes, "transition",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, ic, h, h])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, oc, h, h])],
        [numpy_helper.from_array(a, n) for a, n in
         ((w, "w"), (scale, "s"), (shift, "b"), (mean, "m"), (var, "v"))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


# Mode, least cosine and largest error relative to the output's range
# against onnxruntime (F16 and BF16 round the weights and activations).
MODES = {"F32": (0.99999, 1e-4), "F16": (0.9999, 2e-3), "BF16": (0.9999, 2e-2)}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_bn_relu_prologue_matches_onnxruntime(tmp_path, case, mode):
    ic, oc, k, h = CASES[case]
    rng = np.random.default_rng(7)
    transition_model(tmp_path / "t.onnx", ic, oc, k, h, rng)
    inputs = {"x": rng.standard_normal((1, ic, h, h)).astype(np.float32)}
    np.savez(tmp_path / "in.npz", **inputs)
    transform("t", tmp_path / "t.onnx", tmp_path / "t.mlir")
    ref = ort.InferenceSession(str(tmp_path / "t.onnx")).run(None, inputs)[0]
    r = deploy(tmp_path / "t.mlir", quantize=mode, chip="tpu_edge",
               model_path=tmp_path / "t.bmodel", test_input=tmp_path / "in.npz",
               tolerance=(0.99, 0.9))
    final = r.final_mlir.read_text()
    assert "tile_epilogue = true" in final
    assert r.passed
    got = np.load(r.model_outputs)["y"]
    min_cos, rel = MODES[mode]
    assert cosine(got, ref) >= min_cos, f"{mode} against onnxruntime"
    np.testing.assert_allclose(got, ref, atol=rel * np.abs(ref).max())
