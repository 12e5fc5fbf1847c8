"""Quantize tables: tpu-mlir's per-op precision overrides.

    # comments start with '#'
    op_name MODE

One op a line, white space between the name and the mode (F32, F16, BF16
or INT8); ops not listed keep the deploy's ``--quantize`` mode. The lowering
(``convert-top-to-tpu``'s ``quantize-table``) reads the table and rejects
unknown modes and names that are not the model's ops.
"""
from __future__ import annotations

from pathlib import Path

FLOAT_MODES = ("F16", "BF16", "F32")
MODES = (*FLOAT_MODES, "INT8")


def write_qtable(path: str | Path, modes: dict[str, str],
                 header: list[str] | None = None) -> Path:
    """Writes `modes` (op name -> mode) with `header` as '#' lines."""
    bad = [m for m in modes.values() if m not in MODES]
    if bad:
        raise ValueError(f"unknown quantize mode {bad[0]!r} (one of {', '.join(MODES)})")
    path = Path(path)
    lines = [f"# {h}" for h in (header or [])] + ["# op_name quantize_mode"]
    lines += [f"{name} {mode}" for name, mode in modes.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def read_qtable(path: str | Path) -> dict[str, str]:
    """Op name -> mode; a bad line raises ValueError naming file and line."""
    path = Path(path)
    out: dict[str, str] = {}
    for no, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or parts[1].upper() not in MODES:
            raise ValueError(f"{path}:{no}: expected 'op_name MODE' (MODE one of "
                             f"{', '.join(MODES)}), got {line!r}")
        out[parts[0]] = parts[1].upper()
    return out
