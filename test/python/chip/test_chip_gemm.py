"""The cmodel's GEMM-based kernels: integer matmuls and convolutions stay
exact past the K slices in which they are summed in float (worst-case
operands), and float results do not depend on TPUC_CMODEL_THREADS (unset: every core)
nor on how many output rows one instruction computes."""
import numpy as np
import pytest

from chiputil import Prog, conv_ref, f64
from tpuc import runtime as rt


def run_matmul(tgt, a, b, out_dtype):
    p = Prog(tgt)
    al, bl = p.load(a), p.load(b)
    o = p.lmem([1, a.shape[1], 1, b.shape[3]], rt.chip_dtype(np.dtype(out_dtype)))
    p.tiu(rt.make_matmul(o, al, bl))
    out = p.store(o)
    p.run()
    return p.read(out)


@pytest.mark.parametrize("adt,k", [(np.int8, 1500), (np.uint8, 1100)])
def test_int_matmul_exact_over_slices(edge, rng, adt, k):
    """Products at their largest magnitude (-128 * -128, 255 * -128) all of
    one sign, plus random ones: every partial sum is at the 2^24 limit."""
    lo = np.iinfo(adt).min if adt == np.int8 else np.iinfo(adt).max
    a = np.full((1, 8, 1, k), lo, adt)
    a[0, 4:] = rng.integers(np.iinfo(adt).min, np.iinfo(adt).max + 1, (4, 1, k), dtype=adt)
    b = np.full((1, k, 1, 16), -128, np.int8)
    b[0, :, 0, 8:] = rng.integers(-128, 128, (k, 8), dtype=np.int8)
    ref = np.einsum("mk,kn->mn", a[0, :, 0].astype(np.int64), b[0, :, 0].astype(np.int64))
    got = run_matmul(edge, a, b, np.int32)[0, :, 0]
    assert np.array_equal(got, ref)


def test_int_conv_exact_over_slices(edge):
    """3x3 conv over 160 int8 channels (K = 1440) at the extreme values."""
    x = np.full((1, 160, 4, 4), -128, np.int8)
    w = np.full((160, 8, 3, 3), -128, np.int8)
    p = Prog(edge)
    xl, wl = p.load(x), p.load(w)
    o = p.lmem([1, 8, 4, 4], rt.DType.INT32)
    p.tiu(rt.make_conv(o, xl, wl, pads=(1, 1, 1, 1)))
    out = p.store(o)
    p.run()
    got = p.read(out)
    inside = np.array([2, 3, 3, 2])  # window rows (columns) inside the image
    ref = 160 * 128 * 128 * inside[:, None] * inside[None, :]
    assert np.array_equal(got[0, 0], ref)


def test_float_matmul_independent_of_threads(edge, rng, monkeypatch):
    """A GEMM large enough to run on several threads gives the same bits on
    one and on two."""
    a = rng.standard_normal((1, 128, 1, 512)).astype(np.float32)
    b = rng.standard_normal((1, 512, 1, 128)).astype(np.float32)
    runs = []
    for threads in ("1", "2", "2"):
        monkeypatch.setenv("TPUC_CMODEL_THREADS", threads)
        runs.append(run_matmul(edge, a, b, np.float32))
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[1], runs[2])
    ref = f64(a[0, :, 0]) @ f64(b[0, :, 0])
    np.testing.assert_allclose(runs[0][0, :, 0], ref, rtol=1e-4, atol=1e-3)


def run_conv(tgt, x, w, b, groups, start_lane):
    p = Prog(tgt)
    xl, wl, bl = p.load(x), p.load(w, start_lane), p.load(b, start_lane)
    o = p.lmem([1, w.shape[1], x.shape[2], x.shape[3]], rt.DType.F32, start_lane)
    p.tiu(rt.make_conv(o, xl, wl, bl, pads=(1, 1, 1, 1), groups=groups, relu=True))
    out = p.store(o)
    p.run()
    return p.read(out)


@pytest.mark.parametrize("groups", [1, 40])
def test_float_conv_independent_of_threads(edge, rng, monkeypatch, groups):
    """Convolutions large enough for several GEMM threads (and depthwise
    ones), with output channels over three rows of lanes starting mid-row,
    give the same bits on one thread, two and the default."""
    x = rng.standard_normal((1, 40, 24, 24)).astype(np.float32)
    w = rng.standard_normal((40 // groups, 40, 3, 3)).astype(np.float32)
    b = rng.standard_normal((1, 40, 1, 1)).astype(np.float32)
    runs = []
    for threads in ("1", "2", None):
        if threads is None:
            monkeypatch.delenv("TPUC_CMODEL_THREADS", raising=False)
        else:
            monkeypatch.setenv("TPUC_CMODEL_THREADS", threads)
        runs.append(run_conv(edge, x, w, b, groups, start_lane=5))
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[1], runs[2])
    ref = np.maximum(conv_ref(x, w, b, (1, 1), (1, 1), (1, 1, 1, 1), groups), 0)
    np.testing.assert_allclose(runs[0], ref, rtol=1e-4, atol=1e-4)


def band(op, row0, rows):
    """The rows [row0, row0 + rows) of an LMEM tensor (same strides)."""
    return rt.Operand(op.space, op.addr + row0 * op.stride[2] * rt._rt.dtype_size(op.dtype),
                   list(op.shape[:2]) + [rows, op.shape[3]], list(op.stride), op.dtype,
                   op.start_lane)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_conv_same_bits_in_bands_of_rows(edge, rng, dtype):
    """A float conv with a long reduction (K = 16 * 8 * 8) and few output
    elements, run whole and as one instruction per output row (each reading
    its window's input rows, as the compiler's bands and row tiles do),
    gives the same bits: the host BLAS must not sum some rows differently
    because the instruction is smaller."""
    x = rng.standard_normal((1, 16, 10, 10)).astype(dtype)
    w = rng.standard_normal((16, 64, 8, 8)).astype(dtype)
    p = Prog(edge)
    xl, wl = p.load(x), p.load(w)
    whole = p.lmem([1, 64, 3, 3], rt.DType.F32)
    rows = p.lmem([1, 64, 3, 3], rt.DType.F32)
    p.tiu(rt.make_conv(whole, xl, wl))
    for r in range(3):
        p.tiu(rt.make_conv(band(rows, r, 1), band(xl, r, 8), wl))
    a, b = p.store(whole), p.store(rows)
    p.run()
    assert np.array_equal(p.read(a), p.read(b))
    ref = conv_ref(x, w, np.zeros((1, 64, 1, 1)), (1, 1), (1, 1), (0, 0, 0, 0), 1)
    np.testing.assert_allclose(p.read(a), ref, rtol=1e-4, atol=1e-3)
