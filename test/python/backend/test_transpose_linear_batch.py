"""A linear layer over a batch of few-token sequences on tpu_pro
(tpu-transpose-linear): computed transposed, Y^T = W^T X^T, its features on
the lanes, by a weight and an identity without batch dims that the matmul
instruction shares by every batch; the pair computes in a layer group and
the cmodel matches numpy."""
from pathlib import Path

import numpy as np

from tpuc import compiler
from tpuc import runtime as rt
from tpuc.testing.groups import layer_groups

from backendutil import Net

B, T, D, HEADS = 2, 8, 32, 2


def test_batched_linear_transposed_in_group(tmp_path):
    rng = np.random.default_rng(11)
    net = Net()
    x_in = rng.standard_normal((B, T, D))
    w = rng.standard_normal((D, D)) / np.sqrt(D)
    bias = rng.standard_normal(D)
    x = net.input("x", x_in)
    q = net.op("tpu.MatMul", [x, net.weight("w", w), net.weight("b", bias)], (B, T, D), "", "q")
    # The head split (a Reshape, whose batch does not fold) keeps the
    # layer's batch of 8-row matrices: plain, it would fill 8 of 64 lanes.
    h = net.op("tpu.Reshape", [q], (B, T, HEADS, D // HEADS), "", "h")
    o = net.op("tpu.Active", [h], (B, T, HEADS, D // HEADS), 'mode = "tanh"', "o")
    tmp = Path(tmp_path)
    wfile = tmp / "weights.npz"
    np.savez(wfile, **net.weights)
    bm = tmp / "net.bmodel"
    with compiler.make_context() as ctx:
        m = compiler.parse_module(net.text([o], str(wfile)), ctx)
        compiler.run_pipeline(m, "tpu-transpose-linear{chip=tpu_pro},"
                                 "tpu-layer-group{chip=tpu_pro},"
                                 "tpu-assign-address{chip=tpu_pro},"
                                 f"tpu-codegen{{chip=tpu_pro bmodel={bm}}}")
        text = str(m)
    members = [line for g in layer_groups(text) for line in g]
    # W^T [D, D] times the batched X as the transposed right operand, and
    # the identity [T, T] bringing the tokens back, both in the group.
    flipped = [line for line in members if '"tpu.MatMul"' in line]
    assert len(flipped) == 2, members
    assert f"(tensor<{D}x{D}xf32>, tensor<{B}x{T}x{D}xf32>, none) -> tensor<{B}x{D}x{T}xf32>" \
        in flipped[0], flipped
    assert f"(tensor<{T}x{T}xf32>, tensor<{B}x{D}x{T}xf32>, tensor<{D}xf32>)" in flipped[1], flipped
    r = rt.Model(bm).run({"x": x_in})
    ref = np.tanh((x_in @ w + bias).reshape(B, T, HEADS, D // HEADS))
    np.testing.assert_allclose(r.outputs["o"], ref, rtol=1e-4, atol=1e-4)
