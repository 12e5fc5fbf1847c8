"""Converters of the indexing ops of losses and embedding backward: NLL's
`gather` of the label's log-probability and the `scatter` of its gradient,
and embedding backward's `index_put` with accumulation (scatter-add).
Indices arrive as float32 (exact below 2**24), and each op becomes
arithmetic on a one-hot mask [index == class], built by comparing the
indices with a constant range: a gather sums x times the mask, a scatter
selects by it, a scatter-add is the mask (transposed) times the values.
"""
from __future__ import annotations

import numpy as np
import torch

from .ops import _r, _shape, arg
from .registry import Sample, converter

aten = torch.ops.aten


def _one_hot(imp, name, index, classes: int, shape: list[int]):
    """1.0 where `index` (broadcast against a range of `classes` shaped
    `shape`) equals the class, else 0.0; exact, as both are integers."""
    classes_range = imp.weight(f"{name}_classes",
                               np.arange(classes, dtype=np.float32).reshape(shape))
    gap = imp.unary("abs", f"{name}_gap", imp.binary("sub", f"{name}_diff", index,
                                                     classes_range))
    return imp.logical_not(name, imp.positive(f"{name}_other", gap, integral=True))


def _along_check(node):
    """gather/scatter with one index per row along `dim` (NLL's labels)."""
    x, dim, index = node.args[:3]
    shape, ishape = _shape(x), _shape(index)
    dim %= len(shape)
    if len(ishape) != len(shape) or ishape[dim] != 1 or any(
            a != b for i, (a, b) in enumerate(zip(shape, ishape)) if i != dim):
        return "only one index along dim per row (the index's other dims equal the input's)"
    if node.target is aten.gather.default and arg(node, 3, "sparse_grad", False):
        return "sparse_grad"
    return None


def _range_shape(node):
    shape = _shape(node.args[0])
    dim = node.args[1] % len(shape)
    return [shape[d] if d == dim else 1 for d in range(len(shape))], dim


def _labels(n, classes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, classes, (n, 1), generator=g)


@converter(aten.gather.default, index_args=(2,), check=_along_check, samples=lambda: [
    Sample((_r(6, 10), 1, _labels(6, 10))),
    Sample((_r(5, 4), 0, torch.tensor([[4, 0, 2, 1]]) % 5))])
def gather(imp, node):
    """x at the index along `dim`: the sum of x times the one-hot mask."""
    range_shape, dim = _range_shape(node)
    name = node.name
    mask = _one_hot(imp, f"{name}_hot", imp.value(node.args[2]), range_shape[dim], range_shape)
    picked = imp.binary("mul", f"{name}_picked", imp.value(node.args[0]), mask)
    return imp.reduce(name, picked, "sum", [dim], True)


@converter(aten.scatter.value, index_args=(2,), check=_along_check, samples=lambda: [
    Sample((_r(6, 10), 1, _labels(6, 10), -0.25)),
    Sample((torch.zeros(4, 3), 1, _labels(4, 3, seed=2), 1.0))])
def scatter_value(imp, node):
    """`value` where the one-hot mask is set, x elsewhere."""
    range_shape, dim = _range_shape(node)
    name = node.name
    mask = _one_hot(imp, f"{name}_hot", imp.value(node.args[2]), range_shape[dim], range_shape)
    return imp.select(name, mask, imp.scalar(f"{name}_value", float(node.args[3])),
                      imp.value(node.args[0]))


def _index_put_check(node):
    x, indices, values = node.args[:3]
    if not arg(node, 3, "accumulate", False):
        return "only accumulate=True (a scatter-add; repeated indices are summed)"
    if len(indices) != 1 or indices[0] is None:
        return "only one index tensor, on dim 0"
    rows = _shape(indices[0])
    if _shape(values) != rows + _shape(x)[1:]:
        return "values must have the index's shape followed by the input's row shape"
    return None


@converter(aten.index_put.default, index_args=(1,), check=_index_put_check, samples=lambda: [
    Sample((torch.zeros(10, 6), [torch.tensor([1, 3, 9, 3, 0, 3])], _r(6, 6), True)),
    Sample((_r(7, 4), [torch.tensor([[1, 3, 6], [0, 0, 4]])], _r(2, 3, 4, seed=1), True))])
def index_put_accumulate(imp, node):
    """x plus, for every row, the sum of the value rows indexed to it: the
    transposed one-hot mask [rows, entries] times the values [entries, D]."""
    x_node, (index_node,), values_node = node.args[:3]
    rows, *row_shape = _shape(x_node)
    entries = int(np.prod(_shape(index_node)))
    width = int(np.prod(row_shape))
    name = node.name
    index = imp.reshape(f"{name}_index", imp.value(index_node), [1, entries])
    mask = _one_hot(imp, f"{name}_hot", index, rows, [rows, 1])
    values = imp.reshape(f"{name}_values", imp.value(values_node), [entries, width])
    summed = imp.reshape(f"{name}_summed", imp.matmul(f"{name}_sum", mask, values),
                         [rows, *row_shape])
    return imp.binary("add", name, imp.value(x_node), summed)
