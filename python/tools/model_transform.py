"""model_transform.py: ONNX model → top.mlir (+ weights, reference tensors)."""
from __future__ import annotations

import argparse
import ast
import sys

from ..compiler import CompileError
from ..frontend.errors import FrontendError
from ..transform import transform
from ._cli import add_compare_args, names_list, print_comparison, setup_logging


def _shapes(text: str) -> list[list[int]]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise argparse.ArgumentTypeError(f"bad shapes '{text}' (e.g. [[1,3,224,224]])")
    if value and all(isinstance(v, int) for v in value):
        value = [value]
    if not (isinstance(value, list) and all(
            isinstance(s, list) and all(isinstance(d, int) for d in s) for s in value)):
        raise argparse.ArgumentTypeError(f"bad shapes '{text}' (e.g. [[1,3,224,224]])")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="model_transform.py", description=__doc__)
    p.add_argument("--model_name", required=True, help="name used for output files")
    p.add_argument("--model_def", required=True, help="the .onnx model")
    p.add_argument("--input_shapes", type=_shapes, help="e.g. [[1,3,224,224]]")
    p.add_argument("--test_input", help=".npz (keys = input names) or .npy")
    p.add_argument("--test_result", help="write the Top interpreter's tensors here")
    p.add_argument("--mlir", required=True, help="output top.mlir")
    p.add_argument("--output_names", type=names_list, help="comma-separated outputs")
    add_compare_args(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    try:
        result = transform(args.model_name, args.model_def, args.mlir,
                           input_shapes=args.input_shapes, test_input=args.test_input,
                           test_result=args.test_result, output_names=args.output_names,
                           excepts=tuple(args.excepts), tolerance=args.tolerance)
    except (FrontendError, CompileError, ValueError, FileNotFoundError) as e:
        print(f"model_transform.py: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {result.mlir} and {result.weight_file} in {result.seconds:.2f} s")
    if result.comparison is not None:
        print_comparison(result.comparison, "Top interpreter", "onnxruntime",
                         verbose=args.verbose)
        return 0 if result.comparison.passed else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
