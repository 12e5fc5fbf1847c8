"""Per-address fences between consecutive ops.

A new LMEM buffer waits only for the earlier TIU instructions that touched
its own 64-byte granules (CodegenContext::alloc reads granTiu_ into
LBuf::tiu, CodegenContext::load waits for it). Consecutive ops allocate from
opposite ends of LMEM and the previous op's trailing stores are held back,
so the next op's first loads can enter the GDMA queue while the previous op
still computes.

When is that fence the only thing ordering a load after the previous op's
compute? Every allocation of the next op happens before its first load, and
an allocation overlapping a held-back store's LMEM range flushes the held-back
stores; those stores wait for the previous op's last compute, so every later
GDMA is ordered behind it anyway. Conv, MatMul and Pool allocate their output
buffers last, i.e. nearest to the other end of LMEM, so a next op that
reaches the previous op's buffers at all reaches the held-back output range
first and the fence is redundant (see `test_heavy_light_chain_is_race_free`).
The fence carries the ordering when the previous op has TIU-only buffers
allocated after its outputs (LayerNorm's centred-row temporary, mean/var and
affine vectors; Softmax's max/sum; Reduce's and Active's temporaries) and
the next op's buffers reach into them but not into the held-back outputs.

`test_fence_orders_next_weights_after_layernorm` builds exactly that: a
LayerNorm filling LMEM in two row tiles, then a small independent conv whose
filter buffer (first allocation, first load) covers the LayerNorm's affine
vectors, statistics and the tail of its temporary row. It checks
* the numbers (every named tensor, cmodel vs Tpu interpreter),
* that the filter load's LMEM range overlaps LayerNorm TIU operands that no
  earlier GDMA wait orders it after, and that its own wait covers them,
* that the program has no race at all (below),
* and, emulating the bug on the generated bmodel, that dropping the conv
  loads' waits on the LayerNorm's TIU instructions creates races, which the
  bmodel loader's hazard check (lib/CModel/Hazard.cpp) rejects, naming one
  of the racing pairs found here.

Race: a GDMA instruction and a TIU instruction touch overlapping per-lane
LMEM bytes, at least one of them writes them, and neither is guaranteed to
have ended before the other starts. GDMA g is after TIU t iff t.id <= the
largest wait_id among GDMA 1..g (in-order streams); TIU t is after GDMA g iff
g.id <= the largest wait_id among TIU 1..t (docs/isa.md, Synchronisation).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from backendutil import CHIPS, Net, check
from test_codegen_ops import conv

from tpuc import runtime as rt

pytestmark = pytest.mark.parametrize("chip", CHIPS)

# LayerNorm rows [1, O, I]: eight tiles of oT rows (a quarter of O is two
# tiles, so overlapRows keeps them), each tile's five row buffers plus
# affine vectors nearly filling LMEM (pickRows in Norm.cpp):
# tpu_edge oT = 512 (32 rows per lane, 12 KiB buffers of 64 KiB),
# tpu_pro oT = 8576 (134 rows per lane, 50 KiB buffers of 256 KiB).
LN_ROWS = {"tpu_edge": 4096, "tpu_pro": 68608}
LN_WIDTH = 96
# Conv with one output channel: its filter is one IC*3*3 block per lane
# (4.5 KiB with IC = 128), more than the space the LayerNorm leaves free at
# the top of LMEM, far less than what would reach its output buffers.
CONV_IC = 128


@pytest.fixture
def rng():
    return np.random.default_rng(11)


# --- program analysis ------------------------------------------------------------

_ESIZE = {rt.DType.F32: 4, rt.DType.F16: 2, rt.DType.BF16: 2, rt.DType.INT32: 4,
          rt.DType.INT8: 1, rt.DType.UINT8: 1}


def lmem_range(o, lanes):
    """Per-lane byte range [lo, hi) of an LMEM operand (any lane), or None."""
    if o.space != rt.Space.LMEM:
        return None
    es = _ESIZE[o.dtype]
    n, c, h, w = o.shape
    per_lane_c = (o.start_lane + c - 1) // lanes + 1
    lo = hi = 0
    for ext, st in zip((n, per_lane_c, h, w), o.stride):
        span = (ext - 1) * st
        if span < 0:
            lo += span
        else:
            hi += span
    return o.addr + lo * es, o.addr + (hi + 1) * es


def accesses(inst, lanes):
    """(written, read) LMEM ranges of an instruction."""
    w = [r for r in [lmem_range(inst.dst, lanes)] if r]
    rd = [r for r in (lmem_range(s, lanes) for s in inst.src) if r]
    return w, rd


def overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


def any_overlap(xs, ys):
    return any(overlap(x, y) for x in xs for y in ys)


def byte_runs(o, lanes):
    """Sorted per-lane byte runs [lo, hi) of an LMEM operand (strided views
    may interleave without sharing a byte)."""
    es = _ESIZE[o.dtype]
    n, c, h, w = o.shape
    per_lane_c = (o.start_lane + c - 1) // lanes + 1
    if o.stride[3] == 1:
        starts = (np.arange(n)[:, None, None] * o.stride[0]
                  + np.arange(per_lane_c)[None, :, None] * o.stride[1]
                  + np.arange(h)[None, None, :] * o.stride[2]).ravel()
        length = w
    else:
        starts = (np.arange(n)[:, None, None, None] * o.stride[0]
                  + np.arange(per_lane_c)[None, :, None, None] * o.stride[1]
                  + np.arange(h)[None, None, :, None] * o.stride[2]
                  + np.arange(w)[None, None, None, :] * o.stride[3]).ravel()
        length = 1
    lo = np.sort(o.addr + starts * es)
    return lo, lo + length * es


def operands_share_bytes(a, b, lanes):
    """Whether two LMEM operands whose ranges overlap share a byte."""
    alo, ahi = byte_runs(a, lanes)
    blo, bhi = byte_runs(b, lanes)
    # Each run of a against the runs of b starting before its end.
    k = np.searchsorted(blo, ahi, side="left") - 1
    ok = k >= 0
    return bool(np.any(ok & (bhi[np.clip(k, 0, None)] > alo)))


def prefix_waits(stream):
    """done[i] = the other engine's last id guaranteed ended before stream[i] starts."""
    done, m = [], 0
    for inst in stream:
        m = max(m, inst.wait_id)
        done.append(m)
    return done


