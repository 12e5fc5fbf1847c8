"""Converters of comparisons with a scalar and `where`: the masks of ReLU
backward (`where(x <= 0, 0, grad)`, or `threshold_backward`) and of
attention. A bool is 0.0 or 1.0 on the chip, so all are exact arithmetic
through the shared builder's mask helpers (`positive`, `logical_not`,
`select`)."""
from __future__ import annotations

import torch

from .ops import _r
from .registry import Sample, converter

aten = torch.ops.aten

# op -> (operands of the difference swapped, result negated):
# a > b is [a - b > 0], a <= b its negation, a < b is [b - a > 0], ...
_COMPARE = {aten.gt.Scalar: (False, False), aten.le.Scalar: (False, True),
            aten.lt.Scalar: (True, False), aten.ge.Scalar: (True, True)}


def _relu_out():
    """Values with exact zeros and ties with the samples' scalars."""
    x = _r(2, 3, 4, 5)
    x[x < 0] = 0.0
    x[0, 0, 0, :3] = 0.5
    return x


def _samples():
    return [Sample((_relu_out(), 0)), Sample((_r(3, 7), 0.5)), Sample((_relu_out(), 0.5))]


def _difference(imp, args, name, swap):
    """x - s (s - x when `swap`) of the arguments (x, s)."""
    x, s = imp.value(args[0]), float(args[1])
    if s == 0.0 and not swap:
        return x
    if swap:
        return imp.binary("sub", f"{name}_diff", imp.scalar(f"{name}_other", s), x)
    return imp.binary("sub", f"{name}_diff", x, imp.scalar(f"{name}_other", s))


@converter(*_COMPARE, mask_result=True, samples=_samples)
def compare_scalar(imp, node):
    swap, negate = _COMPARE[node.target]
    name = node.name
    d = _difference(imp, node.args, name, swap)
    if not negate:
        return imp.positive(name, d)
    return imp.logical_not(name, imp.positive(f"{name}_opposite", d))


@converter(aten.eq.Scalar, aten.ne.Scalar, mask_result=True, samples=_samples)
def equal_scalar(imp, node):
    name = node.name
    d = imp.unary("abs", f"{name}_absdiff", _difference(imp, node.args, name, False))
    if node.target is aten.ne.Scalar:
        return imp.positive(name, d)
    return imp.logical_not(name, imp.positive(f"{name}_ne", d))


def _where_samples():
    cond = _r(2, 3, 4, 5, seed=3) > 0
    return [Sample((cond, _r(2, 3, 4, 5, seed=1), _r(2, 3, 4, 5, seed=2))),
            Sample((cond, torch.tensor(0.0), _r(2, 3, 4, 5, seed=2))),
            Sample((_r(4, 1, seed=4) > 0, _r(4, 6, seed=1), _r(6, seed=2)))]


@converter(aten.where.self, mask_args=(0,), samples=_where_samples)
def where(imp, node):
    """cond * x + (1 - cond) * y: exact for finite x and y (infinite
    constants become the float32 limits)."""
    def branch(a):
        const = imp.const(a)
        return imp.select_branch(a.name, lambda: imp.value(a),
                                 None if const is None else const.detach().cpu().float().numpy())
    return imp.select(node.name, imp.value(node.args[0]), branch(node.args[1]),
                      branch(node.args[2]))


@converter(aten.threshold_backward.default, samples=lambda: [
    Sample((_r(2, 3, 4, 5, seed=5), _relu_out(), 0)),
    Sample((_r(3, 7, seed=5), _r(3, 7), 0.5))])
def threshold_backward(imp, node):
    """ReLU's backward as one op: grad where x > threshold, else 0 (grad
    times the 0/1 mask, exact for finite grad)."""
    name = node.name
    keep = imp.positive(f"{name}_keep", _difference(imp, node.args[1:], name, False))
    return imp.binary("mul", name, imp.value(node.args[0]), keep)
