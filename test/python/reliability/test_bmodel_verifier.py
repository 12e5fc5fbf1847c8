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


def edited(raw: bytes, edit) -> bytes:
    """`raw` re-encoded (unvalidated) after `edit(bm, parts)` changed the lists
    in parts ("tiu", "gdma", "inputs", "outputs") of network 0."""
    bm = rt._rt.parse_bmodel(raw)
    net = bm.networks[0]
    parts = {k: list(getattr(net, k)) for k in ("tiu", "gdma", "inputs", "outputs")}
    edit(bm, parts)
    for k, v in parts.items():
        setattr(net, k, v)
    bm.networks = [net]
    return bytes(rt._rt.serialize_bmodel(bm, validate=False))


def no_waits(bm, p, engines=("tiu", "gdma")):
    for e in engines:
        for i in p[e]:
            i.wait_id = 0


def test_shipped_model_verifies_and_runs(raw):
    m = rt.Model(raw)
    x = dict(np.load(INPUT))
    out = m.run(x).outputs
    assert out and all(np.isfinite(v).all() for v in out.values())


def test_every_wait_removed_is_a_race_naming_both_instructions(raw):
    msg = reject(edited(raw, no_waits), "race: ")
    assert re.search(r"TIU instruction #\d+ \(id \d+, [\w.]+\)", msg), msg
    assert re.search(r"GDMA instruction #\d+ \(id \d+, [\w.]+\)", msg), msg
    assert "no wait orders the two" in msg


def test_one_wait_dropped_is_caught(raw):
    # Dropping the first load wait of a compute instruction races.
    k = next(k for k, i in enumerate(rt._rt.parse_bmodel(raw).networks[0].tiu) if i.wait_id)

    def drop(bm, p):
        p["tiu"][k].wait_id = 0
    reject(edited(raw, drop), rf"race: .*TIU instruction #{k} ")


def test_deadlock(raw):
    def cycle(bm, p):
        p["tiu"][0].wait_id = p["gdma"][0].wait_id = 1
    reject(edited(raw, cycle), "deadlock: TIU instruction #0")


def test_store_into_weight_region(raw):
    k = max(k for k, g in enumerate(rt._rt.parse_bmodel(raw).networks[0].gdma)
            if g.dst.space == rt.Space.DDR)

    def store(bm, p):
        d = p["gdma"][k].dst
        d.addr = bm.plan.weight_addr
        p["gdma"][k].dst = d
    reject(edited(raw, store), rf"GDMA instruction #{k} .* outside the activation region")


def test_input_dtype_contradicts_code(raw):
    def retype(bm, p):
        p["inputs"][0].dtype = rt.DType.F16
    reject(edited(raw, retype), "input '.*' is f16 but GDMA instruction #[0-9]+ .* reads it as f32")


def test_output_dtype_contradicts_code(raw):
    def retype(bm, p):
        p["outputs"][0].dtype = rt.DType.INT8
    reject(edited(raw, retype), "output '.*' is int8 but GDMA instruction .* stores f32")


@pytest.mark.parametrize("field", ["inputs", "outputs"])
def test_network_without_inputs_or_outputs(raw, field):
    def drop(bm, p):
        p[field] = []
    reject(edited(raw, drop), "needs at least one input and one output")


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
    bad = tmp_path / "race.bmodel"
    bad.write_bytes(edited(raw, lambda bm, p: no_waits(bm, p, ("tiu",))))
    tool("model_runner", "--model", bad, "--input", INPUT).assert_clean_error(
        "race.bmodel", "race: ")


def test_target_lanes_differ_from_the_code(raw):
    # The embedded target edited to 32 lanes (the code was generated for 16).
    b = bytearray(raw)
    trgt = next(s for s in bb.sections(raw) if s.tag == b"TRGT")
    body = bytes(b[trgt.body:trgt.body + trgt.length])
    edited_body = re.sub(rb'("lanes":\s*)16\b', rb"\g<1>32", body)
    assert edited_body != body and len(edited_body) == len(body)
    b[trgt.body:trgt.body + trgt.length] = edited_body
    reject(bb.reseal(b), "generated for 16 lanes but target 'tpu_edge' has 32")


