"""Concat in place: tpu-assign-address places the operands of a channel
Concat inside its result and channel Slices as views of their source, so
neither copies. The cmodel's tensors (each operand still named at its own
address) must equal the Tpu interpreter's, with and without layer groups."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tpuc import runtime as rt

from backendutil import CHIPS, Net
from test_codegen_ops import conv
from test_layer_group import run

pytestmark = pytest.mark.parametrize("chip", CHIPS)


def dense_net(rng, shape=(1, 8, 16, 16)):
    """Dense block: each conv reads the concatenation of all before it; a
    channel Slice of the last Concat feeds the head."""
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    c1, s = conv(net, x, shape, 8, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng, name="c1")
    c2, _ = conv(net, c1, s, 8, (1, 1), relu=True, rng=rng, name="c2")
    n, _, h, w = s
    k1 = net.op("tpu.Concat", [c1, c2], (n, 16, h, w), "axis = 1 : i64", "k1")
    c3, _ = conv(net, k1, (n, 16, h, w), 8, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c3")
    k2 = net.op("tpu.Concat", [k1, c3], (n, 24, h, w), "axis = 1 : i64", "k2")
    sl = net.op("tpu.Slice", [k2], (n, 16, h, w),
                "offsets = [0, 8, 0, 0], steps = [1, 1, 1, 1]", "sl")
    head, _ = conv(net, sl, (n, 16, h, w), 4, (1, 1), rng=rng, name="head")
    return net, [head]


def network(bmodel):
    return rt.Model(bmodel).bmodel.networks[0]


@pytest.mark.parametrize("layer_group", [False, True])
def test_dense_block_in_place(chip, layer_group, tmp_path):
    net, outs = dense_net(np.random.default_rng(3))
    run(net, outs, chip, tmp_path, layer_group=layer_group)
    n = network(tmp_path / f"net_{chip}_{layer_group}.bmodel")
    addr = {t.info.name: t.info.ddr_addr for t in n.tensors}
    plane = 16 * 16 * 4  # bytes of one F32 channel
    # k1 sits at the start of k2, c3 after it, c1 and c2 inside k1; the
    # Slice is a view of k2.
    assert addr["k1"] == addr["k2"] and addr["c3"] == addr["k2"] + 16 * plane
    assert addr["c1"] == addr["k1"] and addr["c2"] == addr["k1"] + 8 * plane
    assert addr["sl"] == addr["k2"] + 8 * plane
    # No GDMA moves data DDR to DDR: the Concats and the Slice copy nothing.
    ddr = rt.Space.DDR
    assert not [i for i in n.gdma if i.dst.space == ddr and i.src[0].space == ddr]


def test_operand_used_twice_is_copied_once(chip, tmp_path):
    """An operand in place in one Concat is copied into a second one; the
    interleaving Concat (axis 2 after a unit dim of m > 1) copies too."""
    rng = np.random.default_rng(4)
    net = Net()
    x = net.input("x", rng.standard_normal((1, 4, 8, 8)))
    a = net.op("tpu.Active", [x], (1, 4, 8, 8), 'mode = "abs"', "a")
    b = net.op("tpu.Active", [x], (1, 4, 8, 8), 'mode = "exp"', "b")
    k1 = net.op("tpu.Concat", [a, b], (1, 8, 8, 8), "axis = 1 : i64", "k1")
    k2 = net.op("tpu.Concat", [b, a, x], (1, 12, 8, 8), "axis = 1 : i64", "k2")
    a5 = net.op("tpu.Reshape", [a], (1, 4, 1, 8, 8), "", "a5")
    b5 = net.op("tpu.Reshape", [b], (1, 4, 1, 8, 8), "", "b5")
    k3 = net.op("tpu.Concat", [a5, b5], (1, 4, 2, 8, 8), "axis = 2 : i64", "k3")
    run(net, [k1, k2, k3], chip, tmp_path, layer_group=False)
    n = network(tmp_path / f"net_{chip}_False.bmodel")
    ddr = rt.Space.DDR
    copies = [i for i in n.gdma if i.dst.space == ddr and i.src[0].space == ddr]
    # k2 copies b, a and x; k3 copies a and b (moves may be split in pieces).
    print("COPIES", len(copies))
    assert len(copies) >= 5


def shuffle_units(rng, n, c, h, w, group=1):
    """Two ShuffleNet units: each keeps half the channels of the previous
    interleaving Concat (a Slice view) and runs convs (the 3x3 one in
    `group` groups) on the other half."""
    net = Net()
    k = net.input("x", rng.standard_normal((n, 2 * c, h, w)))
    for u in range(2):
        keep = net.op("tpu.Slice", [k], (n, c, h, w),
                      "offsets = [0, 0, 0, 0], steps = [1, 1, 1, 1]", f"keep{u}")
        half = net.op("tpu.Slice", [k], (n, c, h, w),
                      f"offsets = [0, {c}, 0, 0], steps = [1, 1, 1, 1]", f"half{u}")
        b, _ = conv(net, half, (n, c, h, w), c, (1, 1), relu=True, rng=rng, name=f"b{u}")
        b, _ = conv(net, b, (n, c, h, w), c, (3, 3), pads=(1, 1, 1, 1), group=group,
                    rng=rng, name=f"d{u}")
        keep5 = net.op("tpu.Reshape", [keep], (n, c, 1, h, w), "", f"keep5_{u}")
        b5 = net.op("tpu.Reshape", [b], (n, c, 1, h, w), "", f"b5_{u}")
        i = net.op("tpu.Concat", [keep5, b5], (n, c, 2, h, w), "axis = 2 : i64", f"i{u}")
        k = net.op("tpu.Reshape", [i], (n, 2 * c, h, w), "", f"k{u}")
    return net, k


def test_shuffle_units_pass_through_copied_ahead(chip, tmp_path):
    """Each unit's group is stored in place in strided blocks; the
    pass-through half is copied into the Concat by the group, after its
    loads and before its stores; the tensors must still match the
    interpreter's."""
    net, k = shuffle_units(np.random.default_rng(5), 1, 8, 8, 8)
    run(net, [k], chip, tmp_path)
    net_ = network(tmp_path / f"net_{chip}_True.bmodel")
    ddr = rt.Space.DDR
    gdma = list(net_.gdma)
    copies = [j for j, g in enumerate(gdma) if g.dst.space == ddr and g.src[0].space == ddr]
    stores = [j for j, g in enumerate(gdma) if g.dst.space == ddr and g.src[0].space != ddr]
    # Each unit's pass-through copy precedes its group's stores.
    assert copies and stores and copies[0] < stores[0]


