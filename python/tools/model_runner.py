"""Run a compiled model on the tpuc chip simulator, or an .mlir on the
interpreter of its dialect (Top or Tpu).

    model_runner.py --model net.bmodel --input in.npz --output out.npz \
        [--dump_all_tensors] [--trace trace.json]
    model_runner.py --model net_tpu.mlir --input in.npz --output out.npz
    model_runner.py --model net.mlir --input cat.jpg --output out.npz

Inputs are read from an .npz whose keys are the network's input names; an
.mlir also takes an .npy or an image file (through the preprocessing
model_transform.py recorded in it).
Outputs (and with --dump_all_tensors every named intermediate tensor) are
written to the output .npz. bf16 tensors are stored as float32 in the .npz.
Prints the cycle counts of the timing model. Exits non-zero with a one-line
error on bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from ._cli import add_debug_arg, add_progress_arg, guarded, setup_progress


def _npz_safe(arr: np.ndarray) -> np.ndarray:
    # npz cannot describe ml_dtypes' bfloat16 portably.
    return arr.astype(np.float32) if arr.dtype.name == "bfloat16" else arr


def run_model(model: str, input_npz: str, output_npz: Optional[str] = None,
              dump_all_tensors: bool = False, trace: Optional[str] = None,
              net=0, input_layout: str = "nchw"):
    """Library entry point: run ``model`` on the arrays in ``input_npz``.

    Returns the :class:`tpuc.runtime.RunResult`; writes ``output_npz`` when
    given. Every input must have the model's shape (dims of 1 aside); with
    ``input_layout="nhwc"`` 4-D arrays are transposed to NCHW first.
    """
    from tpuc import runtime
    from tpuc.transform import check_input_shape, load_inputs

    path = Path(model)
    if path.suffix not in (".bmodel", ".mlir"):
        raise ValueError(f"unsupported model file {model!r} (expected .bmodel or .mlir)")
    if not Path(input_npz).is_file():
        raise FileNotFoundError(f"input file not found: {input_npz}")
    if path.suffix == ".mlir":
        return _run_mlir(path, input_npz, output_npz, dump_all_tensors)
    m = runtime.Model(path)
    specs = m.input_specs(net)
    arrays = load_inputs(input_npz, [s.name for s in specs])
    if input_layout == "nhwc":
        arrays = {k: v.transpose(0, 3, 1, 2) if v.ndim == 4 else v for k, v in arrays.items()}
    for s in specs:
        check_input_shape(arrays[s.name], s.name, s.shape, input_npz)
    names = [s.name for s in specs]
    result = m.run({n: arrays[n] for n in names}, net=net, dump_all_tensors=dump_all_tensors)
    if trace:
        m.write_trace(trace)
    if output_npz:
        out = {k: _npz_safe(v) for k, v in result.outputs.items()}
        if dump_all_tensors:
            for k, v in result.tensors.items():
                out.setdefault(k, _npz_safe(v))
        np.savez(output_npz, **out)
    return result


def _run_mlir(path: Path, input_file: str, output_npz: Optional[str],
              dump_all_tensors: bool) -> Dict[str, np.ndarray]:
    """Interprets an .mlir on an .npz / .npy / image input (images through
    the module's recorded preprocessing); returns (and writes) its tensors."""
    from tpuc import compiler
    from tpuc.preprocess import Preprocess, module_inputs
    from tpuc.transform import load_inputs

    ctx = compiler.make_context()
    module = compiler.load_module(path, ctx)
    arrays = load_inputs(input_file, [n for n, _ in module_inputs(module)],
                         Preprocess.from_module(module))
    with ctx:
        tensors = compiler.interpret(module, arrays, all_tensors=dump_all_tensors)
    if output_npz:
        np.savez(output_npz, **tensors)
    return tensors


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="model_runner", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="compiled .bmodel, or an .mlir to interpret")
    parser.add_argument("--input", required=True,
                        help=".npz with one array per input name, or an .npy for one input")
    parser.add_argument("--output", help=".npz to write outputs to")
    parser.add_argument("--dump_all_tensors", action="store_true",
                        help="also store every named intermediate tensor in the output")
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace JSON here")
    parser.add_argument("--net", default="0", help="network name or index (default 0)")
    parser.add_argument("--input_layout", choices=["nchw", "nhwc"], default="nchw",
                        help="layout of 4-D input arrays (default nchw, the model's)")
    add_debug_arg(parser)
    add_progress_arg(parser)
    args = parser.parse_args(argv)
    setup_progress(args)
    return guarded("model_runner", lambda: _run(args), args.debug)


def _run(args: argparse.Namespace) -> int:
    net = int(args.net) if args.net.isdigit() else args.net
    result = run_model(args.model, args.input, args.output, args.dump_all_tensors,
                       args.trace, net, args.input_layout)
    if hasattr(result, "stats"):
        print(result.stats.summary())
    if args.output:
        print(f"outputs written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
