"""Timing model: per-instruction costs against their formulas, traces."""
import json
import math

import pytest

from tpuc import runtime as rt


def _ids(insts, engine):
    for k, i in enumerate(insts, 1):
        i.engine, i.id, i.wait_id = engine, k, 0
    return insts


@pytest.mark.parametrize("chip", ["edge", "pro"])
@pytest.mark.parametrize("dtype", [rt.DType.F32, rt.DType.F16, rt.DType.INT8])
def test_matmul_cycles_formula(request, chip, dtype):
    t = request.getfixturevalue(chip)
    bank = t.lmem_bytes_per_lane // t.lmem_banks
    m, k, n = 100, 64, 48
    out_dt = rt.DType.INT32 if dtype == rt.DType.INT8 else rt.DType.F32
    i = rt.make_matmul(rt.lmem_tensor(2 * bank, [1, m, 1, n], out_dt),
                       rt.lmem_tensor(0, [1, m, 1, k], dtype), rt.lmem_tensor(bank, [1, k, 1, n], dtype))
    rows = math.ceil(m / t.lanes)
    assert i.cycles(t) == t.tiu_issue_cycles + math.ceil(rows * k * n / t.eu_for(dtype))


def test_gdma_cycles_formula(edge):
    src = rt.ddr_tensor(0, [1, 16, 8, 8], rt.DType.F32)
    dst = rt.lmem_tensor(0, [1, 16, 8, 8], rt.DType.F32)
    i = rt.make_dma_move(dst, src)
    nbytes = 16 * 64 * 4
    assert i.cycles(edge) == edge.gdma_issue_cycles + edge.ddr_latency_cycles + math.ceil(nbytes / edge.ddr_bytes_per_cycle)
    # Reading every other element wastes bursts.
    strided = rt.ddr_tensor(0, [1, 16, 8, 8], rt.DType.F32, stride=[2048, 128, 16, 2])
    assert rt.make_dma_move(dst, strided).cycles(edge) > 4 * i.cycles(edge)
    # LMEM -> LMEM moves use the on-chip bandwidth and no DDR latency.
    l2l = rt.make_dma_move(rt.lmem_tensor(8192, [1, 16, 8, 8], rt.DType.F32), dst)
    assert l2l.cycles(edge) == edge.gdma_issue_cycles + math.ceil(nbytes / edge.gdma_lmem_bytes_per_cycle)


def test_sfu_and_bank_conflict_costs(edge):
    bank = edge.lmem_bytes_per_lane // edge.lmem_banks
    a = rt.lmem_tensor(0, [1, 16, 16, 16], rt.DType.F32)
    o = rt.lmem_tensor(2 * bank, [1, 16, 16, 16], rt.DType.F32)
    relu = rt.make_active(rt.ActOp.RELU, o, a).cycles(edge)
    exp = rt.make_active(rt.ActOp.EXP, o, a).cycles(edge)
    assert exp - edge.tiu_issue_cycles == edge.tiu_sfu_factor * (relu - edge.tiu_issue_cycles)
    same = rt.make_binary(rt.BinaryOp.ADD, o, a, rt.lmem_tensor(1024, [1, 16, 16, 16], rt.DType.F32))
    other = rt.make_binary(rt.BinaryOp.ADD, o, a, rt.lmem_tensor(bank, [1, 16, 16, 16], rt.DType.F32))
    base = other.cycles(edge) - edge.tiu_issue_cycles
    assert same.cycles(edge) - edge.tiu_issue_cycles == math.ceil(base * (1 + edge.bank_conflict_pct / 100))


def test_parallel_engines_and_trace(edge, tmp_path):
    # Independent TIU and GDMA work overlaps: total < sum of busy cycles.
    bank = edge.lmem_bytes_per_lane // edge.lmem_banks
    a = rt.lmem_tensor(0, [1, 16, 16, 16], rt.DType.F32)
    o = rt.lmem_tensor(bank, [1, 16, 16, 16], rt.DType.F32)
    tiu = _ids([rt.make_active(rt.ActOp.EXP, o, a) for _ in range(4)], rt.Engine.TIU)
    gdma = _ids([rt.make_dma_move(rt.lmem_tensor(2 * bank, [1, 16, 16, 16], rt.DType.F32),
                                  rt.ddr_tensor(0, [1, 16, 16, 16], rt.DType.F32)) for _ in range(3)],
                rt.Engine.GDMA)
    sim = rt.Simulator(edge, 1 << 16)
    s = sim.run(tiu, gdma)
    # GDMA busy cycles are issue + transfer; the last load's latency shows.
    assert s.total_cycles == max(s.tiu_busy_cycles, s.gdma_busy_cycles + edge.ddr_latency_cycles)
    assert s.total_cycles < s.tiu_busy_cycles + s.gdma_busy_cycles
    assert 0 < s.tiu_utilization <= 1 and 0 < s.gdma_utilization <= 1
    path = tmp_path / "trace.json"
    s.write_trace(str(path), "test")
    tr = json.loads(path.read_text())
    events = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    assert len(events) == 7
    assert {e["tid"] for e in events} == {0, 1}
    names = {e["args"]["name"] for e in tr["traceEvents"] if e.get("name") == "thread_name"}
    assert names == {"TIU", "GDMA"}
    ends = max(e["ts"] + e["dur"] for e in events)
    assert ends == pytest.approx(s.total_cycles / edge.clock_mhz)


def _loads(count, reread=False):
    """`count` 16 KiB DDR -> LMEM loads; with `reread`, each later one reads
    back (LMEM -> DDR) what the previous one loaded."""
    shape = [1, 16, 16, 16]
    insts = []
    for k in range(count):
        lm = rt.lmem_tensor(0, shape, rt.DType.F32)
        dd = rt.ddr_tensor(k * 16384, shape, rt.DType.F32)
        insts.append(rt.make_dma_move(dd, lm) if reread and k % 2 else rt.make_dma_move(lm, dd))
    return _ids(insts, rt.Engine.GDMA)


@pytest.mark.parametrize("chip", ["edge", "pro"])
def test_gdma_requests_in_flight(request, chip):
    t = request.getfixturevalue(chip)
    gdma = _loads(6)
    one = gdma[0].cycles(t)
    busy = one - t.ddr_latency_cycles
    s = rt.Simulator(t, 1 << 20).run([], gdma)
    # Latency overlaps the following requests' transfers: only the last shows.
    assert t.gdma_queue_depth > 1
    assert s.total_cycles == 6 * busy + t.ddr_latency_cycles
    assert s.gdma_busy_cycles == 6 * busy
    # A queue of one is the serial engine: every request pays its latency.
    serial = rt.load_target(t.name)
    serial.gdma_queue_depth = 1
    assert rt.Simulator(serial, 1 << 20).run([], _loads(6)).total_cycles == 6 * one


def test_gdma_reads_wait_for_outstanding_writes(edge):
    # A store of what the previous load wrote waits for that load to finish.
    s = rt.Simulator(edge, 1 << 20).run([], _loads(2, reread=True))
    assert s.total_cycles == 2 * _loads(1)[0].cycles(edge)
