"""Streaming |x| histograms, one per tensor, and their .npz form.

Each tensor keeps a fixed number of equal bins over [0, hi] plus its min and
max. Samples arrive one at a time and are never kept. When a sample's |x|
exceeds ``hi``, the range grows by the smallest integer factor k that covers
it and every k old bins merge into one new bin: the new edges are old edges,
so the merge is exact (no re-binning by interpolation). The first sample sets
``hi`` to its own max |x|, so a tensor whose range never grows has all bins
in use; a grown one has at least ``bins / 2`` bins below its max |x|.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_BINS = 2048


@dataclass
class AbsHistogram:
    """Counts of |x| in ``bins`` equal bins over [0, hi]; x's min and max."""

    counts: np.ndarray  # int64, length bins
    hi: float = 0.0
    min: float = math.inf
    max: float = -math.inf

    @classmethod
    def empty(cls, bins: int = DEFAULT_BINS) -> "AbsHistogram":
        return cls(np.zeros(bins, np.int64))

    @property
    def bins(self) -> int:
        return len(self.counts)

    @property
    def width(self) -> float:
        return self.hi / self.bins

    @property
    def absmax(self) -> float:
        return max(abs(self.min), abs(self.max))

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def add(self, x: np.ndarray) -> None:
        a = np.abs(np.asarray(x, dtype=np.float32).reshape(-1))
        if a.size == 0:
            return
        amax = float(a.max())
        if not math.isfinite(amax):
            raise ValueError("tensor has NaN or Inf values")
        self.min = min(self.min, float(np.min(x)))
        self.max = max(self.max, float(np.max(x)))
        self._grow(amax)
        if self.hi == 0.0:  # everything seen so far is 0
            self.counts[0] += a.size
            return
        idx = (a * np.float32(self.bins / self.hi)).astype(np.int64)
        np.minimum(idx, self.bins - 1, out=idx)  # |x| == hi goes in the last bin
        self.counts += np.bincount(idx, minlength=self.bins)

    def _grow(self, amax: float) -> None:
        if amax <= self.hi:
            return
        if self.hi == 0.0:  # only zeros so far: they stay in bin 0
            self.hi = amax
            return
        k = math.ceil(amax / self.hi)
        padded = np.zeros(math.ceil(self.bins / k) * k, np.int64)
        padded[:self.bins] = self.counts
        merged = padded.reshape(-1, k).sum(axis=1)
        self.counts = np.zeros(self.bins, np.int64)
        self.counts[:len(merged)] = merged
        self.hi *= k


class HistogramSet(dict):
    """Tensor name → AbsHistogram, in network order, saved as one .npz."""

    def add(self, tensors: dict[str, np.ndarray], bins: int = DEFAULT_BINS) -> None:
        for name, x in tensors.items():
            h = self.get(name)
            if h is None:
                h = self[name] = AbsHistogram.empty(bins)
            try:
                h.add(x)
            except ValueError as e:
                raise ValueError(f"tensor '{name}': {e}") from None

    def save(self, path: str | Path, **meta: str | int) -> None:
        names = list(self)
        np.savez(path, names=np.array(names, dtype=str),
                 counts=np.stack([self[n].counts for n in names]),
                 hi=np.array([self[n].hi for n in names]),
                 min=np.array([self[n].min for n in names]),
                 max=np.array([self[n].max for n in names]),
                 **{f"meta_{k}": np.array(v) for k, v in meta.items()})

    @classmethod
    def load(cls, path: str | Path) -> tuple["HistogramSet", dict[str, str]]:
        """The histograms and the metadata saved with them."""
        with np.load(path, allow_pickle=False) as d:
            hs = cls()
            for i, name in enumerate(d["names"].tolist()):
                hs[name] = AbsHistogram(d["counts"][i].copy(), float(d["hi"][i]),
                                        float(d["min"][i]), float(d["max"][i]))
            meta = {k[5:]: d[k].item() for k in d.files if k.startswith("meta_")}
        return hs, meta
