"""A batch of matrices made one inside a layer group (a Swin block's window
reverse: a Reshape of [64, 32] tokens into an 8 x 8 map) feeds a residual
add, whose result the group holds as the 64 rows; the block's LayerNorm
and MLP after it, which compute each row on its own (they fold their
batch), read those rows in the same group rather than in a group of their
own after a DDR round trip. The cmodel matches the Tpu interpreter and
numpy."""
import math

import numpy as np
import pytest

from tpuc.testing.groups import layer_groups

from backendutil import CHIPS, Net
from test_layer_group import run


@pytest.mark.parametrize("chip", CHIPS)
def test_layer_norm_reads_folded_rows(chip, tmp_path):
    rng = np.random.default_rng(21)
    net = Net()
    x_in = rng.standard_normal((64, 32))
    r_in = rng.standard_normal((1, 8, 8, 32))
    w0 = rng.standard_normal((32, 32)) / np.sqrt(32)
    w1 = rng.standard_normal((32, 64)) / np.sqrt(32)
    x = net.input("x", x_in)
    res = net.input("res", r_in)
    none = net.none()
    p = net.op("tpu.MatMul", [x, net.weight("w0", w0), none], (64, 32), "", "p")
    m = net.op("tpu.Reshape", [p], (1, 8, 8, 32), "", "m")
    a = net.op("tpu.Add", [res, m], (1, 8, 8, 32), "", "a")
    n = net.op("tpu.LayerNorm", [a, none, none], (1, 8, 8, 32),
               "axis = 3 : i64, epsilon = 1.0e-5 : f64", "n")
    y = net.op("tpu.MatMul", [n, net.weight("w1", w1), none], (1, 8, 8, 64), "", "y")
    o = net.op("tpu.Active", [y], (1, 8, 8, 64), 'mode = "gelu"', "o")
    text, r, _ = run(net, [a, o], chip, tmp_path)
    groups = layer_groups(text)
    assert len(groups) == 1, groups
    assert any('"tpu.LayerNorm"' in line for line in groups[0]), groups
    ar = r_in + (x_in @ w0).reshape(1, 8, 8, 32)
    nr = (ar - ar.mean(-1, keepdims=True)) / np.sqrt(ar.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(r.outputs["a"], ar, rtol=1e-4, atol=1e-4)
    yr = nr @ w1
    gelu = 0.5 * yr * (1 + np.vectorize(math.erf)(yr / np.sqrt(2)))
    np.testing.assert_allclose(r.outputs["o"], gelu, rtol=1e-4, atol=1e-4)
