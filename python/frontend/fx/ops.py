"""Converters from ATen OpOverloads to Top ops, through the shared builder.

Each converter reads the node's ATen arguments and builds the Top op(s)
named by the FX node; the registry entry next to it says which operands are
indices, what else the chip needs (`check`, returning the reason it cannot
run), and gives sample arguments for the conformance tests.
"""
from __future__ import annotations

import math
import operator

import torch
from torch.fx import Node

from .registry import Param, Sample, converter

aten = torch.ops.aten
_BIG = 2 ** 62  # ONNX-style "to the end" for slices


def _r(*shape, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed + 7 * len(shape) + sum(shape))
    return torch.randn(*shape, generator=g) * scale


def _pos(*shape, seed=0):
    return _r(*shape, seed=seed).abs() + 0.5


def arg(node: Node, i: int, name: str, default=None):
    """Argument `i` (or keyword `name`) of the node, `default` if absent."""
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def _shape(node_or_val) -> list[int]:
    v = node_or_val.meta["val"] if isinstance(node_or_val, Node) else node_or_val
    return list(v.shape)


def _rank(node: Node, i: int = 0) -> int:
    return len(_shape(node.args[i]))


def is_constant(arg) -> bool:
    """A tensor the compiled graph holds as a weight (get_attr, or a
    placeholder bound to a constant)."""
    return isinstance(arg, Node) and (arg.op == "get_attr" or arg.meta.get("tpuc_constant", False))


def _need_constant(*positions):
    def check(node: Node):
        for i in positions:
            a = node.args[i] if len(node.args) > i else None
            if a is not None and not is_constant(a):
                return f"argument {i} must be a constant (the chip reads it as a weight)"
        return None
    return check


# -- convolution, normalization ------------------------------------------


def _conv_check(node):
    k = _rank(node, 1) - 2
    if k not in (1, 2):
        return f"{k}-D convolution is not supported (1-D and 2-D are)"
    # A plain conv reads a filter computed at run time (a trained parameter);
    # a transposed one needs its filter as a weight.
    return _need_constant(1, 2)(node) if node.args[6] else None


@converter(aten.convolution.default, check=_conv_check, samples=lambda: [
    Sample((_r(1, 3, 9, 9), Param(_r(8, 3, 3, 3)), Param(_r(8)), [2, 2], [1, 1], [1, 1],
            False, [0, 0], 1)),
    Sample((_r(1, 8, 8, 8), Param(_r(8, 1, 3, 3)), None, [1, 1], [1, 1], [1, 1],
            False, [0, 0], 8)),
    Sample((_r(1, 4, 16), Param(_r(6, 4, 3)), Param(_r(6)), [1], [2], [2], False, [0], 1)),
    Sample((_r(1, 4, 5, 5), Param(_r(4, 3, 3, 3)), Param(_r(3)), [2, 2], [1, 1], [1, 1],
            True, [1, 1], 1)),
    # Filter and bias as runtime inputs (training).
    Sample((_r(2, 4, 7, 7), _r(6, 2, 3, 3, seed=1), _r(6, seed=2), [1, 1], [1, 1], [1, 1],
            False, [0, 0], 2)),
])
def convolution(imp, node):
    x, w, b, stride, padding, dilation, transposed, out_pad, groups = node.args
    k = _rank(node, 1) - 2
    kernel = _shape(w)[2:]
    pads = list(padding) * 2 if len(padding) == k else list(padding)
    bias = imp.none() if b is None else imp.value(b)
    common = dict(kernel=kernel, strides=stride, pads=pads, dilations=dilation, group=groups)
    if transposed:
        return imp.deconv(node.name, imp.value(x), imp.value(w), bias,
                          output_padding=out_pad, **common)
    return imp.conv(node.name, imp.value(x), imp.value(w), bias, **common)


def _bn_check(node):
    if _rank(node) < 2:
        return "input must have a channel dim"
    return _need_constant(1, 2, 3, 4)(node)


@converter(aten._native_batch_norm_legit_no_training.default, check=_bn_check,
           samples=lambda: [Sample((_r(2, 4, 5, 5), Param(_r(4)), Param(_r(4)), Param(_r(4)),
                                    Param(_pos(4)), 0.1, 1e-5))])
