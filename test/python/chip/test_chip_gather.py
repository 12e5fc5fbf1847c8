"""GDMA dma_gather: slices of a DDR source picked by run-time indices."""
import math

import numpy as np
import pytest

from tpuc import runtime as rt
from chiputil import Prog

IDX_DTYPES = [np.float32, np.int32]


def gather_ref(x, idx, axis):
    dim = x.shape[axis]
    return np.take(x, np.where(idx < 0, idx + dim, idx).astype(np.int64), axis=axis)


def run_gather(tgt, x, idx, axis, idx_shape=None):
    p = Prog(tgt)
    src = p.ddr_in(x)
    index = p.ddr_in(idx.reshape(idx_shape or (1, 1, 1, idx.size)))
    shape = list(x.shape)
    shape[axis] = idx.size
    dst = p.ddr_out(shape, x.dtype)
    p.b.gdma(rt.make_dma_gather(dst, src, index, axis))
    p.run()
    return p, p.read(dst)


@pytest.mark.parametrize("idx_dtype", IDX_DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_matches_numpy_with_negative_indices(edge, rng, idx_dtype, axis):
    x = rng.standard_normal((3, 5, 4, 6)).astype(np.float32)
    dim = x.shape[axis]
    idx = rng.integers(-dim, dim, 7).astype(idx_dtype)
    idx[:2] = [-dim, dim - 1]
    _, out = run_gather(edge, x, idx, axis)
    assert out.tobytes() == gather_ref(x, idx, axis).tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.int32])
def test_bit_copy_of_any_dtype_and_index_shape(edge, rng, dtype):
    x = (rng.standard_normal((1, 9, 2, 3)) * 50).astype(dtype)
    idx = np.array([8, -9, 0, 3, 3, -1], np.int32)
    # Indices are read in NCHW order whatever the index operand's shape.
    _, out = run_gather(edge, x, idx, 1, idx_shape=(1, 2, 3, 1))
    assert out.tobytes() == gather_ref(x, idx, 1).tobytes()


def test_strided_source_into_lmem(edge, rng):
    """A transposed DDR view gathered straight into LMEM, then stored."""
    x = rng.standard_normal((1, 6, 40, 5)).astype(np.float32)
    idx = np.array([39, -40, 7, 7, -2], np.float32)
    p = Prog(edge)
    base = p.ddr_in(x)
    view = rt.ddr_tensor(base.addr, [1, 40, 6, 5], rt.DType.F32, stride=[1200, 5, 200, 1])
    index = p.ddr_in(idx.reshape(1, 1, 1, -1))
    lm = p.lmem([1, 5, 6, 5], rt.DType.F32, start_lane=3)
    p.b.gdma(rt.make_dma_gather(lm, view, index, 1))
    out = p.store(lm)
    p.run()
    ref = gather_ref(x.transpose(0, 2, 1, 3), idx, 1)
    assert np.array_equal(p.read(out), ref)


def test_reads_indices_written_by_earlier_move(edge, rng):
    """The indices come from a move earlier in the GDMA stream (in order)."""
    x = rng.standard_normal((1, 1, 8, 4)).astype(np.float32)
    p = Prog(edge)
    src = p.ddr_in(x)
    staged = p.ddr_in(np.array([[[[-1, 2, 5]]]], np.int32))
    index = p.ddr_out([1, 1, 1, 3], np.float32)
    p.b.gdma(rt.make_dma_move(index, staged))  # int32 -> f32
    dst = p.ddr_out([1, 1, 3, 4], np.float32)
    p.b.gdma(rt.make_dma_gather(dst, src, index, 2))
    p.run()
    assert np.array_equal(p.read(dst), x[:, :, [7, 2, 5]])


@pytest.mark.parametrize("idx_dtype,bad,text", [
    (np.float32, 4, "index 4 at position 2 is outside [-4, 4) for axis 1"),
    (np.int32, 4, "index 4 at position 2 is outside [-4, 4) for axis 1"),
    (np.float32, -5, "index -5 at position 2 is outside [-4, 4) for axis 1"),
    (np.int32, -2**31, "index -2147483648 at position 2 is outside [-4, 4) for axis 1"),
    (np.float32, 1.5, "index 1.5 at position 2 is not an integer"),
    (np.float32, float("nan"), "index nan at position 2 is not an integer"),
    (np.float32, float("inf"), "index inf at position 2 is not an integer"),
])
def test_bad_index_is_a_runtime_error(edge, rng, idx_dtype, bad, text):
    x = rng.standard_normal((2, 4, 3, 1)).astype(np.float32)
    idx = np.array([0, -1, bad, 1], idx_dtype)
    p = Prog(edge)
    src = p.ddr_in(x)
    index = p.ddr_in(idx.reshape(1, 1, 1, -1))
    first = p.ddr_out([1, 1, 1, 4], np.float32)
    p.b.gdma(rt.make_dma_move(first, index))
    dst = p.ddr_out([2, 4, 3, 1], np.float32)
    p.b.gdma(rt.make_dma_gather(dst, src, index, 1))
    with pytest.raises(rt.ChipError) as e:
        p.run()
    assert str(e.value) == "GDMA instruction #1 (id 2, dma_gather): src1: " + text
    # Nothing of the failed gather reached memory.
    assert not p.read(dst).any()


