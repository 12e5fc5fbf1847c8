"""model_transform wall time and Top-interpreter speed against onnxruntime.

    python bench/bench_transform.py [--model resnet18] [--repeat 5]

Exports the zoo model, times model_transform end to end (import, passes,
weights, reference run), then times the Top interpreter and onnxruntime on
the same input in this one process and prints their ratio.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort

from tpuc import compiler
from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import zoo
from tpuc.transform import transform

from _timing import best_of


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet18", choices=sorted(zoo.ZOO))
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        onnx_path = zoo.export(args.model, tmp)
        inputs = make_test_inputs(onnx_path, seed=0)
        np.savez(tmp / "in.npz", **inputs)

        plain, _ = best_of(lambda: transform(args.model, onnx_path, tmp / "a.mlir"), args.repeat)
        checked, _ = best_of(lambda: transform(
            args.model, onnx_path, tmp / "b.mlir", test_input=tmp / "in.npz",
            test_result=tmp / "top.npz"), max(1, args.repeat // 2))

        ctx = compiler.make_context()
        module = compiler.load_module(tmp / "a.mlir", ctx)
        with ctx:
            top_t, top_med = best_of(lambda: compiler.interpret(module, inputs), args.repeat)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # the interpreter is single-threaded too
        sess = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        ort_t, ort_med = best_of(lambda: sess.run(None, inputs), args.repeat)

    print(f"model: {args.model} (zoo), input {[v.shape for v in inputs.values()]}")
    print(f"model_transform (import + top-shape-infer + canonicalize + save): {plain * 1e3:8.1f} ms")
    print(f"model_transform with reference run and comparison:               {checked * 1e3:8.1f} ms")
    print(f"Top interpreter inference: best {top_t * 1e3:8.2f} ms (median {top_med * 1e3:.2f})")
    print(f"onnxruntime (1 thread):    best {ort_t * 1e3:8.2f} ms (median {ort_med * 1e3:.2f})")
    print(f"ratio Top interpreter / onnxruntime: {top_t / ort_t:.1f}x")


if __name__ == "__main__":
    main()
