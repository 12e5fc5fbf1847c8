"""The matmul instruction's transposed right operand (flag right_trans):
out[b,m,n] = sum_k left[b,m,k] * right[b,n,k], against numpy and against
the plain form on the transposed operand (same bits, same cycles)."""
import math

import numpy as np
import pytest

from chiputil import Prog, f64
from tpuc import runtime as rt


def run(tgt, a, b, out_dtype, right_trans, bias=None):
    p = Prog(tgt)
    al, bl = p.load(a), p.load(b)
    n = b.shape[1] if right_trans else b.shape[3]
    o = p.lmem([a.shape[0], a.shape[1], 1, n], rt.chip_dtype(np.dtype(out_dtype)))
    p.tiu(rt.make_matmul(o, al, bl, p.load(bias) if bias is not None else None,
                         right_trans=right_trans))
    out = p.store(o)
    p.run()
    return p.read(out), p.stats


def as_kn(b):
    """[B, N, 1, K] -> [B, K, 1, N]."""
    return np.ascontiguousarray(b.transpose(0, 3, 2, 1))


@pytest.mark.parametrize("chip", ["edge", "pro"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
@pytest.mark.parametrize("batch,m,k,n", [(4, 12, 16, 12), (1, 70, 40, 33), (2, 5, 130, 9)])
def test_right_trans_matches_numpy_and_plain_form(request, rng, chip, dtype, batch, m, k, n):
    tgt = request.getfixturevalue(chip)
    if dtype == np.int8:
        a = rng.integers(-128, 128, (batch, m, 1, k), dtype=np.int8)
        b = rng.integers(-128, 128, (batch, n, 1, k), dtype=np.int8)
        out_dt = np.int32
    else:
        a = rng.standard_normal((batch, m, 1, k)).astype(dtype)
        b = rng.standard_normal((batch, n, 1, k)).astype(dtype)
        out_dt = np.float32
    got, st = run(tgt, a, b, out_dt, True)
    ref = np.einsum("bmk,bnk->bmn", f64(a[:, :, 0]), f64(b[:, :, 0]))
    if dtype == np.int8:
        assert np.array_equal(got[:, :, 0], ref)
    else:
        np.testing.assert_allclose(got[:, :, 0], ref, rtol=1e-4, atol=1e-4 * k)
    plain, st_plain = run(tgt, a, as_kn(b), out_dt, False)
    assert np.array_equal(got, plain)
    assert st.tiu_busy_cycles == st_plain.tiu_busy_cycles


def test_right_trans_shared_batch_bias_relu(edge, rng):
    """A batch-1 right operand is shared by every batch; bias on N, relu."""
    a = rng.standard_normal((3, 8, 1, 20)).astype(np.float32)
    b = rng.standard_normal((1, 6, 1, 20)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 1, 6)).astype(np.float32)
    p = Prog(edge)
    al, bl, cl = p.load(a), p.load(b), p.load(bias)
    o = p.lmem([3, 8, 1, 6], rt.DType.F32)
    p.tiu(rt.make_matmul(o, al, bl, cl, relu=True, right_trans=True))
    out = p.store(o)
    p.run()
    ref = np.maximum(np.einsum("bmk,nk->bmn", f64(a[:, :, 0]), f64(b[0, :, 0])) + bias[0, 0, 0], 0)
    np.testing.assert_allclose(p.read(out)[:, :, 0], ref, rtol=1e-5, atol=1e-4)


def test_right_trans_cycles_formula(pro):
    t = pro
    bank = t.lmem_bytes_per_lane // t.lmem_banks
    m, k, n = 100, 64, 48
    i = rt.make_matmul(rt.lmem_tensor(2 * bank, [1, m, 1, n], rt.DType.F32),
                       rt.lmem_tensor(0, [1, m, 1, k], rt.DType.F32),
                       rt.lmem_tensor(bank, [1, n, 1, k], rt.DType.F32), right_trans=True)
    assert i.cycles(t) == t.tiu_issue_cycles + math.ceil(math.ceil(m / t.lanes) * k * n / t.eu_for(rt.DType.F32))


def test_right_trans_shape_mismatch_rejected(edge):
    """K of the transposed right operand is its W: a mismatch is a clear error."""
    p = Prog(edge)
    o = p.lmem([1, 8, 1, 6], rt.DType.F32)
    a = p.lmem([1, 8, 1, 20], rt.DType.F32)
    b = p.lmem([1, 6, 1, 19], rt.DType.F32)
    p.tiu(rt.make_matmul(o, a, b, right_trans=True))
    with pytest.raises(Exception, match="inconsistent"):
        p.run()
