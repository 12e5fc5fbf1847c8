"""Max-pool backward without the saved indices.

ATen's `max_pool2d_with_indices_backward` scatters the output gradient to
int64 argmax indices the forward saved. The decomposition `DECOMPOSITIONS`
(used by the training backend) replaces it with `tpuc::max_pool2d_backward`,
which takes the pooled input instead and recomputes where the maxima are,
so the forward no longer has to produce indices and both graphs stay in
float32. On the CPU the op is ATen's own forward and backward (the same
indices, so a fallback is eager PyTorch exactly); on the chip it is the
converter below.
"""
from __future__ import annotations

import numpy as np
import torch

from ..top_builder import F32_MAX
from .ops import _pair, _r, _shape
from .registry import Sample, converter

aten = torch.ops.aten


@torch.library.custom_op("tpuc::max_pool2d_backward", mutates_args=())
def max_pool2d_backward(grad_output: torch.Tensor, x: torch.Tensor, kernel_size: list[int],
                        stride: list[int], padding: list[int], dilation: list[int],
                        ceil_mode: bool) -> torch.Tensor:
    _, indices = aten.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation,
                                              ceil_mode)
    return aten.max_pool2d_with_indices_backward(grad_output, x, kernel_size, stride,
                                                 padding, dilation, ceil_mode, indices)


@max_pool2d_backward.register_fake
def _(grad_output, x, kernel_size, stride, padding, dilation, ceil_mode):
    return torch.empty_like(x)


def _without_indices(grad_output, x, kernel_size, stride, padding, dilation, ceil_mode,
                     indices):
    del indices  # recomputed from x
    kernel = _pair(kernel_size, ())
    return torch.ops.tpuc.max_pool2d_backward(
        grad_output, x, kernel, _pair(stride, kernel), _pair(padding, [0]),
        _pair(dilation, [1]), bool(ceil_mode))


DECOMPOSITIONS = {aten.max_pool2d_with_indices_backward.default: _without_indices}


def _check(node):
    grad_output, x, kernel, stride, padding, dilation, ceil_mode = node.args
    if len(_shape(x)) != 4:
        return "only NCHW inputs are supported"
    if any(d != 1 for d in dilation):
        return "dilated pooling"
    if ceil_mode:
        return "ceil_mode"
    if any(2 * p > k for p, k in zip(padding, kernel)):
        return "padding larger than half the window"
    return None


def _relu_like(*shape, seed=0):
    """Many exact ties (zeros), as after a ReLU, and a tie of two maxima."""
    x = _r(*shape, seed=seed).clamp(min=0)
    x[..., 0, 0] = x[..., 0, 1] = 3.0
    return x


@converter(torch.ops.tpuc.max_pool2d_backward.default, check=_check, samples=lambda: [
    Sample((_r(2, 3, 4, 4, seed=1), _relu_like(2, 3, 8, 8), [3, 3], [2, 2], [1, 1], [1, 1],
            False)),
    Sample((_r(1, 2, 4, 4, seed=1), _relu_like(1, 2, 9, 9), [3, 3], [2, 2], [0, 0], [1, 1],
            False)),
    Sample((_r(2, 2, 3, 3, seed=1), _r(2, 2, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1],
            False))])
def max_pool_backward(imp, node):
    """For each window offset in scan order, the outputs whose maximum sits
    there first (x at the offset equals the recomputed max, and no earlier
    offset took it: PyTorch keeps the first maximum) pass their gradient;
    these KH*KW masked gradients, stacked as channels, go back to the input
    positions by one grouped transposed convolution with a constant one-hot
    filter per offset, which also sums overlapping windows."""
    gy_node, x_node, kernel, stride, padding = node.args[:5]
    gy, x = imp.value(gy_node), imp.value(x_node)
    n, c, h, w = _shape(x_node)
    oh, ow = _shape(gy_node)[2:]
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    name = node.name
    peak = imp.pool("max", f"{name}_max", x, kernel=kernel, strides=stride,
                    pads=[ph, pw, ph, pw])
    padded = x
    if ph or pw:  # padding never holds the maximum
        padded = imp.pad(f"{name}_pad", x, [0, 0, ph, pw, 0, 0, ph, pw], value=-F32_MAX)
    taken = None
    parts = []
    for i in range(kh):
        for j in range(kw):
            tag = f"{name}_{i}_{j}"
            at = imp.slice(f"{tag}_x", padded, starts=[i, j],
                           ends=[i + (oh - 1) * sh + 1, j + (ow - 1) * sw + 1], axes=[2, 3],
                           steps=[sh, sw])
            # at <= peak, so [at == peak] is 1 - [peak - at > 0].
            hit = imp.logical_not(f"{tag}_hit", imp.positive(
                f"{tag}_below", imp.binary("sub", f"{tag}_gap", peak, at)))
            if taken is None:
                first, taken = hit, hit
            else:
                first = imp.binary("mul", f"{tag}_first", hit,
                                   imp.logical_not(f"{tag}_free", taken))
                taken = imp.binary("add", f"{tag}_taken", taken, first)
            part = imp.binary("mul", f"{tag}_grad", gy, first)
            parts.append(imp.reshape(f"{tag}_col", part, [n, c, 1, oh * ow]))
    stacked = imp.reshape(f"{name}_stacked", imp.concat(f"{name}_cols", parts, 2),
                          [n, c * kh * kw, oh, ow])
    onehot = np.zeros([c * kh * kw, 1, kh, kw], np.float32)
    for k in range(kh * kw):
        onehot[k::kh * kw, 0, k // kw, k % kw] = 1.0
    extra = [h - ((oh - 1) * sh - 2 * ph + kh), w - ((ow - 1) * sw - 2 * pw + kw)]
    return imp.deconv(name, stacked, imp.weight(f"{name}_onehot", onehot), imp.none(),
                      kernel=[kh, kw], strides=[sh, sw], pads=[ph, pw, ph, pw],
                      dilations=[1, 1], output_padding=extra, group=c)