def test_repeated_concats_share_the_last(chip, tmp_path):
    """DenseNet's features: each layer concatenates every earlier map again.
    Each Concat is the leading range of the last one, so none copies, and
    the cmodel's tensors equal the interpreter's."""
    rng = np.random.default_rng(5)
    shape = (1, 8, 8, 8)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    x0 = net.op("tpu.Active", [x], shape, 'mode = "abs"', "x0")
    feats = [x0]
    for k in range(3):
        c = 8 * len(feats)
        cat = net.op("tpu.Concat", feats, (1, c, 8, 8), "axis = 1 : i64", f"k{k}")
        y, _ = conv(net, cat, (1, c, 8, 8), 8, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng,
                    name=f"c{k}")
        feats.append(y)
    last = net.op("tpu.Concat", feats, (1, 32, 8, 8), "axis = 1 : i64", "last")
    head, _ = conv(net, last, (1, 32, 8, 8), 4, (1, 1), rng=rng, name="head")
    run(net, [head], chip, tmp_path, layer_group=False)
    n = network(tmp_path / f"net_{chip}_False.bmodel")
    addr = {t.info.name: t.info.ddr_addr for t in n.tensors}
    assert addr["k0"] == addr["k1"] == addr["k2"] == addr["last"] == addr["x0"]
    ddr = rt.Space.DDR
    assert not [i for i in n.gdma if i.dst.space == ddr and i.src[0].space == ddr]


def test_shuffle_units_sliced_copy_after_loads(chip, tmp_path):
    """Groups sliced along H copy the pass-through half behind their last
    slice's loads: in front of the slice loop it would hold back the next
    slice's loads while the TIU waits."""
    net, k = shuffle_units(np.random.default_rng(6), 1, 4, 256, 256, group=4)
    text, _, _ = run(net, [k], chip, tmp_path)
    slices = [int(s) for s in re.findall(r"h_slices = (\d+)", text)]
    assert len(slices) == 2 and min(slices) > 2
    gdma = list(network(tmp_path / f"net_{chip}_True.bmodel").gdma)
    ddr, lmem = rt.Space.DDR, rt.Space.LMEM
    copies = [j for j, g in enumerate(gdma) if g.dst.space == ddr and g.src[0].space == ddr]
    # Loads of rows of the units' inputs (weights have one row or three).
    rows = [j for j, g in enumerate(gdma)
            if g.dst.space == lmem and g.src[0].space == ddr and g.dst.shape[2] > 3]
    assert len(copies) == 2
    # Each group loads all its slices before its copy.
    assert sum(j < copies[0] for j in rows) == slices[0]
    assert sum(copies[0] < j < copies[1] for j in rows) == slices[1]
