"""`torch.compile` backend: AOTAutograd graphs run on the cmodel, with the
ops the chip cannot run left to PyTorch on the CPU.

`aot_backend` wraps `aot_autograd` with separate forward, backward and
inference compilers and a decomposition table (core ATen minus what Top
does natively). Each compiler returns a boxed `TpuGraph`, which on its
first call (when real tensors are at hand) binds the parameters of an
inference graph as constants, folds what only depends on constants,
partitions the graph (`partition`), compiles every device subgraph through
the cache (`device`) and logs one line: the device subgraphs and every op
that fell back, with the reason. Graphs with symbolic shapes, and any
failure to compile, run on the CPU with a log line instead of an error.
"""
from __future__ import annotations

import copy
import itertools
import logging
import os
import time
from collections import Counter
from typing import Sequence

import torch
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch.fx import Graph, GraphModule, Node

from .. import op_tools
from ..frontend.fx import REGISTRY, pool_grad
from . import cache, partition
from .device import compile_graph

log = logging.getLogger("tpuc.dynamo")

DEFAULT_CHIP = "tpu_edge"
_GRAPH_IDS = itertools.count()
# AOTAutograd graphs handed to each compiler ("forward", "backward",
# "inference"): a training loop that recompiles shows here.
GRAPH_COMPILES: Counter = Counter()


def decompositions() -> dict:
    """Core ATen decompositions, except for the ops Top converts as they
    are, and the max-pool backward without saved indices."""
    table = {op: fn for op, fn in core_aten_decompositions().items() if op not in REGISTRY}
    return {**table, **pool_grad.DECOMPOSITIONS}


def _symbolic(inputs: Sequence) -> str | None:
    for i, t in enumerate(inputs):
        if isinstance(t, torch.SymInt | torch.SymFloat | torch.SymBool):
            return f"input {i} is a symbolic {type(t).__name__}"
        if isinstance(t, torch.Tensor) and not all(isinstance(d, int) for d in t.shape):
            return f"input {i} has dynamic shape {tuple(t.shape)}"
    return None


class _DeviceCall(torch.nn.Module):
    """Stands in for a fused device subgraph: passes the runtime arguments
    to the compiled program (constants are inside it)."""

    def __init__(self, program, runtime_positions: list[int], single: bool,
                 graph: str = "", kind: str = "", nodes: dict | None = None):
        super().__init__()
        self.program, self.positions, self.single = program, runtime_positions, single
        # For op tools that look at a whole device run (OpTimeMeasure).
        self.graph, self.kind, self.nodes = graph, kind, nodes or {}

    def forward(self, *args):
        start = time.perf_counter()
        outs = self.program(*[args[i] for i in self.positions])
        op_tools.device_run(self.program, self.graph, self.kind, self.nodes,
                            time.perf_counter() - start)
        return outs[0] if self.single else tuple(outs)


