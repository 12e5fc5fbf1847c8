"""GDMA: strided moves DDR<->LMEM, LMEM<->LMEM, dtype conversion, fill."""
import ml_dtypes
import numpy as np
import pytest

from tpuc import runtime as rt
from chiputil import Prog

BF16 = ml_dtypes.bfloat16


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int8, np.uint8, np.int32])
@pytest.mark.parametrize("start_lane", [0, 5])
def test_roundtrip_through_lmem(edge, rng, dtype, start_lane):
    x = (rng.standard_normal((2, 37, 3, 5)) * 50).astype(dtype)
    p = Prog(edge)
    lm = p.load(x, start_lane)
    out = p.store(lm)
    p.run()
    assert p.read(out).tobytes() == x.tobytes()


def test_lane_layout(edge, rng):
    """Channel c lives in lane (start_lane + c) % lanes at slot (start_lane + c) // lanes."""
    x = rng.standard_normal((1, 40, 2, 3)).astype(np.float32)
    p = Prog(edge)
    lm = p.load(x, start_lane=3)
    p.run()
    cs = lm.stride[1]
    for c in (0, 12, 13, 39):
        lane, slot = (3 + c) % 16, (3 + c) // 16
        raw = p.sim.read_lmem(lane, lm.addr + slot * cs * 4, 6 * 4)
        assert np.array_equal(np.frombuffer(raw, np.float32), x[0, c].ravel())


def test_strided_transpose(edge, rng):
    """A DDR->DDR move with permuted strides transposes H and W."""
    x = rng.standard_normal((1, 3, 4, 6)).astype(np.float32)
    p = Prog(edge)
    src = p.ddr_in(x)
    dst = p.ddr_out([1, 3, 6, 4], np.float32)
    view = rt.ddr_tensor(src.addr, [1, 3, 6, 4], rt.DType.F32, stride=[72, 24, 1, 6])
    p.b.gdma(rt.make_dma_move(dst, view))
    p.run()
    assert np.array_equal(p.read(dst), x.transpose(0, 1, 3, 2))


def test_broadcast_and_lmem_to_lmem(edge, rng):
    x = rng.standard_normal((1, 1, 1, 8)).astype(np.float32)
    p = Prog(edge)
    lm = p.load(x)
    big = p.lmem([2, 20, 3, 8], rt.DType.F32)
    p.b.gdma(rt.make_dma_move(big, lm))  # same engine: ordered after the load
    out = p.store(big)
    p.run()
    assert np.array_equal(p.read(out), np.broadcast_to(x, (2, 20, 3, 8)))


@pytest.mark.parametrize("dst", [np.float16, BF16])
def test_float_narrowing_rne(edge, rng, dst):
    x = (rng.standard_normal((1, 4, 4, 16)) * 1000).astype(np.float32)
    x.flat[:4] = [70000.0, -70000.0, 1e-8, 65519.0]
    p = Prog(edge)
    src = p.ddr_in(x)
    out = p.ddr_out(x.shape, dst)
    p.b.gdma(rt.make_dma_move(out, src))
    p.run()
    with np.errstate(over="ignore"):
        ref = x.astype(dst)
    assert p.read(out).view(np.uint16).tolist() == ref.view(np.uint16).tolist()


@pytest.mark.parametrize("mode,fn", [
    (rt.RoundMode.HALF_TO_EVEN, np.rint),
    (rt.RoundMode.TOWARD_ZERO, np.trunc),
    (rt.RoundMode.DOWN, np.floor),
    (rt.RoundMode.HALF_AWAY_FROM_ZERO, lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)),
])
def test_float_to_int8_round_saturate(edge, mode, fn):
    x = np.array([-300, -128.5, -2.5, -1.5, -0.5, 0.49, 0.5, 1.5, 2.5, 126.6, 127.5, 1e6],
                 np.float32).reshape(1, 1, 1, -1)
    p = Prog(edge)
    src = p.ddr_in(x)
    out = p.ddr_out(x.shape, np.int8)
    p.b.gdma(rt.make_dma_move(out, src, mode))
    p.run()
    assert p.read(out).tolist() == np.clip(fn(x.astype(np.float64)), -128, 127).astype(np.int8).tolist()


@pytest.mark.parametrize("dst", [np.int8, np.uint8])
@pytest.mark.parametrize("mode,fn", [
    (rt.RoundMode.HALF_TO_EVEN, np.rint),
    (rt.RoundMode.HALF_AWAY_FROM_ZERO, lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)),
])
def test_float_to_8bit_rows(edge, rng, dst, mode, fn):
    """Long rows (the vectorised path): halves, near-halves, values past
    the bounds, infinities and NaN (-> 0)."""
    halves = np.round(rng.uniform(-300, 300, 1500) * 2) / 2
    near = np.nextafter(halves, np.inf * rng.choice([-1, 1], halves.size))
    x = np.concatenate([halves, near, rng.standard_normal(500) * 100,
                        [np.inf, -np.inf, np.nan, -0.0, 1e30, -1e30]]).astype(np.float32)
    x = x.reshape(1, 1, 1, -1)
    p = Prog(edge)
    src = p.ddr_in(x)
    out = p.ddr_out(x.shape, dst)
    p.b.gdma(rt.make_dma_move(out, src, mode))
    p.run()
    info = np.iinfo(dst)
    with np.errstate(invalid="ignore"):
        ref = np.clip(np.nan_to_num(fn(x.astype(np.float64)), nan=0.0), info.min, info.max)
    assert p.read(out).tolist() == ref.astype(dst).tolist()


def test_int_conversions(edge):
    x = np.array([-2**31, -129, -1, 0, 200, 255, 256, 2**31 - 1], np.int32).reshape(1, 1, 1, -1)
    p = Prog(edge)
    src = p.ddr_in(x)
    o8 = p.ddr_out(x.shape, np.int8)
    ou8 = p.ddr_out(x.shape, np.uint8)
    of = p.ddr_out(x.shape, np.float32)
    for o in (o8, ou8, of):
        p.b.gdma(rt.make_dma_move(o, src))
    p.run()
    assert p.read(o8).tolist() == np.clip(x, -128, 127).tolist()
    assert p.read(ou8).tolist() == np.clip(x, 0, 255).tolist()
    assert p.read(of).tolist() == x.astype(np.float32).tolist()


@pytest.mark.parametrize("dtype,value", [(np.float32, -1.25), (BF16, 3.5), (np.int8, -7), (np.int32, 123456)])
def test_fill(edge, dtype, value):
    p = Prog(edge)
    lm = p.lmem([1, 18, 2, 3], rt.chip_dtype(np.dtype(dtype)))
    p.b.gdma(rt.make_dma_fill(lm, value))
    out = p.store(lm)
    p.run()
    assert (p.read(out).astype(np.float64) == value).all()


def test_out_of_bounds_ddr_reports_instruction(edge):
    p = Prog(edge, ddr_bytes=4096)
    src = rt.ddr_tensor(4000, [1, 1, 1, 64], rt.DType.F32)
    p.b.gdma(rt.make_dma_move(p.lmem([1, 1, 1, 64], rt.DType.F32), src))
    with pytest.raises(rt.ChipError) as e:
        p.run()
    m = str(e.value)
    assert "GDMA instruction #0" in m and "src0.addr" in m and "0xfa0" in m and "0x1000" in m
