"""tpu.Deconv and tpu.Interp compiled for both chips and run on the cmodel
match the Tpu interpreter, including tensors and filters larger than the
chip's local memory (row, channel and input-channel-slice tiling for Deconv;
row, column and plane tiling over the matrices' bands for Interp)."""
from __future__ import annotations

import numpy as np
import pytest

from backendutil import CHIPS, Net, check

pytestmark = pytest.mark.parametrize("chip", CHIPS)


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def i64s(v):
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def deconv(net, x, xshape, oc, k, stride, pads=(0, 0, 0, 0), dil=(1, 1), group=1,
           out_pad=(0, 0), rng=None, name=None):
    n, ic, h, w = xshape
    wt = net.weight(f"{name}_w", rng.standard_normal((ic, oc // group, *k)) * 0.1)
    b = net.weight(f"{name}_b", rng.standard_normal(oc))
    oh = (h - 1) * stride[0] - pads[0] - pads[2] + dil[0] * (k[0] - 1) + 1 + out_pad[0]
    ow = (w - 1) * stride[1] - pads[1] - pads[3] + dil[1] * (k[1] - 1) + 1 + out_pad[1]
    attrs = (f"kernel_shape = {i64s(k)}, strides = {i64s(stride)}, pads = {i64s(pads)}, "
             f"dilations = {i64s(dil)}, group = {group} : i64")
    return net.op("tpu.Deconv", [x, wt, b], (n, oc, oh, ow), attrs, name)


def bilinear(in_len, out_len):
    """Half-pixel bilinear interpolation matrix [out_len, in_len]."""
    m = np.zeros((out_len, in_len))
    for i in range(out_len):
        x = min(max((i + 0.5) * in_len / out_len - 0.5, 0), in_len - 1)
        x0 = int(x)
        x1 = min(x0 + 1, in_len - 1)
        m[i, x0] += 1 - (x - x0)
        m[i, x1] += x - x0
    return m


def test_deconv_large(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((1, 40, 64, 64)))
    y = deconv(net, x, (1, 40, 64, 64), 24, (4, 4), (2, 2), pads=(1, 1, 1, 1), rng=rng,
               name="up")
    check(net, [y], chip, tmp_path)


def test_deconv_input_channel_slices(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((2, 600, 5, 6)))
    y = deconv(net, x, (2, 600, 5, 6), 20, (4, 3), (2, 3), pads=(2, 0, 1, 1), dil=(1, 2),
               out_pad=(1, 2), rng=rng, name="up")
    d = deconv(net, x, (2, 600, 5, 6), 600, (3, 3), (2, 2), group=600, rng=rng, name="dw")
    check(net, [y, d], chip, tmp_path)


def test_interp_large(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((2, 9, 100, 120)))
    ah = net.weight("ah", bilinear(100, 230))
    aw = net.weight("aw", bilinear(120, 310))
    y = net.op("tpu.Interp", [x, ah, aw], (2, 9, 230, 310), "", "up")
    ah2 = net.weight("ah2", bilinear(100, 37))
    aw2 = net.weight("aw2", bilinear(120, 1))
    z = net.op("tpu.Interp", [x, ah2, aw2], (2, 9, 37, 1), "", "down")
    check(net, [y, z], chip, tmp_path)
