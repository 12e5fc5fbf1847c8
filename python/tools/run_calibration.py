"""run_calibration.py: a calibration table for INT8 from a dataset.

    run_calibration.py net.mlir --dataset DIR --input_num 16 -o net_cali_table [--method kl]

Runs the Top interpreter over the dataset (``.npz`` / ``.npy`` / images),
caches every tensor's |x| histogram (a re-run or another method reads the
cache) and writes tpu-mlir's table format: ``name threshold min max``.
Exit codes: 0 written, 1 bad input (one line on stderr), 2 bad command line.
"""
from __future__ import annotations

import argparse
import sys

from ..calibration import DEFAULT_BINS, DEFAULT_PERCENTILE, METHODS, calibrate
from ._cli import add_debug_arg, add_progress_arg, guarded, setup_logging, setup_progress


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run_calibration.py", description=__doc__.splitlines()[0])
    p.add_argument("mlir", help="top.mlir (from model_transform.py)")
    p.add_argument("--dataset", required=True, help="directory of .npz / .npy / image samples")
    p.add_argument("--input_num", type=int, default=0,
                   help="samples to use, in file-name order (default 0: all)")
    p.add_argument("-o", "--output", "--calibration_table", dest="output", required=True,
                   help="calibration table to write")
    p.add_argument("--method", choices=METHODS, default="kl", help="threshold method (default kl)")
    p.add_argument("--percentile", type=float, default=DEFAULT_PERCENTILE,
                   help="for --method percentile (default %(default)s)")
    p.add_argument("--histogram_bins", type=int, default=DEFAULT_BINS,
                   help="bins per tensor histogram (default %(default)s)")
    p.add_argument("--cache_dir", help="histogram cache directory (default: the output's)")
    add_progress_arg(p)
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    add_debug_arg(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    setup_progress(args)
    return guarded("run_calibration.py", lambda: _run(args), args.debug)


def _run(args: argparse.Namespace) -> int:
    r = calibrate(args.mlir, args.dataset, args.output, input_num=args.input_num,
                  method=args.method, percentile=args.percentile, bins=args.histogram_bins,
                  cache_dir=args.cache_dir, progress=not args.no_progress)
    source = "cached histograms" if r.from_cache else f"{r.samples} samples in {r.collect_seconds:.2f} s"
    print(f"wrote {r.path} ({len(r.table)} tensors, {args.method}, {source}) in {r.seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
