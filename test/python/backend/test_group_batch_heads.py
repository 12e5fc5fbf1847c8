"""Attention over a batch of sequences inside layer groups: the Q, K, V
columns sliced from one projection (copies within lanes), the mask added
to the scores broadcast over the heads or over every batch (the TIU
broadcasting the mask along the split batch), and the transpose of K of
every sequence and head loaded by strided moves. The cmodel matches the
Tpu interpreter and an independent numpy reference."""
import numpy as np
import pytest

from tpuc.testing.groups import layer_groups

from backendutil import CHIPS, Net
from test_layer_group import run

B, T, D, HEADS = 2, 8, 32, 2
HD = D // HEADS


def batch_heads_net(rng, mask_batched: bool):
    """softmax(Q K^T + mask) V of a batch, Q, K, V sliced from one [D, 3D]
    projection; the mask is [B, 1, T, T] (`mask_batched`) or [1, 1, T, T]."""
    net = Net()
    x = net.input("x", rng.standard_normal((B, T, D)))
    mb = B if mask_batched else 1
    mask_in = np.where(rng.random((mb, 1, T, T)) < 0.3, -1e4, 0.0)
    mask = net.input("mask", mask_in)
    none = net.none()
    w = rng.standard_normal((D, 3 * D)) / np.sqrt(D)
    qkv = net.op("tpu.MatMul", [x, net.weight("wqkv", w), none], (B, T, 3 * D), "", "qkv")

    def part(i, name):
        return net.op("tpu.Slice", [qkv], (B, T, D),
                      f"offsets = [0, 0, {i * D}], steps = [1, 1, 1]", name)

    def heads(v, name):
        r = net.op("tpu.Reshape", [v], (B, T, HEADS, HD), "", f"{name}r")
        return r

    qt = net.op("tpu.Permute", [heads(part(0, "q"), "q")], (B, HEADS, T, HD),
                "order = [0, 2, 1, 3]", "qt")
    kt = net.op("tpu.Permute", [heads(part(1, "k"), "k")], (B, HEADS, HD, T),
                "order = [0, 2, 3, 1]", "kt")
    vt = net.op("tpu.Permute", [heads(part(2, "v"), "v")], (B, HEADS, T, HD),
                "order = [0, 2, 1, 3]", "vt")
    s = net.op("tpu.MatMul", [qt, kt, none], (B, HEADS, T, T), "", "s")
    sm = net.op("tpu.Add", [s, mask], (B, HEADS, T, T), "", "sm")
    p = net.op("tpu.Softmax", [sm], (B, HEADS, T, T), "axis = 3 : i64", "p")
    c = net.op("tpu.MatMul", [p, vt, none], (B, HEADS, T, HD), "", "c")
    ct = net.op("tpu.Permute", [c], (B, T, HEADS, HD), "order = [0, 2, 1, 3]", "ct")
    o = net.op("tpu.Reshape", [ct], (B, T, D), "", "o")

    # Independent reference in float64.
    xa = net.args[0][1].astype(np.float64)
    proj = xa @ w
    split = lambda a: a.reshape(B, T, HEADS, HD).transpose(0, 2, 1, 3)  # noqa: E731
    qh, kh, vh = (split(proj[..., i * D:(i + 1) * D]) for i in range(3))
    sc = qh @ kh.transpose(0, 1, 3, 2) + mask_in
    e = np.exp(sc - sc.max(-1, keepdims=True))
    ref = ((e / e.sum(-1, keepdims=True)) @ vh).transpose(0, 2, 1, 3).reshape(B, T, D)
    return net, [o], ref


