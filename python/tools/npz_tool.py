#!/usr/bin/env python3
"""npz_tool: inspect and compare tensor dumps of the tpuc pipeline stages.

    npz_tool.py compare TARGET.npz REFERENCE.npz [--tolerance 0.99,0.90] [--excepts a,b] [-v] [--plot out.png]
                        [--calibration_table T [--asymmetric]]
    npz_tool.py dump X.npz [names...]
    npz_tool.py plot TARGET.npz REFERENCE.npz -o out.png

Rows follow REFERENCE's key order (network order), so the first FAIL row is the
first divergent layer.  With ``--calibration_table`` the int8 tensors of a
quantized run are dequantized by the table first and the summary names the
layer whose cosine drops the most.  Exit codes: 0 all compared tensors within tolerance,
1 some tensor below tolerance, 2 bad input.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from typing import Sequence

from tpuc.calibration.table import CalibrationTable, TableError
from tpuc.compare import CompareResult, NpzError, Status, TensorComparison, Tolerance, compare, load_npz, tensor_stats

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2


class _UsageError(ValueError):
    """Bad command line; reported as one line with exit code 2."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would sys.exit(2) with usage
        raise _UsageError(message)


def _fmt(x: float, digits: int = 6) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def _shape(row: TensorComparison) -> str:
    t, r = row.shape_target, row.shape_reference
    if t is None or r is None or t == r:
        s = t if t is not None else r
        return "-" if s is None else "x".join(map(str, s)) or "scalar"
    return f"{'x'.join(map(str, t)) or 'scalar'}|{'x'.join(map(str, r)) or 'scalar'}"


