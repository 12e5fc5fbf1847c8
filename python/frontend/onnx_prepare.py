"""Loads an ONNX model and makes it static and simple enough to import.

Checks the opset (converting opsets 11 and 12 up with ONNX's version
converter), applies input shape overrides, turns Constant nodes into
initializers, folds every node whose inputs are all constant (evaluated by
ONNX's own reference implementation) and runs ONNX shape inference until
every tensor has a static shape.
"""
from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper, shape_inference, version_converter
from onnx.reference import ReferenceEvaluator

from .errors import FrontendError

log = logging.getLogger(__name__)

MIN_OPSET, MAX_OPSET = 13, 21
# Older opsets ONNX's version converter brings up to MIN_OPSET.
MIN_CONVERTIBLE_OPSET = 11

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


def _check_text(model: onnx.ModelProto, name: str) -> None:
    """ONNX string fields may hold bytes that are not UTF-8 (protobuf then
    hands them over as bytes, not str)."""
    g = model.graph
    for k, node in enumerate(g.node):
        texts = [node.name, node.op_type, node.domain, *node.input, *node.output,
                 *(a.name for a in node.attribute)]
        if not all(isinstance(t, str) for t in texts):
            raise FrontendError(f"node #{k}: a name, op type, domain, edge or attribute "
                                f"name is not valid UTF-8", model=name)
    for v in (*g.input, *g.output, *g.initializer, *g.value_info, *model.opset_import):
        if not isinstance(getattr(v, "name", getattr(v, "domain", "")), str):
            raise FrontendError("a graph input, output, initializer or opset name is not "
                                "valid UTF-8", model=name)


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


def _default_opset(model: onnx.ModelProto, name: str) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    raise FrontendError("model imports no default-domain opset", model=name)


def opset_of(model: onnx.ModelProto, name: str) -> int:
    v = _default_opset(model, name)
    if not MIN_OPSET <= v <= MAX_OPSET:
        raise FrontendError(
            f"opset {v} is not supported (supported: {MIN_CONVERTIBLE_OPSET} "
            f"to {MAX_OPSET}; {MIN_CONVERTIBLE_OPSET}-{MIN_OPSET - 1} are "
            f"converted to {MIN_OPSET})", model=name)
    return v


