"""Loads an ONNX model and makes it static and simple enough to import.

Checks the opset, applies input shape overrides, turns Constant nodes into
initializers, folds every node whose inputs are all constant (evaluated by
ONNX's own reference implementation) and runs ONNX shape inference until
every tensor has a static shape.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator

from .errors import FrontendError

log = logging.getLogger(__name__)

MIN_OPSET, MAX_OPSET = 13, 21

# Never folded: folding them would bake randomness or lose tensor names that
# users compare against.
_NO_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike",
            "RandomUniformLike", "Multinomial", "Bernoulli"}


def load_model(path: str | Path) -> onnx.ModelProto:
    path = str(path)
    if not Path(path).is_file():
        raise FrontendError("no such file", model=path)
    try:
        model = onnx.load(path)
    except (DecodeError, ValueError, OSError, onnx.checker.ValidationError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise FrontendError(f"not a valid ONNX file ({reason})", model=path) from None
    if not model.graph.node:
        raise FrontendError("not a valid ONNX file (graph has no nodes)",
                            model=path)
    return model


# Bounds on an input's static shape, far above any model this toolchain
# compiles, so that a corrupt dim fails here rather than as an overflow later.
MAX_DIM, MAX_ELEMENTS = (1 << 31) - 1, 1 << 36

_NUMERIC = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
            onnx.TensorProto.DOUBLE, onnx.TensorProto.INT8, onnx.TensorProto.UINT8,
            onnx.TensorProto.INT16, onnx.TensorProto.UINT16, onnx.TensorProto.INT32,
            onnx.TensorProto.UINT32, onnx.TensorProto.INT64, onnx.TensorProto.UINT64,
            onnx.TensorProto.BOOL}


def check_structure(model: onnx.ModelProto, name: str, opset: int) -> None:
    """What must hold before anything runs the model: a known IR version,
    unique output names, attributes the op's schema knows with the schema's
    types, and numeric inputs."""
    if not 3 <= model.ir_version <= onnx.IR_VERSION:
        raise FrontendError(f"IR version {model.ir_version} is not supported "
                            f"(this onnx reads 3 to {onnx.IR_VERSION})", model=name)
    seen: set[str] = set()
    for o in model.graph.output:
        if o.name in seen:
            raise FrontendError(f"graph output '{o.name}' is listed twice", model=name)
        seen.add(o.name)
    produced: set[str] = set()
    for node in model.graph.node:
        for out in node.output:
            if out and out in produced:
                raise FrontendError(f"tensor '{out}' is produced twice", model=name,
                                    node=node.name, op=node.op_type)
            produced.add(out)
        if node.domain not in ("", "ai.onnx"):
            continue
        try:
            schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
            latest = onnx.defs.get_schema(node.op_type, node.domain)
        except onnx.defs.SchemaError:
            continue  # unknown ops are reported by the importer
        for a in node.attribute:
            # An attribute of a later version of the op is the importer's to judge.
            want = schema.attributes.get(a.name) or latest.attributes.get(a.name)
            if want is None:
                raise FrontendError(f"unknown attribute '{a.name}'", model=name,
                                    node=node.name, op=node.op_type)
            if a.type != want.type:
                raise FrontendError(
                    f"attribute '{a.name}' is {onnx.AttributeProto.AttributeType.Name(a.type)},"
                    f" the op takes {onnx.AttributeProto.AttributeType.Name(want.type)}",
                    model=name, node=node.name, op=node.op_type)


def check_inputs(model: onnx.ModelProto, name: str) -> None:
    """Inputs are numeric tensors with positive, bounded static dims."""
    for vi in graph_inputs(model):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or t.elem_type not in _NUMERIC:
            kind = (onnx.TensorProto.DataType.Name(t.elem_type)
                    if vi.type.HasField("tensor_type") else vi.type.WhichOneof("value"))
            raise FrontendError(f"input '{vi.name}' is of type {kind}; only numeric "
                                f"tensors are supported", model=name)
        dims = _static_dims(vi) or []
        if any(d <= 0 or d > MAX_DIM for d in dims) or int(np.prod(dims, dtype=object)) > MAX_ELEMENTS:
            raise FrontendError(f"input '{vi.name}' has shape {dims}: dims must be in "
                                f"[1, {MAX_DIM}] and the elements at most {MAX_ELEMENTS}",
                                model=name)


def opset_of(model: onnx.ModelProto, name: str) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            v = imp.version
            if not MIN_OPSET <= v <= MAX_OPSET:
                raise FrontendError(
                    f"opset {v} is not supported (supported: "
                    f"{MIN_OPSET} to {MAX_OPSET})", model=name)
            return v
    raise FrontendError("model imports no default-domain opset", model=name)


def _static_dims(vi: onnx.ValueInfoProto) -> list[int] | None:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    dims = []
    for d in t.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(d.dim_value)
    return dims


def _set_dims(vi: onnx.ValueInfoProto, dims: list[int]) -> None:
    shape = vi.type.tensor_type.shape
    del shape.dim[:]
    for d in dims:
        shape.dim.add().dim_value = int(d)


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    weights = {i.name for i in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in weights]


def override_input_shapes(model: onnx.ModelProto,
                          shapes: list[list[int]] | None, name: str) -> None:
    inputs = graph_inputs(model)
    if shapes is None:
        return
    if len(shapes) != len(inputs):
        raise FrontendError(
            f"--input_shapes gives {len(shapes)} shapes but the model has "
            f"{len(inputs)} inputs ({', '.join(i.name for i in inputs)})",
            model=name)
    for vi, dims in zip(inputs, shapes):
        rank = len(vi.type.tensor_type.shape.dim)
        if rank and rank != len(dims):
            raise FrontendError(
                f"input '{vi.name}' has rank {rank} but --input_shapes gives "
                f"{dims}", model=name)
        if any(d <= 0 for d in dims):
            raise FrontendError(f"input '{vi.name}': dims must be positive, "
                                f"got {dims}", model=name)
        _set_dims(vi, dims)


def _constants_to_initializers(graph: onnx.GraphProto) -> None:
    keep = []
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            value = ReferenceEvaluator(_single_node_model(node, [])).run(None, {})[0]
            graph.initializer.append(
                numpy_helper.from_array(np.asarray(value), node.output[0]))
        else:
            keep.append(node)
    del graph.node[:]
    graph.node.extend(keep)


def _single_node_model(node: onnx.NodeProto,
                       inputs: list[onnx.TensorProto],
                       opset: int = MAX_OPSET) -> onnx.ModelProto:
    graph = onnx.helper.make_graph(
        [node], "fold", [], [onnx.helper.make_tensor_value_info(
            o, onnx.TensorProto.UNDEFINED, None) for o in node.output],
        initializer=inputs)
    return onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", opset)])


def _infer(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    try:
        return shape_inference.infer_shapes(model, check_type=True,
                                            strict_mode=True, data_prop=True)
    except Exception as e:  # onnx raises InferenceError and others
        msg = str(e).strip().splitlines()
        raise FrontendError(f"shape inference failed: {msg[-1] if msg else e}",
                            model=name) from None


def _fold_constants(model: onnx.ModelProto, opset: int) -> bool:
    """Folds nodes whose inputs are all initializers, and Shape nodes of
    tensors with static shapes. Returns whether anything changed."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    shapes = {vi.name: _static_dims(vi) for vi in
              list(graph.value_info) + list(graph.input) + list(graph.output)}
    outputs = {o.name for o in graph.output}
    keep, changed = [], False
    for node in graph.node:
        foldable = (node.op_type not in _NO_FOLD and node.domain in ("", "ai.onnx")
                    and not any(o in outputs for o in node.output))
        if foldable and node.op_type == "Shape" and shapes.get(node.input[0]):
            dims = np.array(shapes[node.input[0]], np.int64)
            start = next((a.i for a in node.attribute if a.name == "start"), 0)
            end = next((a.i for a in node.attribute if a.name == "end"), len(dims))
            graph.initializer.append(
                numpy_helper.from_array(dims[start:end], node.output[0]))
            changed = True
            continue
        real_inputs = [i for i in node.input if i]
        if foldable and real_inputs and all(i in inits for i in real_inputs):
            values = ReferenceEvaluator(_single_node_model(
                node, [inits[i] for i in real_inputs], opset)).run(None, {})
            for out, v in zip(node.output, values):
                t = numpy_helper.from_array(np.asarray(v), out)
                graph.initializer.append(t)
                inits[out] = t
            changed = True
            continue
        keep.append(node)
    del graph.node[:]
    graph.node.extend(keep)
    return changed


def prepare(path: str | Path, input_shapes: list[list[int]] | None = None
            ) -> onnx.ModelProto:
    """Loads `path` and returns a statically shaped, constant-folded model."""
    name = str(path)
    model = load_model(path)
    opset = opset_of(model, name)
    check_structure(model, name, opset)
    override_input_shapes(model, input_shapes, name)
    for vi in graph_inputs(model):
        if vi.type.HasField("tensor_type") and _static_dims(vi) is None:
            dims = [d.dim_value or d.dim_param or "?"
                    for d in vi.type.tensor_type.shape.dim]
            raise FrontendError(
                f"input '{vi.name}' has a dynamic shape {dims}; give a static "
                f"one with --input_shapes", model=name)
    check_inputs(model, name)
    _constants_to_initializers(model.graph)
    # Stale shapes of overridden inputs would contradict inference.
    del model.graph.value_info[:]
    for out in model.graph.output:
        out.type.tensor_type.ClearField("shape")
    model = _infer(model, name)
    while _fold_constants(model, opset):
        model = _infer(model, name)
    return model
