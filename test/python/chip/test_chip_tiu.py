"""TIU instructions against independent numpy references.

Float ops compute in FP32 on the chip and round once to the destination
dtype, so tolerances are: F32 rtol 1e-5, F16 rtol 1e-3, BF16 rtol 8e-3
(each plus an absolute term scaled by the data magnitude for sums). Integer
results are compared exactly.
"""
import math

import ml_dtypes
import numpy as np
import pytest

from tpuc import runtime as rt
from chiputil import Prog, conv_ref, f64, run_unary

BF16 = ml_dtypes.bfloat16
FLOATS = [np.float32, np.float16, BF16]
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 1e-3, np.dtype(BF16): 8e-3}


def rand(rng, shape, dtype, scale=1.0):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def assert_close(got, ref, dtype, mag=None):
    got, ref = f64(got), f64(ref)
    rtol = RTOL[np.dtype(dtype)]
    mag = np.abs(ref).max() if mag is None else mag
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * (mag + 1e-30))


# --- conv -------------------------------------------------------------------

CONV_CASES = [
    # (N, IC, H, W, OC, KH, KW, stride, dilation, pads, groups)
    (1, 3, 8, 8, 20, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 1),
    (2, 4, 7, 9, 6, 3, 2, (2, 1), (1, 2), (0, 1, 2, 0), 2),
    (1, 18, 6, 6, 18, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 18),  # depthwise
    (1, 5, 9, 9, 7, 1, 1, (2, 2), (1, 1), (0, 0, 0, 0), 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", FLOATS + [np.int8])
def test_conv(edge, rng, case, dtype):
    n, ic, h, w, oc, kh, kw, stride, dil, pads, groups = case
    x = rand(rng, (n, ic, h, w), dtype)
    wt = rand(rng, (ic // groups, oc, kh, kw), dtype, 0.5)
    is_int = np.dtype(dtype).kind == "i"
    b = rand(rng, (1, oc, 1, 1), np.int32 if is_int else np.float32)
    ref = conv_ref(x, wt, b, stride, dil, pads, groups)
    out_dt = np.int32 if is_int else dtype
    p = Prog(edge)
    xl, wl, bl = p.load(x), p.load(wt), p.load(b)
    o = p.lmem(list(ref.shape), rt.chip_dtype(np.dtype(out_dt)))
    p.tiu(rt.make_conv(o, xl, wl, bl, stride=stride, dilation=dil, pads=pads, groups=groups))
    out = p.store(o)
    p.run()
    got = p.read(out)
    if is_int:
        assert np.array_equal(got, ref.astype(np.int64))
    else:
        assert_close(got, ref, dtype, mag=np.abs(ref).max())


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype,pad_value", [(np.int8, -37), (np.int8, 127), (np.uint8, 200)])
def test_conv_pad_value(edge, rng, case, dtype, pad_value):
    # 8-bit inputs pad with the instruction's pad value (an asymmetric
    # input's zero point), with and without accumulation.
    n, ic, h, w, oc, kh, kw, stride, dil, pads, groups = case
    x = rand(rng, (n, ic, h, w), dtype)
    wt = rand(rng, (ic // groups, oc, kh, kw), np.int8, 0.5)
    b = rand(rng, (1, oc, 1, 1), np.int32)
    ref = conv_ref(x, wt, b, stride, dil, pads, groups, pad_value)
    p = Prog(edge)
    xl, wl, bl = p.load(x), p.load(wt), p.load(b)
    o = p.lmem(list(ref.shape), rt.DType.INT32)
    p.tiu(rt.make_conv(o, xl, wl, bl, stride=stride, dilation=dil, pads=pads, groups=groups,
                       pad_value=pad_value))
    p.tiu(rt.make_conv(o, xl, wl, None, stride=stride, dilation=dil, pads=pads,
                       groups=groups, pad_value=pad_value, relu=True, accumulate=True))
    out = p.store(o)
    p.run()
    twice = np.maximum(2 * ref - f64(b).reshape(1, -1, 1, 1), 0)
    assert np.array_equal(p.read(out), twice.astype(np.int64))


@pytest.mark.parametrize("dtype,pad_value,why", [
    (rt.DType.F32, 1, "must be 0 for float inputs"),
    (rt.DType.INT8, 128, "in range for 8-bit ones"),
    (rt.DType.UINT8, -1, "in range for 8-bit ones")])
def test_conv_pad_value_rejected(edge, dtype, pad_value, why):
    out = rt.DType.F32 if dtype == rt.DType.F32 else rt.DType.INT32
    wdt = rt.DType.F32 if dtype == rt.DType.F32 else rt.DType.INT8
    i = rt.make_conv(rt.lmem_tensor(0, [1, 4, 4, 4], out), rt.lmem_tensor(4096, [1, 4, 4, 4], dtype),
                     rt.lmem_tensor(8192, [4, 4, 3, 3], wdt), None, pads=(1, 1, 1, 1),
                     pad_value=pad_value)
    with pytest.raises(rt.ChipError, match=f"pad value.*{why}"):
        i.validate(edge, 1 << 20)


def test_conv_relu_f16_in_f32_out(edge, rng):
    x = rand(rng, (1, 8, 5, 5), np.float16)
    wt = rand(rng, (8, 16, 3, 3), np.float16)
    ref = np.maximum(conv_ref(x, wt, None, (1, 1), (1, 1), (1, 1, 1, 1), 1), 0)
    p = Prog(edge)
    xl, wl = p.load(x), p.load(wt)
    o = p.lmem([1, 16, 5, 5], rt.DType.F32)
    p.tiu(rt.make_conv(o, xl, wl, pads=(1, 1, 1, 1), relu=True))
    out = p.store(o)
    p.run()
    np.testing.assert_allclose(p.read(out), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_conv_accumulate_over_input_channel_slices(edge, rng, dtype):
    # Three input-channel slices into one dst: bias with the first, relu with
    # the last, equals the whole conv.
    x = rand(rng, (1, 12, 6, 7), dtype)
    wt = rand(rng, (12, 5, 3, 3), dtype, 0.5)
    is_int = np.dtype(dtype).kind == "i"
    b = rand(rng, (1, 5, 1, 1), np.int32 if is_int else np.float32)
    ref = np.maximum(conv_ref(x, wt, b, (1, 1), (1, 1), (1, 1, 1, 1), 1), 0)
    p = Prog(edge)
    bl = p.load(b)
    o = p.lmem(list(ref.shape), rt.chip_dtype(np.dtype(np.int32 if is_int else dtype)))
    for k, (lo, hi) in enumerate([(0, 4), (4, 9), (9, 12)]):
        xl, wl = p.load(np.ascontiguousarray(x[:, lo:hi])), p.load(np.ascontiguousarray(wt[lo:hi]))
        p.tiu(rt.make_conv(o, xl, wl, bl if k == 0 else None, pads=(1, 1, 1, 1),
                           relu=k == 2, accumulate=k > 0))
    out = p.store(o)
    p.run()
    got = p.read(out)
    if is_int:
        assert np.array_equal(got, ref.astype(np.int64))
    else:
        assert_close(got, ref, dtype, mag=np.abs(ref).max())


# --- matmul -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + [np.int8, np.uint8])
@pytest.mark.parametrize("batch,m,k,n", [(1, 20, 33, 17), (3, 5, 8, 40)])
def test_matmul(edge, rng, dtype, batch, m, k, n):
    a = rand(rng, (batch, m, 1, k), dtype)
    bm = rand(rng, (batch, k, 1, n), dtype)
    is_int = np.dtype(dtype).kind in "iu"
    bias = rand(rng, (1, 1, 1, n), np.int32 if is_int else np.float32)
    ref = np.einsum("bmk,bkn->bmn", f64(a[:, :, 0]), f64(bm[:, :, 0]))[:, :, None, :] + f64(bias)
    out_dt = np.int32 if is_int else np.float32
    p = Prog(edge)
    al, bl, cl = p.load(a), p.load(bm), p.load(bias)
    o = p.lmem([batch, m, 1, n], rt.chip_dtype(np.dtype(out_dt)))
    p.tiu(rt.make_matmul(o, al, bl, cl))
    out = p.store(o)
    p.run()
    got = p.read(out)
    if is_int:
        assert np.array_equal(got, ref.astype(np.int64))
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())


def test_matmul_accumulate_relu_and_shared_rhs(edge, rng):
    a = rand(rng, (2, 6, 1, 10), np.float32)
    bm = rand(rng, (1, 10, 1, 12), np.float32)  # batch-1 right operand is shared
    acc0 = rand(rng, (2, 6, 1, 12), np.float32)
    ref = np.maximum(np.einsum("bmk,kn->bmn", f64(a[:, :, 0]), f64(bm[0, :, 0]))[:, :, None] + acc0, 0)
    p = Prog(edge)
    al, bl, ol = p.load(a), p.load(bm), p.load(acc0)
    p.tiu(rt.make_matmul(ol, al, bl, accumulate=True, relu=True))
    out = p.store(ol)
    p.run()
    np.testing.assert_allclose(p.read(out), ref, rtol=1e-5, atol=1e-5)


# --- elementwise ------------------------------------------------------------

BIN_REF = {
    rt.BinaryOp.ADD: np.add, rt.BinaryOp.SUB: np.subtract, rt.BinaryOp.MUL: np.multiply,
    rt.BinaryOp.DIV: np.divide, rt.BinaryOp.MAX: np.maximum, rt.BinaryOp.MIN: np.minimum,
}


# Integer division is rejected by the ISA (see test_int_div_rejected).
BIN_CASES = [(op, dt) for op in BIN_REF for dt in FLOATS + [np.int8, np.uint8, np.int32]
             if not (op == rt.BinaryOp.DIV and np.dtype(dt).kind in "iu")]


@pytest.mark.parametrize("op,dtype", BIN_CASES)
def test_binary_broadcast(edge, rng, op, dtype):
    is_int = np.dtype(dtype).kind in "iu"
    a = rand(rng, (2, 20, 3, 4), dtype)
    b = rand(rng, (1, 20, 1, 4), dtype)  # broadcast over N and H
    if op == rt.BinaryOp.DIV:
        b = (np.abs(f64(b)) + 0.5).astype(dtype)
    ref = BIN_REF[op](f64(a), f64(b))
    p = Prog(edge)
    al, bl = p.load(a), p.load(b)
    o = p.lmem(list(a.shape), rt.chip_dtype(np.dtype(dtype)))
    p.tiu(rt.make_binary(op, o, al, bl))
    out = p.store(o)
    p.run()
    got = p.read(out)
    if is_int:
        info = np.iinfo(dtype)
        assert np.array_equal(got, np.clip(ref, info.min, info.max).astype(dtype))
    else:
        assert_close(got, ref, dtype, mag=0)


def test_binary_channel_broadcast_and_relu(edge, rng):
    a = rand(rng, (1, 20, 2, 3), np.float32)
    b = rand(rng, (1, 1, 2, 3), np.float32)
    p = Prog(edge)
    al, bl = p.load(a), p.load(b)
    o = p.lmem([1, 20, 2, 3], rt.DType.F32)
    p.tiu(rt.make_binary(rt.BinaryOp.SUB, o, al, bl, relu=True))
    out = p.store(o)
    p.run()
    np.testing.assert_array_equal(p.read(out), np.maximum(a - b, 0))


def test_int8_saturates(edge):
    a = np.array([100, -100, 127, -128], np.int8).reshape(1, 1, 1, 4)
    b = np.array([100, -100, 1, -1], np.int8).reshape(1, 1, 1, 4)
    p = Prog(edge)
    al, bl = p.load(a), p.load(b)
    o = p.lmem([1, 1, 1, 4], rt.DType.INT8)
    p.tiu(rt.make_binary(rt.BinaryOp.ADD, o, al, bl))
    out = p.store(o)
    p.run()
    assert p.read(out).ravel().tolist() == [127, -128, 127, -128]


@pytest.mark.parametrize("op", list(BIN_REF))
@pytest.mark.parametrize("first", [False, True])
def test_binary_scalar(edge, rng, op, first):
    a = (np.abs(rand(rng, (1, 17, 2, 5), np.float32)) + 0.25).astype(np.float32)
    s = 1.75
    ref = BIN_REF[op](s, f64(a)) if first else BIN_REF[op](f64(a), s)
    got = run_unary(edge, a, lambda o, x: rt.make_binary_scalar(op, o, x, s, first), a.shape, np.float32)
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_binary_scalar_int(edge, rng):
    a = rand(rng, (1, 4, 2, 5), np.int8)
    got = run_unary(edge, a, lambda o, x: rt.make_binary_scalar(rt.BinaryOp.MUL, o, x, 3), a.shape, np.int8)
    assert np.array_equal(got, np.clip(a.astype(np.int64) * 3, -128, 127))


def test_int_div_rejected(edge):
    a = rt.lmem_tensor(0, [1, 1, 1, 4], rt.DType.INT8)
    i = rt.make_binary(rt.BinaryOp.DIV, a, a, a)
    with pytest.raises(rt.ChipError, match="integer division"):
        i.validate(edge, 1024)


# --- pooling ----------------------------------------------------------------

def pool_ref(x, k, s, pads, mode, count_pad=False):
    x = f64(x)
    n, c, h, w = x.shape
    pt, pb, pl, pr = pads
    oh = (h + pt + pb - k[0]) // s[0] + 1
    ow = (w + pl + pr - k[1]) // s[1] + 1
    fill = -np.inf if mode == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
    valid = np.pad(np.ones((h, w)), ((pt, pb), (pl, pr)))
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s[0]: i * s[0] + k[0], j * s[1]: j * s[1] + k[1]]
            if mode == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = k[0] * k[1] if count_pad else valid[i * s[0]: i * s[0] + k[0], j * s[1]: j * s[1] + k[1]].sum()
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


@pytest.mark.parametrize("mode", ["max", "avg"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k,s,pads,cip", [((2, 2), (2, 2), (0, 0, 0, 0), False),
                                          ((3, 3), (2, 1), (1, 1, 1, 0), False),
                                          ((3, 3), (1, 1), (1, 1, 1, 1), True)])
def test_pool_float(edge, rng, mode, dtype, k, s, pads, cip):
    x = rand(rng, (2, 19, 7, 6), dtype)
    ref = pool_ref(x, k, s, pads, mode, cip)
    pm = rt.PoolMode.MAX if mode == "max" else rt.PoolMode.AVG
    got = run_unary(edge, x, lambda o, a: rt.make_pool(pm, o, a, k, s, pads, cip), ref.shape,
                    rt.chip_dtype(np.dtype(dtype)))
    assert_close(got, ref, dtype)


@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pool_int8(edge, rng, mode):
    x = rand(rng, (1, 20, 6, 6), np.int8)
    ref = pool_ref(x, (3, 3), (2, 2), (1, 1, 1, 1), mode)
    if mode == "avg":  # integer average rounds half away from zero
        ref = np.sign(ref) * np.floor(np.abs(ref) + 0.5)
    pm = rt.PoolMode.MAX if mode == "max" else rt.PoolMode.AVG
    got = run_unary(edge, x, lambda o, a: rt.make_pool(pm, o, a, (3, 3), (2, 2), (1, 1, 1, 1)),
                    ref.shape, rt.DType.INT8)
    assert np.array_equal(got, ref.astype(np.int8))


# --- reduce -----------------------------------------------------------------

RED = {rt.ReduceMode.SUM: np.sum, rt.ReduceMode.MEAN: np.mean,
       rt.ReduceMode.MAX: np.max, rt.ReduceMode.MIN: np.min}


@pytest.mark.parametrize("mode", list(RED))
@pytest.mark.parametrize("axis", [1, 2, 3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_reduce_float(edge, rng, mode, axis, dtype):
    x = rand(rng, (2, 18, 5, 7), dtype)
    ref = RED[mode](f64(x), axis=axis, keepdims=True)
    got = run_unary(edge, x, lambda o, a: rt.make_reduce(mode, o, a, axis), ref.shape,
                    rt.chip_dtype(np.dtype(dtype)))
    assert_close(got, ref, dtype, mag=np.abs(f64(x)).sum(axis=axis).max() if mode == rt.ReduceMode.SUM else None)


@pytest.mark.parametrize("mode", list(RED))
def test_reduce_int8_to_int32(edge, rng, mode):
    x = rand(rng, (1, 3, 4, 9), np.int8)
    ref = RED[mode](x.astype(np.int64), axis=3, keepdims=True)
    if mode == rt.ReduceMode.MEAN:
        s = x.astype(np.int64).sum(axis=3, keepdims=True)
        ref = np.sign(s) * ((np.abs(s) * 2 + 9) // 18)  # half away from zero
    got = run_unary(edge, x, lambda o, a: rt.make_reduce(mode, o, a, 3), ref.shape, rt.DType.INT32)
    assert np.array_equal(got, ref)


# --- activations ------------------------------------------------------------

def _erf(v):
    return np.vectorize(math.erf)(v)


ACT = {
    rt.ActOp.RELU: (lambda x: np.maximum(x, 0), None),
    rt.ActOp.LEAKY_RELU: (lambda x: np.where(x >= 0, x, 0.1 * x), None),
    rt.ActOp.SIGMOID: (lambda x: 1 / (1 + np.exp(-x)), None),
    rt.ActOp.TANH: (np.tanh, None),
    rt.ActOp.GELU: (lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), None),
    rt.ActOp.GELU_TANH: (lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), None),
    rt.ActOp.SILU: (lambda x: x / (1 + np.exp(-x)), None),
    rt.ActOp.EXP: (np.exp, None),
    rt.ActOp.LOG: (np.log, "pos"),
    rt.ActOp.SQRT: (np.sqrt, "pos"),
    rt.ActOp.RSQRT: (lambda x: 1 / np.sqrt(x), "pos"),
    rt.ActOp.ERF: (_erf, None),
    rt.ActOp.ABS: (np.abs, None),
    rt.ActOp.NEG: (np.negative, None),
    rt.ActOp.RECIPROCAL: (lambda x: 1 / x, "pos"),
    rt.ActOp.SQUARE: (np.square, None),
    rt.ActOp.CLIP: (lambda x: np.clip(x, 0.1, 0.6), None),
    rt.ActOp.HARD_SIGMOID: (lambda x: np.clip(0.1 * x + 0.6, 0, 1), None),
    rt.ActOp.SOFTPLUS: (lambda x: np.log1p(np.exp(x)), None),
}


@pytest.mark.parametrize("op", list(ACT))
@pytest.mark.parametrize("dtype", FLOATS)
def test_active(edge, rng, op, dtype):
    fn, dom = ACT[op]
    x = rand(rng, (1, 20, 3, 8), np.float32, 2.0)
    if dom == "pos":
        x = np.abs(x) + 0.05
    x = x.astype(dtype)
    ref = fn(f64(x))
    alpha, beta = (0.1, 0.6)
    got = run_unary(edge, x, lambda o, a: rt.make_active(op, o, a, alpha, beta), x.shape,
                    rt.chip_dtype(np.dtype(dtype)))
    rtol = RTOL[np.dtype(dtype)] * (4 if dtype == np.float32 else 1)
    np.testing.assert_allclose(f64(got), ref, rtol=rtol, atol=rtol)


def test_active_f32_in_bf16_out(edge, rng):
    x = rand(rng, (1, 4, 2, 8), np.float32)
    got = run_unary(edge, x, lambda o, a: rt.make_active(rt.ActOp.SIGMOID, o, a), x.shape, rt.DType.BF16)
    ref = (1 / (1 + np.exp(-f64(x)))).astype(np.float32).astype(BF16)
    assert np.array_equal(got.view(np.uint16), ref.view(np.uint16)) or \
        np.allclose(f64(got), f64(ref), rtol=8e-3)


# --- lut, cast, requant -----------------------------------------------------

@pytest.mark.parametrize("idx_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("tab_dtype", [np.int8, np.float32, BF16])
def test_lut(edge, rng, idx_dtype, tab_dtype):
    info = np.iinfo(idx_dtype)
    x = rng.integers(info.min, info.max + 1, size=(1, 20, 3, 4)).astype(idx_dtype)
    table = rand(rng, (1, 1, 1, 256), tab_dtype)
    p = Prog(edge)
    xl, tl = p.load(x), p.load(table)
    o = p.lmem(list(x.shape), rt.chip_dtype(np.dtype(tab_dtype)))
    p.tiu(rt.make_lut(o, xl, tl))
    out = p.store(o)
    p.run()
    ref = table.ravel()[x.view(np.uint8).astype(np.int64)]
    assert p.read(out).tobytes() == ref.tobytes()


@pytest.mark.parametrize("src,dst", [(np.float32, np.float16), (np.float32, BF16), (np.float16, np.float32),
                                     (BF16, np.float16), (np.float32, np.int8), (np.float16, np.uint8),
                                     (np.int32, np.int8), (np.int8, np.float32), (np.int32, np.float16)])
def test_cast(edge, rng, src, dst):
    x = rand(rng, (1, 18, 2, 6), src, 60.0)
    got = run_unary(edge, x, lambda o, a: rt.make_cast(o, a), x.shape, rt.chip_dtype(np.dtype(dst)))
    dk = np.dtype(dst).kind
    if dk in "iu":
        info = np.iinfo(dst)
        ref = np.clip(np.rint(f64(x)), info.min, info.max).astype(dst)  # half to even
    else:
        ref = x.astype(np.float32).astype(dst)
    assert got.tobytes() == ref.tobytes()


def requant_ref(x, m, s, zp, lo, hi):
    v = x.astype(object) * m
    r = np.array([_haz(int(t), s) for t in v.ravel()], dtype=np.int64).reshape(x.shape)
    return np.clip(r + zp, lo, hi)


def _haz(t, s):
    q, rem = divmod(abs(t), 1 << s)
    if rem * 2 >= (1 << s):
        q += 1
    return q if t >= 0 else -q


@pytest.mark.parametrize("dst,lo,hi,zp", [(np.int8, -128, 127, 3), (np.uint8, 0, 255, 128)])
def test_requant(edge, rng, dst, lo, hi, zp):
    x = rng.integers(-200000, 200000, size=(1, 20, 3, 5)).astype(np.int32)
    x.flat[:4] = [1 << 14, -(1 << 14), 3 << 13, -(3 << 13)]  # exact ties after the shift
    m, s = 1 << 16, 30  # scale 2^-14: ties land on .5
    got = run_unary(edge, x, lambda o, a: rt.make_requant(o, a, m, s, zp), x.shape,
                    rt.chip_dtype(np.dtype(dst)))
    assert np.array_equal(got, requant_ref(x, m, s, zp, lo, hi).astype(dst))


def test_requant_per_channel(edge, rng):
    c = 20
    x = rng.integers(-50000, 50000, size=(2, c, 2, 3)).astype(np.int32)
    mult = rng.integers(1 << 20, 1 << 30, size=c)
    shift = rng.integers(30, 40, size=c)
    params = np.stack([mult, shift], axis=-1).astype(np.int32).reshape(1, c, 1, 2)
    p = Prog(edge)
    xl, pl = p.load(x), p.load(params)
    o = p.lmem(list(x.shape), rt.DType.INT8)
    p.tiu(rt.make_requant_per_channel(o, xl, pl, -5))
    out = p.store(o)
    p.run()
    ref = np.empty(x.shape, np.int64)
    for ch in range(c):
        ref[:, ch] = requant_ref(x[:, ch], int(mult[ch]), int(shift[ch]), -5, -128, 127)
    assert np.array_equal(p.read(out), ref)
