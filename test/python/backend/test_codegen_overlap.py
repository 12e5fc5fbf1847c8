"""Overlap between ops: the next op's weight loads, and loads of tensors
stored before the previous op, enter the GDMA queue ahead of the previous
op's trailing stores; buffers are fenced only on the instructions that
touched their LMEM range. The cmodel reads sources at an instruction's start
and publishes results at its end, so a missing wait shows up as wrong
numbers in `check` (every named tensor, dumped at its completion id)."""
from __future__ import annotations

import numpy as np
import pytest

from tpuc import runtime as rt

from backendutil import CHIPS, Net, check
from test_codegen_ops import conv

pytestmark = pytest.mark.parametrize("chip", CHIPS)


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def records(o, engine):
    return sorted((r for r in o.stats.raw.records if r["engine"] == engine),
                  key=lambda r: r["id"])


def test_next_weights_load_during_compute(chip, rng, tmp_path):
    net = Net()
    x = net.input("x", rng.standard_normal((1, 8, 8, 8)))
    y, s = conv(net, x, (1, 8, 8, 8), 8, (3, 3), pads=(1, 1, 1, 1), bias=False, rng=rng,
                name="c1")
    z, _ = conv(net, y, s, 8, (3, 3), pads=(1, 1, 1, 1), bias=False, rng=rng, name="c2")
    o = check(net, [z], chip, tmp_path)
    tiu, gdma = records(o, "TIU"), records(o, "GDMA")
    assert [r["name"] for r in tiu] == ["conv", "conv"]
    # GDMA 1-2 load c1's weight and input; 3 is c2's weight, loaded while c1
    # computes, ahead of c1's store.
    assert gdma[2]["start"] < tiu[0]["end"]


def test_next_input_rows_load_ahead_of_trailing_stores(chip, rng, tmp_path):
    # c1 is tiled along rows. c2's first tile reads c1's first rows, stored
    # long before c1's last ones: that load enters the GDMA queue ahead of
    # c1's trailing stores (their bytes are apart, only the hulls of the
    # strided transfers overlap) and runs while c1's last tile computes.
    shape = (1, 16, 64, 64) if chip == "tpu_edge" else (1, 64, 128, 128)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    y, s = conv(net, x, shape, shape[1], (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c1")
    z, _ = conv(net, y, s, shape[1], (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c2")
    # A weight prefetch for c2 (when it pays) retiles it in less LMEM.
    o = check(net, [z], chip, tmp_path, codegen="weight-prefetch=false")
    n = rt.Model(tmp_path / f"net_{chip}.bmodel").bmodel.networks[0]
    c1 = next(t.info for t in n.tensors if t.info.name == "c1")

    def in_c1(op):
        return op.space == rt.Space.DDR and \
            c1.ddr_addr <= op.addr < c1.ddr_addr + c1.byte_size
    stores = [i for i in n.gdma if in_c1(i.dst)]
    loads = [i for i in n.gdma if in_c1(i.src[0])]
    assert len(stores) > 1 and loads
    last_store, first_load = stores[-1], loads[0]
    assert first_load.id < last_store.id
    tiu, gdma = records(o, "TIU"), records(o, "GDMA")
    # last_store waits for c1's last compute instruction.
    assert gdma[first_load.id - 1]["start"] < tiu[last_store.wait_id - 1]["end"]


def test_chain_with_residuals_and_reuse(chip, rng, tmp_path):
    # Residual adds read tensors stored several ops earlier; tensors are
    # large enough to tile and small enough for addresses to be reused.
    shape = (1, 24, 20, 20)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    h = x
    for i in range(4):
        a, s = conv(net, h, shape, 24, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng,
                    name=f"a{i}")
        b, _ = conv(net, a, s, 24, (1, 1), rng=rng, name=f"b{i}")
        h = net.op("tpu.Add", [b, h], shape, "", f"add{i}")
    p = net.op("tpu.MaxPool", [h], (1, 24, 10, 10),
               "kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]", "pool")
    check(net, [p, h], chip, tmp_path)


def test_consecutive_ops_sharing_lmem(chip, rng, tmp_path):
    # Each conv and the softmax fill most of LMEM, so consecutive ops' buffers
    # overlap and the first loads of one must wait for the other's compute.
    shape = (1, 40, 70, 96) if chip == "tpu_edge" else (1, 16, 260, 256)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    y, s = conv(net, x, shape, 19, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng, name="c1")
    z, s = conv(net, y, s, 21, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c2")
    sm = net.op("tpu.Softmax", [z], s, "axis = 3 : i64", "sm")
    w, _ = conv(net, sm, s, 17, (1, 1), rng=rng, name="c3")
    check(net, [w], chip, tmp_path)


def test_next_input_channels_load_ahead_of_trailing_stores(chip, rng, tmp_path):
    # c1's filter is too large to hold whole, so it runs in tiles of output
    # channels and its trailing store writes the last tile's channels only.
    # c2 reads every channel in one tile: the channels stored before load
    # first, ahead of that store (while c1's last tile computes), and only
    # the rest after it.
    if chip != "tpu_edge":
        pytest.skip("sizes chosen for tpu_edge's local memory")
    shape = (1, 256, 10, 10)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    y, s = conv(net, x, shape, 64, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c1")
    z, _ = conv(net, y, s, 16, (1, 1), rng=rng, name="c2")
    check(net, [z], chip, tmp_path)
    n = rt.Model(tmp_path / f"net_{chip}.bmodel").bmodel.networks[0]
    c1 = next(t.info for t in n.tensors if t.info.name == "c1")

    def in_c1(op):
        return op.space == rt.Space.DDR and \
            c1.ddr_addr <= op.addr < c1.ddr_addr + c1.byte_size
    stores = [i for i in n.gdma if in_c1(i.dst)]
    loads = [i for i in n.gdma if in_c1(i.src[0])]
    assert len(stores) > 1 and len(loads) > 1
    assert loads[0].id < stores[-1].id < loads[-1].id
    # The early part holds channels no later store writes.
    early = loads[0].src[0]
    assert 0 < early.shape[1] < 64
    end = early.addr + early.shape[1] * early.stride[1] * 4
    assert all(st.dst.addr >= end for st in stores if st.id > loads[0].id)
