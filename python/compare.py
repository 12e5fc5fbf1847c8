"""Compare named tensors dumped by two pipeline stages (ONNX, Top, Tpu, cmodel).

Every stage writes its tensors to an ``.npz`` keyed by tensor name.  Comparing
two such dumps row by row, in network order, tells the user the first layer
whose output diverged.

Conventions
-----------
* ``compare(target, reference)``: the second argument is the *reference*
  (e.g. the ONNX / Top dump).  Rows follow the key order of the reference,
  which is the order the reference stage executed the network in, so
  ``CompareResult.first_failure`` is the first divergent layer.  Keys only in
  the target are appended at the end (they only appear as rows when
  ``fail_on_missing`` is set).
* All arithmetic is done in float64 after casting, so int, bool, float16 and
  bfloat16 (``ml_dtypes``) tensors compare like any float tensor.
* Metrics, with ``a`` = target and ``r`` = reference, both flattened:

  - cosine similarity ``a.r / (|a| |r|)``; two all-zero tensors give 1.0,
    all-zero vs non-zero gives 0.0.  Clamped to [-1, 1] against rounding.
  - euclidean similarity (tpu-mlir style)
    ``1 - |a - r| / ((|a| + |r|) / 2)``.  By the triangle inequality the raw
    value lies in [-1, 1]; anything below 0 already means "unrelated", so it is
    clamped to [0, 1].  Two all-zero tensors give 1.0.
  - SQNR in dB ``10 log10(sum r^2 / sum (a - r)^2)``: +inf when identical,
    -inf when the reference is all zero but the target is not.
  - max abs diff ``max |a - r|``.

  A tensor passes when ``cosine >= tolerance.cosine`` and
  ``euclid >= tolerance.euclid`` (default 0.99 / 0.90, as in tpu-mlir).
* NaN or Inf on either side is a failure with a reason (but values of one
  sign at or beyond the float16 limit on both sides, e.g. an infinite
  reference the target saturated, count as equal, noted); so is a shape
  mismatch with a different element count.  A shape mismatch with the same
  element count is compared flattened and noted as ``reshaped``.
* A quantized run (``calibration_table=``): every int8 target tensor the
  table names is dequantized first, ``(q - zero_point) * scale`` with the
  table's symmetric or asymmetric INT8 parameters
  (:meth:`tpuc.calibration.CalibrationTable.qparams`), and noted as
  ``dequantized``; an int8 tensor the table lacks is compared as it is and
  noted.  The summary then names the layer whose cosine drops the most from
  the previous compared row's (network order; the first row's predecessor
  counts as 1.0; the first such row on ties): where quantization hurts.
"""

from __future__ import annotations

import enum
import logging
import math
import os
import zipfile
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

try:  # bfloat16 is optional: only needed to decode bf16 dumps.
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a pinned dependency
    ml_dtypes = None

from .calibration.table import CalibrationTable

logger = logging.getLogger(__name__)

__all__ = [
    "CompareResult",
    "NpzError",
    "Status",
    "TensorComparison",
    "Tolerance",
    "compare",
    "compare_arrays",
    "compare_npz",
    "dequantize",
    "load_npz",
    "tensor_stats",
]


class NpzError(ValueError):
    """An input file cannot be used; the message names the file and reason."""


