"""Comparisons, logic and Where: the mask arithmetic of attention models.

Top tensors are f32 and a bool is 0.0 or 1.0, so these ops become exact
arithmetic on existing Top ops, as tpu-mlir also keeps masks in float:

* comparisons of integer or bool tensors (token ids, attention masks,
  positions): a - b is an exact integer, so Equal is 1 - min(|a - b|, 1) and
  Greater is clip(a - b, 0, 1). Comparisons of float tensors have no exact
  form here and are refused.
* And, Or, Xor, Not of 0/1 values: a*b, max(a, b), |a - b|, 1 - a.
* Where(c, x, y) = c*x + (1 - c)*y, exact for finite x and y. Infinite
  constants (the -inf of additive attention masks) become the float32
  limits, which give the same softmax.
"""
from __future__ import annotations

import logging

import numpy as np

from .onnx_ops import converter

log = logging.getLogger(__name__)


def _require_integral(imp, node):
    for name in node.input:
        if not imp.is_integral(name):
            raise imp.fail(f"comparing float tensor '{name}' is not supported (integer "
                           "and bool tensors are)")


def _diff(imp, node, out, swap=False):
    a, b = (imp.value(n) for n in node.input[:2])
    if swap:
        a, b = b, a
    return imp.binary("sub", f"{out}_diff", a, b)


@converter("Equal")
def equal(imp, node):
    _require_integral(imp, node)
    out = node.output[0]
    d = imp.unary("abs", f"{out}_absdiff", _diff(imp, node, out))
    ne = imp.binary("min", f"{out}_ne", d, imp.scalar(f"{out}_one", 1.0))
    return imp.binary("sub", out, imp.scalar(f"{out}_one", 1.0), ne)


@converter("Greater", "Less", "GreaterOrEqual", "LessOrEqual")
def compare(imp, node):
    _require_integral(imp, node)
    out = node.output[0]
    # a > b is clip(a - b, 0, 1); a >= b is a > b - 1.
    d = _diff(imp, node, out, swap=node.op_type.startswith("Less"))
    if node.op_type.endswith("OrEqual"):
        d = imp.binary("add", f"{out}_plus_one", d, imp.scalar(f"{out}_one", 1.0))
    return imp.positive(out, d, integral=True)


@converter("Not")
def logical_not(imp, node):
    return imp.logical_not(node.output[0], imp.value(node.input[0]))


@converter("And", "Or", "Xor")
def logical(imp, node):
    out = node.output[0]
    a, b = (imp.value(n) for n in node.input[:2])
    if node.op_type == "And":
        return imp.binary("mul", out, a, b)
    if node.op_type == "Or":
        return imp.binary("max", out, a, b)
    return imp.unary("abs", out, imp.binary("sub", f"{out}_diff", a, b))


@converter("IsNaN", "IsInf")
def is_special(imp, node):
    """Integer tensors are never NaN or infinite. For float tensors the chip
    has no test: they are taken as finite, which the log says (the usual
    case, the NaN guard after a masked softmax, only matters for rows that
    are masked entirely)."""
    name = node.input[0]
    if not imp.is_integral(name):
        log.warning("%s: node '%s' (%s): taken as all false: tpuc computes no "
                    "NaN/Inf test", imp.source, node.name or node.output[0], node.op_type)
    return imp.constant_result(node.output[0], np.zeros(imp.shape(node.output[0]), np.float32))


@converter("Where")
def where(imp, node):
    out = node.output[0]
    out_shape, cond = imp.shape(out), imp.const(node.input[0])
    if cond is not None and (np.all(cond) or not np.any(cond)):
        # A constant condition picks one branch, broadcast to the output.
        pick = node.input[1] if np.all(cond) else node.input[2]
        return imp.expand(out, imp.value(pick), imp.shape(pick), out_shape)
    x, y = (imp.select_branch(n, lambda n=n: imp.value(n), imp.const(n))
            for n in node.input[1:3])
    return imp.select(out, imp.value(node.input[0]), x, y)

@converter("GlobalMaxPool")
def global_max_pool(imp, node):
    rank = len(imp.shape(node.input[0]))
    return imp.reduce(node.output[0], imp.value(node.input[0]), "max",
                      list(range(2, rank)), True)
