"""The bmodel verifier run at load: every field and section checked, the
I/O table consistent with the code, every instruction's work bounded, and
the hazard check proving the two engines race-free. Each damaged file keeps
a valid checksum (bmodel_bytes.reseal), so the check behind it is reached."""
from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from conftest import INPUT, tool
from tpuc import runtime as rt
from tpuc.testing import bmodel_bytes as bb


@pytest.fixture(scope="module")
def raw(tiny):
    return (tiny / "tiny.bmodel").read_bytes()


def reject(data: bytes, pattern: str) -> str:
    with pytest.raises(rt.ChipError, match=pattern) as e:
        rt.Model(bytes(data))
    return str(e.value)


def reencode(bm) -> bytes:
    return bytes(rt._rt.serialize_bmodel(bm, validate=False))


def test_shipped_model_verifies_and_runs(raw):
    m = rt.Model(raw)
    x = dict(np.load(INPUT))
    out = m.run(x).outputs
    assert out and all(np.isfinite(v).all() for v in out.values())


def test_every_wait_removed_is_a_race_naming_both_instructions(raw):
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    tiu, gdma = list(net.tiu), list(net.gdma)
    for i in tiu + gdma:
        i.wait_id = 0
    net.tiu, net.gdma = tiu, gdma
    bm.networks = [net]
    msg = reject(reencode(bm), "race: ")
    assert re.search(r"TIU instruction #\d+ \(id \d+, [\w.]+\)", msg), msg
    assert re.search(r"GDMA instruction #\d+ \(id \d+, [\w.]+\)", msg), msg
    assert "no wait orders the two" in msg


def test_one_wait_dropped_is_caught(raw):
    # Dropping any single load wait of the first compute instruction races.
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    tiu = list(net.tiu)
    k = next(k for k, i in enumerate(tiu) if i.wait_id)
    tiu[k].wait_id = 0
    net.tiu = tiu
    bm.networks = [net]
    reject(reencode(bm), rf"race: .*TIU instruction #{k} ")


def test_deadlock(raw):
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    tiu, gdma = list(net.tiu), list(net.gdma)
    tiu[0].wait_id = 1
    gdma[0].wait_id = 1
    net.tiu, net.gdma = tiu, gdma
    bm.networks = [net]
    reject(reencode(bm), "deadlock: TIU instruction #0")


def test_store_into_weight_region(raw):
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    gdma = list(net.gdma)
    k = max(k for k, g in enumerate(gdma) if g.dst.space == rt.Space.DDR)
    d = gdma[k].dst
    d.addr = bm.plan.weight_addr
    gdma[k].dst = d
    net.gdma = gdma
    bm.networks = [net]
    reject(reencode(bm), rf"GDMA instruction #{k} .* outside the activation region")


def test_input_dtype_contradicts_code(raw):
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    ins = list(net.inputs)
    ins[0].dtype = rt.DType.F16
    net.inputs = ins
    bm.networks = [net]
    reject(reencode(bm), "input '.*' is f16 but GDMA instruction #0 .* reads it as f32")


def test_output_dtype_contradicts_code(raw):
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    outs = list(net.outputs)
    outs[0].dtype = rt.DType.INT8
    net.outputs = outs
    bm.networks = [net]
    reject(reencode(bm), "output '.*' is int8 but GDMA instruction .* stores f32")


@pytest.mark.parametrize("field", ["inputs", "outputs"])
def test_network_without_inputs_or_outputs(raw, field):
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    setattr(net, field, [])
    bm.networks = [net]
    reject(reencode(bm), "needs at least one input and one output")


def test_reserved_header_field(raw):
    b = bytearray(raw)
    b[36] = 1
    reject(bb.reseal(b), "reserved field is 1")


def test_section_flags(raw):
    b = bytearray(raw)
    s = bb.sections(raw)[1]
    struct.pack_into("<I", b, s.offset + 4, 4)
    reject(bb.reseal(b), "section 1: flags are 4")


def test_duplicate_section(raw):
    secs = bb.sections(raw)
    plan = next(s for s in secs if s.tag == b"PLAN")
    dup = raw[plan.offset:plan.body + plan.length]
    reject(bb.reseal(raw + dup, count=len(secs) + 1), "duplicate section 'PLAN'")


def test_pool_window_work_is_bounded():
    # A 4096x4096 window (pads 4095) over 65536 stride-0 channels: 1.1e12
    # additions if accepted.
    t = rt.load_target("tpu_edge")
    src = rt.lmem_tensor(0, [1, 65536, 1, 1], rt.DType.F32, 0)
    dst = rt.lmem_tensor(64, [1, 65536, 1, 1], rt.DType.F32, 0)
    src.stride = dst.stride = [0, 0, 0, 0]
    inst = rt.make_pool(rt.PoolMode.AVG, dst, src, [4096, 4096], [4096, 4096],
                        [4095, 4095, 4095, 4095])
    with pytest.raises(rt.ChipError, match="steps, over the limit"):
        inst.validate(t, 1 << 20)


def test_model_runner_reports_a_race_in_one_line(raw, tmp_path):
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    tiu = list(net.tiu)
    for i in tiu:
        i.wait_id = 0
    net.tiu = tiu
    bm.networks = [net]
    bad = tmp_path / "race.bmodel"
    bad.write_bytes(reencode(bm))
    tool("model_runner", "--model", bad, "--input", INPUT).assert_clean_error(
        "race.bmodel", "race: ")
