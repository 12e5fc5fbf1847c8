"""Single-op graphs built from the registry's samples (conformance tests,
coverage reports): one placeholder per tensor argument, the op, and the
results the chip computes."""
from __future__ import annotations

import operator
from dataclasses import dataclass

import torch
from torch.fx import Graph, GraphModule

from .registry import REGISTRY, Param, Sample


@dataclass
class SampleGraph:
    gm: GraphModule
    inputs: list[torch.Tensor]           # runtime inputs, in placeholder order
    constants: dict[str, torch.Tensor]   # placeholder name -> weight
    expected: list[torch.Tensor]         # eager results


def sample_graph(target, sample: Sample) -> SampleGraph:
    g = Graph()
    inputs, constants, real = [], {}, []

    def lift(a):
        if isinstance(a, (list, tuple)):
            return type(a)(lift(x) for x in a)
        if isinstance(a, (torch.Tensor, Param)):
            t = a.tensor if isinstance(a, Param) else a
            p = g.placeholder(f"{'w' if isinstance(a, Param) else 'x'}{len(real)}")
            p.meta["val"] = t
            real.append(t)
            (constants.__setitem__(p.name, t) if isinstance(a, Param) else inputs.append(t))
            return p
        return a

    def unlift(a):
        if isinstance(a, (list, tuple)):
            return type(a)(unlift(x) for x in a)
        return a.tensor if isinstance(a, Param) else a

    args, kwargs = lift(sample.args), {k: lift(v) for k, v in sample.kwargs.items()}
    node = g.call_function(target, args, kwargs)
    result = target(*unlift(sample.args), **{k: unlift(v) for k, v in sample.kwargs.items()})
    node.meta["val"] = result
    if isinstance(result, (list, tuple)):
        outs = []
        produced = [i for i in REGISTRY[target].outputs if result[i] is not None]
        for i in produced:
            item = g.call_function(operator.getitem, (node, i))
            item.meta["val"] = result[i]
            outs.append(item)
        expected = [result[i] for i in produced]
    else:
        outs, expected = [node], [result]
    g.output(tuple(outs))
    return SampleGraph(GraphModule(torch.nn.Module(), g), inputs, constants, expected)
