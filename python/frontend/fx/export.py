"""model_transform for `torch.export` programs (`.pt2`): the same FX importer.

The program is decomposed with the backend's table (core ATen minus what
Top does natively); parameters, buffers and lifted constants become
weights, user inputs the function's arguments. With a test input, the
reference outputs come from running the program in PyTorch, keyed by the
names of the Top ops that return them.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from ... import compiler
from ...compare import Tolerance, compare
from ..errors import FrontendError
from ..top_builder import save_top
from .importer import import_graph

log = logging.getLogger(__name__)


def _decompositions():
    from ...dynamo.backend import decompositions  # the backend's table, one copy
    return decompositions()


def load_program(path: str | Path) -> ExportedProgram:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        ep = torch.export.load(str(path))
    except Exception as e:  # torch raises many kinds for a bad archive
        raise FrontendError(f"not a torch.export program: {e}", model=str(path)) from None
    return ep.run_decompositions(_decompositions())


def program_constants(ep: ExportedProgram) -> dict[str, torch.Tensor]:
    """Placeholder name → tensor for every input that is not a user input."""
    out = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            continue
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            value = ep.state_dict.get(spec.target)
            if value is None:  # non-persistent buffers live with the constants
                value = ep.constants.get(spec.target)
        else:
            value = ep.constants.get(spec.target)
        if not isinstance(value, torch.Tensor):
            raise FrontendError(f"input '{spec.arg.name}' ({spec.kind.name}) is not a tensor")
        out[spec.arg.name] = value
    return out


def transform_pt2(model_name: str, model_def: str | Path, mlir: str | Path,
                  input_shapes: list[list[int]] | None = None,
                  test_input: str | Path | None = None,
                  test_result: str | Path | None = None,
                  excepts: tuple[str, ...] = (),
                  tolerance: Tolerance = Tolerance(0.99, 0.99)):
    """`tpuc.transform.transform` for a `.pt2`; returns its TransformResult."""
    from ...transform import TOP_PIPELINE, TransformResult, load_inputs

    start = time.perf_counter()
    mlir = Path(mlir)
    out_dir = mlir.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    ep = load_program(model_def)
    constants = program_constants(ep)
    user = [s.arg.name for s in ep.graph_signature.input_specs
            if s.kind == InputKind.USER_INPUT]
    shapes = [list(n.meta["val"].shape) for n in ep.graph_module.graph.nodes
              if n.op == "placeholder" and n.name in user]
    if input_shapes and [list(s) for s in input_shapes] != shapes:
        raise ValueError(f"{model_def}: --input_shapes {input_shapes} differ from the "
                         f"exported shapes {shapes} (export again to change them)")

    ctx = compiler.make_context()
    imported = import_graph(ep.graph_module, ctx, model_name, constants, source=str(model_def))
    if any(o.kind != "result" for o in imported.outputs):
        raise FrontendError("an output is an input or a constant (nothing to compile)",
                            model=str(model_def))
    save_top(imported.module, imported.weights, out_dir, model_name, mlir)
    result = TransformResult(mlir=mlir, weight_file=out_dir / f"{model_name}_top_weights.npz",
                             output_names=imported.result_names)
    log.info("wrote %s and %s", mlir, result.weight_file)

    if test_input is not None:
        inputs = load_inputs(test_input, imported.input_names)
        args = [torch.from_numpy(np.asarray(inputs[n])).to(n_meta.dtype)
                for n, n_meta in zip(imported.input_names,
                                     (p.meta["val"] for p in ep.graph_module.graph.nodes
                                      if p.op == "placeholder" and p.name in user))]
        with torch.no_grad():
            outs = ep.module()(*args)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        ref = {imported.result_names[o.index]: t.detach().numpy()
               for o, t in zip(imported.outputs, outs)}
        result.ref_outputs = out_dir / f"{model_name}_ref_outputs.npz"
        np.savez(result.ref_outputs, **ref)
        if test_result is not None:
            with ctx:
                tensors = compiler.interpret(imported.module, inputs, all_tensors=True)
            result.top_outputs = Path(test_result)
            np.savez(result.top_outputs, **tensors)
            result.comparison = compare(tensors, ref, tolerance=tolerance, excepts=excepts)
    elif test_result is not None:
        raise ValueError("--test_result needs --test_input")
    result.seconds = time.perf_counter() - start
    return result
