"""The calibration table (tpu-mlir's text format) and INT8 parameters from it.

    # tpuc calibration table
    # model: resnet18
    # method: kl (TensorRT EntropyCalibrator2: ...)
    # input number: 16
    # histogram number: 2048
    # generated time: 2026-01-01 12:00:00
    ###
    # op_name    threshold    min    max
    input 4.2108 -4.0112 4.2108
    ...

Lines starting with ``#`` are comments (the header); every other non-blank
line is ``name threshold min max`` separated by white space (so names hold no
white space). Numbers are written with Python's shortest round-trip repr, so
a table read back gives the same doubles. Reading stops at tpu-mlir's extra
sections (``#int4_th``, ``#weight_scale``), which tpuc does not use.

INT8 parameters (:meth:`CalibrationTable.qparams`), in double precision; the
C++ lowering uses the same formulas:

* symmetric: scale = threshold / 127, zero_point = 0;
* asymmetric: lo = min(min, 0), hi = max(max, 0), scale = (hi - lo) / 255,
  zero_point = clamp(round_half_away_from_zero(-128 - lo / scale), -128, 127);
* a scale of 0 (an all-zero tensor's min = max = 0, or a threshold of 0 in a
  hand-written table) becomes ``ZERO_RANGE_SCALE`` = 1e-8, so no scale is 0.
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field
from pathlib import Path

ZERO_RANGE_SCALE = 1e-8
_SECTIONS = ("#int4_th", "#weight_scale")


class TableError(ValueError):
    """A table that cannot be read; the message names the file and line."""


def round_half_away_from_zero(x: float) -> float:
    return math.copysign(math.floor(abs(x) + 0.5), x)


@dataclass(frozen=True)
class TensorRange:
    threshold: float
    min: float
    max: float


@dataclass
class CalibrationTable:
    """Per-tensor threshold, min and max, in network order, plus the header."""

    ranges: dict[str, TensorRange] = field(default_factory=dict)
    header: list[str] = field(default_factory=list)  # the '#' lines' text

    # ------------------------------------------------------------ queries

    def __contains__(self, name: str) -> bool:
        return name in self.ranges

    def __len__(self) -> int:
        return len(self.ranges)

    def _get(self, name: str) -> TensorRange:
        try:
            return self.ranges[name]
        except KeyError:
            raise KeyError(f"the calibration table has no tensor '{name}'") from None

    def threshold(self, name: str) -> float:
        return self._get(name).threshold

    def min(self, name: str) -> float:
        return self._get(name).min

    def max(self, name: str) -> float:
        return self._get(name).max

    def qparams(self, name: str, asymmetric: bool = False) -> tuple[float, int]:
        """(scale, zero_point) of INT8 for `name`; formulas in the module doc."""
        r = self._get(name)
        if not asymmetric:
            return (r.threshold / 127.0) or ZERO_RANGE_SCALE, 0
        lo, hi = min(r.min, 0.0), max(r.max, 0.0)
        scale = (hi - lo) / 255.0 or ZERO_RANGE_SCALE
        zp = round_half_away_from_zero(-128.0 - lo / scale)
        return scale, int(min(max(zp, -128), 127))

    def header_value(self, key: str) -> str | None:
        """The value of a ``# key: value`` header line, e.g. 'model'."""
        for line in self.header:
            k, sep, v = line.partition(":")
            if sep and k.strip() == key:
                return v.strip()
        return None

    # ------------------------------------------------------------ I/O

    def save(self, path: str | Path, model: str, method: str, inputs: int,
             extra: dict[str, str | int] | None = None) -> None:
        """Writes the table with tpu-mlir's header lines."""
        bad = [n for n in self.ranges if not n or any(c.isspace() for c in n)]
        if bad:
            raise ValueError(f"tensor name {bad[0]!r} holds white space: the table cannot name it")
        now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        self.header = ["tpuc calibration table", f"model: {model}", f"method: {method}",
                       f"input number: {inputs}",
                       *(f"{k}: {v}" for k, v in (extra or {}).items()),
                       f"generated time: {now}"]
        lines = [f"# {h}" for h in self.header] + ["###", "# op_name    threshold    min    max"]
        lines += [f"{n} {r.threshold!r} {r.min!r} {r.max!r}" for n, r in self.ranges.items()]
        Path(path).write_text("\n".join(lines) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "CalibrationTable":
        path = Path(path)
        if not path.is_file():
            raise TableError(f"{path}: no such calibration table")
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise TableError(f"{path}: cannot read ({e})") from None
        table = cls()
        for no, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if line.startswith(_SECTIONS):
                break
            if line.startswith("#"):
                body = line.lstrip("#").strip()
                if body and not body.startswith("op_name"):
                    table.header.append(body)
                continue
            if not line:
                continue
            parts = line.split()
            try:
                if len(parts) != 4:
                    raise ValueError
                th, lo, hi = (float(p) for p in parts[1:])
            except ValueError:
                raise TableError(f"{path}:{no}: expected 'name threshold min max', "
                                 f"got {line!r}") from None
            if not all(map(math.isfinite, (th, lo, hi))) or th < 0 or lo > hi:
                raise TableError(f"{path}:{no}: bad range for '{parts[0]}' "
                                 f"(threshold {th}, min {lo}, max {hi})")
            if parts[0] in table.ranges:
                raise TableError(f"{path}:{no}: tensor '{parts[0]}' is listed twice")
            table.ranges[parts[0]] = TensorRange(th, lo, hi)
        if not table.ranges:
            raise TableError(f"{path}: no 'name threshold min max' lines")
        return table
