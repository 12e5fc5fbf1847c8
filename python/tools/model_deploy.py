"""model_deploy.py: top.mlir → tpu.mlir → .bmodel for a quantize mode and chip.

    model_deploy.py --mlir resnet18.mlir --quantize F32 --chip tpu_edge \\
        --model resnet18_f32.bmodel --test_input in.npz \\
        --test_reference resnet18_top_outputs.npz [--compare_all]

Validates the Tpu interpreter against the reference and the cmodel against
the Tpu interpreter, then prints simulated cycles, engine utilisation and the
chip's roofline bound.
"""
from __future__ import annotations

import argparse
import sys

from ..deploy import LAYER_GROUP_DEFAULT, MODES, deploy
from ._cli import (add_compare_args, add_debug_arg, add_progress_arg, guarded,
                   print_comparison, print_deploy_stats, setup_logging, setup_progress)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="model_deploy.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mlir", required=True, help="top.mlir from model_transform.py")
    p.add_argument("--quantize", default="F32", type=str.upper,
                   help=f"quantization mode ({', '.join(MODES)})")
    p.add_argument("--calibration_table",
                   help="calibration table from run_calibration.py (INT8)")
    p.add_argument("--asymmetric", action="store_true",
                   help="INT8 activations with zero points (default: symmetric)")
    p.add_argument("--quantize_table",
                   help="per-op modes, 'op_name MODE' per line, overriding --quantize")
    p.add_argument("--chip", default="tpu_edge",
                   help="chip name in chips/ or a target description path")
    p.add_argument("--model", required=True, help="output .bmodel")
    p.add_argument("--test_input", help=".npz (keys = input names) or .npy")
    p.add_argument("--test_reference", help="reference tensors (.npz from model_transform)")
    p.add_argument("--compare_all", action="store_true",
                   help="compare every tensor of the cmodel, not only the outputs")
    p.add_argument("--layer_group", dest="layer_group", action="store_true",
                   help="keep runs of ops in local memory (tpu-layer-group); their "
                        "inner tensors are not stored, so they cannot be dumped")
    p.add_argument("--disable_layer_group", dest="layer_group", action="store_false",
                   help="compile every op on its own so every tensor reaches DDR "
                        "and can be dumped (slower; for hunting accuracy problems)")
    p.set_defaults(layer_group=LAYER_GROUP_DEFAULT)
    add_compare_args(p)
    add_progress_arg(p)
    add_debug_arg(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    setup_progress(args)
    return guarded("model_deploy.py", lambda: _run(args), args.debug)


def _run(args: argparse.Namespace) -> int:
    r = deploy(args.mlir, quantize=args.quantize, chip=args.chip,
               model_path=args.model, test_input=args.test_input,
               test_reference=args.test_reference, compare_all=args.compare_all,
               tolerance=args.tolerance, excepts=tuple(args.excepts),
               layer_group=args.layer_group,
               calibration_table=args.calibration_table,
               asymmetric=args.asymmetric, quantize_table=args.quantize_table)
    print(f"wrote {r.tpu_mlir}, {r.final_mlir} and {r.bmodel} ({r.compile_seconds:.2f} s)")
    if r.tpu_comparison is not None:
        print_comparison(r.tpu_comparison, "Tpu interpreter", "reference", args.verbose)
    if r.model_comparison is not None:
        print_comparison(r.model_comparison, "cmodel", "Tpu interpreter", args.verbose)
    if r.not_dumped:
        print(f"{len(r.not_dumped)} tensors stay in local memory inside layer groups and "
              f"were not compared (--disable_layer_group dumps every layer): "
              f"{', '.join(r.not_dumped[:5])}{', ...' if len(r.not_dumped) > 5 else ''}")
    if r.int_mismatches:
        print(f"cmodel differs from the Tpu interpreter on {len(r.int_mismatches)} INT8 "
              f"tensors (must be bit-exact): {', '.join(r.int_mismatches[:5])}")
    print_deploy_stats(r)
    return 0 if r.passed else 1


if __name__ == "__main__":
    sys.exit(main())
