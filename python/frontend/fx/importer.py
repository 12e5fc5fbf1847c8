"""ATen-level torch.fx graph → Top dialect: the graph walker.

Op semantics live in `ops` (looked up by OpOverload in the registry); this
module only walks the graph: placeholders become function arguments (or
weights, when the caller binds them to constants), `get_attr` tensors
become weights held in memory, each call_function node goes to its
converter, and the output node says which results the function returns.
Every Top op is named by its FX node, so stage dumps line up by name.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import torch
from torch.fx import GraphModule, Node

from ...mlir import ir
from ..errors import FrontendError
from ..top_builder import TopBuilder
# Registers the converters.
from . import index_ops, mask_ops, ops, pool_grad, training_ops  # noqa: F401
from .registry import REGISTRY, op_name, unsupported_reason


@dataclass
class Output:
    """Where graph output i comes from: result `index` of the module
    ("result"), runtime input `index` ("input"), a constant `tensor`
    ("const"), or nothing ("none", e.g. a None gradient)."""
    kind: str
    index: int = -1
    tensor: torch.Tensor | None = None
    dtype: torch.dtype | None = None
    shape: list[int] | None = None


@dataclass
class ImportedGraph:
    module: ir.Module
    weights: dict[str, np.ndarray]
    input_names: list[str]       # runtime inputs, in placeholder order
    input_positions: list[int]   # their positions among the placeholders
    outputs: list[Output]
    result_names: list[str] = field(default_factory=list)


def _tensor_meta(node: Node):
    v = node.meta.get("val")
    return v if isinstance(v, torch.Tensor) else None


class FxImporter(TopBuilder):
    """Imports one GraphModule; `constants` binds placeholders (by name) to
    tensors that become weights instead of runtime inputs."""

    def __init__(self, gm: GraphModule, ctx: ir.Context, name: str = "main",
                 constants: Mapping[str, torch.Tensor] | None = None, source: str = ""):
        super().__init__(ctx)
        self.gm = gm
        self.name = name
        self.source = source or name
        self.constants = dict(constants or {})
        self.values: dict[Node, Any] = {}
        self.consts: dict[Node, torch.Tensor] = {}
        self.node: Node | None = None
        self._result_names: list[str] = []
        for node in gm.graph.nodes:
            t = _tensor_meta(node)
            if t is not None and all(isinstance(d, int) for d in t.shape):
                self.shapes[node.name] = list(t.shape)

    # -- helpers used by the converters ------------------------------------

    def fail(self, reason: str, node: Node | None = None) -> FrontendError:
        n = node or self.node
        return FrontendError(reason, model=self.source, node=n.name if n else "",
                             op=op_name(n.target) if n is not None and n.op == "call_function"
                             else (n.op if n is not None else ""))

    def value(self, arg) -> ir.Value:
        if not isinstance(arg, Node) or arg not in self.values:
            raise self.fail(f"operand {arg!r} is not a tensor of the graph")
        v = self.values[arg]
        if not isinstance(v, ir.Value):
            raise self.fail(f"operand '{arg.name}' is not a single tensor")
        return v

    def operand(self, arg, name: str) -> ir.Value:
        """A tensor operand, or a Python number as a scalar weight `name`."""
        if isinstance(arg, Node):
            return self.value(arg)
        if isinstance(arg, (bool, int, float)):
            return self.scalar(name, float(arg))
        raise self.fail(f"operand {arg!r} is neither a tensor nor a number")

    def const(self, arg) -> torch.Tensor | None:
        """The tensor of a constant operand, None when computed at run time."""
        return self.consts.get(arg) if isinstance(arg, Node) else None

    # -- driver ------------------------------------------------------------

    def _constant(self, node: Node, tensor: torch.Tensor) -> None:
        if not isinstance(tensor, torch.Tensor):
            raise self.fail(f"'{node.target}' is not a tensor", node)
        node.meta["tpuc_constant"] = True
        self.consts[node] = tensor
        self.values[node] = self.weight(node.name, tensor.detach().cpu().float().numpy())

    def build(self) -> ImportedGraph:
        graph = self.gm.graph
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        inputs = [n for n in placeholders if n.name not in self.constants]
        for n in inputs:
            if _tensor_meta(n) is None or n.name not in self.shapes:
                raise self.fail("runtime input is not a tensor of static shape", n)
        output_node = next(n for n in graph.nodes if n.op == "output")
        outputs: list[Output] = []
        results: list[ir.Value] = []

        def body(args: list[ir.Value]) -> list[ir.Value]:
            self.values.update(zip(inputs, args))
            for node in graph.nodes:
                self.node = node
                if node.op == "placeholder" and node.name in self.constants:
                    self._constant(node, self.constants[node.name])
                elif node.op == "get_attr":
                    self._constant(node, _fetch_attr(self.gm, node.target))
                elif node.op == "call_function":
                    self._convert(node)
                elif node.op == "call_module":
                    raise self.fail("call_module nodes are not supported "
                                    "(import an ATen-level graph)")
            self.node = None
            returned = output_node.args[0]
            for arg in returned if isinstance(returned, (list, tuple)) else [returned]:
                outputs.append(self._output(arg, inputs, results))
            return results

        module = self.build_module(self.name, [n.name for n in inputs], body)
        _drop_unused_arguments(module)
        return ImportedGraph(module, self.weights, [n.name for n in inputs],
                             [placeholders.index(n) for n in inputs], outputs,
                             list(self._result_names))

    def _output(self, arg, inputs: list[Node], results: list[ir.Value]) -> Output:
        if arg is None:
            return Output("none")
        if not isinstance(arg, Node):
            raise self.fail(f"graph output {arg!r} is not a tensor")
        meta = _tensor_meta(arg)
        kw = dict(dtype=meta.dtype, shape=list(meta.shape)) if meta is not None else {}
        v = self.value(arg)
        # An output may be an input or a weight under another name (identity ops).
        for node, known in self.values.items():
            if known == v and node in inputs:
                return Output("input", inputs.index(node), **kw)
            if known == v and node in self.consts:
                return Output("const", tensor=self.consts[node], **kw)
        for i, r in enumerate(results):
            if r == v:
                return Output("result", i, **kw)
        results.append(v)
        self._result_names.append(arg.name)
        return Output("result", len(results) - 1, **kw)

    def _convert(self, node: Node) -> None:
        if node.target is operator.getitem:
            src, idx = node.args
            produced = self.values.get(src)
            if not isinstance(produced, (list, tuple)) or idx >= len(produced) \
                    or produced[idx] is None:
                raise self.fail(f"result {idx} of '{getattr(src, 'name', src)}' is not computed")
            self.values[node] = produced[idx]
            return
        entry = REGISTRY.get(node.target)
        if entry is None:
            raise self.fail("no Top converter for this op")
        reason = unsupported_reason(node)
        if reason:
            raise self.fail(reason)
        self.values[node] = entry.convert(self, node)


def _drop_unused_arguments(module: ir.Module) -> None:
    """Removes the arguments (and their top.Input) that no op reads: inputs
    only passed through to outputs (aliases), which the caller returns
    itself. The compiled function then takes only what it computes from."""
    with module.context:
        fn = module.body.operations[0]
        block = fn.regions[0].blocks[0]
        for i in reversed(range(len(block.arguments))):
            users = [u.owner for u in block.arguments[i].uses]
            if all(len(list(op.results[0].uses)) == 0 for op in users):
                for op in users:
                    op.erase()
                block.erase_argument(i)
        fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in block.arguments], fn_type.results))


def _fetch_attr(gm: GraphModule, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def import_graph(gm: GraphModule, ctx: ir.Context, name: str = "main",
                 constants: Mapping[str, torch.Tensor] | None = None,
                 source: str = "") -> ImportedGraph:
    """Imports an ATen-level GraphModule (with `meta['val']` on its nodes)
    into a Top module; the weights stay in memory (`ImportedGraph.weights`)."""
    return FxImporter(gm, ctx, name, constants, source).build()
