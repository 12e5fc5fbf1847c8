"""Engine synchronisation through tiu/gdma ids."""
import numpy as np
import pytest

from tpuc import runtime as rt
from chiputil import Prog


def _relu_program(edge, x, wait: bool):
    p = Prog(edge)
    src = p.ddr_in(x)
    lm = p.lmem(list(x.shape), rt.DType.F32)
    o = p.lmem(list(x.shape), rt.DType.F32)
    g = p.b.gdma(rt.make_dma_move(lm, src))
    t = p.b.tiu(rt.make_active(rt.ActOp.ABS, o, lm), g if wait else 0)
    out = p.ddr_out(list(x.shape), np.float32)
    p.b.gdma(rt.make_dma_move(out, o), t)
    p.run()
    return p, out


def test_wait_orders_consumer_after_producer(edge, rng):
    x = rng.standard_normal((1, 16, 4, 8)).astype(np.float32)
    p, out = _relu_program(edge, x, wait=True)
    np.testing.assert_array_equal(p.read(out), np.abs(x))
    rec = {(r["engine"], r["id"]): r for r in p.stats.records}
    assert rec[("TIU", 1)]["start"] == rec[("GDMA", 1)]["end"]
    assert rec[("GDMA", 2)]["start"] == rec[("TIU", 1)]["end"]


def test_removing_wait_changes_order_and_data(edge, rng):
    x = rng.standard_normal((1, 16, 4, 8)).astype(np.float32) + 5
    p_ok, out_ok = _relu_program(edge, x, wait=True)
    p_bad, out_bad = _relu_program(edge, x, wait=False)
    bad = {(r["engine"], r["id"]): r for r in p_bad.stats.records}
    # The TIU now starts at cycle 0, before the load has landed in LMEM ...
    assert bad[("TIU", 1)]["start"] == 0 < bad[("GDMA", 1)]["end"]
    assert p_bad.stats.total_cycles < p_ok.stats.total_cycles
    # ... so it computes on stale (zeroed) LMEM instead of x.
    assert np.all(p_bad.read(out_bad) == 0)
    np.testing.assert_array_equal(p_ok.read(out_ok), np.abs(x))


def _tiled_pipeline(edge, x, w, double_buffer: bool):
    """y = x @ w tile by tile. With double_buffer the GDMA stream is software
    pipelined (load of tile i+1 is issued before the store of tile i and
    overlaps the matmul of tile i); otherwise each load waits for the
    previous matmul."""
    tiles, m, _, k = x.shape
    n = w.shape[3]
    p = Prog(edge)
    src = p.ddr_in(x)
    dst = p.ddr_out([tiles, m, 1, n], np.float32)
    wl = p.lmem([1, k, 1, n], rt.DType.F32)
    p.b.gdma(rt.make_dma_move(wl, p.ddr_in(w)))
    bufs = [p.lmem([1, m, 1, k], rt.DType.F32) for _ in range(2)]
    outs = [p.lmem([1, m, 1, n], rt.DType.F32) for _ in range(2)]
    load_ids, comp_ids = {}, {}

    def load(i):
        s = rt.ddr_tensor(src.addr + i * m * k * 4, [1, m, 1, k], rt.DType.F32)
        # buffer i%2 was last read by the matmul of tile i-2 (i-1 if single buffered)
        prev = i - 2 if double_buffer else i - 1
        load_ids[i] = p.b.gdma(rt.make_dma_move(bufs[i % 2], s), comp_ids.get(prev, 0))

    load(0)
    for i in range(tiles):
        if double_buffer and i + 1 < tiles:
            load(i + 1)
        comp_ids[i] = p.b.tiu(rt.make_matmul(outs[i % 2], bufs[i % 2], wl), load_ids[i])
        d = rt.ddr_tensor(dst.addr + i * m * n * 4, [1, m, 1, n], rt.DType.F32)
        p.b.gdma(rt.make_dma_move(d, outs[i % 2]), comp_ids[i])
        if not double_buffer and i + 1 < tiles:
            load(i + 1)
    p.run()
    return p, dst


def test_double_buffering_overlaps_and_is_correct(edge, rng):
    x = rng.standard_normal((6, 32, 1, 64)).astype(np.float32)
    w = rng.standard_normal((1, 64, 1, 64)).astype(np.float32)
    ref = np.einsum("tmk,kn->tmn", x[:, :, 0].astype(np.float64), w[0, :, 0].astype(np.float64))[:, :, None]
    p1, d1 = _tiled_pipeline(edge, x, w, double_buffer=False)
    p2, d2 = _tiled_pipeline(edge, x, w, double_buffer=True)
    np.testing.assert_allclose(p1.read(d1), ref, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(p2.read(d2), p1.read(d1))
    assert p2.stats.total_cycles < 0.85 * p1.stats.total_cycles
    # Every consumer starts no earlier than the producer it waits for.
    for p in (p1, p2):
        rec = {(r["engine"], r["id"]): r for r in p.stats.records}
        for inst in p.b.tiu_stream:
            if inst.wait_id:
                assert rec[("GDMA", inst.wait_id)]["end"] <= rec[("TIU", inst.id)]["start"]
        for inst in p.b.gdma_stream:
            if inst.wait_id:
                assert rec[("TIU", inst.wait_id)]["end"] <= rec[("GDMA", inst.id)]["start"]


def test_deadlock_is_reported(edge):
    a = rt.lmem_tensor(0, [1, 1, 1, 4], rt.DType.F32)
    b = rt.lmem_tensor(64, [1, 1, 1, 4], rt.DType.F32)
    t = rt.make_active(rt.ActOp.RELU, a, b)
    g = rt.make_dma_move(b, a)
    t.engine, t.id, t.wait_id = rt.Engine.TIU, 1, 1
    g.engine, g.id, g.wait_id = rt.Engine.GDMA, 1, 1
    sim = rt.Simulator(edge, 1024)
    with pytest.raises(rt.ChipError, match="deadlock"):
        sim.run([t], [g])


def test_bad_ids_are_reported(edge):
    a = rt.lmem_tensor(0, [1, 1, 1, 4], rt.DType.F32)
    t = rt.make_active(rt.ActOp.RELU, a, a)
    t.engine, t.id, t.wait_id = rt.Engine.TIU, 1, 5
    with pytest.raises(rt.ChipError, match="wait_id 5 exceeds"):
        rt.Simulator(edge, 1024).run([t], [])
    t.id, t.wait_id = 2, 0
    with pytest.raises(rt.ChipError, match="id 2 must equal its 1-based position 1"):
        rt.Simulator(edge, 1024).run([t], [])
