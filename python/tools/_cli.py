"""Pieces shared by the CLIs: common flags, logging, and the printed reports."""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Callable

from ..compare import CompareResult, Tolerance
from .npz_tool import format_table


def names_list(text: str) -> list[str]:
    return [n for n in text.split(",") if n]


def add_compare_args(p: argparse.ArgumentParser) -> None:
    """--tolerance, --excepts and -v, as every stage-comparing tool has them."""
    p.add_argument("--tolerance", type=Tolerance.parse, default=Tolerance(0.99, 0.99),
                   help="minimum cosine,euclidean similarity (default 0.99,0.99)")
    p.add_argument("--excepts", type=names_list, default=[],
                   help="comma-separated tensors not compared")
    p.add_argument("-v", "--verbose", action="store_true", help="print every tensor")


def add_progress_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no_progress", action="store_true",
                   help="no progress bars (they only show on a terminal anyway)")


def setup_progress(args: argparse.Namespace) -> None:
    from .. import progress

    if getattr(args, "no_progress", False):
        progress.set_enabled(False)


def add_debug_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--debug", action="store_true",
                   help="show the Python traceback of an error instead of one line")


def one_line(exc: BaseException) -> str:
    """The exception as one line: its message's lines joined, or its type."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return " | ".join(lines) if lines else type(exc).__name__


def guarded(prog: str, body: Callable[[], int], debug: bool = False, code: int = 1) -> int:
    """Runs a CLI's body: any error becomes one line on stderr and exit
    ``code`` (130 on Ctrl-C), never a traceback unless ``debug``.

    Errors the library raises for bad input (ValueError and its subclasses:
    FrontendError, NpzError, ...; CompileError, ChipError, OSError) print their
    message; anything else also names its type, as it means the input reached
    a case nobody anticipated."""
    from ..compiler import CompileError
    from ..runtime import ChipError

    try:
        return body()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the one place that turns errors into exit codes
        if debug:
            raise
        expected = (ValueError, OSError, CompileError, ChipError)
        msg = one_line(e)
        if isinstance(e, (FileExistsError, NotADirectoryError)) and e.filename:
            msg = f"{e.filename}: is a file where a directory is needed ({e.strerror})"
        elif isinstance(e, OSError) and e.filename:
            msg = f"{e.filename}: {e.strerror or msg}"
        if not isinstance(e, expected):
            msg = f"{type(e).__name__}: {msg} (rerun with --debug for a traceback)"
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return code


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


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
    if r.f32_weight_bytes:
        print(f"weights: {r.weight_bytes / 1024:.1f} KiB in the bmodel, "
              f"{r.weight_bytes / r.f32_weight_bytes:.2f}x their F32 size "
              f"({r.f32_weight_bytes / 1024:.1f} KiB)")