@dataclass(frozen=True)
class Tolerance:
    """Minimum cosine and euclidean similarity for a tensor to pass."""

    cosine: float = 0.99
    euclid: float = 0.90

    def __post_init__(self) -> None:
        for label, value in (("cosine", self.cosine), ("euclid", self.euclid)):
            if not (isinstance(value, (int, float)) and math.isfinite(value)):
                raise ValueError(f"tolerance {label} must be a finite number, got {value!r}")
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"tolerance {label} must be in [-1, 1], got {value}")

    @classmethod
    def parse(cls, text: str) -> "Tolerance":
        """Parse ``"COS,EUCLID"``, e.g. ``"0.99,0.90"``."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"tolerance must be 'COS,EUCLID', got {text!r}")
        try:
            cos, euc = (float(p) for p in parts)
        except ValueError:
            raise ValueError(f"tolerance must be two numbers 'COS,EUCLID', got {text!r}") from None
        return cls(cos, euc)

    def __str__(self) -> str:
        return f"{self.cosine:g},{self.euclid:g}"


class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"  # listed in excepts

    def __str__(self) -> str:
        return self.value


@dataclass
class TensorComparison:
    """One row of the comparison table."""

    name: str
    status: Status
    shape_target: tuple[int, ...] | None = None
    shape_reference: tuple[int, ...] | None = None
    dtype_target: str | None = None
    dtype_reference: str | None = None
    cosine: float = math.nan
    euclid: float = math.nan
    sqnr_db: float = math.nan
    max_abs_diff: float = math.nan
    reason: str = ""  # why it failed / was skipped, or a note such as "reshaped"

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    @property
    def failed(self) -> bool:
        return self.status is Status.FAIL


@dataclass
class CompareResult:
    """All rows in reference order plus keys present on one side only."""

    rows: list[TensorComparison]
    tolerance: Tolerance
    only_in_target: list[str] = field(default_factory=list)
    only_in_reference: list[str] = field(default_factory=list)
    fail_on_missing: bool = False
    dequantized: list[str] = field(default_factory=list)  # int8 target tensors dequantized

    @property
    def largest_drop(self) -> tuple[TensorComparison, float] | None:
        """(row, previous cosine) of the first row whose cosine fell the most
        from the previous compared row's; None when no cosine falls."""
        prev, best, best_drop = 1.0, None, 0.0
        for r in self.rows:
            if math.isnan(r.cosine):
                continue
            if prev - r.cosine > best_drop:
                best, best_drop = (r, prev), prev - r.cosine
            prev = r.cosine
        return best

    @property
    def failures(self) -> list[TensorComparison]:
        return [r for r in self.rows if r.failed]

    @property
    def first_failure(self) -> TensorComparison | None:
        """The first failing row in network order, i.e. the first divergent layer."""
        return next((r for r in self.rows if r.failed), None)

    @property
    def passed(self) -> bool:
        return not self.failures

    def count(self, status: Status) -> int:
        return sum(1 for r in self.rows if r.status is status)

    def summary(self) -> str:
        compared = sum(1 for r in self.rows if r.shape_target is not None and r.shape_reference is not None)
        text = (
            f"{compared} compared, {self.count(Status.PASS)} passed, {self.count(Status.FAIL)} failed, "
            f"{self.count(Status.SKIP)} skipped, {len(self.only_in_target)} only in target, "
            f"{len(self.only_in_reference)} only in reference (tolerance cos>={self.tolerance.cosine:g}, "
            f"euclid>={self.tolerance.euclid:g})"
        )
        drop = self.largest_drop if self.dequantized else None
        if drop is not None:
            text += f"; largest cosine drop: {drop[0].name} ({drop[1]:.6f} -> {drop[0].cosine:.6f})"
        first = self.first_failure
        if first is not None:
            text += f"; first failure: {first.name}" + (f" ({first.reason})" if first.reason else "")
        return text


# --------------------------------------------------------------------------- loading


def _decode(name: str, arr: np.ndarray, source: str) -> np.ndarray:
    # np.save stores ml_dtypes.bfloat16 as raw 2-byte voids; undo that.
    if arr.dtype.kind == "V" and arr.dtype.names is None and arr.dtype.itemsize == 2 and ml_dtypes is not None:
        logger.debug("%s: tensor %r stored as raw 2-byte void, reading it as bfloat16", source, name)
        return arr.view(ml_dtypes.bfloat16)
    return arr


def load_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Load every array of an ``.npz`` eagerly, keeping the archive's key order.

    Raises :class:`NpzError` naming the file for a missing/unreadable file, a
    file that is not an npz archive, or pickled (object) contents.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise NpzError(f"{path}: no such file")
    if os.path.isdir(path):
        raise NpzError(f"{path}: is a directory, expected an .npz file")
    if not zipfile.is_zipfile(path):
        # np.load would happily return a bare .npy array or try to unpickle.
        raise NpzError(f"{path}: not an npz archive")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: _decode(k, data[k], path) for k in data.files}
    except Exception as exc:  # noqa: BLE001 - numpy/zipfile raise many kinds on damaged files
        if isinstance(exc, NpzError):
            raise
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise NpzError(f"{path}: unreadable npz archive ({reason})") from None


def _as_dict(tensors: Mapping[str, np.ndarray] | str | os.PathLike) -> dict[str, np.ndarray]:
    if isinstance(tensors, (str, os.PathLike)):
        return load_npz(tensors)
    return {k: _decode(k, np.asarray(v), "<dict>") for k, v in tensors.items()}


# --------------------------------------------------------------------------- metrics


_ML_FLOATS = (
    {np.dtype(getattr(ml_dtypes, n)) for n in ("bfloat16", "float8_e4m3fn", "float8_e5m2") if hasattr(ml_dtypes, n)}
    if ml_dtypes is not None
    else set()
)


