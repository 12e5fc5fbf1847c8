"""The README's main job: the shipped model through the whole flow.

ONNX → top.mlir (compared with onnxruntime, layer by layer) → the later
stages as they exist, each compared with the one before it. Outputs go to
work/<model>/ at the repository root (or --workdir).
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from ..transform import transform
from ._report import print_comparison

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="main_job", description=__doc__)
    p.add_argument("--model", default="mobilenetv2_tiny", help="a model in models/")
    p.add_argument("--workdir", type=Path, default=REPO / "work")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)

    model = REPO / "models" / f"{args.model}.onnx"
    test_input = REPO / "models" / f"{args.model}_input.npz"
    out = args.workdir / args.model
    out.mkdir(parents=True, exist_ok=True)

    print(f"[1] model_transform: {model.name} -> top.mlir")
    t = transform(args.model, model, out / f"{args.model}.mlir",
                  test_input=test_input,
                  test_result=out / f"{args.model}_top_outputs.npz")
    print(f"    {t.mlir} ({t.seconds:.2f} s)")
    print_comparison(t.comparison, "Top interpreter", "onnxruntime", verbose=True)
    return 0 if t.comparison.passed else 1


if __name__ == "__main__":
    sys.exit(main())
