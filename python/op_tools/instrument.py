"""Graph rewriting: every ATen op an active tool selects becomes a call of
a `ToolCall` module, which runs that op alone (on the chip as a one-op
device program and/or on the CPU) and hands each execution to the tools.
The rest of the graph is partitioned and compiled as usual."""
from __future__ import annotations

import operator
import time
from collections import Counter
from typing import Any

import torch
from torch.fx import Graph, GraphModule, Node
from torch.utils._pytree import tree_flatten, tree_unflatten

from ..compiler import CompileError
from ..frontend.errors import FrontendError
from ..frontend.fx import op_name, packet_name, unsupported_reason
from .timing import op_work, roofline
from .tool import OpCall, OpTool, active, log


def _one_op_graph(target, args, kwargs, val, constant_leaves: set[int], used: list[int]):
    """A graph of `target` alone: its tensor arguments become placeholders,
    those at `constant_leaves` (positions among the flattened arguments that
    were constants in the compiled graph) bound as weights. Returns the
    graph, the runtime tensors and the constants by placeholder name."""
    g = Graph()
    tensors: list[torch.Tensor] = []
    constants: dict[str, torch.Tensor] = {}
    leaves, spec = tree_flatten((tuple(args), dict(kwargs)))
    lifted = []
    for pos, a in enumerate(leaves):
        if isinstance(a, torch.Tensor):
            p = g.placeholder(f"arg{pos}")
            p.meta["val"] = a
            if pos in constant_leaves:
                constants[p.name] = a
            else:
                tensors.append(a)
            a = p
        lifted.append(a)
    nargs, nkwargs = tree_unflatten(lifted, spec)
    node = g.call_function(target, nargs, nkwargs)
    node.meta["val"] = val
    if isinstance(val, (tuple, list)):
        items = []
        for i in used:  # the results the compiled graph reads
            item = g.call_function(operator.getitem, (node, i))
            item.meta["val"] = val[i]
            items.append(item)
        g.output(tuple(items))
    else:
        g.output(node)
    return GraphModule(torch.nn.Module(), g), tensors, constants


def runtime_tensors(args, kwargs, constant_leaves) -> list[torch.Tensor]:
    """The tensor arguments a one-op program takes at run time."""
    leaves, _ = tree_flatten((tuple(args), dict(kwargs)))
    return [a for i, a in enumerate(leaves)
            if isinstance(a, torch.Tensor) and i not in constant_leaves]


def compile_op(target, args, kwargs, val, constant_leaves, used: list[int], chip: str):
    """`target` alone on these arguments compiled for `chip` (cached)."""
    from ..dynamo.device import compile_graph  # the backend imports this package
    gm, tensors, constants = _one_op_graph(target, args, kwargs, val, set(constant_leaves),
                                           used)
    return compile_graph(gm, tensors, constants, chip,
                         name=f"op_{op_name(target).replace('.', '_')}")


class ToolCall(torch.nn.Module):
    """Stands in for one selected op of a compiled graph."""

    def __init__(self, node: Node, graph: str, kind: str, chip: str, tools: list[OpTool]):
        super().__init__()
        self.target, self.val = node.target, node.meta.get("val")
        self.work = op_work(node)  # before the node leaves the graph
        self.node_name, self.graph, self.kind, self.chip = node.name, graph, kind, chip
        self.op = op_name(node.target)
        self.tools = tools
        self.forced = [t for t in tools if t.forces_cpu]
        self.unsupported = unsupported_reason(node)
        self.used = sorted({u.args[1] for u in node.users if u.target is operator.getitem})
        leaves, _ = tree_flatten((tuple(node.args), dict(node.kwargs)))
        self.constant_leaves = {i for i, a in enumerate(leaves)
                                if isinstance(a, Node) and a.op == "get_attr"}
        self.calls = 0
        self.programs: dict[tuple, Any] = {}

    def _program(self, args, kwargs):
        key = tuple((tuple(t.shape), t.dtype) for t in tree_flatten((args, kwargs))[0]
                    if isinstance(t, torch.Tensor))
        if key not in self.programs:
            self.programs[key] = compile_op(self.target, args, kwargs, self.val,
                                            self.constant_leaves, self.used, self.chip)
        program = self.programs[key]
        return program, runtime_tensors(args, kwargs, self.constant_leaves)

    def forward(self, *args, **kwargs):
        call = OpCall(self.graph, self.kind, self.node_name, self.op, self.calls,
                      list(args), None, "cpu", chip=self.chip, target=self.target,
                      kwargs=dict(kwargs), constant_leaves=sorted(self.constant_leaves))
        self.calls += 1
        if self.forced:
            call.reason = f"forced by {type(self.forced[0]).__name__}"
        elif self.unsupported:
            call.reason = self.unsupported
        start = time.perf_counter()
        if not call.reason:
            try:
                program, tensors = self._program(args, kwargs)
            except (FrontendError, CompileError, ValueError) as e:
                self.unsupported = call.reason = str(e).splitlines()[0]
                log.warning("tpuc.op_tools: %s (%s) runs on the CPU: %s", self.node_name,
                            self.op, call.reason)
        if not call.reason:
            outs = program(*tensors)
            if isinstance(self.val, (tuple, list)):
                full = [None] * len(self.val)
                for i, o in zip(self.used, outs):
                    full[i] = o
                call.outputs = tuple(full)
            else:
                call.outputs = outs[0]
            call.device = "tpu"
            stats = program.last_stats  # None: the op moves no data (a view)
            if stats is not None:
                call.cycles, call.microseconds = stats.total_cycles, stats.microseconds
                call.roofline_cycles, call.bound = roofline(self.work, program.model.target)
        call.host_seconds = time.perf_counter() - start
        if call.device == "cpu" or any(t.wants_cpu for t in self.tools):
            cpu = self.target(*args, **kwargs)
            call.cpu_outputs = cpu
            if call.device == "cpu":
                call.outputs = cpu
        for tool in self.tools:
            tool.record(call)
        return call.outputs


def instrument(gm: GraphModule, graph: str, kind: str, chip: str) -> Counter:
    """Replaces every op an active tool selects by a `ToolCall`; returns the
    count per op name (empty when no tool is active)."""
    tools = active()
    counts: Counter = Counter()
    if not tools:
        return counts
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        packet, overload = packet_name(node.target), op_name(node.target)
        chosen = [t for t in tools if t.selects(packet, overload)]
        # Tools that time ops where they run see the ops others isolate.
        if not any(t.isolates for t in chosen):
            continue
        attr = f"tool_{sum(counts.values())}_{node.name}"
        gm.add_submodule(attr, ToolCall(node, graph, kind, chip, chosen))
        with gm.graph.inserting_before(node):
            new = gm.graph.call_module(attr, node.args, node.kwargs)
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        counts[overload] += 1
    gm.recompile()
    if counts:
        log.info("tpuc.op_tools: %s: %d op(s) run alone for %s", graph, sum(counts.values()),
                 ", ".join(type(t).__name__ for t in tools))
    return counts