def inflight_writes(fillers: int) -> rt.BModel:
    """A fill of x's local buffer, `fillers` unrelated requests, then the
    load of x into the same buffer: nothing but the GDMA queue orders the two
    writes."""
    t = rt.load_target("tpu_edge")
    F, shape = rt.DType.F32, [1, 16, 4, 4]
    xl, yl = rt.lmem_tensor(0, shape, F), rt.lmem_tensor(4096, shape, F)
    sb = rt.StreamBuilder()
    sb.gdma(rt.make_dma_fill(xl, 0.0))
    for k in range(fillers):
        sb.gdma(rt.make_dma_fill(rt.lmem_tensor(1024 + 64 * k, shape, F), 1.0))
    g = sb.gdma(rt.make_dma_move(xl, rt.ddr_tensor(0, shape, F)))
    relu = sb.tiu(rt.make_active(rt.ActOp.RELU, yl, xl), g)
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(4096, shape, F), yl), relu)
    return rt.build_bmodel(t, sb.tiu_stream, sb.gdma_stream,
                           [rt.TensorInfo("x", F, shape, ddr_addr=0)],
                           [rt.TensorInfo("y", F, shape, ddr_addr=4096)])


def test_overlapping_writes_in_flight_are_rejected():
    # Up to queue_depth GDMA requests are in flight; two of them writing the
    # same bytes are refused, naming both, until the queue itself orders
    # them (the fill completes before the load can issue).
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 16, 4, 4)
    depth = rt.load_target("tpu_edge").gdma_queue_depth
    for fillers in range(depth - 1):
        with pytest.raises(rt.ChipError, match=(
                r"in-flight writes overlap: GDMA instruction #0 \(id 1, dma_fill\) "
                rf"writes .* GDMA instruction #{fillers + 1} \(id {fillers + 2}, dma_move\)")):
            rt.serialize_bmodel(inflight_writes(fillers))
    m = rt.Model(rt.serialize_bmodel(inflight_writes(depth - 1)))
    np.testing.assert_array_equal(m.run({"x": x}).outputs["y"], np.maximum(x, 0))


def _first(stream, pred):
    return next(k for k, i in enumerate(stream) if pred(i))


def test_a_source_read_from_another_start_lane_is_rejected(raw):
    def edit(bm, p):
        k = _first(p["tiu"], lambda i: i.src[0].space == rt.Space.LMEM)
        i = p["tiu"][k]
        o = i.src[0]
        o.start_lane = 1
        i.set_src(0, o)
    msg = reject(edited(raw, edit), r"lane placement: TIU instruction #\d+ \(id \d+, [\w.]+\) "
                 r"src0 reads from start lane 1 data GDMA instruction #\d+ .* wrote from start lane 0")
    assert "(lane " in msg


def _lane_program(loads, reads):
    """On tpu_edge (16 lanes): the GDMA loads x [1, 16, 4, 4] into LMEM as
    `loads` (LMEM views, each of the channels from its start lane on, in
    x's order), a relu reads `reads` into byte 2048 from lane 0 and y is
    stored."""
    t = rt.load_target("tpu_edge")
    F, shape = rt.DType.F32, [1, 16, 4, 4]
    out = list(reads.shape)
    sb = rt.StreamBuilder()
    for v in loads:
        g = sb.gdma(rt.make_dma_move(v, rt.ddr_tensor(v.start_lane * 64, list(v.shape), F)))
    relu = sb.tiu(rt.make_active(rt.ActOp.RELU, rt.lmem_tensor(2048, out, F), reads), g)
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(4096, out, F), rt.lmem_tensor(2048, out, F)), relu)
    return rt.build_bmodel(t, sb.tiu_stream, sb.gdma_stream,
                           [rt.TensorInfo("x", F, shape, ddr_addr=0)],
                           [rt.TensorInfo("y", F, out, ddr_addr=4096)])


def _lmem(c, start_lane=0, addr=0):
    return rt.lmem_tensor(addr, [1, c, 4, 4], rt.DType.F32, start_lane=start_lane)


def test_a_read_assembled_from_parts_on_their_own_lanes_is_accepted():
    # Channels 0..5 and 6..15 load from their own start lanes; the relu
    # reads all 16 from lane 0.
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 16, 4, 4)
    m = rt.Model(rt.serialize_bmodel(_lane_program([_lmem(6), _lmem(10, 6)], _lmem(16))))
    np.testing.assert_array_equal(m.run({"x": x}).outputs["y"], np.maximum(x, 0))


@pytest.mark.parametrize("reads, lane", [
    (_lmem(16, 1), 1),   # shifted against its writer: lanes 1..15 and 0
    (_lmem(15, 1), 1),   # shifted: part of the writer's lanes, another start
    (_lmem(8, 12), 12),  # wrapping around the lanes from start lane 12
])
def test_a_misplaced_read_is_rejected(reads, lane):
    with pytest.raises(rt.ChipError, match=(
            rf"lane placement: TIU instruction #0 \(id 1, active.relu\) src0 reads from start "
            rf"lane {lane} data GDMA instruction #0 \(id 1, dma_move\) dst wrote from start "
            r"lane 0 \(lane \d+, byte 0\)")):
        rt.serialize_bmodel(_lane_program([_lmem(16)], reads))


