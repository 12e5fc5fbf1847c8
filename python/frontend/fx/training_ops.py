"""Converters of the ops a training step adds to the forward graph (batch
norm with batch statistics and the running-stat update AOTAutograd
returns as outputs) and of the backward ops the chip runs, through the
shared builder. Kept apart from the inference converters in `ops`.
"""
from __future__ import annotations

import numpy as np
import torch

from .ops import _pos, _r, _shape, arg
from .registry import Sample, converter

aten = torch.ops.aten


def _bn_train_check(node):
    if len(_shape(node.args[0])) != 4:
        return "only NCHW inputs are supported"
    if any(node.args[i] is None for i in (1, 2)):
        return "affine weight and bias are required"
    return None


@converter(aten._native_batch_norm_legit_functional.default, check=_bn_train_check,
           outputs=(0, 1, 2, 3, 4), samples=lambda: [
               Sample((_r(4, 3, 5, 5, scale=2.0), _pos(3), _r(3, seed=1), _r(3, seed=2),
                       _pos(3, seed=3), True, 0.1, 1e-5))])
def batch_norm_training(imp, node):
    """Batch statistics over N, H, W (biased variance normalizes, the
    unbiased one enters the running variance, as PyTorch does); results:
    output, saved mean, saved 1/sqrt(var + eps), new running mean and var."""
    x, w, b, running_mean, running_var = (imp.value(a) for a in node.args[:5])
    momentum, eps = arg(node, 6, "momentum"), arg(node, 7, "eps")
    n, c, h, wd = _shape(node.args[0])
    count = n * h * wd
    name = node.name
    per_channel = [1, c, 1, 1]

    def channel_mean(out, t):
        # The chip reduces adjacent axes: H, W first, then N (equal counts).
        return imp.reduce(out, imp.reduce(f"{out}_hw", t, "mean", [2, 3]), "mean", [0])

    mean = channel_mean(f"{name}_mean", x)
    centered = imp.binary("sub", f"{name}_centered", x, mean)
    var = channel_mean(f"{name}_var", imp.binary("mul", f"{name}_square", centered, centered))
    rstd = imp.unary("rsqrt", f"{name}_rstd", imp.binary(
        "add", f"{name}_var_eps", var, imp.scalar(f"{name}_eps", eps)))
    scale = imp.binary("mul", f"{name}_scale", rstd, imp.reshape(f"{name}_w", w, per_channel))
    out = imp.binary("add", name, imp.binary("mul", f"{name}_scaled", centered, scale),
                     imp.reshape(f"{name}_b", b, per_channel))

    def update(tag, running, batch_value, factor):
        kept = imp.binary("mul", f"{name}_{tag}_kept", running,
                          imp.scalar(f"{name}_{tag}_keep", 1.0 - momentum))
        flat = imp.reshape(f"{name}_{tag}_batch", batch_value, [c])
        new = imp.binary("mul", f"{name}_{tag}_new", flat,
                         imp.scalar(f"{name}_{tag}_momentum", momentum * factor))
        return imp.binary("add", f"{name}_{tag}", kept, new)

    return [out, imp.reshape(f"{name}_save_mean", mean, [c]),
            imp.reshape(f"{name}_save_rstd", rstd, [c]),
            update("running_mean", running_mean, mean, 1.0),
            update("running_var", running_var, var, count / max(count - 1, 1))]


@converter(aten._log_softmax.default, check=lambda n: (
    "half_to_float" if n.args[2] else None), samples=lambda: [
        Sample((_r(4, 10, scale=3.0), 1, False)), Sample((_r(2, 3, 5, scale=3.0), -1, False))])
def log_softmax(imp, node):
    """x - max - log(sum(exp(x - max))) along `dim` (the max keeps exp finite)."""
    x, dim = imp.value(node.args[0]), node.args[1] % len(_shape(node.args[0]))
    name = node.name
    shifted = imp.binary("sub", f"{name}_shifted", x,
                         imp.reduce(f"{name}_max", x, "max", [dim], True))
    total = imp.reduce(f"{name}_sum", imp.unary("exp", f"{name}_exp", shifted), "sum", [dim],
                       True)
    return imp.binary("sub", name, shifted, imp.unary("log", f"{name}_log", total))


def _conv_backward_check(node):
    grad_out, x, w = node.args[:3]
    stride, transposed, groups, mask = node.args[4], node.args[7], node.args[9], node.args[10]
    if len(_shape(w)) != 4:
        return "only 2-D convolutions are supported"
    if transposed or groups != 1:
        return "transposed and grouped convolutions are not supported"
    if mask[0] and any(p < 0 for p in _grad_input_pads(node)):
        return "the input gradient would need a negative padding (padding > dilated kernel)"
    return None


def _grad_input_pads(node):
    """Pads (begins, ends) of the stride-1 convolution giving the input
    gradient from the zero-inserted output gradient: the dilated kernel
    less the padding on both sides."""
    padding, dilation = node.args[5], node.args[6]
    pads = [d * (k - 1) - p for k, p, d in zip(_shape(node.args[2])[2:], padding, dilation)]
    return pads + pads


def _left_out(node):
    """Rows and columns at the end of the input that the forward's stride
    left out (their input gradient comes from padding only)."""
    gy_node, x_node, w_node = node.args[:3]
    stride, padding, dilation = node.args[4], node.args[5], node.args[6]
    return [size - ((out - 1) * s - 2 * p + d * (k - 1) + 1)
            for size, out, k, s, p, d in zip(_shape(x_node)[2:], _shape(gy_node)[2:],
                                             _shape(w_node)[2:], stride, padding, dilation)]


