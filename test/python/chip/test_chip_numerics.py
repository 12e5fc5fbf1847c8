"""Bit-exact helpers: F16/BF16 conversion and integer requantization."""
import ml_dtypes
import numpy as np
import pytest

from tpuc import runtime as rt

R = rt._rt


def _interesting_f32(rng, n):
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    vals = bits.view(np.float32)
    extra = np.array([0.0, -0.0, 1.0, 65504.0, 65519.99, 65520.0, 1e9, -1e9, 5.96e-8, 2.98e-8,
                      2.9802322e-08, 6.1e-5, 3.0e-8, np.inf, -np.inf, 1.00048828125,
                      1.0009765625 + 2**-11, 3.3895314e38], dtype=np.float32)
    # values around the f16 subnormal / rounding boundaries
    around = (np.arange(-2000, 2000, dtype=np.float32) * np.float32(2**-26))
    return np.concatenate([vals, extra, around])


def test_f32_to_f16_matches_numpy(rng):
    x = _interesting_f32(rng, 20000)
    x = x[~np.isnan(x)]
    ours = np.array([R.f32_to_f16_bits(float(v)) for v in x], dtype=np.uint16)
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16).view(np.uint16)
    assert np.array_equal(ours, ref)


def test_f32_to_bf16_matches_ml_dtypes(rng):
    x = _interesting_f32(rng, 20000)
    x = x[~np.isnan(x)]
    ours = np.array([R.f32_to_bf16_bits(float(v)) for v in x], dtype=np.uint16)
    ref = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    assert np.array_equal(ours, ref)


def test_f16_bf16_to_f32_exact():
    allbits = np.arange(0, 2**16, dtype=np.uint32).astype(np.uint16)
    h = allbits.view(np.float16).astype(np.float32)
    ours = np.array([R.f16_bits_to_f32(int(b)) for b in allbits[::7]], dtype=np.float32)
    ref = h[::7]
    same = (ours.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(ours) & np.isnan(ref))
    assert same.all()
    b = np.array([R.bf16_bits_to_f32(int(v)) for v in allbits[::13]], dtype=np.float32)
    refb = allbits[::13].view(ml_dtypes.bfloat16).astype(np.float32)
    same = (b.view(np.uint32) == refb.view(np.uint32)) | (np.isnan(b) & np.isnan(refb))
    assert same.all()


def test_nan_stays_nan():
    assert np.isnan(R.f16_bits_to_f32(R.f32_to_f16_bits(float("nan"))))


def ref_round_shift(x, s, mode):
    """Exact rational reference using Python integers."""
    from fractions import Fraction
    import math
    v = Fraction(x, 2**s)
    f = math.floor(v)
    frac = v - f
    if frac == 0:
        return f
    half = Fraction(1, 2)
    if mode == rt.RoundMode.HALF_AWAY_FROM_ZERO:
        return f + 1 if (frac > half or (frac == half and v > 0)) else f
    if mode == rt.RoundMode.HALF_UP:
        return f + 1 if frac >= half else f
    if mode == rt.RoundMode.HALF_TO_EVEN:
        return f + 1 if (frac > half or (frac == half and f % 2 == 1)) else f
    if mode == rt.RoundMode.TOWARD_ZERO:
        return f + 1 if v < 0 else f
    if mode == rt.RoundMode.DOWN:
        return f
    return f + 1


MODES = [rt.RoundMode.HALF_AWAY_FROM_ZERO, rt.RoundMode.HALF_UP, rt.RoundMode.HALF_TO_EVEN,
         rt.RoundMode.TOWARD_ZERO, rt.RoundMode.DOWN, rt.RoundMode.UP]


@pytest.mark.parametrize("mode", MODES)
def test_rounding_right_shift(mode, rng):
    xs = list(rng.integers(-2**40, 2**40, size=300)) + [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]
    for x in xs:
        for s in (1, 2, 3, 7, 20):
            assert R.rounding_right_shift(int(x), s, mode) == ref_round_shift(int(x), s, mode), (x, s)


@pytest.mark.parametrize("dtype,lo,hi", [(rt.DType.INT8, -128, 127), (rt.DType.UINT8, 0, 255)])
def test_requantize(dtype, lo, hi, rng):
    for _ in range(400):
        x = int(rng.integers(-2**31, 2**31))
        m = int(rng.integers(1, 2**31))
        s = int(rng.integers(20, 50))
        zp = int(rng.integers(-10, 10))
        mode = MODES[int(rng.integers(0, len(MODES)))]
        ref = min(max(ref_round_shift(x * m, s, mode), -2**31), 2**31 - 1) + zp
        ref = min(max(ref, lo), hi)
        assert R.requantize(x, m, s, zp, mode, dtype) == ref
