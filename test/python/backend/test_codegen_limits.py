"""Shapes beyond a single LMEM tile on tpu_edge (16 lanes x 64 KiB), each
compiled for both chips and compared with the Tpu interpreter (cosine >=
0.99999, max abs diff <= 1e-4 * max(1, max|ref|)):

* a conv whose per-output-channel filter exceeds a lane: input-channel
  slices accumulate into the output tile,
* LayerNorm / Softmax whose normalised row exceeds LMEM: chunked
  reductions over the row,
* fully-connected layers with M = 1: N spread over the lanes.
"""
from __future__ import annotations

import numpy as np
import pytest

from backendutil import CHIPS, Net, check
from test_codegen_ops import conv

pytestmark = pytest.mark.parametrize("chip", CHIPS)


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def tiu_names(o):
    return [r["name"] for r in o.stats.raw.records if r["engine"] == "TIU"]


# --- Conv: input-channel slices --------------------------------------------------

def test_conv_input_channel_split(chip, rng, tmp_path):
    # 2048*9*4 = 72 KiB of filter per output channel on tpu_edge's 64 KiB lanes.
    shape = (1, 2048, 5, 6)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    y, s = conv(net, x, shape, 20, (3, 3), pads=(1, 1, 1, 1), relu=True, limit=2.0,
                rng=rng, name="c")
    o = check(net, [y], chip, tmp_path)
    if chip == "tpu_edge":  # 2 output-channel tiles x 4 slices
        assert tiu_names(o).count("conv") >= 8


def test_conv_input_channel_split_grouped(chip, rng, tmp_path):
    # Two groups of 1800 input channels, 5x5 kernel, no bias, strided.
    shape = (1, 3600, 6, 6)
    net = Net()
    x = net.input("x", rng.standard_normal(shape) * 0.2)
    y, _ = conv(net, x, shape, 4, (5, 5), stride=(2, 2), pads=(2, 2, 2, 2), group=2,
                bias=False, rng=rng, name="g")
    check(net, [y], chip, tmp_path)


# --- LayerNorm / Softmax: rows longer than LMEM ----------------------------------

def test_layernorm_long_rows(chip, rng, tmp_path):
    # A 3552-element row needs ~97 KiB per lane on tpu_edge; the mean is far
    # from zero so an uncentred variance would lose digits.
    net = Net()
    x = net.input("x", rng.standard_normal((3, 20, 3552)) * 2 + 5)
    w = net.weight("g", rng.standard_normal(3552))
    b = net.weight("beta", rng.standard_normal(3552))
    ln = net.op("tpu.LayerNorm", [x, w, b], (3, 20, 3552),
                "axis = 2 : i64, epsilon = 1.0e-5 : f64", "ln")
    # Normalising over two dims with no affine part: rows of 2 x 9000.
    x2 = net.input("x2", rng.standard_normal((5, 2, 9000)))
    ln2 = net.op("tpu.LayerNorm", [x2, net.none(), net.none()], (5, 2, 9000),
                 "axis = 1 : i64, epsilon = 1.0e-3 : f64", "ln_noaffine")
    o = check(net, [ln, ln2], chip, tmp_path)
    if chip == "tpu_edge":  # chunked: the mean is a sum divided by the length
        assert "binary.div_scalar" in tiu_names(o)


def test_softmax_long_axis(chip, rng, tmp_path):
    # 6000 elements along the softmax axis, last and middle (I = 3).
    net = Net()
    x = net.input("x", rng.standard_normal((3, 6000)) * 4)
    sm = net.op("tpu.Softmax", [x], (3, 6000), "axis = 1 : i64", "softmax_last")
    x2 = net.input("x2", rng.standard_normal((2, 7000, 3)) * 4)
    sm2 = net.op("tpu.Softmax", [x2], (2, 7000, 3), "axis = 1 : i64", "softmax_mid")
    o = check(net, [sm, sm2], chip, tmp_path)
    if chip == "tpu_edge":  # chunked: exp in the sum pass and the output pass
        names = tiu_names(o)
        assert names.count("active.exp") == 2 * names.count("binary.div")


# --- MatMul with one row -----------------------------------------------------------

@pytest.mark.parametrize("k,n,bias,relu", [(50, 29, True, True), (3000, 1000, True, False),
                                           (9000, 40, False, True)])
def test_matmul_single_row(chip, rng, tmp_path, k, n, bias, relu):
    # [1, K] x [K, N]: N over the lanes; a K = 9000 row of the transposed
    # weight exceeds half a lane on tpu_edge, so K tiles accumulate.
    net = Net()
    x = net.input("x", rng.standard_normal((1, k)))
    w = net.weight("w", rng.standard_normal((k, n)) / np.sqrt(k))
    b = net.weight("b", rng.standard_normal(n)) if bias else net.none()
    y = net.op("tpu.MatMul", [x, w, b], (1, n), f"do_relu = {str(relu).lower()}", "fc")
    o = check(net, [y], chip, tmp_path)
    mm = [r for r in o.stats.raw.records if r["name"] == "matmul"]
    # The TIU time is a lane's share (~N / lanes rows of K), not N rows.
    assert sum(r["cycles"] for r in mm) < n * k / 16 / 4 + 20 * len(mm)


def test_matmul_single_row_batched_input(chip, rng, tmp_path):
    # [1, 1, K] input, weight also used by a second, M = 3 matmul.
    net = Net()
    x = net.input("x", rng.standard_normal((1, 1, 70)))
    x3 = net.input("x3", rng.standard_normal((3, 70)))
    w = net.weight("w", rng.standard_normal((70, 40)))
    y = net.op("tpu.MatMul", [x, w, net.none()], (1, 1, 40), "", "fc1")
    y3 = net.op("tpu.MatMul", [x3, w, net.none()], (3, 40), "", "fc3")
    check(net, [y, y3], chip, tmp_path)
