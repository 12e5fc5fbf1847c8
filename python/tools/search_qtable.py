"""search_qtable.py: the fewest float layers that bring an INT8 model to a cosine target.

    search_qtable.py net.mlir --dataset DIR --calibration_table net_cali_table \\
        --chip tpu_edge --expected_cos 0.99 [--max_float_layers N] \\
        [--workers N | --ray ADDRESS] -o net_qtable

Scores every INT8 layer by its local error on cached float inputs (the
bit-exact Tpu interpreter), finds the fewest layers to keep in float that
reach the target end to end, and writes the quantize table (for
``model_deploy.py --quantize_table``) and ``<table>.report.txt`` beside it:
per layer its cosine loss, whether clipping or rounding causes it, and its
cycle cost on the chip. Exit codes: 0 target reached, 1 bad input, 2 bad
command line, 3 target not reachable (the best cosine is printed).
"""
from __future__ import annotations

import argparse
import sys

from ..compiler import CompileError
from ..quant import FLOAT_MODES
from ..runtime import ChipError
from ._cli import setup_logging

UNREACHABLE = 3


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="search_qtable.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mlir", help="top.mlir (from model_transform.py)")
    p.add_argument("--dataset", required=True, help="directory of .npz / .npy / image samples")
    p.add_argument("--calibration_table", required=True, help="from run_calibration.py")
    p.add_argument("--chip", default="tpu_edge", help="chip name in chips/ or a target path")
    p.add_argument("--expected_cos", type=float, default=0.99,
                   help="cosine of the outputs against float to reach (default 0.99)")
    p.add_argument("--max_float_layers", type=int,
                   help="at most this many float layers (default: no limit)")
    p.add_argument("--input_num", type=int, default=4,
                   help="dataset samples the search runs (default 4)")
    p.add_argument("--fp_type", default="F16", type=str.upper, choices=FLOAT_MODES,
                   help="mode of the float layers (default F16)")
    p.add_argument("--asymmetric", action="store_true", help="asymmetric INT8")
    fan = p.add_mutually_exclusive_group()
    fan.add_argument("--workers", type=int, default=1, help="local worker processes")
    fan.add_argument("--ray", metavar="ADDRESS",
                     help="run the work on a Ray cluster ('auto', 'ray://host:port', "
                          "or 'local' for a local instance)")
    p.add_argument("--cache_dir", help="float reference cache (default: the table's directory)")
    p.add_argument("--no_cycles", action="store_true", help="skip the cmodel cycle counts")
    p.add_argument("-o", "--output", required=True, help="quantize table to write")
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    from ..quant.search import search_qtable
    try:
        r = search_qtable(args.mlir, args.dataset, args.calibration_table, args.output,
                          chip=args.chip, expected_cos=args.expected_cos,
                          max_float_layers=args.max_float_layers, input_num=args.input_num,
                          fp_type=args.fp_type, asymmetric=args.asymmetric,
                          workers=args.workers, ray_address=args.ray,
                          cache_dir=args.cache_dir, cycles=not args.no_cycles)
    except (CompileError, ChipError, ValueError, OSError) as e:
        print(f"search_qtable.py: error: {str(e).strip().splitlines()[0]}", file=sys.stderr)
        return 1
    if not r.reached:
        print(f"search_qtable.py: error: cos {r.target} is not reachable with "
              f"{len(r.layers) if args.max_float_layers is None else args.max_float_layers} "
              f"float layers at most: the best reached is {r.cosine:.6f} "
              f"(all INT8: {r.int8_cosine:.6f}); report in {r.report}", file=sys.stderr)
        return UNREACHABLE
    names = ", ".join(r.modes) or "none"
    print(f"wrote {r.qtable} and {r.report}: cos {r.cosine:.6f} (all INT8 {r.int8_cosine:.6f}) "
          f"with {len(r.modes)} {args.fp_type} layers ({names}) in {r.seconds:.2f} s")
    if r.int8_cycles is not None:
        print(f"cycles: all INT8 {r.int8_cycles}, with the table {r.mixed_cycles}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
