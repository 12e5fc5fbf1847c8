"""model_deploy wall time, cmodel speed against onnxruntime, cycles against
the roofline bound, on every chip.

    python bench/bench_deploy.py [--model resnet18] [--repeat 3] [--chips tpu_edge,tpu_pro]
    python bench/bench_deploy.py --model resnet18_full --repeat 1   # 224x224, widths 64-512
    python bench/bench_deploy.py --model bert_base_layer --repeat 1 # hidden 768, seq 128
    python bench/bench_deploy.py --model resnet18_full --repeat 1 --quantize F32,INT8

Exports the zoo model, times model_transform and the compile part of deploy
(lowering, address assignment, codegen, bmodel writing), then
(INT8: calibrated on `--calibration_samples` random samples first), then
times the bmodel on the cmodel (functional simulation plus timing model)
and onnxruntime on the same input in this one process. Simulated cycles are
reported against the chip's roofline bound
max(MACs / peak MACs per cycle, weight + input + output bytes / DDR bytes per cycle)
of the model's work (not the identity and 0/1 matrices the backend adds to
move data on the matmul unit, nor the MACs of the matmuls by them),
and against a latency bound for small models: the roofline plus the DDR
latency and GDMA issue of the first load and of the last store, which no
schedule can overlap with compute.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort

from tpuc import runtime as rt
from tpuc.deploy import deploy
from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import zoo
from tpuc.testing.quant import prepare
from tpuc.transform import transform

from _timing import best_of


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet18", choices=sorted([*zoo.ZOO, *zoo.LARGE]))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--chips", default="tpu_edge,tpu_pro")
    p.add_argument("--quantize", default="F32", help="comma-separated modes (F32,F16,BF16,INT8)")
    p.add_argument("--calibration_samples", type=int, default=4)
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        onnx_path = zoo.export(args.model, tmp)
        inputs = make_test_inputs(onnx_path, seed=0)
        np.savez(tmp / "in.npz", **inputs)
        mlir = tmp / f"{args.model}.mlir"
        t_transform, _ = best_of(lambda: transform(args.model, onnx_path, mlir), args.repeat)
        transform(args.model, onnx_path, mlir, test_input=tmp / "in.npz",
                  test_result=tmp / "top.npz")
        modes = args.quantize.upper().split(",")
        quant = (prepare(args.model, tmp / "int8", samples=args.calibration_samples)
                 if "INT8" in modes else None)

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # the cmodel is single-threaded too
        sess = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        t_ort, _ = best_of(lambda: sess.run(None, inputs), args.repeat)

        print(f"{args.model}: model_transform {t_transform * 1e3:.1f} ms, "
              f"onnxruntime {t_ort * 1e3:.2f} ms per inference (1 thread)")
        header = (f"{'mode':<5} {'chip':<10} {'compile ms':>9} {'cmodel ms':>9} {'vs ort':>7} "
                  f"{'cycles':>10} {'roofline':>10} {'bound':>7} {'ratio':>6} "
                  f"{'lat.bound':>10} {'ratio':>6} {'TIU%':>5} {'GDMA%':>5} {'check':>5}")
        print(header)
        for mode in modes:
            for chip in args.chips.split(","):
                bm = tmp / f"{args.model}_{mode}_{chip}.bmodel"
                if mode == "INT8":
                    r = deploy(quant.mlir, quantize=mode, chip=chip, model_path=bm,
                               test_input=quant.test_input, test_reference=quant.reference,
                               calibration_table=quant.table, tolerance=(0.9, 0.5))
                else:
                    r = deploy(mlir, quantize=mode, chip=chip, model_path=bm,
                               test_input=tmp / "in.npz", test_reference=tmp / "top.npz",
                               compare_all=True, tolerance=(0.99, 0.9) if mode != "F32" else (0.99, 0.99))
                model = rt.Model(bm)
                latency_bound = r.roofline.latency_bound
                feeds = {s.name: np.asarray(inputs[s.name], dtype=s.numpy_dtype) for s in model.inputs}
                t_run, _ = best_of(lambda: model.run(feeds), args.repeat)
                print(f"{mode:<5} {chip:<10} {r.compile_seconds * 1e3:9.1f} {t_run * 1e3:9.2f} "
                      f"{t_run / t_ort:6.1f}x "
                      f"{r.cycles:10d} {r.roofline.cycles:10.0f} {r.roofline.bound:>7} "
                      f"{r.roofline_ratio:5.2f}x {latency_bound:10.0f} "
                      f"{r.cycles / latency_bound:5.2f}x {100 * r.tiu_utilization:5.1f} "
                      f"{100 * r.gdma_utilization:5.1f} {'PASS' if r.passed else 'FAIL':>5}")
        print("compile ms: lowering + addresses + codegen + bmodel write; "
              "ratio: simulated cycles / roofline bound, then / latency bound")


if __name__ == "__main__":
    main()
