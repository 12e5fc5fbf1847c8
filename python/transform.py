"""model_transform: a framework model → top.mlir, weights and references.

The first stage of the flow. Writes, next to the requested `.mlir`:
`<name>_origin.mlir` (as imported), the final top.mlir (after shape inference
and canonicalization), `<name>_top_weights.npz`, and with test inputs,
`<name>_ref_outputs.npz` (onnxruntime, every tensor) and the Top
interpreter's tensors, compared against the reference.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onnx.helper import tensor_dtype_to_np_dtype

from . import compiler
from .compare import CompareResult, Tolerance, compare, load_npz
from .frontend.onnx_importer import import_onnx, write_top
from .frontend.onnx_reference import run_reference
from .preprocess import Preprocess, is_image, module_inputs
from .progress import Stages

log = logging.getLogger(__name__)

TOP_PIPELINE = "top-transform-pipeline"  # registered in C++ (Pipelines.cpp)


@dataclass
class TransformResult:
    mlir: Path
    weight_file: Path
    output_names: list[str]
    ref_outputs: Path | None = None
    top_outputs: Path | None = None
    comparison: CompareResult | None = None
    seconds: float = 0.0


def load_inputs(path: str | Path, input_names: list[str],
                preprocess: Preprocess | None = None,
                shapes: dict[str, tuple[int, ...]] | None = None) -> dict[str, np.ndarray]:
    """Inputs from an .npz (keyed by input name), an .npy (one input) or an
    image file (one input, through `preprocess`, which must carry the input's
    shape: e.g. `Preprocess.from_module`). Arrays pass through untouched.

    Strict: an archive holding arrays that are not inputs is rejected, and
    with `shapes` every array must have its input's shape up to dims of 1
    (a same-sized array in another layout, e.g. NHWC, is an error)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such test input file")
    if path.suffix.lower() == ".npy" or is_image(path):
        if len(input_names) != 1:
            raise ValueError(f"{path}: gives one input but the model has "
                             f"{len(input_names)}: {input_names}")
        if path.suffix.lower() == ".npy":
            arrays = {input_names[0]: _load_npy(path)}
        elif preprocess is None:
            raise ValueError(f"{path}: an image input needs the model's preprocessing")
        else:
            arrays = {input_names[0]: preprocess.load(path)}
    else:
        data = load_npz(path)
        missing = [n for n in input_names if n not in data]
        if missing:
            raise ValueError(f"{path}: has no array named '{missing[0]}' "
                             f"(the model's inputs are {input_names})")
        extra = [n for n in data if n not in input_names]
        if extra:
            raise ValueError(f"{path}: array '{extra[0]}' is not an input of the model "
                             f"(its inputs are {input_names})")
        arrays = {n: data[n] for n in input_names}
    for name, shape in (shapes or {}).items():
        check_input_shape(arrays[name], name, shape, path)
    return arrays


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - numpy raises many kinds on damaged files
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ValueError(f"{path}: unreadable .npy file ({reason})") from None


def check_input_shape(arr: np.ndarray, name: str, shape, source) -> None:
    """Raises unless `arr` has `shape`, dims of 1 aside."""
    got = tuple(int(d) for d in np.shape(arr))
    want = tuple(int(d) for d in shape)
    if got == want or [d for d in got if d != 1] == [d for d in want if d != 1]:
        return
    hint = ""
    if len(got) == 4 and len(want) == 4 and got == (want[0], want[2], want[3], want[1]):
        hint = " (an NHWC array? the model takes NCHW; model_runner.py converts with --input_layout nhwc)"
    raise ValueError(f"{source}: input '{name}' has shape {list(got)} but the model "
                     f"takes {list(want)}{hint}")


def name_outputs(module, output_names: list[str]) -> None:
    """Gives each op the model returns the name of the graph output it is:
    canonicalization may have removed the op that carried it (a Reshape to
    the same shape). Weights and inputs keep their own names."""
    from .mlir import ir
    fn = next(op for op in module.body.operations if op.operation.name == "func.func")
    ret = fn.regions[0].blocks[0].operations[-1]
    seen = set()
    for value, name in zip(ret.operands, output_names):
        op = value.owner
        if not isinstance(op, ir.OpView) or op.operation.name in ("top.Input", "top.Weight"):
            continue
        if id(op) in seen:  # one op, two output names: keep the first
            continue
        seen.add(id(op))
        op.location = ir.Location.name(name, context=module.context)