def exact_conflict(g, t, lanes):
    """Whether GDMA g and TIU t touch a common LMEM byte, one writing it."""
    def lmem(o):
        return o.space == rt.Space.LMEM
    pairs = [(g.dst, o) for o in [t.dst, *t.src] if lmem(g.dst) and lmem(o)]
    pairs += [(s, t.dst) for s in g.src if lmem(s) and lmem(t.dst)]
    return any(overlap(lmem_range(a, lanes), lmem_range(b, lanes))
               and operands_share_bytes(a, b, lanes) for a, b in pairs)


def races(bm):
    """Unordered conflicting (GDMA id, TIU id) pairs of network 0."""
    lanes = bm.target.lanes
    net = bm.networks[0]
    tiu, gdma = list(net.tiu), list(net.gdma)
    t_done, g_done = prefix_waits(gdma), prefix_waits(tiu)
    t_acc = [accesses(t, lanes) for t in tiu]
    out = []
    for gi, g in enumerate(gdma):
        gw, gr = accesses(g, lanes)
        if not gw and not gr:
            continue
        for ti, t in enumerate(tiu):
            if t.id <= t_done[gi] or g.id <= g_done[ti]:
                continue
            tw, tr = t_acc[ti]
            if (any_overlap(gw, tw + tr) or any_overlap(gr, tw)) and \
                    exact_conflict(g, t, lanes):
                out.append((g.id, t.id))
    return out


def ddr_addrs(module):
    """ddr.addr of every named value (op location name -> byte address)."""
    addrs = {}
    with module.context:
        func = module.body.operations[0]
        for op in func.regions[0].blocks[0].operations:
            if "ddr.addr" in op.attributes:
                name = str(op.location).split('"')[1]
                addrs[name] = int(str(op.attributes["ddr.addr"]).split(":")[0])
    return addrs


def loads_from(gdma, lo, hi):
    """GDMA loads into LMEM whose DDR source starts in [lo, hi)."""
    return [g for g in gdma if g.dst.space == rt.Space.LMEM
            and g.src[0].space == rt.Space.DDR and lo <= g.src[0].addr < hi]


def bmodel_of(tmp, chip):
    return rt.read_bmodel(str(Path(tmp) / f"net_{chip}.bmodel"))


def rejected_race(bm):
    """(GDMA id, TIU id) of the race the bmodel verifier reports at load."""
    with pytest.raises(rt.ChipError, match="race: ") as e:
        rt.Model(bm)
    ids = dict(re.findall(r"(TIU|GDMA) instruction #\d+ \(id (\d+)", str(e.value)))
    return int(ids["GDMA"]), int(ids["TIU"])


# The filter loads these tests follow come from the ops themselves.
NO_PREFETCH = "weight-prefetch=false"


# --- builders ---------------------------------------------------------------------

def layernorm(net, x, rows, rng, name):
    g = net.weight(f"{name}_g", rng.standard_normal(LN_WIDTH))
    b = net.weight(f"{name}_b", rng.standard_normal(LN_WIDTH))
    return net.op("tpu.LayerNorm", [x, g, b], (1, rows, LN_WIDTH),
                  "axis = 2 : i64, epsilon = 1.0e-5 : f64", name)