class TpuGraph:
    """A compiled AOTAutograd graph (boxed calling convention)."""

    def __init__(self, gm: GraphModule, example_inputs: Sequence, chip: str, kind: str,
                 frozen: set[int]):
        # An instance attribute: wrappers (torch._dynamo.disable around the
        # backward) copy the callee's __dict__, not its class attributes.
        self._boxed_call = True
        self.gm, self.chip, self.kind = gm, chip, kind
        self.frozen = sorted(frozen)
        self.name = f"{kind}_{next(_GRAPH_IDS)}"
        self.runner = None
        self.programs: list = []
        self._versions = None
        self._tools: tuple = ()

    def __call__(self, args: list):
        if self.runner is None or self._params_changed(args) or \
                self._tools != op_tools.signature():
            self.runner = self._build(args)
        full = list(args)
        args.clear()  # boxed convention: the callee frees its inputs
        out = self.runner(full)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def _params_changed(self, args) -> bool:
        versions = [(args[i].data_ptr(), args[i]._version) for i in self.frozen]
        if versions != self._versions:
            if self._versions is not None:
                log.info("tpuc: %s: parameters changed, rebinding", self.name)
            return True
        return False

    def _build(self, args):
        self._versions = [(args[i].data_ptr(), args[i]._version) for i in self.frozen]
        self._tools = op_tools.signature()
        start = time.perf_counter()
        compiles = cache.STATS.compiles
        try:
            runner, summary = self._compile(args)
        except Exception as e:  # noqa: BLE001  the model runs even when tpuc cannot compile it
            log.warning("tpuc: %s: compiling failed, running on the CPU: %s", self.name,
                        _first_cause(e))
            log.debug("tpuc: %s: compile failure", self.name, exc_info=True)
            return lambda full: self.gm(*full)
        log.info("tpuc: %s on %s: %s; %.2f s, %d compiled, %d from cache", self.name, self.chip,
                 summary, time.perf_counter() - start, cache.STATS.compiles - compiles,
                 len(self.programs) - (cache.STATS.compiles - compiles))
        return runner

    def _compile(self, args):
        gm = _freeze(self.gm, {i: args[i] for i in self.frozen})
        _fold_constants(gm)
        # Ops the active op tools select run alone, outside device subgraphs.
        op_tools.instrument(gm, self.name, self.kind, self.chip)
        support = partition.TpuSupport()
        split = partition.propose(gm, support)
        fused = partition.fuse(gm, split.partitions) if split.partitions else gm
        self.programs = []
        ops = 0
        for node in list(fused.graph.nodes):
            if node.op != "call_module" or not node.target.startswith("tpu_"):
                continue
            sub = getattr(fused, node.target)
            constants, runtime_pos, runtime_vals = {}, [], []
            placeholders = [p for p in sub.graph.nodes if p.op == "placeholder"]
            for i, (p, a) in enumerate(zip(placeholders, node.args)):
                if isinstance(a, Node) and a.op == "get_attr":
                    constants[p.name] = _attr(fused, a.target)
                else:
                    runtime_pos.append(i)
                    runtime_vals.append(p.meta["val"])
            program = compile_graph(sub, runtime_vals, constants, self.chip,
                                    name=f"{self.kind}_{node.target}")
            self.programs.append(program)
            ops += sum(1 for n in sub.graph.nodes if n.op == "call_function")
            returned = next(n for n in sub.graph.nodes if n.op == "output").args[0]
            nodes = {n.name: n for n in sub.graph.nodes if n.op == "call_function"}
            setattr(fused, node.target, _DeviceCall(program, runtime_pos,
                                                    not isinstance(returned, (list, tuple)),
                                                    self.name, self.kind, nodes))
        fused.recompile()
        frozen = set(self.frozen)

        def run(full):
            return fused(*[a for i, a in enumerate(full) if i not in frozen])
        summary = (f"{len(self.programs)} device subgraph(s) ({ops} ops), "
                   f"{partition.describe(split)}")
        return run, summary


