"""Each threshold method against hand-computed histograms, and the streaming
histogram against a one-shot numpy histogram."""
import math

import numpy as np
import pytest

from tpuc.calibration import thresholds as T
from tpuc.calibration.histogram import AbsHistogram, HistogramSet

BINS = 2048


def hist(counts, hi=float(BINS), lo=0.0, top=None):
    """A hand-made histogram; bin width hi / bins (1.0 by default)."""
    counts = np.asarray(counts, dtype=np.int64)
    return AbsHistogram(counts, hi, lo, hi if top is None else top)


def spike(bin_index, n=1000):
    c = np.zeros(BINS, np.int64)
    c[bin_index] = n
    return c


# ----------------------------------------------------------------- minmax


def test_minmax_is_max_abs():
    assert T.threshold(hist(np.ones(BINS), hi=4.0, lo=-3.5, top=2.0), "minmax") == 3.5
    assert T.threshold(hist(np.ones(BINS), hi=4.0, lo=-1.0, top=4.0), "minmax") == 4.0


# ----------------------------------------------------------------- percentile


def test_percentile_of_uniform_counts():
    # One count per unit bin: a uniform |x| on [0, 2048]; percentile p is 2048 p / 100.
    h = hist(np.ones(BINS))
    assert T.threshold(h, "percentile", 50) == pytest.approx(1024.0)
    assert T.threshold(h, "percentile", 99.99) == pytest.approx(2048 * 0.9999)
    assert T.threshold(h, "percentile", 100) == 2048.0


def test_percentile_interpolates_inside_the_bin_and_caps_at_max():
    c = np.zeros(BINS, np.int64)
    c[10], c[20] = 90, 10  # 90 % of the values in bin 10, 10 % in bin 20
    h = hist(c, top=20.5)
    assert T.threshold(h, "percentile", 45) == pytest.approx(10.5)  # half of bin 10
    assert T.threshold(h, "percentile", 95) == pytest.approx(20.5)  # half of bin 20, = max
    assert T.threshold(h, "percentile", 99) == 20.5  # 20.9 capped at max |x|


# ----------------------------------------------------------------- kl


def kl_reference(counts, levels=128):
    """EntropyCalibrator2 as TensorRT's description states it: loops, normalised P and Q."""
    counts = np.asarray(counts, dtype=np.float64)
    out = []
    for i in range(levels, len(counts)):
        p = counts[:i].copy()
        p[i - 1] += counts[i:].sum()
        nonzero = p != 0
        m = i // levels
        q = np.zeros(i)
        for g in range(levels):
            a, b = g * m, (g + 1) * m if g < levels - 1 else i
            k = nonzero[a:b].sum()
            if k:
                q[a:b] = np.where(nonzero[a:b], counts[a:b].sum() / k, 0.0)
        if q.sum() == 0:
            out.append(math.inf)
            continue
        p, q = p / p.sum(), q / q.sum()
        mask = p > 0
        with np.errstate(divide="ignore"):
            out.append(float(np.sum(p[mask] * np.log(p[mask] / q[mask]))))
    return np.array(out)


def test_kl_uniform_hand_values():
    h = hist(np.ones(BINS))
    kl = T.kl_divergences(h.counts)
    # i = 128: P = 127 ones and 1 + 1920 outliers in its last bin; Q = 128 ones.
    assert kl[0] == pytest.approx(127 / 2048 * math.log(128 / 2048)
                                  + 1921 / 2048 * math.log(1921 * 128 / 2048), rel=1e-12)
    # i = 2047: P = 2046 ones and a 2; Q = 2047 ones (15-bin groups, the last of 142).
    assert kl[-1] == pytest.approx(2046 / 2048 * math.log(2047 / 2048)
                                   + 2 / 2048 * math.log(2 * 2047 / 2048), rel=1e-9)
    assert np.argmin(kl) == len(kl) - 1
    assert T.threshold(h, "kl") == 2047.5  # (m + 0.5) * width, width 1