def zero_insert(imp, name, x, channels, stride, extra=(0, 0)):
    """`x` with stride - 1 zeros between pixels and `extra` (< stride) zero
    rows and columns at the end: a depthwise transposed convolution by a
    constant 1x1 filter of ones (exact)."""
    if all(s == 1 for s in stride):
        return x
    ones = imp.weight(f"{name}_ones", np.ones([channels, 1, 1, 1], np.float32))
    return imp.deconv(name, x, ones, imp.none(), kernel=[1, 1], strides=stride,
                      pads=[0, 0, 0, 0], dilations=[1, 1], output_padding=list(extra),
                      group=channels)


def _flip(imp, name, t, shape, axes):
    """`t` reversed along `axes`, as a concat of one-wide slices."""
    for axis in axes:
        k = shape[axis]
        if k == 1:
            continue
        parts = [imp.slice(f"{name}_{axis}_{i}", t, starts=[i], ends=[i + 1], axes=[axis],
                           steps=[1]) for i in reversed(range(k))]
        t = imp.concat(f"{name}_{axis}", parts, axis)
    return t


@converter(aten.convolution_backward.default, check=_conv_backward_check,
           outputs=(0, 1, 2), samples=lambda: [
               Sample((_r(2, 5, 6, 6), _r(2, 3, 6, 6, seed=1), _r(5, 3, 3, 3, seed=2), [5],
                       [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])),
               Sample((_r(2, 4, 5, 5), _r(2, 3, 9, 9, seed=1), _r(4, 3, 3, 3, seed=2), [4],
                       [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])),
               # Even sizes: the forward's stride leaves out the last row.
               Sample((_r(2, 4, 4, 4), _r(2, 3, 8, 8, seed=1), _r(4, 3, 3, 3, seed=2), None,
                       [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])),
               Sample((_r(2, 6, 4, 4), _r(2, 3, 8, 8, seed=1), _r(6, 3, 1, 1, seed=2), None,
                       [2, 2], [0, 0], [1, 1], False, [0, 0], 1, [True, True, False])),
               # A ResNet-50 downsampling shortcut (wide enough to tile the rows).
               Sample((_r(16, 512, 4, 4), _r(16, 256, 8, 8, seed=1),
                       _r(512, 256, 1, 1, seed=2), None, [2, 2], [0, 0], [1, 1], False,
                       [0, 0], 1, [True, False, False])),
               Sample((_r(2, 4, 7, 7), _r(2, 6, 7, 7, seed=1), _r(4, 6, 1, 1, seed=2), None,
                       [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, False])),
           ])
def convolution_backward(imp, node):
    """Gradients of a 2-D convolution as convolutions with runtime filters:
    the input's is the output gradient, zero-inserted by the stride,
    convolved at stride 1 with the filter flipped in H/W and its channels
    swapped; the filter's is the input (channels as batch) convolved with
    the output gradient (batch as channels) at dilation = stride, cropped
    to the kernel; the bias's sums the output gradient over N, H, W."""
    gy_node, x_node, w_node = node.args[:3]
    stride, padding, dilation, mask = node.args[4], node.args[5], node.args[6], node.args[10]
    gy, x, w = imp.value(gy_node), imp.value(x_node), imp.value(w_node)
    o, i, kh, kw = _shape(w_node)
    n, _, h, wd = _shape(x_node)
    oh, ow = _shape(gy_node)[2:]
    name = node.name
    none = imp.none()
    results = [None, None, None]
    if mask[0]:
        flipped = _flip(imp, f"{name}_flip", imp.permute(f"{name}_wt", w, [1, 0, 2, 3]),
                        [i, o, kh, kw], [2, 3])
        spread = zero_insert(imp, f"{name}_spread", gy, o, stride, _left_out(node))
        results[0] = imp.conv(f"{name}_grad_input", spread, flipped, none, kernel=[kh, kw],
                              strides=[1, 1], pads=_grad_input_pads(node), dilations=dilation)
    if mask[1]:
        xt = imp.permute(f"{name}_xt", x, [1, 0, 2, 3])       # [I, N, H, W]
        gyt = imp.permute(f"{name}_gyt", gy, [1, 0, 2, 3])    # [O, N, OH, OW]
        full = imp.conv(f"{name}_grad_weight_full", xt, gyt, none, kernel=[oh, ow],
                        strides=dilation, pads=list(padding) * 2, dilations=stride)
        fh = (h + 2 * padding[0] - stride[0] * (oh - 1) - 1) // dilation[0] + 1
        fw = (wd + 2 * padding[1] - stride[1] * (ow - 1) - 1) // dilation[1] + 1
        if (fh, fw) != (kh, kw):
            full = imp.slice(f"{name}_grad_weight_crop", full, starts=[0, 0], ends=[kh, kw],
                             axes=[2, 3], steps=[1, 1])
        results[1] = imp.permute(f"{name}_grad_weight", full, [1, 0, 2, 3])
    if mask[2]:
        results[2] = imp.reduce(f"{name}_grad_bias", imp.reduce(
            f"{name}_grad_bias_hw", gy, "sum", [2, 3], False), "sum", [0], False)
    return results