def _first_cause(e: Exception) -> str:
    """The error's first line, and its first diagnostic when the first line
    only says that a pass pipeline failed."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    if len(lines) > 1 and lines[0].startswith("Failure while executing pass pipeline"):
        return f"{lines[0]}: {lines[1]}"
    return lines[0]


def _attr(gm: GraphModule, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _freeze(gm: GraphModule, values: dict[int, torch.Tensor]) -> GraphModule:
    """A copy of `gm` whose placeholders at `values`' positions read those
    tensors as attributes (weights) and take no argument."""
    owner = torch.nn.Module()
    g = Graph()
    env: dict[Node, Node] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    # Placeholders first: FX code generation expects them before any other node.
    for pos, node in enumerate(placeholders):
        if pos not in values:
            env[node] = g.node_copy(node)
    for pos, node in enumerate(placeholders):
        if pos in values:
            attr = f"_tpuc_param_{pos}"
            owner.register_buffer(attr, values[pos].detach(), persistent=False)
            env[node] = g.get_attr(attr)
            env[node].meta = copy.copy(node.meta)
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "get_attr":
            _set_attr(owner, node.target, _attr(gm, node.target))
        env[node] = g.node_copy(node, lambda n: env[n])
    return GraphModule(owner, g)


def _set_attr(owner: torch.nn.Module, target: str, value) -> None:
    *path, last = target.split(".")
    for part in path:
        if not hasattr(owner, part):
            owner.add_module(part, torch.nn.Module())
        owner = getattr(owner, part)
    if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
        owner.register_buffer(last, value, persistent=False)
    else:
        setattr(owner, last, value)


# Ops whose value depends only on their operand's (static) shape and dtype.
_SHAPE_ONLY = {torch.ops.aten.full_like.default, torch.ops.aten.zeros_like.default,
               torch.ops.aten.ones_like.default}


def _shape_only(node: Node) -> torch.Tensor | None:
    """The value of a full_like / zeros_like / ones_like of a static shape."""
    if node.op != "call_function" or node.target not in _SHAPE_ONLY:
        return None
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or not all(isinstance(d, int) for d in val.shape):
        return None
    fill = {torch.ops.aten.zeros_like.default: 0, torch.ops.aten.ones_like.default: 1}.get(
        node.target, node.args[1] if len(node.args) > 1 else None)
    if not isinstance(fill, (int, float, bool)):
        return None
    return torch.full(tuple(val.shape), fill, dtype=val.dtype)


def _foldable(node: Node) -> bool:
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return False
    if torch.Tag.nondeterministic_seeded in node.target.tags or node.target._schema.is_mutable:
        return False
    inputs = node.all_input_nodes
    return all(n.op == "get_attr" for n in inputs)


def _fold_constants(gm: GraphModule) -> None:
    """Evaluates, once, every op whose operands are all constants (shape
    helpers, transposed weights, position ids), or whose value only depends
    on a static shape (full_like), into a new constant."""
    folded = 0
    for node in list(gm.graph.nodes):
        value = _shape_only(node)
        if value is None and _foldable(node):
            args = torch.fx.node.map_arg(node.args, lambda n: _attr(gm, n.target))
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: _attr(gm, n.target))
            value = node.target(*args, **kwargs)
        if not isinstance(value, torch.Tensor):
            continue
        attr = f"_tpuc_const_{folded}"
        folded += 1
        gm.register_buffer(attr, value, persistent=False)
        with gm.graph.inserting_before(node):
            g = gm.graph.get_attr(attr)
        g.meta = {**node.meta, "val": value}
        node.replace_all_uses_with(g)
        gm.graph.erase_node(node)
    gm.graph.eliminate_dead_code()
    gm.recompile()


def _static_inputs() -> set[int]:
    """Positions of the parameters and buffers among the graph's inputs."""
    ctx = torch._guards.TracingContext.try_get()
    meta = getattr(ctx, "fw_metadata", None) if ctx else None
    return set(getattr(meta, "static_input_indices", None) or ())


def _compiler(kind: str, chip: str, freeze: bool):
    def compile_fn(gm: GraphModule, example_inputs):
        GRAPH_COMPILES[kind] += 1
        reason = _symbolic(example_inputs)
        if reason:
            log.info("tpuc: %s graph runs on the CPU: %s (compile with dynamic=False)",
                     kind, reason)
            return make_boxed_func(gm.forward)
        frozen = _static_inputs() if freeze else set()
        frozen = {i for i in frozen if isinstance(example_inputs[i], torch.Tensor)}
        return TpuGraph(gm, example_inputs, chip, kind, frozen)
    return compile_fn


def aot_backend(gm: GraphModule, example_inputs, options: dict | None = None, **_):
    """The `torch.compile` backend ("tpuc"); `options={"chip": "tpu_pro"}`
    picks the chip (default `$TPUC_CHIP`, else tpu_edge)."""
    chip = (options or {}).get("chip") or os.environ.get("TPUC_CHIP", DEFAULT_CHIP)
    # Inference binds parameters as weights; training graphs take them as
    # runtime inputs, so one binary serves every step.
    return aot_autograd(
        fw_compiler=_compiler("forward", chip, freeze=False),
        bw_compiler=_compiler("backward", chip, freeze=False),
        inference_compiler=_compiler("inference", chip, freeze=True),
        decompositions=decompositions(),
    )(gm, example_inputs)