def batch_norm(imp, node):
    x, w, b, mean, var, _, eps = node.args
    c = _shape(x)[1]
    scale = imp.value(w) if w is not None else imp.weight(f"{node.name}_scale", torch.ones(c))
    shift = imp.value(b) if b is not None else imp.weight(f"{node.name}_shift", torch.zeros(c))
    return [imp.batch_norm(node.name, imp.value(x), scale, shift, imp.value(mean),
                           imp.value(var), epsilon=eps)]


@converter(aten.native_layer_norm.default, outputs=(0, 1, 2), samples=lambda: [
    Sample((_r(2, 5, 16), [16], Param(_r(16)), Param(_r(16)), 1e-5)),
    Sample((_r(2, 3, 4, 4), [4, 4], None, None, 1e-6)),
    Sample((_r(3, 8, scale=3.0), [8], _r(8, seed=1), _r(8, seed=2), 1e-5)),
])
def layer_norm(imp, node):
    """The normalized output, and when a training graph keeps them for the
    backward, the mean and 1/sqrt(var + eps) over the normalized axes
    (biased variance, shaped like the input with those axes 1)."""
    x, normalized_shape, w, b, eps = node.args
    rank = len(_shape(x))
    axis = rank - len(normalized_shape)
    weight = None if w is None else imp.value(w)
    bias = None if b is None else imp.value(b)
    xv, name = imp.value(x), node.name
    out = imp.layer_norm(name, xv, weight, bias, axis=axis, epsilon=eps)
    if not any(u.target is operator.getitem and u.args[1] in (1, 2) for u in node.users):
        return [out, None, None]
    axes = list(range(axis, rank))
    mean = imp.reduce(f"{name}_mean", xv, "mean", axes)
    centered = imp.binary("sub", f"{name}_centered", xv, mean)
    var = imp.reduce(f"{name}_var", imp.binary("mul", f"{name}_square", centered, centered),
                     "mean", axes)
    rstd = imp.unary("rsqrt", f"{name}_rstd", imp.binary(
        "add", f"{name}_var_eps", var, imp.scalar(f"{name}_eps", eps)))
    return [out, mean, rstd]


# -- elementwise ---------------------------------------------------------


def _scaled(imp, node, other, alpha):
    """`other * alpha` (aten add/sub's alpha), folded when `other` is a number."""
    if alpha == 1:
        return imp.operand(other, f"{node.name}_other")
    if not isinstance(other, Node):
        return imp.operand(other * alpha, f"{node.name}_other")
    return imp.binary("mul", f"{node.name}_alpha", imp.value(other),
                      imp.scalar(f"{node.name}_alpha_value", alpha))


@converter(aten.add.Tensor, aten.sub.Tensor, samples=lambda: [
    Sample((_r(2, 3, 4), _r(2, 3, 4, seed=1))),
    Sample((_r(2, 3, 4), _r(3, 1, seed=2)), {"alpha": 0.5}),
    Sample((_r(2, 8), 1.5)),
    Sample((_r(1, 4, 4), Param(_r(4))))])
def add_sub(imp, node):
    kind = "add" if node.target is aten.add.Tensor else "sub"
    x, other = node.args[:2]
    return imp.binary(kind, node.name, imp.operand(x, f"{node.name}_self"),
                      _scaled(imp, node, other, node.kwargs.get("alpha", 1)))


_BINARY = {aten.mul.Tensor: "mul", aten.div.Tensor: "div",
           aten.maximum.default: "max", aten.minimum.default: "min"}


@converter(*_BINARY, samples=lambda: [
    Sample((_r(2, 3, 4), _pos(2, 3, 4, seed=1))),
    Sample((_r(4, 3), _pos(3, seed=2)))])
def binary(imp, node):
    x, other = node.args[:2]
    return imp.binary(_BINARY[node.target], node.name, imp.operand(x, f"{node.name}_self"),
                      imp.operand(other, f"{node.name}_other"))


_SCALAR = {aten.add.Scalar: "add", aten.sub.Scalar: "sub", aten.mul.Scalar: "mul",
           aten.div.Scalar: "div"}


