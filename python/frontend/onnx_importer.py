"""ONNX → Top dialect.

Every ONNX node maps to one or more Top ops built with the typed builders of
`tpuc.mlir.dialects.top`. Each op's location is the ONNX tensor name it
produces, so tensors dumped by any later stage line up with onnxruntime's.
Initializers used as data become `top.Weight` ops whose arrays go into the
weight npz; initializers used as shapes/axes become attributes.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from ..mlir import ir
from . import (onnx_ops, onnx_ops_index, onnx_ops_mask, onnx_ops_rnn,  # noqa: F401 (register)
               onnx_ops_topk)
from .errors import FrontendError
from .onnx_prepare import graph_inputs, opset_of, prepare
from .top_builder import TopBuilder, write_weights

log = logging.getLogger(__name__)

_FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE,
                onnx.TensorProto.BFLOAT16, onnx.TensorProto.UNDEFINED}


@dataclass
class ImportedModel:
    module: ir.Module
    weights: dict[str, np.ndarray]
    input_names: list[str]
    output_names: list[str]
    onnx_model: onnx.ModelProto = field(repr=False)


class OnnxImporter(TopBuilder):
    """Builds a Top module from a prepared (static, folded) ONNX model."""

    def __init__(self, model: onnx.ModelProto, model_name: str,
                 ctx: ir.Context, source: str = ""):
        super().__init__(ctx)
        self.model = model
        self.name = model_name
        self.source = source or model_name
        self.opset = opset_of(model, self.source)
        graph = model.graph
        self.initializers = {i.name: i for i in graph.initializer}
        self.elem_types = {i.name: i.data_type for i in graph.initializer}
        for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
            t = vi.type.tensor_type
            if t.HasField("shape"):
                self.shapes[vi.name] = [d.dim_value for d in t.shape.dim]
            if t.elem_type:
                self.elem_types[vi.name] = t.elem_type
        self.values: dict[str, ir.Value] = {}
        # Values converters computed at import (e.g. IsNaN of an integer).
        self.known: dict[str, np.ndarray] = {}
        self.node: onnx.NodeProto | None = None

    # -- helpers used by the op converters ---------------------------------

    def fail(self, reason: str) -> FrontendError:
        n = self.node
        return FrontendError(reason, model=self.source,
                             node=(n.name or (n.output[0] if n.output else ""))
                             if n else "", op=n.op_type if n else "")

    def const(self, name: str) -> np.ndarray | None:
        """The value of a constant input, or None when it is computed."""
        if name in self.known:
            return self.known[name]
        init = self.initializers.get(name)
        return None if init is None else numpy_helper.to_array(init)

    def is_integral(self, name: str) -> bool:
        """Whether the ONNX tensor holds integers or bools (all tensors are
        f32 in Top; these hold exact small integers)."""
        t = self.elem_types.get(name)
        return t is not None and t not in _FLOAT_TYPES

    def constant_result(self, name: str, array: np.ndarray) -> ir.Value:
        """A node output known at import time: a weight, and a constant to
        the converters of later nodes."""
        self.known[name] = array
        return self.weight(name, array)

    def require_const(self, name: str, what: str) -> np.ndarray:
        value = self.const(name)
        if value is None:
            raise self.fail(f"{what} ('{name}') must be a constant")
        return value

    def require_scalar(self, name: str, what: str) -> float:
        value = self.require_const(name, what)
        if np.size(value) != 1:
            raise self.fail(f"{what} ('{name}') must be a scalar, not of shape "
                            f"{list(np.shape(value))}")
        return float(np.ravel(value)[0])

    def shape(self, name: str) -> list[int]:
        if name not in self.shapes:
            if name in self.initializers:
                return list(self.initializers[name].dims)
            raise self.fail(f"shape of '{name}' is unknown")
        return self.shapes[name]

    def weight(self, name: str, array: np.ndarray | None = None) -> ir.Value:
        """A top.Weight for initializer `name` (or for `array`, stored under
        `name`); created once per name."""
        if array is None and name not in self.weights:
            array = self.require_const(name, "weight")
        v = super().weight(name, array)
        self.values[name] = v
        return v

    def value(self, name: str) -> ir.Value:
        if name in self.values:
            return self.values[name]
        if name in self.initializers:
            return self.weight(name)
        raise self.fail(f"input '{name}' is not produced by any node")

    # -- driver ------------------------------------------------------------

    def build(self, output_names: list[str] | None = None) -> ImportedModel:
        graph = self.model.graph
        inputs = graph_inputs(self.model)
        outputs = output_names or [o.name for o in graph.output]

        def body(args: list[ir.Value]) -> list[ir.Value]:
            for vi, arg in zip(inputs, args):
                self.values[vi.name] = arg
            for node in graph.node:
                self.node = node
                self._convert(node)
            self.node = None
            missing = [o for o in outputs if o not in self.values]
            if missing:
                raise FrontendError(f"output '{missing[0]}' is not a tensor "
                                    f"of the model", model=self.source)
            return [self.values[o] for o in outputs]

        module = self.build_module(self.name, [vi.name for vi in inputs], body)
        return ImportedModel(module, self.weights, [vi.name for vi in inputs],
                             outputs, self.model)

    def check(self) -> list[FrontendError]:
        """Converts every node, collecting the errors instead of stopping at
        the first: a node that fails gets zero stand-ins for its outputs so
        the nodes after it are still checked. Builds no module to keep."""
        graph = self.model.graph
        problems: list[FrontendError] = []
        with self.ctx, ir.Location.unknown():
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                for vi in graph_inputs(self.model):
                    self.values[vi.name] = self.weight(vi.name, np.zeros(self.shape(vi.name)))
                failed: set[str] = set()  # outputs of nodes that could not be converted
                for node in graph.node:
                    self.node = node
                    try:
                        self._convert(node)
                    except FrontendError as e:
                        # A supported op failing on a stand-in input (its shape
                        # unknown, a Shape left unfolded) is a consequence.
                        if not (failed & set(node.input) and (
                                node.op_type in onnx_ops.CONVERTERS or node.op_type == "Shape")):
                            problems.append(e)
                        failed.update(node.output)
                        for out in node.output:
                            if out and out not in self.values:
                                self.values[out] = self.weight(
                                    out, np.zeros(self.shapes.get(out, [1])))
        self.node = None
        return problems

    def _convert(self, node: onnx.NodeProto) -> None:
        if node.domain not in ("", "ai.onnx"):
            raise self.fail(f"custom domain '{node.domain}' is not supported")
        converter = onnx_ops.CONVERTERS.get(node.op_type)
        if converter is None:
            raise self.fail("op type is not supported")
        try:
            results = converter(self, node)
        except FrontendError:
            raise
        except Exception as e:  # noqa: BLE001 - an MLIR/numpy error names no node
            msg = str(e).strip().splitlines()
            raise self.fail(f"conversion failed: {msg[0] if msg else type(e).__name__}") from e
        if isinstance(results, ir.Value):
            results = [results]
        for name, v in zip(node.output, results):
            if name:
                self.values[name] = v


def import_onnx(path: str | Path, model_name: str, ctx: ir.Context,
                input_shapes: list[list[int]] | None = None,
                output_names: list[str] | None = None) -> ImportedModel:
    """Imports an ONNX file into a Top module (weights not yet written)."""
    model = prepare(path, input_shapes)
    return OnnxImporter(model, model_name, ctx, source=str(path)).build(output_names)


def check_onnx(path: str | Path, input_shapes: list[list[int]] | None = None
               ) -> list[FrontendError]:
    """Every node of the model tpuc cannot compile, with the reason (an error
    of the model as a whole, e.g. its opset or a dynamic input, is the only
    entry when there is one)."""
    from ..compiler import make_context
    try:
        model = prepare(path, input_shapes)
    except FrontendError as e:
        return [e]
    return OnnxImporter(model, Path(path).stem, make_context(), source=str(path)).check()


def write_top(imported: ImportedModel, weight_file: str | Path) -> None:
    """Writes the weights npz and points the module at it."""
    write_weights(imported.module, imported.weights, weight_file)