def test_kl_without_outliers_beyond_128_bins_keeps_the_first_candidate():
    # Equal counts in bins 0-99: merging equal bins and spreading them back
    # gives Q = P for every candidate, KL = 0 for all, and the tie goes to
    # the first candidate, 128.
    c = np.zeros(BINS, np.int64)
    c[:100] = 7
    h = hist(c)  # max |x| = hi: no capping
    assert np.allclose(T.kl_divergences(c), 0.0, atol=1e-12)
    assert T.threshold(h, "kl") == 128.5


def test_kl_merging_loses_a_spike_and_clips_it():
    # A bulk of values plus a lone outlier at bin 2000: candidates i > 2000 keep
    # it in range; the reference evaluates every KL independently.
    rng = np.random.default_rng(3)
    c = np.zeros(BINS, np.int64)
    c[:400] = rng.integers(50, 100, 400)
    c[0] = c[1]  # so kl_threshold's zero-bin rule changes nothing
    c[2000] = 1
    kl = T.kl_divergences(c)
    ref = kl_reference(c)
    assert np.allclose(kl, ref, rtol=1e-9, atol=1e-12)
    best = int(np.flatnonzero(ref <= ref.min() + 1e-12)[0])
    assert T.threshold(hist(c), "kl") == best + 128 + 0.5


def test_kl_ignores_the_spike_of_relu_zeros():
    # Bin 0 takes bin 1's count before the search: how many exact zeros a
    # ReLU adds does not change the threshold.
    rng = np.random.default_rng(5)
    h = AbsHistogram.empty(BINS)
    h.add(np.maximum(rng.standard_normal(100_000), 0))
    base = T.threshold(h, "kl")
    h.add(np.zeros(1_000_000))
    assert T.threshold(h, "kl") == base
    assert base > 0.5 * h.absmax


@pytest.mark.parametrize("seed", range(3))
def test_kl_matches_the_literal_algorithm(seed):
    rng = np.random.default_rng(seed)
    h = AbsHistogram.empty(BINS)
    h.add(rng.standard_normal(50_000) * rng.uniform(0.5, 2.0))
    counts = h.counts.copy()
    counts[0] = counts[1]  # what kl_threshold searches
    ref = kl_reference(counts)
    kl = T.kl_divergences(counts)
    finite = np.isfinite(ref)
    assert (np.isfinite(kl) == finite).all()
    assert np.allclose(kl[finite], ref[finite], rtol=1e-9, atol=1e-12)
    clipped = 1 - np.cumsum(counts)[127:-1] / counts.sum()
    ref[clipped > T.KL_MAX_CLIPPED] = math.inf
    best = int(np.flatnonzero(ref <= ref[np.isfinite(ref)].min() + 1e-12)[0])
    assert T.threshold(h, "kl") == pytest.approx(min((best + 128.5) * h.width, h.absmax))


def test_kl_never_clips_more_than_one_percent():
    # Values only in [0.4, 1.0) of the range (sigmoid outputs of small
    # inputs): unguarded, KL would put the threshold at the bulk's lower
    # edge, clipping almost every value. The first candidate that keeps 99 %
    # of 1228 equal bins is the bin holding the 1216th, i.e. bin 819 + 1216.
    c = np.zeros(BINS, np.int64)
    c[820:] = 10
    t = T.threshold(hist(c), "kl")
    kept = np.cumsum(c)[int(t)] / c.sum()
    assert kept >= 0.99
    assert t >= 820 + 0.99 * (BINS - 820) - 1


# ----------------------------------------------------------------- mse


def test_mse_single_spike_keeps_it_when_rounding_noise_is_small():
    # All values at the centre of bin 100 (v = 100.5). t = 100.5: rounding noise
    # (100.5 / 127)^2 / 12 = 0.052 per value; t = 99.5 clips each by 1: 1.0.
    c = spike(100)
    err = T.mse_errors(c)
    assert err[100] == pytest.approx(1000 * 100.5 ** 2 / (12 * 127 ** 2))
    assert err[99] == 1000 * 1.0
    assert err[90] == 1000 * 10.0 ** 2
    assert T.threshold(hist(c), "mse") == 100.5


