"""Threshold methods: |x| histogram → symmetric clipping threshold.

All methods read only an :class:`AbsHistogram` (bin width w = hi / bins,
bin j holds |x| in [j·w, (j+1)·w)), so any method can run from the cache.

* ``kl``: TensorRT's EntropyCalibrator2. For every candidate i in
  [128, bins) (128..2047 with 2048 bins): P = the first i bins with every
  count beyond them (the outliers) added to its last bin; Q = the first i
  bins without the outliers, merged into 128 groups of i // 128 bins (the
  last group takes the remainder) and each group's count spread evenly over
  the bins where P is non-zero (zero elsewhere). The threshold is
  (m + 0.5)·w for the m that minimises KL(P || Q) (both normalised); ties
  within 1e-12 go to the smallest m. The sums are evaluated for all
  candidates at once from prefix sums. The threshold is capped at max |x|
  (a grown histogram's last bins can lie beyond it), as for ``mse``.
  Before the search, bin 0 takes bin 1's count (as pytorch-quantization's
  TensorRT-style calibrator does): after a ReLU half the values are exact
  zeros, and that spike, merged with its neighbours in Q, drags the pure
  algorithm's threshold far down (ResNet-18 ReLU outputs: cosine 0.93 after
  INT8 fake-quantisation instead of 0.9999). Candidates that clip more than
  ``KL_MAX_CLIPPED`` (1 %) of the values are skipped: KL(P || Q) measures
  only the shape of the kept part, so a distribution with no mass near zero
  (sigmoid outputs in [0.29, 0.73]) otherwise gets a threshold at its lower
  edge that clips every value (an MLP's output: cosine 0.956 instead of
  0.9999), and a network's logits lose their largest values (MobileNetV2:
  0.981 instead of 0.9999).
* ``percentile``: the |x| below which ``percentile`` % of the values lie,
  interpolated linearly inside its bin, at most max |x|.
* ``minmax``: max |x| (exact, from the tracked min and max).
* ``mse``: the bin centre t = (i + 0.5)·w minimising the expected squared
  error of symmetric INT8 quantisation with scale s = t / 127: every value
  up to t adds the uniform rounding noise s² / 12, every bin j beyond t adds
  count · (v_j - t)² (v_j its centre). Every bin centre is a candidate
  (smallest on ties within 1e-12 relative).

A tensor that is all zeros has max |x| = 0; every method then gives
``MIN_THRESHOLD`` so that no scale is 0.
"""
from __future__ import annotations

import numpy as np

from .histogram import AbsHistogram

KL_LEVELS = 128  # quantised levels of Q, and the first candidate
KL_MAX_CLIPPED = 0.01  # most of the values a kl threshold may clip
MIN_THRESHOLD = 1e-6
DEFAULT_PERCENTILE = 99.99

DESCRIPTIONS = {
    "kl": "kl (TensorRT EntropyCalibrator2: every candidate bin i in 128..bins-1, P = first i bins "
          "with the outliers folded into the last, Q = P's bins merged into 128 groups and expanded "
          "over P's non-zero bins, threshold = (argmin KL + 0.5) * bin width; bin 0 takes bin 1's "
          "count first; candidates clipping more than 1% of the values skipped)",
    "percentile": "percentile {percentile:g} of |x| (linear inside the bin)",
    "minmax": "minmax (max |x|)",
    "mse": "mse (bin centre t minimising the expected squared error of symmetric INT8: "
           "(t/127)^2/12 per value up to t, (v - t)^2 per value v beyond it)",
}
METHODS = tuple(DESCRIPTIONS)


def _first_min(values: np.ndarray, atol: float) -> int:
    """Index of the first value within `atol` of the minimum (float noise)."""
    return int(np.flatnonzero(values <= values.min() + atol)[0])