def upgrade_opset(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    """Opsets 11 and 12 converted to MIN_OPSET (Split/Squeeze/Unsqueeze/
    Reduce* attributes become inputs, Softmax's axis semantics change, ...)
    by ONNX's version converter; newer models are returned as they are."""
    v = _default_opset(model, name)
    if not MIN_CONVERTIBLE_OPSET <= v < MIN_OPSET:
        return model
    try:
        converted = version_converter.convert_version(model, MIN_OPSET)
    except Exception as e:  # the converter raises bare RuntimeErrors
        msg = str(e).strip().splitlines()
        raise FrontendError(f"converting opset {v} to {MIN_OPSET} failed: "
                            f"{msg[-1] if msg else e}", model=name) from None
    log.warning("%s: converted opset %d to %d with onnx.version_converter", name, v,
                MIN_OPSET)
    return converted


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
            attr = node.attribute[0] if len(node.attribute) == 1 else None
            if attr is not None and attr.name == "value":  # the common form, read directly
                tensor = onnx.TensorProto()
                tensor.CopyFrom(attr.t)
                tensor.name = node.output[0]
                graph.initializer.append(tensor)
                continue
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


# Initializers larger than this enter shape inference by their shape alone:
# only small ones (shapes, axes, indices) feed data propagation, and copying
# the weights into every inference round would dominate the transform time.
_INFER_DATA_LIMIT = 1024


def _infer(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    """ONNX shape inference on `model`'s graph without its large weights;
    the inferred value_info and output shapes are written into `model`."""
    graph = model.graph
    small, big = [], []
    for init in graph.initializer:
        (big if math.prod(init.dims) > _INFER_DATA_LIMIT else small).append(init)
    inputs = {v.name for v in graph.input}
    light_graph = onnx.helper.make_graph(
        graph.node, graph.name,
        list(graph.input) + [onnx.helper.make_tensor_value_info(i.name, i.data_type, i.dims)
                             for i in big if i.name not in inputs],
        graph.output, initializer=small)
    light = onnx.helper.make_model(light_graph, opset_imports=model.opset_import,
                                   ir_version=model.ir_version, functions=model.functions)
    try:
        inferred = shape_inference.infer_shapes(light, check_type=True,
                                                strict_mode=True, data_prop=True)
    except Exception as e:  # onnx raises InferenceError and others
        msg = str(e).strip().splitlines()
        raise FrontendError(f"shape inference failed: {msg[-1] if msg else e}",
                            model=name) from None
    del graph.value_info[:]
    graph.value_info.extend(inferred.graph.value_info)
    del graph.output[:]
    graph.output.extend(inferred.graph.output)
    return model


def _infer_node(node: onnx.NodeProto, types: dict, inits: dict, opset: int
                ) -> dict[str, onnx.TypeProto]:
    """Output types of one node from its inputs' types (small constant
    inputs as data); empty when ONNX cannot say. Lets a folding round use
    the shapes that its own folding has just made static."""
    inputs, small = [], []
    for name in (i for i in node.input if i):
        init = inits.get(name)
        if init is not None and math.prod(init.dims) <= _INFER_DATA_LIMIT:
            small.append(init)
        elif init is not None:
            inputs.append(onnx.helper.make_tensor_value_info(name, init.data_type, init.dims))
        elif name in types:
            vi = onnx.ValueInfoProto(name=name)
            vi.type.CopyFrom(types[name])
            inputs.append(vi)
        else:
            return {}
    graph = onnx.helper.make_graph([node], "node", inputs, [], initializer=small)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
    try:
        inferred = shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - the whole-model inference reports it
        return {}
    return {vi.name: vi.type for vi in inferred.graph.value_info}


def _fold_constants(model: onnx.ModelProto, opset: int) -> bool:
    """Folds nodes whose inputs are all initializers, and Shape nodes of
    tensors with static shapes, in one pass in graph order: the shapes of
    the nodes kept are inferred on the way, so a Shape behind a Reshape
    whose target has just been folded folds in the same pass. Returns
    whether anything changed."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    types = {vi.name: vi.type for vi in
             list(graph.value_info) + list(graph.input) + list(graph.output)}
    outputs = {o.name for o in graph.output}

    def static_shape(name):
        if name in inits:
            return list(inits[name].dims)
        t = types.get(name)
        if t is None or not t.tensor_type.HasField("shape"):
            return None
        dims = t.tensor_type.shape.dim
        return [d.dim_value for d in dims] if all(d.HasField("dim_value") for d in dims) \
            else None

    keep, changed = [], False
    for node in graph.node:
        foldable = (node.op_type not in _NO_FOLD and node.domain in ("", "ai.onnx")
                    and not any(o in outputs for o in node.output))
        in_shape = static_shape(node.input[0]) if node.input else None
        if foldable and node.op_type == "Shape" and in_shape is not None:
            dims = np.array(in_shape, np.int64)
            start = next((a.i for a in node.attribute if a.name == "start"), 0)
            end = next((a.i for a in node.attribute if a.name == "end"), len(dims))
            t = numpy_helper.from_array(dims[start:end], node.output[0])
            graph.initializer.append(t)
            inits[t.name] = t
            changed = True
            continue
        real_inputs = [i for i in node.input if i]
        if foldable and real_inputs and all(i in inits for i in real_inputs):
            try:
                values = ReferenceEvaluator(_single_node_model(
                    node, [inits[i] for i in real_inputs], opset)).run(None, {})
            except Exception as e:  # noqa: BLE001 - any evaluator failure
                # The importer converts the node instead, or names it.
                log.debug("not folding node '%s' (%s): %s", node.name or node.output[0],
                          node.op_type, e)
                keep.append(node)
                continue
            for out, v in zip(node.output, values):
                t = numpy_helper.from_array(np.asarray(v), out)
                graph.initializer.append(t)
                inits[out] = t
            changed = True
            continue
        keep.append(node)
        if changed and node.domain in ("", "ai.onnx") and any(
                o and static_shape(o) is None for o in node.output):
            types.update(_infer_node(node, types, inits, opset))
    del graph.node[:]
    graph.node.extend(keep)
    return changed


def prepare(path: str | Path, input_shapes: list[list[int]] | None = None
            ) -> onnx.ModelProto:
    """Loads `path` and returns a statically shaped, constant-folded model."""
    name = str(path)
    model = load_model(path)
    _check_text(model, name)
    model = upgrade_opset(model, name)
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
    _clear_inferred_shapes(model)
    model = _infer(model, name)
    while _fold_constants(model, opset):
        # Shapes inferred before this round may keep a dimension symbolic
        # that folding has since made static: infer them afresh.
        _clear_inferred_shapes(model)
        model = _infer(model, name)
    return model


def _clear_inferred_shapes(model: onnx.ModelProto) -> None:
    del model.graph.value_info[:]
    for out in model.graph.output:
        out.type.tensor_type.ClearField("shape")