def small_conv(net, rng, name):
    """A 1-output-channel 3x3 conv on its own 4x4 input: little TIU work,
    one LMEM filter block of CONV_IC*9 floats per lane."""
    s = net.input(f"{name}_in", rng.standard_normal((1, CONV_IC, 4, 4)))
    y, _ = conv(net, s, (1, CONV_IC, 4, 4), 1, (3, 3), pads=(1, 1, 1, 1), rng=rng, name=name)
    return y


def fenced_pairs(o, tmp, chip, pairs):
    """For each (layernorm name, conv name): the conv's filter load, the
    LayerNorm TIU ids whose LMEM operands it overlaps and that no earlier GDMA
    wait orders it after (the hazards only its own wait can cover)."""
    bm = bmodel_of(tmp, chip)
    lanes = bm.target.lanes
    net = bm.networks[0]
    tiu, gdma = list(net.tiu), list(net.gdma)
    t_done, g_done = prefix_waits(gdma), prefix_waits(tiu)
    addrs = ddr_addrs(o.module)
    result = []
    for _ln, cv in pairs:
        w_addr = addrs[f"{cv}_w"]
        (g,) = loads_from(gdma, w_addr, w_addr + 1)
        gw, _ = accesses(g, lanes)
        before = t_done[g.id - 2] if g.id > 1 else 0
        # TIU instructions touching the filter's range that neither an earlier
        # GDMA wait orders before the load nor their own waits order after it.
        hazards = [t.id for t in tiu
                   if t.id > before and g.id > g_done[t.id - 1]
                   and any_overlap(gw, sum(accesses(t, lanes), []))]
        assert all(tiu[h - 1].name.split(".")[0] in ("reduce", "binary", "active")
                   for h in hazards), "hazard outside the LayerNorm"
        result.append((g, hazards))
    return bm, result


def strip_cross_op_waits(bm, module, convs):
    """Emulates disabled per-address fences: the loads of each conv (filter,
    bias, input) stop waiting for TIU instructions of other ops (every TIU
    instruction before the conv's own first one). Returns the number stripped."""
    net = bm.networks[0]
    tiu, gdma = list(net.tiu), list(net.gdma)
    addrs = ddr_addrs(module)
    conv_tiu = [t.id for t in tiu if t.name.startswith("conv")]
    stripped = 0
    for k, cv in enumerate(convs):
        own_first = conv_tiu[k]
        srcs = [addrs[f"{cv}_w"], addrs[f"{cv}_b"], addrs[f"{cv}_in"]]
        for g in gdma:
            if (g.dst.space == rt.Space.LMEM and g.src[0].space == rt.Space.DDR
                    and g.src[0].addr in srcs and 0 < g.wait_id < own_first):
                g.wait_id = 0
                stripped += 1
    net.gdma = gdma
    nets = list(bm.networks)
    nets[0] = net
    bm.networks = nets
    return stripped


# --- tests ------------------------------------------------------------------------

def test_fence_orders_next_weights_after_layernorm(chip, rng, tmp_path):
    rows = LN_ROWS[chip]
    net = Net()
    x = net.input("x", rng.standard_normal((1, rows, LN_WIDTH)) * 3 + 1)
    ln = layernorm(net, x, rows, rng, "ln")
    cv = small_conv(net, rng, "cv")
    # Without the weight prefetch: this small net's weights would stay in
    # reserved LMEM (WeightPrefetcher::planResident), clear of the LayerNorm.
    o = check(net, [ln, cv], chip, tmp_path, codegen=NO_PREFETCH)

    bm, [(g, hazards)] = fenced_pairs(o, tmp_path, chip, [("ln", "cv")])
    # The filter buffer overlaps LayerNorm operands (affine vectors, mean,
    # variance, tail of the centred row) of instructions that no earlier
    # GDMA wait orders the load after ...
    assert hazards, "the conv's filter buffer no longer overlaps unordered LayerNorm operands"
    # ... and that wait covers all of them (the per-address fence).
    assert g.wait_id >= max(hazards), (g.wait_id, hazards)
    assert races(bm) == []

    # So it starts only once the LayerNorm's last such instruction ended
    # (without the wait it would start right after the last input tile load,
    # while that tile still computes).
    records = {(r["engine"], r["id"]): r for r in o.stats.raw.records}
    assert records[("GDMA", g.id)]["start"] >= records[("TIU", max(hazards))]["end"]

    # Emulate the bug on the generated program: the loader's verifier
    # refuses it, naming one of the races found here.
    assert strip_cross_op_waits(bm, o.module, ["cv"]) >= 1
    assert races(bm), "stripping the fence left no race"
    assert rejected_race(bm) in races(bm)


