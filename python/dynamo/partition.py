"""Support-driven split of an ATen graph into device subgraphs and CPU ops.

`TpuSupport` asks the converter registry (the same table the importer
uses) whether each node can run on the chip, from the dtypes and shapes of
`node.meta['val']`, and remembers why not; `OP_FALLBACK_LIST` forces ops to
the CPU. `CapabilityBasedPartitioner` groups the supported nodes into
subgraphs; the caller replaces each with its compiled program.
"""
from __future__ import annotations

import operator
import os
from collections import Counter
from dataclasses import dataclass

import torch
from torch.fx import GraphModule, Node
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner, Partition
from torch.fx.passes.operator_support import OperatorSupportBase

from ..frontend.fx import op_name, packet_name, unsupported_reason

aten = torch.ops.aten

# Ops that move no data on their own: a subgraph of only these is not worth
# a round trip to the chip.
NON_COMPUTE = {aten.view.default, aten._unsafe_view.default, aten.reshape.default,
               aten.squeeze.dims, aten.squeeze.dim, aten.unsqueeze.default,
               aten.clone.default, aten.alias.default, aten._to_copy.default,
               aten.expand.default, operator.getitem}


def forced_fallbacks() -> set[str]:
    """Op names from `OP_FALLBACK_LIST` (e.g. "aten.sort,aten.cumsum"); an
    entry names an op (all overloads) or one overload (aten.add.Tensor)."""
    text = os.environ.get("OP_FALLBACK_LIST", "")
    return {s.strip().replace("::", ".") for s in text.split(",") if s.strip()}


class TpuSupport(OperatorSupportBase):
    def __init__(self, forced: set[str] | None = None):
        self.forced = forced_fallbacks() if forced is None else forced
        self.reasons: dict[Node, str] = {}

    def reason(self, node: Node) -> str | None:
        if node.op != "call_function":
            return None
        if packet_name(node.target) in self.forced or op_name(node.target) in self.forced:
            return "forced by OP_FALLBACK_LIST"
        if node.target is operator.getitem and isinstance(node.args[0], Node) \
                and self.reason(node.args[0]):
            return "its producer runs on the CPU"
        return unsupported_reason(node)

    def is_node_supported(self, submodules, node: Node) -> bool:
        if node.op != "call_function":  # inputs, constants, outputs stay outside
            return False
        reason = self.reason(node)
        if reason:
            self.reasons[node] = reason
            return False
        return True


@dataclass
class Split:
    partitions: list[Partition]
    fallbacks: Counter          # (op name, reason) -> count


def propose(gm: GraphModule, support: TpuSupport) -> Split:
    """Device partitions worth compiling, and the ops left on the CPU."""
    partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
    partitions = [p for p in partitioner.propose_partitions()
                  if any(n.target not in NON_COMPUTE for n in p.nodes)]
    fallbacks = Counter((op_name(n.target), r) for n, r in support.reasons.items()
                        if n.target is not operator.getitem)
    return Split(partitions, fallbacks)


def fuse(gm: GraphModule, partitions: list[Partition]) -> GraphModule:
    """`gm` with each partition replaced by a call to submodule `tpu_<i>`."""
    partitioner = CapabilityBasedPartitioner(gm, TpuSupport(set()))
    fused = partitioner.fuse_partitions(partitions, prefix="tpu_")
    # The topological sort of the fusion may move constants (get_attr)
    # before the placeholders, which FX's code generation cannot handle.
    placeholders = [n for n in fused.graph.nodes if n.op == "placeholder"]
    first = next(iter(fused.graph.nodes))
    if placeholders and placeholders[0] is not first:
        first.prepend(placeholders[0])
    for before, p in zip(placeholders, placeholders[1:]):
        before.append(p)  # keeps the argument order
    fused.recompile()
    return fused


def describe(split: Split) -> str:
    """The CPU part of the log line: each op with its count and reason."""
    if not split.fallbacks:
        return "no CPU fallback"
    items = [f"{op} x{n} ({reason})" if n > 1 else f"{op} ({reason})"
             for (op, reason), n in sorted(split.fallbacks.items())]
    return "CPU fallback: " + ", ".join(items)