def _xlogx(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def kl_divergences(counts: np.ndarray) -> np.ndarray:
    """KL(P || Q) of EntropyCalibrator2 for every candidate i (index i - 128).

    With C, Z, H the prefix sums of counts, of (counts > 0) and of
    counts·log(counts), N the total, o = N - C[i] the outliers and S_g, n_g,
    W_g the count, number of P's non-zero bins and P's mass of group g:
    KL = (sum P log P - sum_g W_g log(S_g / n_g)) / N - log N + log C[i].
    Groups 0..126 depend only on m = i // 128 (a handful of values), so
    their sum is computed once per m; only the last group varies with i.
    """
    h = np.asarray(counts, dtype=np.float64)
    bins = len(h)
    if bins <= KL_LEVELS:
        raise ValueError(f"kl needs more than {KL_LEVELS} bins, the histogram has {bins}")
    n = h.sum()
    C = np.concatenate([[0.0], np.cumsum(h)])
    Z = np.concatenate([[0.0], np.cumsum(h > 0)])
    H = np.concatenate([[0.0], np.cumsum(_xlogx(h))])

    i = np.arange(KL_LEVELS, bins)
    m = i // KL_LEVELS
    outliers = n - C[i]
    p_log_p = H[i - 1] + _xlogx(h[i - 1] + outliers)  # P's last bin holds the outliers

    ms = np.unique(m)
    edges = np.arange(KL_LEVELS)[None, :] * ms[:, None]  # groups 0..126 of each m
    S = C[edges[:, 1:]] - C[edges[:, :-1]]
    nz = Z[edges[:, 1:]] - Z[edges[:, :-1]]  # S > 0 implies nz > 0
    head = np.where(S > 0, S * np.log(np.where(S > 0, S, 1.0) / np.maximum(nz, 1)), 0.0).sum(axis=1)

    start = (KL_LEVELS - 1) * m  # the last group: bins [127 m, i)
    s_last = C[i] - C[start]
    n_last = Z[i] - Z[start] + ((h[i - 1] == 0) & (outliers > 0))
    w_last = s_last + outliers
    with np.errstate(divide="ignore", invalid="ignore"):
        # -inf (so KL = inf) where P has mass in the last group and Q none.
        tail = np.where(w_last > 0, w_last * np.log(s_last / np.maximum(n_last, 1)), 0.0)
        kl = (p_log_p - head[np.searchsorted(ms, m)] - tail) / n - np.log(n) + np.log(C[i])
    kl[~np.isfinite(kl)] = np.inf
    return np.maximum(kl, 0.0)  # KL >= 0; float noise can dip below


def kl_threshold(h: AbsHistogram) -> float:
    counts = h.counts.copy()
    counts[0] = counts[1]  # see the module doc: ReLU's zeros must not set the threshold
    kl = kl_divergences(counts)
    # See the module doc: candidates clipping too much are no candidates.
    clipped = 1.0 - np.cumsum(counts)[KL_LEVELS - 1:-1] / counts.sum()
    kl[clipped > KL_MAX_CLIPPED] = np.inf
    if not np.isfinite(kl).any():
        return h.absmax
    return min((_first_min(kl, 1e-12) + KL_LEVELS + 0.5) * h.width, h.absmax)


def percentile_threshold(h: AbsHistogram, percentile: float = DEFAULT_PERCENTILE) -> float:
    if not 0 < percentile <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {percentile}")
    cdf = np.cumsum(h.counts)
    target = cdf[-1] * percentile / 100.0
    idx = int(np.searchsorted(cdf, target, side="left"))
    before = cdf[idx] - h.counts[idx]
    t = (idx + (target - before) / h.counts[idx]) * h.width
    return min(t, h.absmax)


def minmax_threshold(h: AbsHistogram) -> float:
    return h.absmax


def mse_errors(counts: np.ndarray) -> np.ndarray:
    """Expected squared error / width² for every candidate t = (i + 0.5)·w.

    Values up to the threshold (C[i + 1] of them) add the uniform rounding
    noise s² / 12 with s = t / 127; each bin j > i adds counts[j]·(j - i)²
    (bin centre minus threshold, in bins), summed exactly in int64 from
    suffix sums of counts, counts·j and counts·j².
    """
    h = np.asarray(counts, dtype=np.int64)
    j = np.arange(len(h), dtype=np.int64)
    # suffix sums over bins > i
    s0, s1, s2 = (np.concatenate([np.cumsum(x[::-1])[::-1][1:], [0]]) for x in (h, h * j, h * j * j))
    clipped = s2 - 2 * j * s1 + j * j * s0
    below = np.cumsum(h)
    return (j + 0.5) ** 2 / (12 * 127 ** 2) * below + clipped


def mse_threshold(h: AbsHistogram) -> float:
    errors = mse_errors(h.counts)
    return min((_first_min(errors, 1e-12 * errors.max()) + 0.5) * h.width, h.absmax)


def threshold(h: AbsHistogram, method: str, percentile: float = DEFAULT_PERCENTILE) -> float:
    """The clipping threshold of one tensor by `method` (see the module doc)."""
    if method not in DESCRIPTIONS:
        raise ValueError(f"unknown method {method!r} (one of {', '.join(METHODS)})")
    if h.absmax == 0.0 or h.hi == 0.0:
        return MIN_THRESHOLD
    if method == "percentile":
        t = percentile_threshold(h, percentile)
    else:
        t = {"kl": kl_threshold, "minmax": minmax_threshold, "mse": mse_threshold}[method](h)
    return max(float(t), MIN_THRESHOLD)


def describe(method: str, percentile: float = DEFAULT_PERCENTILE) -> str:
    """The method as the table header names it."""
    return DESCRIPTIONS[method].format(percentile=percentile)