def _to_float64(arr: np.ndarray) -> np.ndarray | None:
    """Cast to float64, or None when the dtype has no sensible numeric meaning."""
    if arr.dtype.kind in "biuf" or (ml_dtypes is not None and arr.dtype in _ML_FLOATS):
        return np.asarray(arr, dtype=np.float64)
    return None


def _metrics(a: np.ndarray, r: np.ndarray) -> tuple[float, float, float, float]:
    """(cosine, euclid, sqnr_db, max_abs_diff) of finite float64 vectors."""
    diff = a - r
    norm_a = float(np.linalg.norm(a))
    norm_r = float(np.linalg.norm(r))
    norm_d = float(np.linalg.norm(diff))
    max_abs = float(np.max(np.abs(diff))) if diff.size else 0.0

    if norm_a == 0.0 and norm_r == 0.0:
        cosine = 1.0
    elif norm_a == 0.0 or norm_r == 0.0:
        cosine = 0.0
    else:
        cosine = float(np.clip(np.dot(a, r) / (norm_a * norm_r), -1.0, 1.0))

    mean_norm = (norm_a + norm_r) / 2.0
    euclid = 1.0 if mean_norm == 0.0 else float(np.clip(1.0 - norm_d / mean_norm, 0.0, 1.0))

    signal = float(np.dot(r, r))
    noise = float(np.dot(diff, diff))
    if noise == 0.0:
        sqnr = math.inf
    elif signal == 0.0:
        sqnr = -math.inf
    else:
        sqnr = 10.0 * math.log10(signal / noise)
    return cosine, euclid, sqnr, max_abs


def cosine(a: np.ndarray, r: np.ndarray) -> float:
    """Cosine similarity of two tensors (1.0 when both are all zeros)."""
    return _metrics(np.asarray(a, np.float64).ravel(), np.asarray(r, np.float64).ravel())[0]


def compare_arrays(
    name: str, target: np.ndarray, reference: np.ndarray, tolerance: Tolerance = Tolerance()
) -> TensorComparison:
    """Compare one tensor pair and return its table row."""
    target = np.asarray(target)
    reference = np.asarray(reference)
    row = TensorComparison(
        name=name,
        status=Status.FAIL,
        shape_target=tuple(target.shape),
        shape_reference=tuple(reference.shape),
        dtype_target=str(target.dtype),
        dtype_reference=str(reference.dtype),
    )
    notes = []
    if target.shape != reference.shape:
        if target.size != reference.size:
            row.reason = f"shape mismatch {target.shape} vs {reference.shape}"
            return row
        notes.append(f"reshaped {target.shape} vs {reference.shape}")

    a = _to_float64(target)
    r = _to_float64(reference)
    for arr, conv, side in ((target, a, "target"), (reference, r, "reference")):
        if conv is None:
            row.reason = f"unsupported dtype {arr.dtype} in {side}"
            return row
    a = a.reshape(-1)
    r = r.reshape(-1)

    # Saturated values: the frontend turns the infinite constants of
    # attention masks into the float32 limit, and F16/BF16 weights saturate
    # to theirs (see frontend/onnx_ops_mask.py). Where both sides are at or
    # beyond the float16 limit with one sign, they count as equal.
    f16_max, f32_max = 65504.0, float(np.finfo(np.float32).max)
    with np.errstate(invalid="ignore"):
        saturated = ((np.abs(a) >= f16_max) & (np.abs(r) >= f16_max)
                     & (np.sign(a) == np.sign(r)) & ((a != r) | np.isinf(r)))
    if saturated.any():
        a, r = a.copy(), r.copy()
        a[saturated] = r[saturated] = np.sign(r[saturated]) * np.minimum(
            np.abs(r[saturated]), f32_max)
        notes.append(f"{int(saturated.sum())} saturated")
    bad = [f"{what} in {side}" for side, v in (("target", a), ("reference", r))
           for what, test in (("NaN", np.isnan), ("Inf", np.isinf)) if test(v).any()]
    if bad:
        row.reason = ", ".join(bad)
        return row

    row.cosine, row.euclid, row.sqnr_db, row.max_abs_diff = _metrics(a, r)
    ok = row.cosine >= tolerance.cosine and row.euclid >= tolerance.euclid
    row.status = Status.PASS if ok else Status.FAIL
    if not ok:
        notes.insert(0, "below tolerance")
    row.reason = "; ".join(notes)
    return row


