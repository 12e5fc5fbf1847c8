"""INT8 Tpu ops (hand-written IR in the form the INT8 lowering produces)
compiled for both chips: every tensor the cmodel dumps equals the Tpu
interpreter's bit for bit. Shapes include odd sizes, broadcasting, per-channel
requantization, filters split into input-channel slices and tensors larger
than local memory."""
from __future__ import annotations

import math

import numpy as np
import pytest

from backendutil import CHIPS, Net, check_exact

pytestmark = pytest.mark.parametrize("chip", CHIPS)


def q8(scale: float, zp: int = 0) -> str:
    return f"!quant.uniform<i8:f32, {scale!r}:{zp}>" if zp else f"!quant.uniform<i8:f32, {scale!r}>"


def q8_channels(scales) -> str:
    return "!quant.uniform<i8:f32:0, {" + ",".join(repr(float(s)) for s in scales) + "}>"


def quantize_multiplier(real: float) -> tuple[int, int]:
    """QuantParams.h's quantizeMultiplier."""
    if not real > 0:
        return 0, 0
    frac, exp = math.frexp(real)
    m = int(math.floor(frac * 2 ** 31 + 0.5))
    if m == 2 ** 31:
        m //= 2
        exp += 1
    shift = 31 - exp
    while shift > 62:
        m >>= 1
        shift -= 1
    if shift < 0:
        shift, m = 0, 2 ** 31 - 1
    return m, shift


def i64s(v):
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def quant_input(net, name, shape, rng, scale, zp=0, elem="f32"):
    """A float input quantized by a QuantCast, as the lowering's edges are."""
    x = net.input(name, rng.standard_normal(shape) * 2)
    if elem != "f32":
        x = net.op("tpu.QuantCast", [x], shape, "", f"{name}_{elem}", elem=elem)
    return net.op("tpu.QuantCast", [x], shape, "", f"{name}_q", elem=q8(scale, zp)), (scale, zp)


def dequant(net, x, shape, name, elem="f32"):
    return net.op("tpu.QuantCast", [x], shape, "", name, elem=elem)