def _ops():
    src = rt.ddr_tensor(0, [1, 4, 8, 8], rt.DType.F32)
    dst = rt.ddr_tensor(4096, [1, 4, 3, 8], rt.DType.F32)
    idx = rt.ddr_tensor(8192, [1, 1, 1, 3], rt.DType.INT32)
    return src, dst, idx


@pytest.mark.parametrize("case,text", [
    ("src_lmem", "src0: gather source must be in DDR"),
    ("idx_lmem", "src1: gather indices must be in DDR"),
    ("idx_int8", "src1: gather indices must be f32 or int32, not int8"),
    ("dst_dtype", "dst: dtype f16 must equal the source dtype f32"),
    ("axis", "iparam[0] (axis): axis must be 0..3, not 4"),
    ("shape", "dst: shape [1,4,3,7] must equal the source shape [1,4,8,8] except along axis 2"),
    ("count", "src1: shape [1,1,1,4] must hold 3 indices (dst dim 2)"),
    ("src2", "src2: operand must be empty"),
])
def test_validation(edge, case, text):
    src, dst, idx = _ops()
    axis = 2
    if case == "src_lmem":
        src = rt.lmem_tensor(0, [1, 4, 8, 8], rt.DType.F32)
    elif case == "idx_lmem":
        idx = rt.lmem_tensor(0, [1, 1, 1, 3], rt.DType.INT32)
    elif case == "idx_int8":
        idx = rt.ddr_tensor(8192, [1, 1, 1, 3], rt.DType.INT8)
    elif case == "dst_dtype":
        dst = rt.ddr_tensor(4096, [1, 4, 3, 8], rt.DType.F16)
    elif case == "axis":
        axis = 4
    elif case == "shape":
        dst = rt.ddr_tensor(4096, [1, 4, 3, 7], rt.DType.F32)
    elif case == "count":
        idx = rt.ddr_tensor(8192, [1, 1, 1, 4], rt.DType.INT32)
    i = rt.make_dma_gather(dst, src, idx, axis)
    if case == "src2":
        i.src = [i.src[0], i.src[1], rt.ddr_tensor(0, [1, 1, 1, 1], rt.DType.F32)]
    with pytest.raises(rt.ChipError) as e:
        i.validate(edge, 1 << 20)
    assert "GDMA instruction #0" in str(e.value) and "dma_gather" in str(e.value)
    assert text in str(e.value)


def test_index_range_checked_by_validation(edge):
    """The index operand's extent is validated like any operand's."""
    src, dst, _ = _ops()
    i = rt.make_dma_gather(dst, src, rt.ddr_tensor((1 << 20) - 8, [1, 1, 1, 3], rt.DType.INT32), 2)
    with pytest.raises(rt.ChipError, match=r"src1.addr: DDR range .* is outside DDR"):
        i.validate(edge, 1 << 20)


def test_encode_decode_roundtrip(edge):
    src, dst, idx = _ops()
    i = rt.make_dma_gather(dst, src, idx, 2)
    i.id, i.wait_id = 5, 2
    b = i.encode()
    assert b[0] == 3 and b[1] == 1  # opcode dma_gather, GDMA engine
    j = rt.Instruction.decode(b)
    assert j.op == rt.Opcode.DMA_GATHER and j.engine == rt.Engine.GDMA
    assert j.encode() == b and j.iparam[0] == 2
    j.validate(edge, 1 << 20)


def test_cycles_formula(edge):
    """A dma_move of the gathered bytes, with source runs cut at the gather
    axis, plus the index read."""
    src, dst, idx = _ops()
    burst = edge.ddr_burst_bytes

    def eff(runs, run_bytes):
        return runs * math.ceil(run_bytes / burst) * burst

    nbytes = 4 * 3 * 8 * 4
    data = max(nbytes, eff(4 * 3, 8 * 4), eff(1, nbytes))
    expect = edge.gdma_issue_cycles + edge.ddr_latency_cycles + math.ceil(
        (data + eff(1, 12)) / edge.ddr_bytes_per_cycle)
    g = rt.make_dma_gather(dst, src, idx, 2)
    assert g.cycles(edge) == expect
    # Gathering single elements along W costs a burst each.
    along_w = rt.make_dma_gather(rt.ddr_tensor(4096, [1, 4, 8, 3], rt.DType.F32), src, idx, 3)
    assert along_w.cycles(edge) > g.cycles(edge)
    move = rt.make_dma_move(dst, rt.ddr_tensor(0, [1, 4, 3, 8], rt.DType.F32))
    assert g.cycles(edge) > move.cycles(edge)
