"""Asymmetric INT8 convolutions pad with their input's zero point inside the
conv instruction. The Tpu interpreter's result equals the same convs after
an explicit tpu.Pad holding the zero point (an independent form of the
border), and the cmodel equals the interpreter bit for bit on both chips:
per op (spatial tiles whose windows cover only padding included) and in
layer groups, whole and sliced along H, for regular, depthwise and strided
convolutions."""
from __future__ import annotations

import numpy as np
import pytest

from tpuc import compiler
from tpuc.testing.groups import group_slices, layer_groups

from backendutil import CHIPS, Net, check_exact
from test_codegen_int8 import dequant, q8, qconv, quant_input
from test_layer_group import run

pytestmark = pytest.mark.parametrize("chip", CHIPS)


def padded(net, x, xs, shape, pads, explicit, name):
    """`x` as a conv reads it: itself (the conv pads), or explicitly padded
    with its zero point (the conv then has no pads)."""
    if not explicit:
        return x, shape, pads
    pt, pl, pb, pr = pads
    s = (shape[0], shape[1], shape[2] + pt + pb, shape[3] + pl + pr)
    p = net.op("tpu.Pad", [x], s, f"pads = [0, 0, {pt}, {pl}, 0, 0, {pb}, {pr}], "
               f'mode = "constant", value = {float(xs[1])} : f64', f"{name}_pad",
               elem=q8(*xs))
    return p, s, (0, 0, 0, 0)


def chain(shape, explicit=False, seed=3):
    """3x3 conv (relu) -> depthwise 3x3 stride 2 -> 2x2 conv with uneven pads,
    every input with a zero point."""
    rng = np.random.default_rng(seed)
    net = Net()
    x, xs = quant_input(net, "x", shape, rng, 0.03, -50)
    a_in, a_s, a_p = padded(net, x, xs, shape, (1, 1, 1, 1), explicit, "c0")
    c = shape[1]
    a, s, as_ = qconv(net, a_in, xs, a_s, c, (3, 3), rng, "c0", out=(0.05, -128),
                      pads=a_p, relu=True)
    b_in, b_s, b_p = padded(net, a, as_, s, (1, 1, 1, 1), explicit, "dw")
    b, s, bs = qconv(net, b_in, as_, b_s, c, (3, 3), rng, "dw", out=(0.1, 17),
                     stride=(2, 2), pads=b_p, group=c)
    c_in, c_s, c_p = padded(net, b, bs, s, (0, 1, 1, 0), explicit, "c1")
    c, s, _ = qconv(net, c_in, bs, c_s, 8, (2, 2), rng, "c1", out=(0.2, -9), pads=c_p)
    return net, [dequant(net, c, s, "out")]


def interpret(net, outputs, tmp_path):
    wfile = tmp_path / f"weights_{len(net.lines)}.npz"
    np.savez(wfile, **net.weights)
    with compiler.make_context() as ctx:
        m = compiler.parse_module(net.text(outputs, str(wfile)), ctx)
        return compiler.interpret(m, dict(net.args), all_tensors=True)


def assert_same_convs(net, outputs, ref_net, ref_outputs, tmp_path):
    got = interpret(net, outputs, tmp_path)
    ref = interpret(ref_net, ref_outputs, tmp_path)
    names = [n for n in ("c0", "dw", "c1", "c", "out") if n in got]
    assert len(names) >= 2
    for n in names:
        assert np.array_equal(got[n], ref[n]), n
    # The zero points make the border differ from zero padding.
    assert len(np.unique(got[names[0]])) > 2


@pytest.mark.parametrize("layer_group", [False, True])
def test_chain_matches_explicit_pad(chip, layer_group, tmp_path):
    net, outs = chain((1, 16, 12, 10))
    assert_same_convs(net, outs, *chain((1, 16, 12, 10), explicit=True), tmp_path)
    text, _, named = run(net, outs, chip, tmp_path, layer_group=layer_group)
    assert '"tpu.Pad"' not in text
    convs = [line for line in text.splitlines() if '"tpu.Conv"' in line]
    assert len(convs) == 3
    if layer_group:
        # One group, as in symmetric INT8: only the output leaves it.
        groups = layer_groups(text)
        assert len(groups) == 1 and all(line.strip() in groups[0] for line in convs), groups
        assert not {"c0", "dw"} & named


def test_sliced_group(chip, tmp_path):
    # Maps larger than a lane's local memory on tpu_edge: the group runs in
    # slices of rows, the first and last slices holding the pad rows.
    shape = (1, 32, 96, 96)
    net, outs = chain(shape, seed=4)
    text, _, named = run(net, outs, chip, tmp_path)
    if chip == "tpu_edge":
        assert max(group_slices(text)) > 1, text
    assert "c0" not in named


def test_row_tiles_of_pads_only(chip, tmp_path):
    # Rows wide enough that a tile holds one output row: the tiles of output
    # rows 0, 1, 8 and 9 read only padding, a row filled with the zero point
    # instead of a load.
    width = 4000 if chip == "tpu_edge" else 16000

    def net_of(explicit):
        rng = np.random.default_rng(7)
        net = Net()
        shape = (1, 16, 6, width)
        x, xs = quant_input(net, "x", shape, rng, 0.03, 90)
        x_in, s, p = padded(net, x, xs, shape, (2, 0, 2, 0), explicit, "c")
        y, s, _ = qconv(net, x_in, xs, s, 16, (1, 1), rng, "c", pads=p, relu=True)
        return net, [dequant(net, y, s, "out")]
    net, outs = net_of(False)
    assert_same_convs(net, outs, *net_of(True), tmp_path)
    o = check_exact(net, outs, chip, tmp_path)
    assert o.stats.tiu_instructions >= 20  # one conv and requant per row tile