def qconv(net, x, xs, xshape, oc, k, rng, name, out=(0.08, -5), stride=(1, 1),
          pads=(0, 0, 0, 0), group=1, bias=True, relu=False, per_channel=True):
    n, ic, h, w = xshape
    wscale = rng.uniform(0.002, 0.02, oc)
    wq = rng.integers(-127, 128, (oc, ic // group, k[0], k[1]), dtype=np.int8)
    wt = net.weight(f"{name}_w", wq, q8_channels(wscale))
    b = (net.weight(f"{name}_b", rng.integers(-3000, 3000, oc, dtype=np.int32), "i32")
         if bias else net.none())
    reals = xs[0] * wscale / out[0]
    rows = [quantize_multiplier(r) for r in (reals if per_channel else reals[:1])]
    qt = net.weight(f"{name}_q", np.array(rows, np.int32), "i32")
    oh = (h + pads[0] + pads[2] - k[0]) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // stride[1] + 1
    attrs = (f"kernel_shape = {i64s(k)}, strides = {i64s(stride)}, pads = {i64s(pads)}, "
             f"dilations = [1, 1], group = {group} : i64, do_relu = {str(relu).lower()}")
    s = (n, oc, oh, ow)
    return net.op("tpu.Conv", [x, wt, b, qt], s, attrs, name, elem=q8(*out)), s, out


def test_conv_per_channel(chip, rng, tmp_path):
    net = Net()
    x, xs = quant_input(net, "x", (2, 5, 13, 11), rng, 0.03)
    y, s, ys = qconv(net, x, xs, (2, 5, 13, 11), 21, (3, 3), rng, "c", stride=(2, 1),
                     pads=(1, 1, 1, 1), relu=True)
    z, s2, _ = qconv(net, y, ys, s, 7, (1, 1), rng, "pw", out=(0.5, 3), bias=False,
                     per_channel=False)
    check_exact(net, [dequant(net, z, s2, "out")], chip, tmp_path)


def test_conv_depthwise_and_large(chip, rng, tmp_path):
    # 2 x 40 x 70 x 96 int8 spatially tiled on tpu_edge; depthwise groups.
    shape = (1, 40, 70, 96) if chip == "tpu_edge" else (1, 64, 130, 128)
    net = Net()
    x, xs = quant_input(net, "x", shape, rng, 0.02, 4)
    pad = net.op("tpu.Pad", [x], (shape[0], shape[1], shape[2] + 2, shape[3] + 2),
                 'pads = [0, 0, 1, 1, 0, 0, 1, 1], mode = "constant", value = 4.0 : f64',
                 "pad", elem=q8(*xs))
    ps = (shape[0], shape[1], shape[2] + 2, shape[3] + 2)
    y, s, _ = qconv(net, pad, xs, ps, shape[1], (3, 3), rng, "dw", group=shape[1],
                    relu=True)
    check_exact(net, [y], chip, tmp_path)


def test_conv_input_channel_slices(chip, rng, tmp_path):
    # A filter of 4096 x 5 x 5 int8 per output channel does not fit a lane
    # next to its input: slices accumulate into the INT32 tile.
    ic = 4096 if chip == "tpu_edge" else 12288
    net = Net()
    x, xs = quant_input(net, "x", (1, ic, 6, 6), rng, 0.05)
    y, s, _ = qconv(net, x, xs, (1, ic, 6, 6), 20, (5, 5), rng, "big", out=(4.0, 0),
                    pads=(2, 2, 2, 2), relu=True)
    o = check_exact(net, [y], chip, tmp_path)
    assert o.stats.tiu_instructions >= 7  # several slices per output tile


def test_conv_row_tile_of_pads_only(chip, rng, tmp_path):
    # Output rows 0 and 5 read only pad rows. Today's tile choice does not cut
    # a tile of pad rows only here; test_int8_asym_pad's
    # test_row_tiles_of_pads_only reaches that path.
    net = Net()
    x, xs = quant_input(net, "x", (1, 256, 8, 8), rng, 0.03)
    y, s, _ = qconv(net, x, xs, (1, 256, 8, 8), 512, (1, 1), rng, "c", stride=(2, 2),
                    pads=(1, 1, 3, 3), relu=True)
    check_exact(net, [dequant(net, y, s, "out")], chip, tmp_path)


def qmatmul(net, x, xs, right, rs, shape, rng, name, out, bias=True, relu=False):
    n = shape[-1]
    b = (net.weight(f"{name}_b", rng.integers(-5000, 5000, n, dtype=np.int32), "i32")
         if bias else net.none())
    qt = net.weight(f"{name}_q", np.array([quantize_multiplier(xs[0] * rs / out[0])],
                                          np.int32), "i32")
    return net.op("tpu.MatMul", [x, right, b, qt], shape,
                  f"do_relu = {str(relu).lower()}", name, elem=q8(*out))


@pytest.mark.parametrize("m,k,n", [(1, 300, 70), (37, 50, 21), (200, 700, 300)])
def test_matmul_weight(chip, rng, tmp_path, m, k, n):
    net = Net()
    x, xs = quant_input(net, "x", (m, k), rng, 0.04)
    ws = 0.01
    w = net.weight("w", rng.integers(-127, 128, (k, n), dtype=np.int8), q8(ws))
    y = qmatmul(net, x, xs, w, ws, (m, n), rng, "fc", (0.3, -7), relu=True)
    check_exact(net, [y], chip, tmp_path)


def test_matmul_activations(chip, rng, tmp_path):
    net = Net()
    a, as_ = quant_input(net, "a", (3, 4, 19, 33), rng, 0.05)
    b, bs = quant_input(net, "b", (3, 4, 33, 17), rng, 0.07)
    y = qmatmul(net, a, as_, b, bs[0], (3, 4, 19, 17), rng, "bmm", (0.9, 2), bias=False)
    check_exact(net, [y], chip, tmp_path)


@pytest.mark.parametrize("kind", ["Add", "Sub", "Mul"])
def test_binary(chip, rng, tmp_path, kind):
    net = Net()
    a, as_ = quant_input(net, "a", (2, 19, 6, 7), rng, 0.03, -3)
    b, bs = quant_input(net, "b", (2, 19, 6, 7), rng, 0.05, 9)
    c, cs = quant_input(net, "c", (1, 19, 1, 7), rng, 0.02)
    out = q8(0.06, 1) if kind != "Mul" else q8(0.01, -2)
    y = net.op(f"tpu.{kind}", [a, b], (2, 19, 6, 7), "do_relu = true", "same", elem=out)
    z = net.op(f"tpu.{kind}", [y, c], (2, 19, 6, 7), "", "bcast", elem=out)
    check_exact(net, [dequant(net, z, (2, 19, 6, 7), "out")], chip, tmp_path)


def test_max_min_requant_lut(chip, rng, tmp_path):
    net = Net()
    shape = (3, 70, 33)
    a, xs = quant_input(net, "a", shape, rng, 0.03, 5)
    b, _ = quant_input(net, "b", shape, rng, 0.03, 5)
    mx = net.op("tpu.Max", [a, b], shape, "", "mx", elem=q8(*xs))
    mn = net.op("tpu.Min", [mx, b], shape, "", "mn", elem=q8(*xs))
    rq = net.op("tpu.Requant", [mn], shape, "", "rq", elem=q8(0.011, -20))
    table = net.weight("table", rng.integers(-128, 128, 256, dtype=np.int8), "i8")
    lut = net.op("tpu.Lut", [rq, table], shape, "", "lut", elem=q8(0.02, 3))
    check_exact(net, [lut, dequant(net, lut, shape, "out")], chip, tmp_path)


def test_pools(chip, rng, tmp_path):
    net = Net()
    shape = (2, 20, 23, 19)
    x, xs = quant_input(net, "x", shape, rng, 0.04, -6)
    mp = net.op("tpu.MaxPool", [x], (2, 20, 12, 10),
                "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]", "mp",
                elem=q8(*xs))
    ap = net.op("tpu.AvgPool", [x], (2, 20, 12, 10),
                "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]", "ap",
                elem=q8(0.013, 2))
    apc = net.op("tpu.AvgPool", [mp], (2, 20, 6, 5),
                 "kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], "
                 "count_include_pad = true", "apc", elem=q8(0.07))
    gap = net.op("tpu.AvgPool", [x], (2, 20, 1, 1),
                 "kernel_shape = [23, 19], strides = [1, 1], pads = [0, 0, 0, 0]", "gap",
                 elem=q8(0.002, 1))
    check_exact(net, [ap, apc, gap], chip, tmp_path)


def test_data_movement(chip, rng, tmp_path):
    net = Net()
    x, xs = quant_input(net, "x", (2, 3, 5, 7), rng, 0.05, 2)
    t = q8(*xs)
    r = net.op("tpu.Reshape", [x], (6, 35), "", "flat", elem=t)
    p = net.op("tpu.Permute", [x], (2, 5, 7, 3), "order = [0, 2, 3, 1]", "nhwc", elem=t)
    s = net.op("tpu.Slice", [x], (2, 2, 3, 3), "offsets = [0, 2, 4, 1], steps = [1, -1, -2, 2]",
               "slice", elem=t)
    c = net.op("tpu.Concat", [x, x], (2, 6, 5, 7), "axis = 1 : i64, do_relu = true", "cat",
               elem=t)
    u = net.op("tpu.Upsample", [x], (2, 3, 10, 21), "scale_h = 2 : i64, scale_w = 3 : i64",
               "up", elem=t)
    pd = net.op("tpu.Pad", [x], (2, 3, 7, 9),
                'pads = [0, 0, 1, 1, 0, 0, 1, 1], mode = "constant", value = 2.0 : f64', "pad",
                elem=t)
    check_exact(net, [r, p, s, c, u, pd], chip, tmp_path)


@pytest.mark.parametrize("elem", ["f32", "f16", "bf16"])
def test_quant_cast(chip, rng, tmp_path, elem):
    net = Net()
    shape = (5, 301)
    x, xs = quant_input(net, "x", shape, rng, 0.017, -11, elem)
    y = dequant(net, x, shape, "deq", elem)
    check_exact(net, [y], chip, tmp_path)
