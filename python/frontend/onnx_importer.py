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
from . import onnx_ops
from .errors import FrontendError
from .onnx_prepare import graph_inputs, opset_of, prepare
from .top_builder import TopBuilder, write_weights

log = logging.getLogger(__name__)


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
        for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
            t = vi.type.tensor_type
            if t.HasField("shape"):
                self.shapes[vi.name] = [d.dim_value for d in t.shape.dim]
        self.values: dict[str, ir.Value] = {}
        self.node: onnx.NodeProto | None = None

    # -- helpers used by the op converters ---------------------------------

    def fail(self, reason: str) -> FrontendError:
        n = self.node
        return FrontendError(reason, model=self.source,
                             node=(n.name or (n.output[0] if n.output else ""))
                             if n else "", op=n.op_type if n else "")

    def const(self, name: str) -> np.ndarray | None:
        """The value of a constant input, or None when it is computed."""
        init = self.initializers.get(name)
        return None if init is None else numpy_helper.to_array(init)

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

    def _convert(self, node: onnx.NodeProto) -> None:
        if node.domain not in ("", "ai.onnx"):
            raise self.fail(f"custom domain '{node.domain}' is not supported")
        converter = onnx_ops.CONVERTERS.get(node.op_type)
        if converter is None:
            raise self.fail("op type is not supported")
        try:
            results = converter(self, node)
        except (TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError) as e:
            # A converter met a form of the op it does not expect (an input
            # of another rank, a missing operand): say where, in one line.
            raise self.fail(f"unsupported form of the op ({type(e).__name__}: {e})") from None
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


def write_top(imported: ImportedModel, weight_file: str | Path) -> None:
    """Writes the weights npz and points the module at it."""
    write_weights(imported.module, imported.weights, weight_file)