def dequantize(
    tensors: Mapping[str, np.ndarray], table: CalibrationTable, asymmetric: bool = False
) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """(tensors with every int8 one the table names as float64
    ``(q - zp) * scale``, the names dequantized, int8 names not in the table)."""
    out, done, missing = dict(tensors), [], []
    for name, arr in tensors.items():
        if arr.dtype != np.int8:
            continue
        if name not in table:
            missing.append(name)
            continue
        scale, zp = table.qparams(name, asymmetric)
        out[name] = (arr.astype(np.float64) - zp) * scale
        done.append(name)
    return out, done, missing


def compare(
    target: Mapping[str, np.ndarray] | str | os.PathLike,
    reference: Mapping[str, np.ndarray] | str | os.PathLike,
    tolerance: Tolerance = Tolerance(),
    excepts: Iterable[str] = (),
    fail_on_missing: bool = False,
    calibration_table: CalibrationTable | None = None,
    asymmetric: bool = False,
) -> CompareResult:
    """Compare two sets of named tensors (dicts or ``.npz`` paths).

    ``reference`` defines the row order (network order).  Names in
    ``excepts`` become SKIP rows.  Keys on one side only are listed in the
    result; with ``fail_on_missing`` they also become FAIL rows.  With a
    ``calibration_table``, int8 target tensors are dequantized first (module
    doc).
    """
    tgt = _as_dict(target)
    ref = _as_dict(reference)
    dequantized: list[str] = []
    not_in_table: set[str] = set()
    if calibration_table is not None:
        tgt, dequantized, missing = dequantize(tgt, calibration_table, asymmetric)
        not_in_table = set(missing)
        if missing:
            logger.warning("int8 tensors not in the calibration table, compared as they are: %s",
                           ", ".join(missing))
    notes = {**{n: "dequantized" for n in dequantized},
             **{n: "int8, not in the calibration table" for n in not_in_table}}
    excepts = set(excepts)
    unknown = sorted(excepts - tgt.keys() - ref.keys())
    if unknown:
        logger.warning("excepted names not found in either input: %s", ", ".join(unknown))

    rows: list[TensorComparison] = []
    only_in_reference: list[str] = []
    for name, r in ref.items():
        if name in excepts:
            rows.append(TensorComparison(name, Status.SKIP, reason="excepted"))
            continue
        if name not in tgt:
            only_in_reference.append(name)
            if fail_on_missing:
                rows.append(TensorComparison(name, Status.FAIL, shape_reference=tuple(r.shape),
                                             dtype_reference=str(r.dtype), reason="missing in target"))
            continue
        row = compare_arrays(name, tgt[name], r, tolerance)
        if name in notes:
            row.reason = "; ".join(filter(None, (row.reason, notes[name])))
        logger.debug("%s: %s cos=%.6f euclid=%.6f sqnr=%.2fdB %s", name, row.status, row.cosine,
                     row.euclid, row.sqnr_db, row.reason)
        rows.append(row)

    only_in_target = [n for n in tgt if n not in ref and n not in excepts]
    if fail_on_missing:
        rows.extend(TensorComparison(n, Status.FAIL, shape_target=tuple(tgt[n].shape),
                                     dtype_target=str(tgt[n].dtype), reason="missing in reference")
                    for n in only_in_target)
    if only_in_target or only_in_reference:
        logger.info("%d tensors only in target, %d only in reference", len(only_in_target), len(only_in_reference))
    return CompareResult(rows, tolerance, only_in_target, only_in_reference, fail_on_missing,
                         dequantized)


def compare_npz(target_path: str | os.PathLike, reference_path: str | os.PathLike, **kwargs) -> CompareResult:
    """``compare`` for two npz files; errors name the offending file."""
    return compare(load_npz(target_path), load_npz(reference_path), **kwargs)


@dataclass(frozen=True)
class TensorStats:
    shape: tuple[int, ...]
    dtype: str
    min: float
    max: float
    mean: float
    std: float


def tensor_stats(arr: np.ndarray) -> TensorStats:
    """Summary statistics in float64; NaN for empty or non-numeric tensors."""
    arr = np.asarray(arr)
    f = _to_float64(arr)
    if f is None or f.size == 0:
        nan = math.nan
        return TensorStats(tuple(arr.shape), str(arr.dtype), nan, nan, nan, nan)
    return TensorStats(tuple(arr.shape), str(arr.dtype), float(f.min()), float(f.max()),
                       float(f.mean()), float(f.std()))