def test_a_tiu_instruction_in_place_on_some_lanes_is_accepted():
    # A relu in place on lanes 4..11 of x, then x stored whole from lane 0.
    t = rt.load_target("tpu_edge")
    F, shape = rt.DType.F32, [1, 16, 4, 4]
    sb = rt.StreamBuilder()
    g = sb.gdma(rt.make_dma_move(_lmem(16), rt.ddr_tensor(0, shape, F)))
    relu = sb.tiu(rt.make_active(rt.ActOp.RELU, _lmem(8, 4), _lmem(8, 4)), g)
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(4096, shape, F), _lmem(16)), relu)
    m = rt.Model(rt.serialize_bmodel(rt.build_bmodel(
        t, sb.tiu_stream, sb.gdma_stream, [rt.TensorInfo("x", F, shape, ddr_addr=0)],
        [rt.TensorInfo("y", F, shape, ddr_addr=4096)])))
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 16, 4, 4)
    want = x.copy()
    want[:, 4:12] = np.maximum(x[:, 4:12], 0)
    np.testing.assert_array_equal(m.run({"x": x}).outputs["y"], want)


def _pick_program(start):
    """On tpu_edge: x [1, 16, 4, 4] loaded from lane 0; an LMEM-to-LMEM move
    takes its 8 channels from lane `start` onto lanes 0..7 of byte 2048,
    which are stored as y."""
    t = rt.load_target("tpu_edge")
    F, shape = rt.DType.F32, [1, 16, 4, 4]
    sb = rt.StreamBuilder()
    sb.gdma(rt.make_dma_move(_lmem(16), rt.ddr_tensor(0, shape, F)))
    sb.gdma(rt.make_dma_move(_lmem(8, addr=2048), _lmem(8, start)))
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(4096, [1, 8, 4, 4], F), _lmem(8, addr=2048)))
    return rt.build_bmodel(t, sb.tiu_stream, sb.gdma_stream,
                           [rt.TensorInfo("x", F, shape, ddr_addr=0)],
                           [rt.TensorInfo("y", F, [1, 8, 4, 4], ddr_addr=4096)])


def test_a_local_move_picking_a_whole_part_of_the_lanes_is_accepted():
    # The upper half of x's channels moves onto the lower lanes (the
    # partial sums of a conv spread over idle lanes).
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 16, 4, 4)
    m = rt.Model(rt.serialize_bmodel(_pick_program(8)))
    np.testing.assert_array_equal(m.run({"x": x}).outputs["y"], x[:, 8:])


def test_a_local_move_picking_lanes_past_the_lanes_written_is_rejected():
    # From lane 9: its 8 channels run past x's 16 lanes.
    with pytest.raises(rt.ChipError, match=r"lane placement: GDMA instruction #1 "
                       r"\(id 2, dma_move\) src0 reads from start lane 9"):
        rt.serialize_bmodel(_pick_program(9))


def test_a_local_move_picking_lanes_inside_the_lanes_written_is_accepted():
    # From lane 3: channels 3..10 of x, on their own lanes.
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 16, 4, 4)
    m = rt.Model(rt.serialize_bmodel(_pick_program(3)))
    np.testing.assert_array_equal(m.run({"x": x}).outputs["y"], x[:, 3:11])


def test_a_read_of_local_memory_nothing_wrote_is_rejected():
    t = rt.load_target("tpu_edge")
    F, shape = rt.DType.F32, [1, 16, 4, 4]
    sb = rt.StreamBuilder()
    g = sb.gdma(rt.make_dma_move(rt.lmem_tensor(0, shape, F), rt.ddr_tensor(0, shape, F)))
    relu = sb.tiu(rt.make_active(rt.ActOp.RELU, rt.lmem_tensor(4096, shape, F),
                                 rt.lmem_tensor(1024, shape, F)), g)
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(4096, shape, F), rt.lmem_tensor(4096, shape, F)), relu)
    m = rt.build_bmodel(t, sb.tiu_stream, sb.gdma_stream,
                        [rt.TensorInfo("x", F, shape, ddr_addr=0)],
                        [rt.TensorInfo("y", F, shape, ddr_addr=4096)])
    with pytest.raises(rt.ChipError, match=r"undefined read: TIU instruction #0 \(id 1, active.relu\) "
                       r"src0 reads LMEM \(lane 0, byte 1024\) which no earlier instruction wrote"):
        rt.serialize_bmodel(m)