def test_fences_in_alternating_chain(chip, rng, tmp_path):
    # LayerNorm (fills LMEM) / small conv / light add / LayerNorm of the first
    # / small conv: every conv's filter load must wait for the LayerNorm
    # before it. The add shifts the second pair to the other ends of LMEM
    # (LayerNorm top-down, conv bottom-up).
    rows = LN_ROWS[chip]
    net = Net()
    x = net.input("x", rng.standard_normal((1, rows, LN_WIDTH)) * 2 - 1)
    ln1 = layernorm(net, x, rows, rng, "ln1")
    c1 = small_conv(net, rng, "c1")
    a1 = net.op("tpu.Add", [c1, c1], (1, 1, 4, 4), "", "a1")
    ln2 = layernorm(net, ln1, rows, rng, "ln2")
    c2 = small_conv(net, rng, "c2")
    o = check(net, [ln2, a1, c2], chip, tmp_path, codegen=NO_PREFETCH)

    bm, found = fenced_pairs(o, tmp_path, chip, [("ln1", "c1"), ("ln2", "c2")])
    for g, hazards in found:
        assert hazards, f"filter load G{g.id} overlaps no unordered LayerNorm operand"
        assert g.wait_id >= max(hazards), (g.id, g.wait_id, hazards)
    # The two pairs sit at opposite ends of LMEM.
    f1, f2 = (lmem_range(g.dst, bm.target.lanes) for g, _ in found)
    assert not overlap(f1, f2)
    assert races(bm) == []

    assert strip_cross_op_waits(bm, o.module, ["c1", "c2"]) >= 2
    assert races(bm)
    assert rejected_race(bm) in races(bm)


def test_heavy_light_chain_is_race_free(chip, rng, tmp_path):
    # Compute-heavy convs filling LMEM alternate with light ops (an add, a
    # pool, a softmax); consecutive ops' buffers overlap. Here the held-back
    # stores' flush orders the next op's loads, and the program must still
    # have no race between the engines.
    shape = (1, 40, 70, 96) if chip == "tpu_edge" else (1, 32, 130, 256)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    a, s = conv(net, x, shape, shape[1], (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng, name="a")
    h = net.op("tpu.Add", [a, x], shape, "", "add")
    b, s = conv(net, h, shape, 40, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="b")
    n, c, hh, ww = s
    p = net.op("tpu.MaxPool", [b], (n, c, hh // 2, ww // 2),
               "kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]", "pool")
    ps = (n, c, hh // 2, ww // 2)
    d, s = conv(net, p, ps, 24, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="d")
    sm = net.op("tpu.Softmax", [d], s, "axis = 3 : i64", "sm")
    check(net, [sm], chip, tmp_path)
    assert races(bmodel_of(tmp_path, chip)) == []


def test_reads_of_a_stored_buffer_do_not_wait_for_the_store(chip, rng, tmp_path):
    # A group storing hidden states [2, 8, 32] that a pooler reads in LMEM
    # too (the first token of each sequence, a dense layer, tanh): a TIU
    # instruction only reading the stored buffer runs while the store is in
    # flight (both only read it); the program still has no race.
    net = Net()
    x = net.input("x", rng.standard_normal((2, 8, 32)))
    g = net.weight("h_g", rng.standard_normal(32))
    b = net.weight("h_b", rng.standard_normal(32))
    h = net.op("tpu.LayerNorm", [x, g, b], (2, 8, 32),
               "axis = 2 : i64, epsilon = 1.0e-5 : f64", "h")
    s = net.op("tpu.Slice", [h], (2, 1, 32),
               "offsets = [0, 0, 0], steps = [1, 1, 1]", "first")
    r = net.op("tpu.Reshape", [s], (2, 32), "", "rows")
    w = net.weight("w", rng.standard_normal((32, 32)) / 6)
    wb = net.weight("wb", rng.standard_normal(32))
    m = net.op("tpu.MatMul", [r, w, wb], (2, 32),
               "do_relu = false, right_transpose = false", "dense")
    t = net.op("tpu.Active", [m], (2, 32), 'mode = "tanh"', "pooled")
    o = check(net, [h, t], chip, tmp_path)

    bm = bmodel_of(tmp_path, chip)
    lanes = bm.target.lanes
    tiu, gdma = list(bm.networks[0].tiu), list(bm.networks[0].gdma)
    g_done = prefix_waits(tiu)
    h_addr = ddr_addrs(o.module)["h"]
    (store,) = [d for d in gdma if d.dst.space == rt.Space.DDR and d.dst.addr == h_addr]
    _, read = accesses(store, lanes)
    overlapping = [u for i, u in enumerate(tiu)
                   if store.id > g_done[i] and any_overlap(read, accesses(u, lanes)[1])]
    assert overlapping, "every reader of the stored buffer waits for its store"
    assert races(bm) == []