@converter(*_SCALAR, samples=lambda: [Sample((_r(2, 5), 0.25))])
def binary_scalar(imp, node):
    x, other = node.args[:2]
    alpha = node.kwargs.get("alpha", 1) if node.target in (aten.add.Scalar,
                                                           aten.sub.Scalar) else 1
    return imp.binary(_SCALAR[node.target], node.name, imp.value(x),
                      imp.scalar(f"{node.name}_other", other * alpha))


_UNARY = {aten.relu.default: "relu", aten.sigmoid.default: "sigmoid",
          aten.tanh.default: "tanh", aten.exp.default: "exp", aten.erf.default: "erf",
          aten.abs.default: "abs", aten.silu.default: "silu",
          aten.hardswish.default: "hardswish"}


@converter(*_UNARY, samples=lambda: [Sample((_r(2, 3, 8, scale=2.0),))])
def unary(imp, node):
    return imp.unary(_UNARY[node.target], node.name, imp.value(node.args[0]))


_POSITIVE_UNARY = {aten.log.default: "log", aten.sqrt.default: "sqrt",
                   aten.rsqrt.default: "rsqrt"}


@converter(*_POSITIVE_UNARY, samples=lambda: [Sample((_pos(2, 3, 8),))])
def positive_unary(imp, node):
    return imp.unary(_POSITIVE_UNARY[node.target], node.name, imp.value(node.args[0]))


@converter(aten.neg.default, samples=lambda: [Sample((_r(3, 5),))])
def neg(imp, node):
    return imp.neg(node.name, imp.value(node.args[0]))


@converter(aten.reciprocal.default, samples=lambda: [Sample((_pos(3, 5),))])
def reciprocal(imp, node):
    return imp.reciprocal(node.name, imp.value(node.args[0]))


@converter(aten.pow.Tensor_Scalar, samples=lambda: [Sample((_pos(3, 5), 2)),
                                                    Sample((_pos(3, 5), 0.5))])
def pow_scalar(imp, node):
    return imp.pow(node.name, imp.value(node.args[0]), node.args[1])


@converter(aten.gelu.default, samples=lambda: [Sample((_r(2, 16, scale=2.0),)),
                                               Sample((_r(2, 16),), {"approximate": "tanh"})])
def gelu(imp, node):
    return imp.gelu(node.name, imp.value(node.args[0]), arg(node, 1, "approximate", "none"))


@converter(aten.leaky_relu.default, samples=lambda: [Sample((_r(2, 16),)),
                                                     Sample((_r(2, 16), 0.2))])
def leaky_relu(imp, node):
    return imp.leaky_relu(node.name, imp.value(node.args[0]),
                          arg(node, 1, "negative_slope", 0.01))


@converter(aten.hardsigmoid.default, samples=lambda: [Sample((_r(2, 16, scale=4.0),))])
def hardsigmoid(imp, node):
    return imp.hard_sigmoid(node.name, imp.value(node.args[0]), 1.0 / 6.0, 0.5)


@converter(aten.hardtanh.default, samples=lambda: [Sample((_r(2, 16, scale=4.0),)),
                                                   Sample((_r(2, 16, scale=4.0), 0.0, 6.0))])
def hardtanh(imp, node):
    return imp.clip(node.name, imp.value(node.args[0]), arg(node, 1, "min_val", -1.0),
                    arg(node, 2, "max_val", 1.0))


def _clamp_check(node):
    lo, hi = arg(node, 1, "min"), arg(node, 2, "max")
    if lo is None and hi is None:
        return "neither min nor max given"
    return None


@converter(aten.clamp.default, check=_clamp_check, samples=lambda: [
    Sample((_r(2, 16, scale=3.0), -1.0, 2.0)), Sample((_r(2, 16), None, 0.5))])
def clamp(imp, node):
    lo, hi = arg(node, 1, "min"), arg(node, 2, "max")
    return imp.clip(node.name, imp.value(node.args[0]),
                    -math.inf if lo is None else float(lo), math.inf if hi is None else float(hi))


# -- linear algebra --------------------------------------------------------


@converter(aten.mm.default, samples=lambda: [
    Sample((_r(5, 8), _r(8, 6, seed=1))), Sample((_r(5, 8), Param(_r(8, 6, seed=1))))])
@converter(aten.bmm.default, samples=lambda: [Sample((_r(2, 5, 8), _r(2, 8, 6, seed=1)))])
def matmul(imp, node):
    return imp.matmul(node.name, imp.value(node.args[0]), imp.value(node.args[1]))