def transform(model_name: str, model_def: str | Path, mlir: str | Path,
              input_shapes: list[list[int]] | None = None,
              test_input: str | Path | None = None,
              test_result: str | Path | None = None,
              output_names: list[str] | None = None,
              excepts: tuple[str, ...] = (),
              tolerance: Tolerance = Tolerance(0.99, 0.99),
              preprocess: Preprocess | None = None) -> TransformResult:
    """Imports `model_def`; `preprocess` (checked against the first input)
    is recorded in the top.mlir and applied to an image `test_input`."""
    if Path(model_def).suffix == ".pt2":  # a torch.export program: the FX importer
        if preprocess is not None or output_names:
            raise ValueError(f"{model_def}: preprocessing and --output_names apply to "
                             "ONNX models only")
        from .frontend.fx.export import transform_pt2
        return transform_pt2(model_name, model_def, mlir, input_shapes, test_input,
                             test_result, excepts, tolerance)
    start = time.perf_counter()
    mlir = Path(mlir)
    out_dir = mlir.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    weight_file = out_dir / f"{model_name}_top_weights.npz"

    stages = Stages(f"transform {model_name}",
                    2 + (test_input is not None) + 2 * (test_result is not None))
    with stages:
        result = _transform_onnx(stages, model_name, model_def, mlir, weight_file,
                                 input_shapes, test_input, test_result, output_names,
                                 excepts, tolerance, preprocess)
    result.seconds = time.perf_counter() - start
    return result


def _transform_onnx(stages: Stages, model_name, model_def, mlir: Path, weight_file: Path,
                    input_shapes, test_input, test_result, output_names, excepts,
                    tolerance, preprocess) -> TransformResult:
    out_dir = mlir.parent
    ctx = compiler.make_context()
    with stages.step("import"):
        imported = import_onnx(model_def, model_name, ctx, input_shapes, output_names)
    module = imported.module
    first_shape = module_inputs(module)[0][1] if imported.input_names else None
    if preprocess is not None:
        preprocess.check_shape(first_shape)
        preprocess = preprocess.bind(first_shape)
        preprocess.record(module)
    with stages.step("top passes"):
        write_top(imported, weight_file)
        with ctx:
            compiler.save_module(module, out_dir / f"{model_name}_origin.mlir")
            compiler.run_pipeline(module, TOP_PIPELINE)
            name_outputs(module, imported.output_names)
            # Canonicalization may have made new weights (e.g. BatchNorm folded
            # into Conv): the weight file keeps exactly what the module uses.
            compiler.save_weights(module, weight_file)
            compiler.save_module(module, mlir)
    result = TransformResult(mlir=mlir, weight_file=weight_file,
                             output_names=imported.output_names)
    log.info("wrote %s and %s", mlir, weight_file)

    if test_input is not None:
        with ctx:
            shapes = dict(module_inputs(module))
        inputs = load_inputs(test_input, imported.input_names,
                             preprocess or Preprocess(input_shape=first_shape), shapes)
        # onnxruntime wants the model's own input dtypes (e.g. int64 indices).
        feeds = {vi.name: inputs[vi.name].astype(
                     tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
                 for vi in imported.onnx_model.graph.input if vi.name in inputs}
        with stages.step("onnxruntime reference"):
            ref = run_reference(imported.onnx_model, feeds, all_tensors=True,
                                name=str(model_def))
        result.ref_outputs = out_dir / f"{model_name}_ref_outputs.npz"
        np.savez(result.ref_outputs, **ref)
        if test_result is not None:
            with stages.step("Top interpreter"), ctx:
                tensors = compiler.interpret(module, inputs, all_tensors=True)
            result.top_outputs = Path(test_result)
            np.savez(result.top_outputs, **tensors)
            with stages.step("compare"):
                result.comparison = compare(tensors, ref, tolerance=tolerance,
                                            excepts=excepts)
    elif test_result is not None:
        raise ValueError("--test_result needs --test_input")
    return result