@pytest.mark.parametrize("mask_batched", [True, False], ids=["mask_per_sequence", "mask_shared"])
@pytest.mark.parametrize("chip", CHIPS)
def test_batch_heads_group(chip, mask_batched, tmp_path):
    net, outs, ref = batch_heads_net(np.random.default_rng(5), mask_batched)
    text, r, _ = run(net, outs, chip, tmp_path)
    members = [line for g in layer_groups(text) for line in g]
    # The slices and the mask add compute in groups.
    assert sum('"tpu.Slice"' in line for line in members) == 3, members
    assert any('"tpu.Add"' in line for line in members), members
    np.testing.assert_allclose(r.outputs["o"], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("chip", CHIPS)
def test_outer_product_mask_group(chip, tmp_path):
    """A mask built as a column times a row of each sequence (both operands
    broadcast) computes in the group of the scores it is added to."""
    rng = np.random.default_rng(7)
    net = Net()
    s_in = rng.standard_normal((B, HEADS, T, T))
    col_in = rng.standard_normal((1, 1, T, 1))
    row_in = np.where(rng.random((B, 1, 1, T)) < 0.3, 0.0, 1.0)
    x = net.input("x", s_in)
    col = net.input("col", col_in)
    row = net.input("row", row_in)
    none = net.none()
    w = rng.standard_normal((B, HEADS, T, T)) / np.sqrt(T)
    s = net.op("tpu.MatMul", [x, net.weight("w", w), none], (B, HEADS, T, T), "", "s")
    m = net.op("tpu.Mul", [col, row], (B, 1, T, T), "", "m")
    a = net.op("tpu.Add", [s, m], (B, HEADS, T, T), "", "a")
    text, r, _ = run(net, [a], chip, tmp_path)
    members = [line for g in layer_groups(text) for line in g]
    assert any('"tpu.Mul"' in line for line in members), members
    ref = s_in.astype(np.float64) @ w + col_in * row_in
    np.testing.assert_allclose(r.outputs["a"], ref, rtol=1e-4, atol=1e-4)


def first_token(rng):
    """A projection of 17 tokens and the first token's row of it, flattened."""
    net = Net()
    x_in = rng.standard_normal((1, 17, D))
    w = rng.standard_normal((D, D)) / np.sqrt(D)
    y = net.op("tpu.MatMul", [net.input("x", x_in), net.weight("w", w), net.none()],
               (1, 17, D), "", "y")
    t = net.op("tpu.Slice", [y], (1, 1, D), "offsets = [0, 0, 0], steps = [1, 1, 1]", "t")
    return net, x_in, w, y, net.op("tpu.Reshape", [t], (1, D), "", "f")


@pytest.mark.parametrize("chip", CHIPS)
def test_first_token_slice_group(chip, tmp_path):
    """The first token of each sequence, sliced from a result the group
    computes, is a copy within lanes (lane 0 of the rows)."""
    net, x_in, w, y, f = first_token(np.random.default_rng(8))
    o = net.op("tpu.Active", [f], (1, D), 'mode = "tanh"', "o")
    text, r, _ = run(net, [y, o], chip, tmp_path)
    members = [line for g in layer_groups(text) for line in g]
    assert any('"tpu.Slice"' in line for line in members), members
    yr = x_in.astype(np.float64) @ w
    np.testing.assert_allclose(r.outputs["y"], yr, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r.outputs["o"], np.tanh(yr[:, 0, :]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("chip", CHIPS)
def test_first_token_head_group(chip, tmp_path):
    """A classifier head (a single row times a weight, whose weight the
    blob holds transposed) computes in the group of the token it reads."""
    rng = np.random.default_rng(9)
    net, x_in, w, y, f = first_token(rng)
    h = rng.standard_normal((D, 10)) / np.sqrt(D)
    bias = rng.standard_normal(10)
    o = net.op("tpu.MatMul", [f, net.weight("h", h), net.weight("b", bias)], (1, 10), "", "o")
    text, r, _ = run(net, [y, o], chip, tmp_path)
    members = [line for g in layer_groups(text) for line in g]
    assert sum('"tpu.MatMul"' in line for line in members) == 2, members
    yr = x_in.astype(np.float64) @ w
    np.testing.assert_allclose(r.outputs["o"], yr[:, 0, :] @ h + bias, rtol=1e-4, atol=1e-4)
