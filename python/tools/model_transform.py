"""model_transform.py: an ONNX model (.onnx) or a torch.export program
(.pt2) → top.mlir (+ weights, reference tensors from onnxruntime or
PyTorch eager)."""
from __future__ import annotations

import argparse
import ast
import sys

from ..frontend.onnx_importer import check_onnx
from ..preprocess import CHANNEL_FORMATS, PIXEL_FORMATS, Preprocess
from ..transform import transform
from ._cli import (add_compare_args, add_debug_arg, add_progress_arg, guarded, names_list,
                   print_comparison, setup_logging, setup_progress)


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


def _numbers(kind):
    def parse(text: str):
        try:
            return [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad list '{text}' (e.g. 1,2,3)") from None
    return parse


PREPROCESS_FLAGS = ("mean", "scale", "pixel_format", "channel_format", "resize_dims")


def preprocess_from_args(args: argparse.Namespace) -> Preprocess | None:
    """The Preprocess the flags ask for; None when no flag is given."""
    given = {k: getattr(args, k) for k in PREPROCESS_FLAGS if getattr(args, k) is not None}
    if not given and not args.keep_aspect_ratio:
        return None
    return Preprocess(**given, keep_aspect_ratio=args.keep_aspect_ratio)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="model_transform.py", description=__doc__)
    p.add_argument("--model_name", help="name used for output files (required unless --check)")
    p.add_argument("--model_def", required=True,
                   help="the model: .onnx (ONNX) or .pt2 (a torch.export program)")
    p.add_argument("--input_shapes", type=_shapes, help="e.g. [[1,3,224,224]]")
    p.add_argument("--test_input", help=".npz (keys = input names), .npy or an image file")
    p.add_argument("--test_result", help="write the Top interpreter's tensors here")
    p.add_argument("--mlir", help="output top.mlir (required unless --check)")
    p.add_argument("--check", action="store_true",
                   help="only list the ops and attributes tpuc cannot compile (with counts "
                        "and node names); exit 1 if there are any")
    p.add_argument("--output_names", type=names_list, help="comma-separated outputs")
    g = p.add_argument_group("preprocessing (recorded in the top.mlir, applied to image inputs)")
    g.add_argument("--mean", type=_numbers(float), help="per-channel mean, e.g. 123.675,116.28,103.53")
    g.add_argument("--scale", type=_numbers(float), help="per-channel scale, e.g. 0.0171,0.0175,0.0174")
    g.add_argument("--pixel_format", choices=list(PIXEL_FORMATS), help="default rgb")
    g.add_argument("--channel_format", choices=list(CHANNEL_FORMATS), help="default nchw")
    g.add_argument("--resize_dims", type=_numbers(int),
                   help="h,w to resize images to before the center crop (default: the input's)")
    g.add_argument("--keep_aspect_ratio", action="store_true",
                   help="resize keeping the aspect ratio, pad with zeros")
    add_compare_args(p)
    add_progress_arg(p)
    add_debug_arg(p)
    return p


def report_check(model_def: str, problems) -> int:
    """Prints the problems grouped by op type and reason; 1 if any."""
    if not problems:
        print(f"{model_def}: every node can be compiled")
        return 0
    groups: dict[tuple[str, str], list[str]] = {}
    for e in problems:
        groups.setdefault((e.op or "model", e.reason), []).append(e.node)
    print(f"{model_def}: {len(problems)} node(s) tpuc cannot compile:")
    for (op, reason), nodes in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        named = [n for n in nodes if n]
        shown = ", ".join(named[:5]) + (f", ... ({len(named) - 5} more)" if len(named) > 5 else "")
        print(f"  {op} x{len(nodes)}: {reason}" + (f"  [{shown}]" if named else ""))
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.verbose)
    setup_progress(args)
    if args.check:
        return report_check(args.model_def, check_onnx(args.model_def, args.input_shapes))
    for flag in ("model_name", "mlir"):
        if getattr(args, flag) is None:
            parser.error(f"the following arguments are required: --{flag}")
    return guarded("model_transform.py", lambda: _run(args), args.debug)


def _run(args: argparse.Namespace) -> int:
    result = transform(args.model_name, args.model_def, args.mlir,
                       input_shapes=args.input_shapes, test_input=args.test_input,
                       test_result=args.test_result, output_names=args.output_names,
                       excepts=tuple(args.excepts), tolerance=args.tolerance,
                       preprocess=preprocess_from_args(args))
    print(f"wrote {result.mlir} and {result.weight_file} in {result.seconds:.2f} s")
    if result.comparison is not None:
        reference = "PyTorch" if str(args.model_def).endswith(".pt2") else "onnxruntime"
        print_comparison(result.comparison, "Top interpreter", reference,
                         verbose=args.verbose)
        return 0 if result.comparison.passed else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
