"""Printing shared by the CLIs: the layer-wise comparison table."""
from __future__ import annotations

from ..compare import CompareResult
from .npz_tool import format_table


def print_comparison(result: CompareResult, target: str, reference: str,
                     verbose: bool = False) -> None:
    """Failing rows (every row with `verbose`) and a one-line summary."""
    print(f"== {target} vs {reference} ==")
    rows = result.rows if verbose else result.failures
    if rows:
        print(format_table(rows))
    if result.only_in_reference and verbose:
        print(f"not produced by {target} (fused away): "
              f"{', '.join(result.only_in_reference)}")
    print(("PASS: " if result.passed else "FAIL: ") + result.summary())
