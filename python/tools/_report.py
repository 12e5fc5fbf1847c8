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


def print_deploy_stats(r) -> None:
    """Simulated cycles, engine utilisation and the roofline of a deploy."""
    rl = r.roofline
    print(f"cycles: {r.cycles} ({r.microseconds:.1f} us on {r.chip}); "
          f"TIU {100 * r.tiu_utilization:.1f}% busy ({r.tiu_instructions} inst), "
          f"GDMA {100 * r.gdma_utilization:.1f}% busy ({r.gdma_instructions} inst)")
    print(f"roofline: {rl.cycles:.0f} cycles, {rl.bound}-bound ({rl.macs} MACs, "
          f"{rl.ddr_bytes} DDR bytes); achieved {r.roofline_ratio:.2f}x the bound")
