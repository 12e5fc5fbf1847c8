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

import numpy as np
from pathlib import Path

from ..compare import compare, load_npz
from ..deploy import deploy
from ..transform import transform
from ._cli import add_debug_arg, guarded, print_comparison, print_deploy_stats
from ..calibration.driver import calibrate

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="main_job", description=__doc__)
    p.add_argument("--model", default="mobilenetv2_tiny", help="a model in models/")
    p.add_argument("--chip", action="append", help="chip(s) to deploy to "
                   "(default: tpu_edge and tpu_pro)")
    p.add_argument("--workdir", type=Path, default=REPO / "work")
    p.add_argument("-v", "--verbose", action="store_true", help="print every row")
    add_debug_arg(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    return guarded("main_job", lambda: _run(args), args.debug)


def _run(args: argparse.Namespace) -> int:
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
    ok &= _modes(args, t, test_input, out, chips)
    print("\nmain job:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


def _modes(args, t, test_input: Path, out: Path, chips: list[str]) -> bool:
    """Calibrates on 16 samples, then deploys every mode to every chip and
    prints cycles and accuracy side by side."""
    print(f"\n[{len(chips) + 2}] run_calibration: 16 samples (the test input with noise)")
    rng = np.random.default_rng(0)
    dataset = out / "cali_dataset"
    dataset.mkdir(exist_ok=True)
    base = load_npz(test_input)
    for k in range(16):
        np.savez(dataset / f"{k:02d}.npz", **{
            n: (v + 0.3 * rng.standard_normal(v.shape) * v.std()).astype(v.dtype)
            for n, v in base.items()})
    table = out / f"{args.model}_cali_table"
    c = calibrate(t.mlir, dataset, table, input_num=16, method="kl")
    print(f"    wrote {table} (kl, {c.samples} samples, {c.seconds:.2f} s)")
    ref = load_npz(t.ref_outputs)
    rows, ok = [], True
    for chip in chips:
        for mode, asym in (("F32", False), ("F16", False), ("BF16", False),
                           ("INT8", False), ("INT8", True)):
            label = mode + (" asym" if asym else "")
            r = deploy(t.mlir, mode, chip,
                       out / f"{args.model}_{chip}_{label.replace(' ', '_').lower()}.bmodel",
                       test_input=test_input, test_reference=t.top_outputs,
                       calibration_table=table if mode == "INT8" else None,
                       asymmetric=asym, tolerance=(0.99, 0.9) if mode == "INT8" else (0.999, 0.99))
            cmodel = load_npz(r.model_outputs)
            outs = {k: cmodel[k] for k in t.output_names if k in cmodel}
            final = compare(outs, {k: ref[k] for k in outs})
            cos = min(row.cosine for row in final.rows) if final.rows else float("nan")
            exact = "bit-exact" if not r.int_mismatches else f"{len(r.int_mismatches)} differ"
            rows.append((chip, label, r.cycles, r.roofline_ratio, cos,
                         r.bmodel.stat().st_size, exact))
            ok &= r.passed and final.passed
    print(f"\n    {'chip':9} {'mode':10} {'cycles':>9} {'x roof':>7} {'cos vs ORT':>11} "
          f"{'bmodel B':>9}  cmodel vs Tpu interp (INT8)")
    for chip, label, cyc, ratio, cos, size, exact in rows:
        print(f"    {chip:9} {label:10} {cyc:9d} {ratio:7.2f} {cos:11.6f} {size:9d}  "
              f"{exact if label.startswith('INT8') else '-'}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
