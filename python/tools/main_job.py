"""The README's main job: the shipped model through the whole flow.

ONNX → top.mlir (every tensor compared with onnxruntime) → tpu.mlir (compared
with the Top interpreter) → bmodel for a chip → run on the cmodel (every
tensor compared with the Tpu interpreter, outputs with onnxruntime), with
simulated cycles against the chip's roofline. Outputs go to work/<model>/.
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from ..compare import compare, load_npz
from ..deploy import deploy
from ..transform import transform
from ._cli import print_comparison, print_deploy_stats

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="main_job", description=__doc__)
    p.add_argument("--model", default="mobilenetv2_tiny", help="a model in models/")
    p.add_argument("--chip", action="append", help="chip(s) to deploy to "
                   "(default: tpu_edge and tpu_pro)")
    p.add_argument("--workdir", type=Path, default=REPO / "work")
    p.add_argument("-v", "--verbose", action="store_true", help="print every row")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    chips = args.chip or ["tpu_edge", "tpu_pro"]

    model = REPO / "models" / f"{args.model}.onnx"
    test_input = REPO / "models" / f"{args.model}_input.npz"
    out = args.workdir / args.model
    out.mkdir(parents=True, exist_ok=True)
    ok = True

    print(f"[1] model_transform: {model.name} -> top.mlir")
    t = transform(args.model, model, out / f"{args.model}.mlir", test_input=test_input,
                  test_result=out / f"{args.model}_top_outputs.npz")
    print(f"    wrote {t.mlir} ({t.seconds:.2f} s)")
    print_comparison(t.comparison, "Top interpreter", "onnxruntime", verbose=True)
    ok &= t.comparison.passed

    for step, chip in enumerate(chips, start=2):
        print(f"\n[{step}] model_deploy: F32 for {chip} -> bmodel -> cmodel")
        # Per-layer code stores every layer's tensor, so the cmodel can be
        # checked layer by layer; layer groups are the fast code users ship.
        debug = deploy(t.mlir, "F32", chip, out / f"{args.model}_{chip}_f32_layers.bmodel",
                       test_input=test_input, test_reference=t.top_outputs,
                       compare_all=True, layer_group=False)
        print_comparison(debug.tpu_comparison, "Tpu interpreter", "Top interpreter",
                         verbose=args.verbose)
        print_comparison(debug.model_comparison, "cmodel (per-layer code)",
                         "Tpu interpreter", verbose=True)
        r = deploy(t.mlir, "F32", chip, out / f"{args.model}_{chip}_f32.bmodel",
                   test_input=test_input, test_reference=t.top_outputs, compare_all=True)
        print(f"    wrote {r.bmodel} with layer groups ({1e3 * r.compile_seconds:.1f} ms); "
              f"cmodel ran in {1e3 * r.cmodel_seconds:.1f} ms")
        # The end-to-end check: the chip's outputs against onnxruntime's.
        cmodel, ref = load_npz(r.model_outputs), load_npz(t.ref_outputs)
        outputs = {k: cmodel[k] for k in t.output_names if k in cmodel}
        final = compare(outputs, {k: ref[k] for k in outputs})
        print_comparison(final, "cmodel outputs (layer groups)", "onnxruntime", verbose=True)
        print(f"    per-layer code: {debug.cycles} cycles, "
              f"{debug.roofline_ratio:.2f}x the roofline bound")
        print_deploy_stats(r)
        ok &= debug.passed and r.passed and final.passed and bool(outputs)
    print("\nmain job:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