def _addmm_check(node):
    if arg(node, 3, "beta", 1) != 1 or arg(node, 4, "alpha", 1) != 1:
        return "beta/alpha other than 1"
    return None


@converter(aten.addmm.default, check=_addmm_check, samples=lambda: [
    Sample((Param(_r(6)), _r(5, 8), Param(_r(8, 6, seed=1)))),
    Sample((_r(5, 6, seed=2), _r(5, 8), _r(8, 6, seed=1)))])
def addmm(imp, node):
    bias, a, b = node.args[:3]
    n = _shape(b)[-1]
    const = imp.const(bias)
    if const is not None and const.numel() == n and _shape(bias)[-1] == n:
        w = imp.weight(f"{bias.name}_row" if const.dim() != 1 else bias.name,
                       const.reshape(n))
        return imp.matmul(node.name, imp.value(a), imp.value(b), w)
    mm = imp.matmul(f"{node.name}_mm", imp.value(a), imp.value(b))
    return imp.binary("add", node.name, mm, imp.value(bias))


# -- data movement ---------------------------------------------------------


@converter(aten.view.default, aten._unsafe_view.default, aten.reshape.default,
           samples=lambda: [Sample((_r(2, 3, 4), [6, 4])), Sample((_r(2, 3, 4), [-1]))])
@converter(aten.squeeze.dims, samples=lambda: [Sample((_r(2, 1, 4, 1), [1, 3]))])
@converter(aten.squeeze.dim, samples=lambda: [Sample((_r(2, 1, 4), 1))])
@converter(aten.unsqueeze.default, samples=lambda: [Sample((_r(2, 4), -1))])
def reshape(imp, node):
    return imp.reshape(node.name, imp.value(node.args[0]), _shape(node))


@converter(aten.clone.default, aten.alias.default, samples=lambda: [Sample((_r(2, 3),))])
def identity(imp, node):
    return imp.value(node.args[0])


def _to_copy_check(node):
    if arg(node, 1, "dtype") not in (None, torch.float32):
        return f"conversion to {node.kwargs.get('dtype')}"
    return None


@converter(aten._to_copy.default, check=_to_copy_check,
           samples=lambda: [Sample((_r(2, 3),), {"dtype": torch.float32})])
def to_copy(imp, node):
    return imp.value(node.args[0])


@converter(aten.permute.default, samples=lambda: [Sample((_r(2, 3, 4), [2, 0, 1])),
                                                  Sample((_r(2, 3, 4, 5), [0, 2, -3, 3]))])
def permute(imp, node):
    rank = _rank(node)
    return imp.permute(node.name, imp.value(node.args[0]), [d % rank for d in node.args[1]])


@converter(aten.expand.default, samples=lambda: [Sample((_r(3, 1), [2, 3, 4]))])
def expand(imp, node):
    x = node.args[0]
    return imp.expand(node.name, imp.value(x), _shape(x), _shape(node))


@converter(aten.cat.default, samples=lambda: [
    Sample(([_r(2, 3), _r(2, 5, seed=1)], 1)), Sample(([_r(1, 3), Param(_r(2, 3))],))])
def cat(imp, node):
    tensors = [t for t in node.args[0] if _shape(t) != [0]]
    return imp.concat(node.name, [imp.value(t) for t in tensors], arg(node, 1, "dim", 0))


def _slice_check(node):
    if arg(node, 4, "step", 1) < 1:
        return "step must be positive"
    return None


@converter(aten.slice.Tensor, check=_slice_check, samples=lambda: [
    Sample((_r(4, 10), 1, 2, 9, 3)), Sample((_r(4, 10), 0, -3, 2 ** 63 - 1))])
def slice_(imp, node):
    dim = arg(node, 1, "dim", 0)
    start = arg(node, 2, "start") or 0
    end = arg(node, 3, "end")
    end = _BIG if end is None else max(-_BIG, min(_BIG, end))
    return imp.slice(node.name, imp.value(node.args[0]), starts=[start], ends=[end],
                     axes=[dim], steps=[arg(node, 4, "step", 1)])


