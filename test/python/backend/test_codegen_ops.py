"""Every Tpu op kind compiled for both chips and run on the cmodel matches the
Tpu interpreter (cosine >= 0.99999, max abs diff <= 1e-4 * max(1, max|ref|)).
Shapes include odd channel counts, sizes that do not divide the tiles and
tensors larger than the chip's local memory."""
from __future__ import annotations

import numpy as np
import pytest

from backendutil import CHIPS, Net, check

from tpuc import runtime as rt

pytestmark = pytest.mark.parametrize("chip", CHIPS)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def i64s(v):
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def conv(net, x, xshape, oc, k, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1,
         bias=True, relu=False, limit=None, rng=None, name=None, runtime_filter=False):
    n, ic, h, w = xshape
    # A runtime filter and bias are inputs of the network (trained parameters).
    make = net.input if runtime_filter else net.weight
    wt = make(f"{name}_w", rng.standard_normal((oc, ic // group, k[0], k[1])) * 0.3)
    b = make(f"{name}_b", rng.standard_normal(oc)) if bias else net.none()
    oh = (h + pads[0] + pads[2] - dil[0] * (k[0] - 1) - 1) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - dil[1] * (k[1] - 1) - 1) // stride[1] + 1
    attrs = (f"kernel_shape = {i64s(k)}, strides = {i64s(stride)}, pads = {i64s(pads)}, "
             f"dilations = {i64s(dil)}, group = {group} : i64, do_relu = {str(relu).lower()}")
    if limit is not None:
        attrs += f", relu_limit = {limit:.1f} : f64"
    return net.op("tpu.Conv", [x, wt, b], (n, oc, oh, ow), attrs, name), (n, oc, oh, ow)


# --- Conv ----------------------------------------------------------------------

def test_conv_small(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((1, 3, 8, 8)))
    y, s = conv(net, x, (1, 3, 8, 8), 8, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng, name="c")
    check(net, [y], chip, tmp_path)


def test_conv_odd_strided_dilated(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((2, 5, 13, 11)))
    y, s = conv(net, x, (2, 5, 13, 11), 21, (3, 2), stride=(2, 1), pads=(2, 0, 1, 1),
                dil=(2, 1), rng=rng, name="c")
    z, _ = conv(net, y, s, 7, (1, 1), bias=False, relu=True, limit=0.5, rng=rng, name="pw")
    check(net, [z], chip, tmp_path)


def test_conv_depthwise_and_grouped(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((1, 24, 15, 15)))
    y, s = conv(net, x, (1, 24, 15, 15), 24, (3, 3), stride=(2, 2), pads=(1, 1, 1, 1),
                group=24, rng=rng, name="dw")
    z, _ = conv(net, y, s, 10, (3, 3), pads=(1, 1, 1, 1), group=2, rng=rng, name="gc")
    check(net, [z], chip, tmp_path)


def test_conv_larger_than_lmem(chip, rng, tmp_path):
    # 4 MiB input on tpu_edge (1 MiB LMEM): output rows tiled with the halo;
    # 70 rows do not divide the tile. tpu_pro tiles the channels.
    shape = (1, 40, 70, 96) if chip == "tpu_edge" else (1, 16, 260, 256)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    y, _ = conv(net, x, shape, 19, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng, name="c")
    o = check(net, [y], chip, tmp_path)
    assert o.stats.tiu_instructions > 2


@pytest.mark.parametrize("pads", [(0, 0, 1, 1), (0, 0, 5, 5), (1, 1, 3, 3)])
def test_conv_row_tile_of_pads_only(chip, rng, tmp_path, pads):
    """A 1x1 stride-2 conv whose first or last output rows read only pad rows:
    on tpu_edge a row tile then holds no input row (zero-filled instead)."""
    net = Net()
    x = net.input("x", rng.standard_normal((1, 256, 8, 8)))
    y, _ = conv(net, x, (1, 256, 8, 8), 512, (1, 1), stride=(2, 2), pads=pads, relu=True,
                rng=rng, name="c")
    check(net, [y], chip, tmp_path)


def test_conv_1x1_stride_2_loads_every_other_row(chip, rng, tmp_path):
    """A 1x1 stride-2 conv (a ResNet downsample) loads only the rows it
    reads: its input loads step two rows in DDR, and the result matches."""
    net = Net()
    shape = (2, 32, 13, 32)
    x = net.input("x", rng.standard_normal(shape))
    y, _ = conv(net, x, shape, 48, (1, 1), stride=(2, 2), rng=rng, name="c")
    o = check(net, [y], chip, tmp_path)
    gdma = rt.Model(tmp_path / f"net_{chip}.bmodel").bmodel.networks[0].gdma
    # The input's loads: 32 channels of 32-wide rows from DDR.
    rows = [i.src[0] for i in gdma
            if i.src and i.src[0].space == rt.Space.DDR and i.src[0].shape[3] == 32
            and i.src[0].shape[1] == 32]
    assert rows and all(r.stride[2] == 2 * 32 for r in rows), [r.stride for r in rows]
    assert o.stats.gdma_instructions > 0


def test_conv_runtime_filter(chip, rng, tmp_path):
    """Filters fed as inputs (OIHW in DDR, transposed by the load): strided,
    dilated, grouped and depthwise, with and without bias."""
    net = Net()
    x = net.input("x", rng.standard_normal((2, 6, 13, 11)))
    y, s = conv(net, x, (2, 6, 13, 11), 21, (3, 2), stride=(2, 1), pads=(2, 0, 1, 1),
                dil=(2, 1), relu=True, rng=rng, name="c", runtime_filter=True)
    z, s = conv(net, y, s, 14, (3, 3), pads=(1, 1, 1, 1), group=7, bias=False, rng=rng,
                name="gc", runtime_filter=True)
    d, _ = conv(net, z, s, 14, (3, 3), pads=(1, 1, 1, 1), group=14, rng=rng, name="dw",
                runtime_filter=True)
    check(net, [d], chip, tmp_path)


def test_conv_runtime_filter_larger_than_lmem(chip, rng, tmp_path):
    shape = (1, 40, 70, 96) if chip == "tpu_edge" else (1, 16, 260, 256)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    y, _ = conv(net, x, shape, 19, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c",
                runtime_filter=True)
    check(net, [y], chip, tmp_path)


# --- MatMul --------------------------------------------------------------------

def test_matmul_weight_bias_relu(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((3, 37, 50)))
    w = net.weight("w", rng.standard_normal((50, 29)))
    b = net.weight("b", rng.standard_normal(29))
    y = net.op("tpu.MatMul", [x, w, b], (3, 37, 29), "do_relu = true", "fc")
    check(net, [y], chip, tmp_path)


def test_matmul_batched_broadcast(chip, rng, tmp_path):
    net = Net()
    a = net.input("a", rng.standard_normal((2, 1, 9, 17)))
    b = net.input("b", rng.standard_normal((3, 17, 5)))
    y = net.op("tpu.MatMul", [a, b, net.none()], (2, 3, 9, 5), "", "bmm")
    check(net, [y], chip, tmp_path)


def test_matmul_k_tiling(chip, rng, tmp_path):
    # The right operand (8 MiB) exceeds LMEM: K tiles accumulate.
    net = Net()
    x = net.input("x", rng.standard_normal((20, 4100)))
    w = net.weight("w", rng.standard_normal((4100, 520)) * 0.05)
    b = net.weight("b", rng.standard_normal(520))
    y = net.op("tpu.MatMul", [x, w, b], (20, 520), "do_relu = true", "fc")
    check(net, [y], chip, tmp_path)


@pytest.mark.parametrize("m,k,n", [
    (48, 1500, 1100),  # N tiles: output rows stay resident, left read once
    (64, 200, 6000),   # output rows too wide for tpu_edge: left stays resident
])
def test_matmul_reads_operands_once(chip, rng, tmp_path, m, k, n):
    # The tile order is chosen by DDR bytes: the weight and input are each
    # read once, however the right operand is tiled.
    net = Net()
    x = net.input("x", rng.standard_normal((m, k)))
    w = net.weight("w", rng.standard_normal((k, n)) * 0.05)
    b = net.weight("b", rng.standard_normal(n))
    y = net.op("tpu.MatMul", [x, w, b], (m, n), "do_relu = true", "fc")
    o = check(net, [y], chip, tmp_path)
    assert o.stats.gdma_bytes <= 1.02 * 4 * (m * k + k * n + n + m * n)


# --- Elementwise ---------------------------------------------------------------

@pytest.mark.parametrize("kind", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
def test_binary_same_shape(chip, kind, rng, tmp_path):
    net = Net()
    a = net.input("a", rng.standard_normal((3, 7, 5, 9)))
    b = net.input("b", rng.uniform(0.5, 2.0, (3, 7, 5, 9)))
    y = net.op(f"tpu.{kind}", [a, b], (3, 7, 5, 9), "do_relu = true", "y")
    check(net, [y], chip, tmp_path)


def test_binary_broadcast(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((2, 19, 6, 7)))
    s = net.weight("s", rng.standard_normal((1, 19, 1, 1)))
    y = net.op("tpu.Mul", [x, s], (2, 19, 6, 7), "", "per_channel")
    t = net.input("t", rng.standard_normal((4, 10, 33)))
    v = net.weight("v", rng.standard_normal(33))
    z = net.op("tpu.Add", [t, v], (4, 10, 33), "", "bias_add")
    m = net.input("m", rng.standard_normal((2, 1, 1, 10)))
    q = net.input("q", rng.standard_normal((2, 3, 10, 10)))
    u = net.op("tpu.Sub", [m, q], (2, 3, 10, 10), "", "mask")
    k = net.weight("k", np.array([0.25]))
    r = net.op("tpu.Div", [k, x], (2, 19, 6, 7), "", "scalar_first")
    col = net.input("col", rng.standard_normal((5, 1)))
    row = net.input("row", rng.standard_normal((1, 6)))
    o = net.op("tpu.Max", [col, row], (5, 6), "", "outer")
    check(net, [y, z, u, r, o], chip, tmp_path)


def test_binary_larger_than_lmem(chip, rng, tmp_path):
    shape = (1, 33, 131, 257)  # 4.4 MB per tensor, odd everywhere
    net = Net()
    a = net.input("a", rng.standard_normal(shape))
    b = net.input("b", rng.standard_normal(shape))
    y = net.op("tpu.Add", [a, b], shape, "", "sum")
    c = net.weight("c", rng.standard_normal((1, 33, 1, 1)))
    z = net.op("tpu.Mul", [y, c], shape, "", "scaled")
    check(net, [z], chip, tmp_path)


ACTIVE = [
    ('mode = "relu"', None), ('mode = "relu", max = 0.5 : f64', None),
    ('mode = "clip", min = -0.3 : f64, max = 0.7 : f64', None),
    ('mode = "sigmoid"', None), ('mode = "tanh"', None), ('mode = "gelu"', None),
    ('mode = "gelu_tanh"', None), ('mode = "silu"', None), ('mode = "erf"', None),
    ('mode = "abs"', None), ('mode = "exp"', None), ('mode = "log"', "pos"),
    ('mode = "sqrt"', "pos"), ('mode = "rsqrt"', "pos"),
    ('mode = "pow", exponent = 2.0 : f64', None), ('mode = "pow", exponent = 3.0 : f64', None),
    ('mode = "pow", exponent = -2.0 : f64', "pos"), ('mode = "pow", exponent = 0.5 : f64', "pos"),
    ('mode = "pow", exponent = 2.5 : f64', "pos"), ('mode = "pow", exponent = -1.0 : f64', "pos"),
]


def test_active(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((2, 17, 9)))
    p = net.input("p", rng.uniform(0.2, 3.0, (2, 17, 9)))
    outs = [net.op("tpu.Active", [p if domain else x], (2, 17, 9), attrs, f"act{i}")
            for i, (attrs, domain) in enumerate(ACTIVE)]
    check(net, outs, chip, tmp_path)


def test_cast(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", np.concatenate([rng.standard_normal(200) * 300,
                                       [0.0, -0.0, 127.7, -128.9, 1e-30, 255.5]]))
    outs = [net.op("tpu.Cast", [x], (206,), f'to = "{to}"', f"to_{to}")
            for to in ("f32", "f16", "bf16", "i32", "i8", "ui8", "bool")]
    check(net, outs, chip, tmp_path)


# --- Pooling and reductions ------------------------------------------------------

def pool(net, kind, x, shape, k, s, pads, extra="", name=None):
    n, c, h, w = shape
    oh = (h + pads[0] + pads[2] - k[0]) // s[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // s[1] + 1
    attrs = f"kernel_shape = {i64s(k)}, strides = {i64s(s)}, pads = {i64s(pads)}" + extra
    return net.op(f"tpu.{kind}", [x], (n, c, oh, ow), attrs, name)


def test_pool(chip, rng, tmp_path):
    shape = (2, 21, 15, 13)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    outs = [
        pool(net, "MaxPool", x, shape, (3, 3), (2, 2), (1, 1, 1, 1), name="max"),
        pool(net, "AvgPool", x, shape, (2, 2), (2, 2), (0, 0, 0, 0), name="avg"),
        pool(net, "AvgPool", x, shape, (3, 3), (2, 2), (1, 1, 2, 2),
             ", count_include_pad = true", name="avg_pad"),
        pool(net, "AvgPool", x, shape, (3, 3), (1, 1), (1, 1, 1, 1), name="avg_nopad"),
        pool(net, "AvgPool", x, shape, (15, 13), (1, 1), (0, 0, 0, 0), name="global"),
    ]
    check(net, outs, chip, tmp_path)


def test_pool_larger_than_lmem(chip, rng, tmp_path):
    shape = (1, 20, 203, 199) if chip == "tpu_edge" else (1, 8, 521, 250)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    outs = [pool(net, "MaxPool", x, shape, (3, 3), (2, 2), (1, 1, 1, 1), name="max"),
            pool(net, "AvgPool", x, shape, (3, 3), (2, 2), (1, 1, 1, 1),
                 ", count_include_pad = true", name="avg")]
    check(net, outs, chip, tmp_path)


@pytest.mark.parametrize("mode", ["sum", "mean", "max", "min"])
def test_reduce(chip, mode, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((3, 19, 5, 7)))
    outs = [
        net.op("tpu.Reduce", [x], (3, 19, 5, 1), f'mode = "{mode}", axes = [3], keepdims = true', "last"),
        net.op("tpu.Reduce", [x], (3, 19), f'mode = "{mode}", axes = [2, 3], keepdims = false', "hw"),
        net.op("tpu.Reduce", [x], (3, 5, 7), f'mode = "{mode}", axes = [1], keepdims = false', "chan"),
        net.op("tpu.Reduce", [x], (1, 19, 5, 7), f'mode = "{mode}", axes = [0], keepdims = true', "batch"),
    ]
    y = net.input("y", rng.standard_normal((3, 70001)))  # the reduced axis is split
    outs.append(net.op("tpu.Reduce", [y], (3,), f'mode = "{mode}", axes = [1], keepdims = false', "long"))
    check(net, outs, chip, tmp_path)


# --- Normalization --------------------------------------------------------------

def test_layernorm_softmax(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((2, 37, 96)) * 3 + 1)
    w = net.weight("g", rng.standard_normal(96))
    b = net.weight("beta", rng.standard_normal(96))
    ln = net.op("tpu.LayerNorm", [x, w, b], (2, 37, 96), "axis = 2 : i64, epsilon = 1.0e-5 : f64", "ln")
    x2 = net.input("x2", rng.standard_normal((2, 12, 96)))
    ln2 = net.op("tpu.LayerNorm", [x2, net.none(), net.none()], (2, 12, 96),
                 "axis = 1 : i64, epsilon = 1.0e-3 : f64", "ln_noaffine")
    sm = net.op("tpu.Softmax", [x], (2, 37, 96), "axis = 2 : i64", "softmax_last")
    sm1 = net.op("tpu.Softmax", [x], (2, 37, 96), "axis = 1 : i64", "softmax_mid")
    check(net, [ln, ln2, sm, sm1], chip, tmp_path)


# --- Data movement ----------------------------------------------------------------

def test_data_movement(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((2, 3, 5, 7)))
    r = net.op("tpu.Reshape", [x], (6, 35), "", "flat")
    e = net.op("tpu.Active", [r], (6, 35), 'mode = "abs"', "abs")
    p1 = net.op("tpu.Permute", [x], (2, 5, 7, 3), "order = [0, 2, 3, 1]", "nhwc")
    p2 = net.op("tpu.Permute", [x], (7, 3, 2, 5), "order = [3, 1, 0, 2]", "perm")
    f = net.input("f", rng.standard_normal((2, 3, 2, 3, 4)))
    p3 = net.op("tpu.Permute", [f], (4, 2, 3, 3, 2), "order = [4, 0, 3, 1, 2]", "perm5")
    s1 = net.op("tpu.Slice", [x], (2, 2, 3, 3), "offsets = [0, 2, 4, 1], steps = [1, -1, -2, 2]", "slice")
    s2 = net.op("tpu.Slice", [x], (2, 3, 5, 3), "offsets = [0, 0, 0, 1], steps = [1, 1, 1, 2]", "slice2")
    c = net.op("tpu.Concat", [x, s2, x], (2, 3, 5, 17), "axis = 3 : i64, do_relu = true", "cat")
    c2 = net.op("tpu.Concat", [x, x], (4, 3, 5, 7), "axis = 0 : i64", "cat0")
    pads = "pads = [0, 1, 2, 3, 0, 2, 1, 1]"
    pc = net.op("tpu.Pad", [x], (2, 6, 8, 11), pads + ', mode = "constant", value = 1.5 : f64', "pad_c")
    pr = net.op("tpu.Pad", [x], (2, 6, 8, 11), pads + ', mode = "reflect", value = 0.0 : f64', "pad_r")
    pe = net.op("tpu.Pad", [x], (2, 6, 8, 11), pads + ', mode = "edge", value = 0.0 : f64', "pad_e")
    up = net.op("tpu.Upsample", [x], (2, 3, 10, 21), "scale_h = 2 : i64, scale_w = 3 : i64", "up")
    idx = net.weight("idx", np.array([[4, 0], [1, 2], [2, 2]]))
    g = net.op("tpu.Gather", [x, idx], (2, 3, 3, 2, 7), "axis = 2 : i64", "gather")
    check(net, [e, p1, p2, p3, s1, c, c2, pc, pr, pe, up, g], chip, tmp_path)


def test_gather_runtime_indices(chip, rng, tmp_path):
    """Indices from network inputs (f32 and i32) and computed on the chip
    move with dma_gather; negative ones count from the end."""
    net = Net()
    x = net.input("x", rng.standard_normal((2, 9, 3, 5)))
    i = net.input("i", np.array([[3, -9], [8, -1], [0, 0]]))
    g = net.op("tpu.Gather", [x, i], (2, 3, 2, 3, 5), "axis = 1 : i64", "gather")
    k = net.input("k", np.array([4, -5, 2, 2], np.int32), elem="i32")
    gw = net.op("tpu.Gather", [x, k], (2, 9, 3, 4), "axis = 3 : i64", "gather_w")
    m = net.input("m", np.array([1, -1, 0]))
    j = net.op("tpu.Add", [m, m], (3,), "", "twice")  # [2, -2, 0], written by a store
    gh = net.op("tpu.Gather", [gw, j], (2, 9, 3, 4), "axis = 2 : i64", "gather_h")
    ci = net.weight("ci", np.array([1, -2]))
    gc = net.op("tpu.Gather", [x, ci], (2, 2, 3, 5), "axis = 1 : i64", "gather_const")
    o = check(net, [g, gh, gc], chip, tmp_path)
    xv = net.args[0][1]
    assert np.array_equal(o.got["gather"], xv[:, [[3, 0], [8, 8], [0, 0]]])
    assert np.array_equal(o.got["gather_h"], xv[:, :, [2, 1, 0]][..., [4, 0, 2, 2]])
    assert np.array_equal(o.got["gather_const"], xv[:, [1, 7]])


def test_upsample_large(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((1, 37, 64, 65)))
    up = net.op("tpu.Upsample", [x], (1, 37, 128, 130), "scale_h = 2 : i64, scale_w = 2 : i64", "up")
    y = net.op("tpu.Active", [up], (1, 37, 128, 130), 'mode = "relu"', "relu")
    check(net, [y], chip, tmp_path)


def test_conv_filter_tiles_load_as_whole_blocks(chip, rng, tmp_path):
    # A conv's own tiled code reads its filter from the blob in blocks of
    # `lanes` output channels, each [IC, block, KH, KW] contiguous: every
    # filter load is one dense run (the plain [IC, OC, KH, KW] layout gives
    # one short run per input channel), including the last, partial block.
    lanes = rt.load_target(chip).lanes
    oc, shape = 3 * lanes + 5, (1, 32, 12, 12)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    y, _ = conv(net, x, shape, oc, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng, name="c")
    check(net, [y], chip, tmp_path)
    b = rt.Model(tmp_path / f"net_{chip}.bmodel").bmodel
    lo, hi = b.plan.weight_addr, b.plan.weight_addr + b.plan.weight_size
    filters = [i.src[0] for i in b.networks[0].gdma
               if i.src[0].space == rt.Space.DDR and lo <= i.src[0].addr < hi
               and i.src[0].shape[0] == shape[1]]
    assert filters
    for f in filters:
        s = list(f.shape)
        assert s[1] <= lanes and list(f.stride) == [s[1] * s[2] * s[3], s[2] * s[3], s[3], 1], f
    assert sum(f.shape[1] for f in filters) % oc == 0