def test_mse_single_far_spike_is_clipped_by_one_bin():
    # At v = 1000.5 the noise of t = v is 1000.5^2 / 193548 = 5.17 per value,
    # more than clipping by one bin (1.0); clipping more costs (k)^2.
    c = spike(1000)
    err = T.mse_errors(c)
    assert err[1000] == pytest.approx(1000 * 1000.5 ** 2 / 193548)
    assert (err[999], err[998], err[997]) == (1000.0, 4000.0, 9000.0)
    assert T.threshold(hist(c), "mse") == 999.5


def test_mse_two_spikes_hand_value():
    # 999 values at bin 10, one at bin 1000. Keeping the outlier costs
    # 1000 * (1000.5/127)^2/12 = 5171; clipping it to t costs (1000.5 - t)^2
    # plus 999 * (t/127)^2/12 = 5140, minimal at t = 1000.5 * 193548 / (193548 + 999) = 995.36,
    # i.e. the bin centre 995.5.
    c = np.zeros(BINS, np.int64)
    c[10], c[1000] = 999, 1
    err = T.mse_errors(c)
    assert err[995] == pytest.approx((1000.5 - 995.5) ** 2 + 999 * 995.5 ** 2 / 193548)
    assert err[1000] == pytest.approx(1000 * 1000.5 ** 2 / 193548)
    assert T.threshold(hist(c), "mse") == 995.5


# ----------------------------------------------------------------- common


@pytest.mark.parametrize("method", T.METHODS)
def test_all_zero_tensor_gets_the_minimum_threshold(method):
    h = AbsHistogram.empty(BINS)
    h.add(np.zeros(10))
    assert T.threshold(h, method) == T.MIN_THRESHOLD


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown method 'foo'"):
        T.threshold(hist(np.ones(BINS)), "foo")


# ----------------------------------------------------------------- histogram


def test_histogram_grows_by_merging_whole_bins():
    h = AbsHistogram.empty(4)
    h.add(np.array([0.5, -1.0]))  # hi = 1, width 0.25: bins 2 and 3 (1.0 is the last)
    assert h.hi == 1.0 and h.counts.tolist() == [0, 0, 1, 1]
    h.add(np.array([2.5]))  # grows 3x to hi = 3: old bins 0-2 -> 0, 3 -> 1; 2.5 -> bin 3
    assert h.hi == 3.0 and h.counts.tolist() == [1, 1, 0, 1]
    assert (h.min, h.max, h.total) == (-1.0, 2.5, 3)


def test_streamed_histogram_equals_one_shot():
    rng = np.random.default_rng(0)
    samples = [rng.standard_normal(10_000).astype(np.float32) * s for s in (1.0, 1.7, 0.5, 4.2)]
    h = AbsHistogram.empty(BINS)
    for x in samples:
        h.add(x)
    allx = np.abs(np.concatenate(samples))
    ref, _ = np.histogram(allx, bins=BINS, range=(0.0, h.hi))
    assert allx.max() <= h.hi < 2 * allx.max()
    assert np.array_equal(h.counts, ref)


def test_histogram_set_round_trip(tmp_path):
    hs = HistogramSet()
    hs.add({"b": np.array([1.0, -2.0]), "a": np.zeros(3)}, bins=256)
    hs.save(tmp_path / "c.npz", model="m", samples=1)
    back, meta = HistogramSet.load(tmp_path / "c.npz")
    assert list(back) == ["b", "a"] and meta == {"model": "m", "samples": 1}
    for k in hs:
        assert np.array_equal(back[k].counts, hs[k].counts)
        assert (back[k].hi, back[k].min, back[k].max) == (hs[k].hi, hs[k].min, hs[k].max)


def test_histogram_rejects_nan():
    with pytest.raises(ValueError, match="tensor 'x': tensor has NaN"):
        HistogramSet().add({"x": np.array([1.0, np.nan])})