def test_a_ddr_view_past_its_tensor_is_rejected(raw):
    def edit(bm, p):
        k = _first(p["gdma"], lambda i: i.src[0].space == rt.Space.DDR)
        i = p["gdma"][k]
        o = i.src[0]
        o.addr = o.addr + 4
        i.set_src(0, o)
    reject(edited(raw, edit), r"GDMA instruction #\d+ \(id \d+, dma_move\) src0: DDR bytes "
           r"\[\d+, \d+\) lie inside no (weight tensor|input, output or named tensor)")


def test_an_older_format_version_asks_for_a_recompile(raw):
    old = bytearray(raw)
    struct.pack_into("<I", old, 8, rt.BMODEL_VERSION - 1)
    reject(bytes(old), rf"unsupported bmodel version {rt.BMODEL_VERSION - 1} .*recompile")


def ddr_program(*moves) -> rt.BModel:
    """GDMA-only program over input x (DDR 0) and output y (4096), both
    F32[1,16,4,4], and named intermediates t (8192) and u (4096, holding y),
    both F32[1,32,4,4]: each (dst, src) of `moves` is a DDR view given as
    (tensor, element offset, channels[, dtype]). A read waits in the GDMA
    queue for the stores it reads."""
    t = rt.load_target("tpu_edge")
    F, shape = rt.DType.F32, [1, 16, 4, 4]
    base = {"x": 0, "y": 4096, "t": 8192}

    def view(v):
        name, offset, channels, *dtype = v
        return rt.ddr_tensor(base[name] + 4 * offset, [1, channels, 4, 4], dtype[0] if dtype else F)
    sb = rt.StreamBuilder()
    for dst, src in moves:
        sb.gdma(rt.make_dma_move(view(dst), view(src)))
    return rt.build_bmodel(
        t, sb.tiu_stream, sb.gdma_stream, [rt.TensorInfo("x", F, shape, ddr_addr=0)],
        [rt.TensorInfo("y", F, shape, ddr_addr=4096)],
        tensors=[rt.NamedTensor(rt.TensorInfo(n, F, [1, 32, 4, 4], ddr_addr=a), rt.Engine.GDMA, 1)
                 for n, a in (("t", 8192), ("u", 4096))])


def test_a_ddr_program_through_an_intermediate_runs():
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 16, 4, 4)
    m = rt.Model(rt.serialize_bmodel(ddr_program(
        (("t", 0, 8), ("x", 0, 8)), (("t", 128, 8), ("x", 128, 8)), (("y", 0, 16), ("t", 0, 16)))))
    np.testing.assert_array_equal(m.run({"x": x}).outputs["y"], x)


def test_a_ddr_read_of_an_intermediate_nothing_stored_is_rejected():
    with pytest.raises(rt.ChipError, match=r"undefined read: GDMA instruction #0 \(id 1, dma_move\) "
                       r"src0 reads DDR byte 8192 which no earlier instruction wrote"):
        rt.serialize_bmodel(ddr_program((("y", 0, 16), ("t", 0, 16))))


def test_a_ddr_read_of_bytes_stored_as_another_dtype_is_rejected():
    with pytest.raises(rt.ChipError, match=r"dtype: GDMA instruction #\d+ \(id \d+, dma_move\) src0 "
                       r"reads DDR as f16 bytes GDMA instruction #0 \(id 1, dma_move\) dst wrote as f32 \(byte 8192\)"):
        rt.serialize_bmodel(ddr_program((("t", 0, 16), ("x", 0, 16)),
                                        (("y", 0, 16), ("t", 0, 16, rt.DType.F16))))


def test_an_output_byte_nothing_writes_is_rejected():
    with pytest.raises(rt.ChipError, match=r"unwritten output: no instruction writes byte 4608 of "
                       r"output 'y' \(DDR \[4096, 5120\)\)"):
        rt.serialize_bmodel(ddr_program((("y", 0, 8), ("x", 0, 8))))


def test_an_output_byte_last_written_by_a_wider_store_is_rejected():
    with pytest.raises(rt.ChipError, match=r"view mismatch: output 'y' \(DDR \[4096, 5120\)\) holds "
                       r"bytes \[4096, 5120\) last written by GDMA instruction #\d+ \(id \d+, dma_move\) "
                       r"dst to \[4096, 6144\), which strays outside it"):
        rt.serialize_bmodel(ddr_program((("t", 0, 16), ("x", 0, 16)), (("t", 256, 16), ("x", 0, 16)),
                                        (("y", 0, 32), ("t", 0, 32))))
