"""Shifted-window attention as Swin computes it: tokens [1, H, W, C]
rolled (two Slices and a Concat per axis) and partitioned into windows, a
fused q/k/v projection reshaped [windows, tokens, 3, heads, d], permuted
and split with Gathers along the 3, attention per window and head with a
mask per window added at rank five, the windows reversed and rolled back,
then a residual MLP on [1, H, W, C]. The compiled module computes q, k and
v by three matmuls of their own columns, adds the mask at rank four (no
rank-5 tensor is left), and the cmodel's output matches onnxruntime on
both chips in F32 and F16. On tpu_pro in F32 the windows' gather and
scatter (matmuls by 0/1 permutations) leave: the block attends over all the
tokens, masked between windows by one constant bias."""
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

H = W = 8          # tokens per side
C, HEADS, WIN = 32, 2, 4
SHIFT = WIN // 2
D = C // HEADS
NW, T = (H // WIN) * (W // WIN), WIN * WIN


def window_model(path: Path, rng) -> None:
    def rand(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    inits = {
        "wqkv": rand(C, 3 * C, scale=C ** -0.5), "bqkv": rand(3 * C, scale=0.1),
        "wproj": rand(C, C, scale=C ** -0.5), "bproj": rand(C, scale=0.1),
        "w1": rand(C, 4 * C, scale=C ** -0.5), "b1": rand(4 * C, scale=0.1),
        "w2": rand(4 * C, C, scale=(4 * C) ** -0.5), "b2": rand(C, scale=0.1),
        "scale": np.array(D ** -0.5, np.float32),
        "mask": np.where(rng.random((1, NW, 1, T, T)) < 0.3, -100.0, 0.0).astype(np.float32),
        "s_masked": np.array([1, NW, HEADS, T, T], np.int64),
        "s_scores": np.array([NW, HEADS, T, T], np.int64),
        "s_part": np.array([1, H // WIN, WIN, W // WIN, WIN, C], np.int64),
        "s_win": np.array([NW, T, C], np.int64),
        "s_qkv": np.array([NW, T, 3, HEADS, D], np.int64),
        "s_back": np.array([1, H // WIN, W // WIN, WIN, WIN, C], np.int64),
        "s_img": np.array([1, H, W, C], np.int64),
        "i0": np.array(0, np.int64), "i1": np.array(1, np.int64),
        "i2": np.array(2, np.int64),
    }
    n = helper.make_node
    def roll(x, y, shift, axis):
        """torch.roll of x by `shift` along `axis` as exported: two Slices
        and their Concat."""
        size = (H, W)[axis - 1]
        inits[f"{y}_lo"] = np.array([-shift % size], np.int64)
        inits[f"{y}_hi"] = np.array([size], np.int64)
        inits[f"{y}_zero"] = np.array([0], np.int64)
        inits[f"{y}_axis"] = np.array([axis], np.int64)
        return [n("Slice", [x, f"{y}_lo", f"{y}_hi", f"{y}_axis"], [f"{y}_a"]),
                n("Slice", [x, f"{y}_zero", f"{y}_lo", f"{y}_axis"], [f"{y}_b"]),
                n("Concat", [f"{y}_a", f"{y}_b"], [y], axis=axis)]

    nodes = roll("x", "xh", -SHIFT, 1) + roll("xh", "xs", -SHIFT, 2) + [
        n("Reshape", ["xs", "s_part"], ["xp"]),
        n("Transpose", ["xp"], ["xt"], perm=[0, 1, 3, 2, 4, 5]),
        n("Reshape", ["xt", "s_win"], ["xw"]),
        n("MatMul", ["xw", "wqkv"], ["qkv0"]),
        n("Add", ["qkv0", "bqkv"], ["qkv1"]),
        n("Reshape", ["qkv1", "s_qkv"], ["qkv2"]),
        n("Transpose", ["qkv2"], ["qkv"], perm=[2, 0, 3, 1, 4]),
        n("Gather", ["qkv", "i0"], ["q0"], axis=0),
        n("Gather", ["qkv", "i1"], ["k"], axis=0),
        n("Gather", ["qkv", "i2"], ["v"], axis=0),
        n("Mul", ["q0", "scale"], ["q"]),
        n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["q", "kt"], ["s0"]),
        n("Reshape", ["s0", "s_masked"], ["s1"]),
        n("Add", ["s1", "mask"], ["s2"]),
        n("Reshape", ["s2", "s_scores"], ["s"]),
        n("Softmax", ["s"], ["p"], axis=-1),
        n("MatMul", ["p", "v"], ["o"]),
        n("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ot", "s_win"], ["ow"]),
        n("MatMul", ["ow", "wproj"], ["pr0"]),
        n("Add", ["pr0", "bproj"], ["pr"]),
        n("Reshape", ["pr", "s_back"], ["pb"]),
        n("Transpose", ["pb"], ["pbt"], perm=[0, 1, 3, 2, 4, 5]),
        n("Reshape", ["pbt", "s_img"], ["as"]),
        *roll("as", "ah", SHIFT, 1), *roll("ah", "a", SHIFT, 2),
        n("Add", ["x", "a"], ["r"]),
        n("MatMul", ["r", "w1"], ["h0"]),
        n("Add", ["h0", "b1"], ["h1"]),
        n("Gelu", ["h1"], ["h"]),
        n("MatMul", ["h", "w2"], ["m0"]),
        n("Add", ["m0", "b2"], ["m"]),
        n("Add", ["r", "m"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "window_attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, H, W, C])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, H, W, C])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]),
              str(path))


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("window")
    rng = np.random.default_rng(5)
    window_model(tmp / "w.onnx", rng)
    x = rng.standard_normal((1, H, W, C)).astype(np.float32)
    np.savez(tmp / "in.npz", x=x)
    transform("window", tmp / "w.onnx", tmp / "w.mlir")
    ref = ort.InferenceSession(str(tmp / "w.onnx")).run(None, {"x": x})[0]
    np.savez(tmp / "ref.npz", y=ref)
    return tmp


@pytest.mark.parametrize("chip", ["tpu_edge", "tpu_pro"])
@pytest.mark.parametrize("mode", ["F32", "F16"])
def test_window_attention_matches_onnxruntime(model, chip, mode):
    r = deploy(model / "w.mlir", quantize=mode, chip=chip,
               model_path=model / f"w_{chip}_{mode}.bmodel", test_input=model / "in.npz",
               test_reference=model / "ref.npz", tolerance=(0.999, 0.97))
    final = r.final_mlir.read_text()
    # q, k and v: three matmuls by [C, C] blocks of the fused weight.
    assert final.count(f"tensor<{C}x{C}xf") >= 4  # q, k, v and the projection
    assert f"tensor<{C}x{3 * C}xf" not in final
    add_shapes = re.findall(r'"tpu\.Add".*-> tensor<((?:\d+x)+)f', final)
    assert add_shapes and all(shape.count("x") <= 4 for shape in add_shapes)
    if chip == "tpu_pro" and mode == "F32":
        # The windows' gather and scatter (matmuls by 0/1 permutations)
        # leave: attention over all the tokens, masked by one constant.
        assert re.search(rf'"tpu\.Softmax".*-> tensor<1x{HEADS}x{H * W}x{H * W}xf32>', final)
        assert f"tensor<{NW}x{T}x{H * W}xf32>" not in final
        assert f"tensor<{H * W}x{H * W}xf32>" not in final
    assert r.passed