@converter(aten.select.int, samples=lambda: [Sample((_r(3, 4, 5), 1, 2)),
                                            Sample((_r(3, 4, 5), 0, -1))])
def select(imp, node):
    _, dim, index = node.args
    size = _shape(node.args[0])[dim]
    index %= size
    taken = imp.slice(f"{node.name}_slice", imp.value(node.args[0]), starts=[index],
                      ends=[index + 1], axes=[dim], steps=[1])
    return imp.reshape(node.name, taken, _shape(node))


@converter(aten.constant_pad_nd.default, check=lambda n: (
    "negative pads (cropping)" if min(n.args[1]) < 0 else None), samples=lambda: [
        Sample((_r(1, 2, 4, 4), [1, 2, 0, 1])), Sample((_r(2, 5), [2, 1], 0.5))])
def constant_pad(imp, node):
    x, pad = node.args[:2]
    rank = len(_shape(x))
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):  # pairs from the last dim backwards
        begins[rank - 1 - i], ends[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return imp.pad(node.name, imp.value(x), begins + ends, "constant", arg(node, 2, "value", 0.0))


@converter(aten.embedding.default, index_args=(1,), samples=lambda: [
    Sample((Param(_r(10, 6)), torch.tensor([[1, 3, 9], [0, 0, 4]])))])
def embedding(imp, node):
    return imp.gather(node.name, imp.value(node.args[0]), imp.value(node.args[1]), 0)


# -- reductions, softmax, pooling -----------------------------------------


def _dims(node, i, name):
    dims = arg(node, i, name)
    rank = _rank(node)
    return list(range(rank)) if not dims else [d % rank for d in dims]


def _runs(dims: list[int]) -> list[list[int]]:
    """Sorted dims split into runs of adjacent ones: [0, 2, 3] → [[0], [2, 3]]."""
    runs: list[list[int]] = []
    for d in sorted(dims):
        if runs and runs[-1][-1] == d - 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    return runs


def _reduce(imp, node, mode: str):
    """A reduction over any dims: the codegen reduces adjacent axes, so each
    run of adjacent dims is one Top reduce (keeping dims, last run first);
    sums, means (equal counts), maxima and minima compose exactly."""
    dims, keep = _dims(node, 1, "dim"), arg(node, 2, "keepdim", False)
    runs = _runs(dims)
    x = imp.value(node.args[0])
    if len(runs) == 1:
        return imp.reduce(node.name, x, mode, dims, keep)
    for i, run in enumerate(reversed(runs)):
        last = i == len(runs) - 1
        x = imp.reduce(node.name if last and keep else f"{node.name}_r{i}", x, mode, run, True)
    return x if keep else imp.reshape(node.name, x, _shape(node))


def _reduce_check(node):
    if arg(node, 3, "dtype") is not None:
        return "a dtype argument"
    return None


@converter(aten.mean.dim, check=_reduce_check, samples=lambda: [
    Sample((_r(2, 4, 5, 5), [-1, -2], True)), Sample((_r(2, 3, 8), [1])),
    Sample((_r(3, 4, 5, 6), [0, 2, 3]))])
def mean(imp, node):
    dims, keep = _dims(node, 1, "dim"), arg(node, 2, "keepdim", False)
    if _rank(node) == 4 and sorted(dims) == [2, 3] and keep:
        return imp.global_avg_pool(node.name, imp.value(node.args[0]))
    return _reduce(imp, node, "mean")


@converter(aten.sum.dim_IntList, check=_reduce_check, samples=lambda: [
    Sample((_r(2, 3, 8), [2])), Sample((_r(2, 3, 8), [0, 1], True)),
    Sample((_r(3, 4, 5, 6), [0, 2, 3])), Sample((_r(3, 4, 5, 6), [3, 0, 1], True))])
def sum_(imp, node):
    return _reduce(imp, node, "sum")


@converter(aten.amax.default, aten.amin.default, samples=lambda: [
    Sample((_r(2, 3, 8), [1])), Sample((_r(2, 3, 8), [-1], True)),
    Sample((_r(3, 4, 5), [0, 2], True))])
def amax_amin(imp, node):
    return _reduce(imp, node, "max" if node.target is aten.amax.default else "min")


@converter(aten._softmax.default, check=lambda n: (
    "half_to_float" if n.args[2] else None), samples=lambda: [
        Sample((_r(2, 3, 8, scale=3.0), -1, False)), Sample((_r(2, 5, 4), 1, False))])
def softmax(imp, node):
    return imp.softmax(node.name, imp.value(node.args[0]), node.args[1])


# Rows that are all -inf give NaN here instead of _safe_softmax's zeros;
# attention masks built by transformers use finite minima, never -inf rows.
@converter(aten._safe_softmax.default, check=lambda n: (
    "a dtype argument" if arg(n, 2, "dtype") is not None else None), samples=lambda: [
        Sample((_r(2, 2, 4, 4, scale=3.0), -1))])
def safe_softmax(imp, node):
    return imp.softmax(node.name, imp.value(node.args[0]), node.args[1])


def _pair(v, default=()):
    """A window argument of one or two ints (empty: `default`) as two."""
    v = list(v) if v else list(default)
    return v * 2 if len(v) == 1 else v


def _window(node, kernel_i, stride_i, pad_i):
    kernel = _pair(node.args[kernel_i])
    stride = _pair(arg(node, stride_i, "stride", []), kernel)
    pad = _pair(arg(node, pad_i, "padding", [0, 0]))
    return kernel, stride, pad + pad


def _max_pool_check(node):
    dilation = list(arg(node, 4, "dilation", [1]) or [1])
    if any(d != 1 for d in dilation):
        return "dilated pooling"
    return None


@converter(aten.max_pool2d_with_indices.default, check=_max_pool_check, samples=lambda: [
    Sample((_r(1, 3, 9, 9), [3, 3], [2, 2], [1, 1])),
    Sample((_r(1, 2, 8, 8), [2, 2], [], [0, 0], [1, 1], True))])
def max_pool2d(imp, node):
    kernel, stride, pads = _window(node, 1, 2, 3)
    return [imp.pool("max", node.name, imp.value(node.args[0]), kernel=kernel, strides=stride,
                     pads=pads, ceil_mode=arg(node, 5, "ceil_mode", False))]


@converter(aten.avg_pool2d.default, check=lambda n: (
    "divisor_override" if arg(n, 6, "divisor_override") is not None else None), samples=lambda: [
        Sample((_r(1, 3, 8, 8), [2, 2])),
        Sample((_r(1, 3, 9, 9), [3, 3], [2, 2], [1, 1], False, False))])
def avg_pool2d(imp, node):
    kernel, stride, pads = _window(node, 1, 2, 3)
    return imp.pool("avg", node.name, imp.value(node.args[0]), kernel=kernel, strides=stride,
                    pads=pads, ceil_mode=arg(node, 4, "ceil_mode", False),
                    count_include_pad=arg(node, 5, "count_include_pad", True))


def _adaptive_check(node):
    h, w = _shape(node.args[0])[-2:]
    oh, ow = node.args[1]
    if h % oh or w % ow:
        return f"output {oh}x{ow} does not divide input {h}x{w}"
    return None


@converter(aten._adaptive_avg_pool2d.default, check=_adaptive_check, samples=lambda: [
    Sample((_r(1, 4, 6, 6), [1, 1])), Sample((_r(1, 4, 6, 6), [2, 3]))])
def adaptive_avg_pool2d(imp, node):
    x = node.args[0]
    h, w = _shape(x)[-2:]
    oh, ow = node.args[1]
    if (oh, ow) == (1, 1):
        return imp.global_avg_pool(node.name, imp.value(x))
    kernel = [h // oh, w // ow]
    return imp.pool("avg", node.name, imp.value(x), kernel=kernel, strides=kernel,
                    pads=[0, 0, 0, 0])


def _upsample_check(node):
    x, out = _shape(node.args[0]), _shape(node)
    if len(x) != 4 or out[2] % x[2] or out[3] % x[3]:
        return "only integer H/W upscaling of NCHW"
    return None


@converter(aten.upsample_nearest2d.vec, check=_upsample_check, samples=lambda: [
    Sample((_r(1, 2, 3, 4), None, [2.0, 3.0]))])
def upsample_nearest(imp, node):
    x, out = _shape(node.args[0]), _shape(node)
    return imp.upsample(node.name, imp.value(node.args[0]), out[2] // x[2], out[3] // x[3])