def format_table(rows: Sequence[TensorComparison]) -> str:
    header = ("name", "shape", "cosine", "euclid", "sqnr_db", "max_abs_diff", "status", "note")
    lines = [header] + [
        (r.name, _shape(r), _fmt(r.cosine), _fmt(r.euclid), _fmt(r.sqnr_db, 2), _fmt(r.max_abs_diff, 6),
         str(r.status), r.reason)
        for r in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    return "\n".join(("  ".join(c.ljust(w) for c, w in zip(line, widths)) + "  " + line[-1]).rstrip()
                     for line in lines)


def _split_names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _parse_tolerance(text: str) -> Tolerance:
    try:
        return Tolerance.parse(text)
    except ValueError as exc:
        raise _UsageError(f"--tolerance: {exc}") from None


def plot_result(result: CompareResult, out_path: str, title: str = "") -> None:
    """Per-layer cosine and SQNR vs layer index, with the tolerance line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result.rows if r.status is not Status.SKIP]
    idx = list(range(len(rows)))
    cos = [r.cosine for r in rows]
    finite_sqnr = [r.sqnr_db for r in rows if math.isfinite(r.sqnr_db)]
    cap = max(finite_sqnr + [60.0]) + 10.0  # draw +inf (identical) just above the data
    sqnr = [min(r.sqnr_db, cap) if not math.isnan(r.sqnr_db) else math.nan for r in rows]

    fig, (ax_cos, ax_sqnr) = plt.subplots(2, 1, sharex=True, figsize=(max(6.0, len(rows) * 0.15), 6))
    ax_cos.plot(idx, cos, marker=".", label="cosine")
    ax_cos.plot(idx, [r.euclid for r in rows], marker=".", alpha=0.6, label="euclid")
    ax_cos.axhline(result.tolerance.cosine, color="r", linestyle="--", label=f"cos min {result.tolerance.cosine:g}")
    ax_cos.axhline(result.tolerance.euclid, color="orange", linestyle=":", label=f"euclid min {result.tolerance.euclid:g}")
    ax_cos.set_ylabel("similarity")
    ax_cos.legend(loc="lower left", fontsize="small")
    ax_sqnr.plot(idx, sqnr, marker=".", color="g")
    ax_sqnr.set_ylabel(f"SQNR dB (inf drawn at {cap:.0f})")
    ax_sqnr.set_xlabel("layer index (reference order)")
    first = result.first_failure
    i = next((k for k, r in enumerate(rows) if r is first), None)
    if i is not None:
        for ax in (ax_cos, ax_sqnr):
            ax.axvline(i, color="r", alpha=0.4)
        ax_cos.set_title(f"{title}  first failure #{i}: {first.name}".strip())
    elif title:
        ax_cos.set_title(title)
    fig.tight_layout()
    fig.savefig(out_path, format="png")
    plt.close(fig)


def _cmd_compare(args: argparse.Namespace) -> int:
    tolerance = _parse_tolerance(args.tolerance)
    if args.asymmetric and not args.calibration_table:
        raise _UsageError("--asymmetric needs --calibration_table")
    table = CalibrationTable.load(args.calibration_table) if args.calibration_table else None
    result = compare(load_npz(args.target), load_npz(args.reference), tolerance=tolerance,
                     excepts=_split_names(args.excepts), fail_on_missing=args.fail_on_missing,
                     calibration_table=table, asymmetric=args.asymmetric)
    rows = result.rows if args.verbose else result.failures
    if rows:
        print(format_table(rows))
    for label, names in (("reference", result.only_in_reference), ("target", result.only_in_target)):
        if names:
            print(f"only in {label} ({len(names)}): {', '.join(names)}")
    if args.plot:
        plot_result(result, args.plot, title=f"{args.target} vs {args.reference}")
    print(("PASS: " if result.passed else "FAIL: ") + result.summary())
    return EXIT_OK if result.passed else EXIT_FAIL


def _cmd_dump(args: argparse.Namespace) -> int:
    data = load_npz(args.file)
    names = args.names or list(data)
    missing = [n for n in names if n not in data]
    if missing:
        raise _UsageError(f"{args.file}: no tensor named {', '.join(missing)}")
    table = [("name", "shape", "dtype", "min", "max", "mean", "std")]
    for n in names:
        s = tensor_stats(data[n])
        table.append((n, "x".join(map(str, s.shape)) or "scalar", s.dtype,
                      *(f"{v:.6g}" for v in (s.min, s.max, s.mean, s.std))))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    print("\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table))
    return EXIT_OK


def _cmd_plot(args: argparse.Namespace) -> int:
    result = compare(load_npz(args.target), load_npz(args.reference), tolerance=_parse_tolerance(args.tolerance),
                     excepts=_split_names(args.excepts))
    plot_result(result, args.output, title=f"{args.target} vs {args.reference}")
    print(f"wrote {args.output}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="npz_tool.py", description=__doc__.split("\n")[0])
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_ArgumentParser)

    def add_pair(p: argparse.ArgumentParser) -> None:
        p.add_argument("target", help="npz under test (e.g. tpu / cmodel dump)")
        p.add_argument("reference", help="reference npz (e.g. onnx / top dump); defines the row order")
        p.add_argument("--tolerance", default=str(Tolerance()), metavar="COS,EUCLID",
                       help="minimum cosine and euclidean similarity (default %(default)s)")
        p.add_argument("--excepts", default="", metavar="A,B", help="comma-separated tensor names to skip")

    p = sub.add_parser("compare", help="per-tensor similarity table")
    add_pair(p)
    p.add_argument("-v", "--verbose", action="store_true", help="print every row, not only failures")
    p.add_argument("--fail-on-missing", action="store_true", help="treat keys present on one side only as failures")
    p.add_argument("--plot", metavar="OUT.png", help="also write the per-layer plot")
    p.add_argument("--calibration_table", metavar="T",
                   help="dequantize the target's int8 tensors by this table ((q - zp) * scale)")
    p.add_argument("--asymmetric", action="store_true",
                   help="the table's asymmetric INT8 parameters (default symmetric)")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("dump", help="shape, dtype and statistics per tensor")
    p.add_argument("file")
    p.add_argument("names", nargs="*", help="tensors to show (default: all)")
    p.set_defaults(func=_cmd_dump)

    p = sub.add_parser("plot", help="per-layer cosine and SQNR plot")
    add_pair(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.png")
    p.set_defaults(func=_cmd_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from tpuc.tools._cli import guarded  # _cli imports this module; also run as a script

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except _UsageError as exc:
        print(f"npz_tool.py: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return guarded("npz_tool.py", lambda: args.func(args), args.debug, code=EXIT_BAD_INPUT)


if __name__ == "__main__":
    sys.exit(main())
