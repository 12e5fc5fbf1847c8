"""Converters from ONNX nodes to Top ops, one function per ONNX op type.

Each converter receives the importer (for operands, constants, shapes and
error reporting; it is also the shared Top builder, `top_builder.TopBuilder`)
and the node, reads the ONNX attributes and builds the op(s) through the
builder, and returns the Value(s) of the node's outputs. Ops carry the ONNX
output name as their location; helper ops of a one-to-many mapping get that
name with a suffix.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import helper

CONVERTERS: dict[str, Callable] = {}


def converter(*op_types: str):
    def register(fn):
        for t in op_types:
            CONVERTERS[t] = fn
        return fn
    return register


def attrs(node: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _str(v) -> str:
    return v.decode() if isinstance(v, bytes) else v


def _input(node, i) -> str | None:
    return node.input[i] if len(node.input) > i and node.input[i] else None


def _spatial_pads(imp, node, a, in_shape, kernel, strides, dilations):
    """ONNX pads (begins then ends), resolving auto_pad."""
    k = len(kernel)
    auto = _str(a.get("auto_pad", "NOTSET"))
    if auto in ("NOTSET", "VALID"):
        pads = list(a.get("pads", [0] * 2 * k)) if auto == "NOTSET" else [0] * 2 * k
        if len(pads) != 2 * k:
            raise imp.fail(f"pads has {len(pads)} values, expected {2 * k}")
        return pads
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise imp.fail(f"auto_pad '{auto}' is not supported")
    begins, ends = [], []
    for i in range(k):
        size = in_shape[2 + i]
        out = -(-size // strides[i])
        total = max(0, (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 - size)
        small, big = total // 2, total - total // 2
        begins.append(small if auto == "SAME_UPPER" else big)
        ends.append(big if auto == "SAME_UPPER" else small)
    return begins + ends


@converter("Conv")
def conv(imp, node):
    a = attrs(node)
    w_shape = imp.shape(node.input[1])
    kernel = list(a.get("kernel_shape", w_shape[2:]))
    k = len(kernel)
    if k not in (1, 2):
        raise imp.fail(f"{k}-D convolution is not supported (1-D and 2-D are)")
    strides = list(a.get("strides", [1] * k))
    dilations = list(a.get("dilations", [1] * k))
    pads = _spatial_pads(imp, node, a, imp.shape(node.input[0]), kernel, strides, dilations)
    bias = imp.value(node.input[2]) if _input(node, 2) else imp.none()
    return imp.conv(node.output[0], imp.value(node.input[0]), imp.value(node.input[1]), bias,
                    kernel=kernel, strides=strides, pads=pads, dilations=dilations,
                    group=a.get("group", 1))


@converter("ConvTranspose")
def conv_transpose(imp, node):
    a = attrs(node)
    w_shape = imp.shape(node.input[1])
    kernel = list(a.get("kernel_shape", w_shape[2:]))
    k = len(kernel)
    if k not in (1, 2):
        raise imp.fail(f"{k}-D ConvTranspose is not supported (1-D and 2-D are)")
    strides = list(a.get("strides", [1] * k))
    dilations = list(a.get("dilations", [1] * k))
    out_pad = list(a.get("output_padding", [0] * k))
    in_shape = imp.shape(node.input[0])
    auto = _str(a.get("auto_pad", "NOTSET"))
    if auto not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise imp.fail(f"auto_pad '{auto}' is not supported")
    target = list(a.get("output_shape", []))
    if not target and auto in ("SAME_UPPER", "SAME_LOWER"):
        target = [in_shape[2 + i] * strides[i] for i in range(k)]
    if target:
        # ONNX: pads from the requested output size, the odd cell at the end
        # for SAME_UPPER and at the beginning otherwise.
        target = target[-k:]
        begins, ends = [], []
        for i in range(k):
            total = (strides[i] * (in_shape[2 + i] - 1) + out_pad[i]
                     + (kernel[i] - 1) * dilations[i] + 1 - target[i])
            if total < 0:
                raise imp.fail(f"output_shape {target} is larger than the "
                               "deconvolved extent (not supported)")
            small, big = total // 2, total - total // 2
            begins.append(small if auto == "SAME_UPPER" else big)
            ends.append(big if auto == "SAME_UPPER" else small)
        pads = begins + ends
    elif auto == "VALID":
        pads = [0] * 2 * k
    else:
        pads = list(a.get("pads", [0] * 2 * k))
        if len(pads) != 2 * k:
            raise imp.fail(f"pads has {len(pads)} values, expected {2 * k}")
    for i in range(k):
        if not 0 <= out_pad[i] < max(strides[i], dilations[i]):
            raise imp.fail(f"output_padding {out_pad} must be below "
                           "max(stride, dilation)")
    bias = imp.value(node.input[2]) if _input(node, 2) else imp.none()
    return imp.deconv(node.output[0], imp.value(node.input[0]), imp.value(node.input[1]),
                      bias, kernel=kernel, strides=strides, pads=pads, dilations=dilations,
                      output_padding=out_pad, group=a.get("group", 1))


@converter("BatchNormalization")
def batch_norm(imp, node):
    a = attrs(node)
    if a.get("training_mode", 0):
        raise imp.fail("training_mode=1 is not supported (export in eval mode)")
    x, s, b, m, v = (imp.value(i) for i in node.input[:5])
    return imp.batch_norm(node.output[0], x, s, b, m, v, epsilon=a.get("epsilon", 1e-5))


_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Max": "max",
           "Min": "min", "Sum": "add"}


@converter(*_BINARY)
def binary(imp, node):
    # Variadic Max/Min/Sum fold left; one input is the input.
    return imp.fold(_BINARY[node.op_type], node.output[0],
                    [imp.value(n) for n in node.input])


@converter("Mean")
def mean(imp, node):
    names, out = list(node.input), node.output[0]
    if len(names) == 1:
        return imp.value(names[0])
    total = imp.fold("add", f"{out}_sum", [imp.value(n) for n in names])
    return imp.binary("div", out, total, imp.scalar(f"{out}_count", float(len(names))))


_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Erf": "erf",
          "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs",
          "HardSwish": "hardswish"}


@converter(*_UNARY)
def unary(imp, node):
    return imp.unary(_UNARY[node.op_type], node.output[0], imp.value(node.input[0]))


@converter("LeakyRelu")
def leaky_relu(imp, node):
    return imp.leaky_relu(node.output[0], imp.value(node.input[0]),
                          attrs(node).get("alpha", 0.01))


@converter("HardSigmoid")
def hard_sigmoid(imp, node):
    a = attrs(node)
    return imp.hard_sigmoid(node.output[0], imp.value(node.input[0]),
                            a.get("alpha", 0.2), a.get("beta", 0.5))


@converter("PRelu")
def prelu(imp, node):
    slope = imp.const(node.input[1])
    x = imp.value(node.input[0])
    if slope is not None and slope.size == 1:
        return imp.leaky_relu(node.output[0], x, float(slope.reshape(())))
    return imp.prelu(node.output[0], x, imp.value(node.input[1]))


@converter("Identity", "Dropout")
def identity(imp, node):
    return imp.value(node.input[0])


@converter("Clip")
def clip(imp, node):
    a = attrs(node)
    lo = a.get("min", -np.inf)
    hi = a.get("max", np.inf)
    if _input(node, 1):
        lo = imp.require_scalar(node.input[1], "Clip min")
    if _input(node, 2):
        hi = imp.require_scalar(node.input[2], "Clip max")
    return imp.clip(node.output[0], imp.value(node.input[0]), lo, hi)


@converter("Gelu")
def gelu(imp, node):
    return imp.gelu(node.output[0], imp.value(node.input[0]),
                    _str(attrs(node).get("approximate", "none")))


@converter("Neg")
def neg(imp, node):
    return imp.neg(node.output[0], imp.value(node.input[0]))


@converter("Reciprocal")
def reciprocal(imp, node):
    return imp.reciprocal(node.output[0], imp.value(node.input[0]))


@converter("Pow")
def power(imp, node):
    e = imp.require_const(node.input[1], "Pow exponent")
    if e.size != 1:
        raise imp.fail("Pow exponent must be a scalar constant")
    return imp.pow(node.output[0], imp.value(node.input[0]), float(e.reshape(())))


@converter("Cast")
def cast(imp, node):
    to = helper.tensor_dtype_to_np_dtype(attrs(node)["to"])
    names = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
             np.dtype(np.int32): "i32", np.dtype(np.int64): "i32",
             np.dtype(np.int8): "i8", np.dtype(np.uint8): "ui8",
             np.dtype(np.bool_): "bool", np.dtype(np.float64): "f32"}
    if np.dtype(to) not in names:
        raise imp.fail(f"cast to {np.dtype(to)} is not supported")
    return imp.cast(node.output[0], imp.value(node.input[0]), names[np.dtype(to)])


@converter("MatMul")
def matmul(imp, node):
    a_shape, b_shape = imp.shape(node.input[0]), imp.shape(node.input[1])
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise imp.fail("MatMul of 1-D operands is not supported")
    return imp.matmul(node.output[0], imp.value(node.input[0]), imp.value(node.input[1]))


@converter("Gemm")
def gemm(imp, node):
    a = attrs(node)
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    out = node.output[0]
    x = imp.value(node.input[0])
    if a.get("transA", 0):
        x = imp.permute(f"{out}_transA", x, [1, 0])
    b_const = imp.const(node.input[1])
    if b_const is not None:
        w = b_const.T if a.get("transB", 0) else b_const
        name = node.input[1] + ("_T" if a.get("transB", 0) else "")
        if alpha != 1.0:
            w, name = w * alpha, f"{name}_x{alpha:g}"
        right = imp.weight(name, w)
    else:
        if alpha != 1.0:
            raise imp.fail("alpha != 1 needs a constant B")
        right = imp.value(node.input[1])
        if a.get("transB", 0):
            right = imp.permute(f"{out}_transB", right, [1, 0])
    n = imp.shape(out)[1]
    bias = None
    add_c = None
    if _input(node, 2):
        c = imp.const(node.input[2])
        if c is not None and c.size == n and beta != 0.0:
            bias = imp.weight(node.input[2] + (f"_x{beta:g}" if beta != 1.0 else ""),
                              (c * beta).reshape(n))
        elif beta != 0.0:
            if beta != 1.0:
                raise imp.fail("beta != 1 needs a constant C")
            add_c = imp.value(node.input[2])
    if add_c is None:
        return imp.matmul(out, x, right, bias)
    return imp.binary("add", out, imp.matmul(f"{out}_matmul", x, right, bias), add_c)


def _reshape_to_output(imp, node):
    return imp.reshape(node.output[0], imp.value(node.input[0]), imp.shape(node.output[0]))


for _t in ("Reshape", "Flatten", "Squeeze", "Unsqueeze"):
    CONVERTERS[_t] = _reshape_to_output


@converter("Transpose")
def transpose(imp, node):
    rank = len(imp.shape(node.input[0]))
    perm = list(attrs(node).get("perm", list(range(rank))[::-1]))
    return imp.permute(node.output[0], imp.value(node.input[0]), perm)


@converter("Softmax")
def softmax(imp, node):
    # Opset >= 13 semantics (a single axis, default -1); older opsets are refused.
    return imp.softmax(node.output[0], imp.value(node.input[0]), attrs(node).get("axis", -1))


@converter("LayerNormalization")
def layer_norm(imp, node):
    a = attrs(node)
    if len([o for o in node.output if o]) > 1:
        raise imp.fail("Mean/InvStdDev outputs are not supported")
    bias = imp.value(node.input[2]) if _input(node, 2) else None
    return imp.layer_norm(node.output[0], imp.value(node.input[0]), imp.value(node.input[1]),
                          bias, axis=a.get("axis", -1), epsilon=a.get("epsilon", 1e-5))


@converter("InstanceNormalization")
def instance_norm(imp, node):
    # LayerNorm over the spatial dims [2, rank) is exactly the per-(n, c)
    # normalization; the per-channel affine follows as broadcast Mul / Add.
    rank = len(imp.shape(node.input[0]))
    if rank < 3:
        raise imp.fail(f"input must have rank >= 3 (N, C, spatial...), got {rank}")
    out = node.output[0]
    eps = float(attrs(node).get("epsilon", 1e-5))
    per_channel = [imp.shape(node.input[0])[1]] + [1] * (rank - 2)
    steps = []  # (binary kind, per-channel operand, helper name)
    for name, identity, op, what in [(node.input[1], 1.0, "mul", "scaled"),
                                     (node.input[2], 0.0, "add", "shifted")]:
        c = imp.const(name)
        if c is not None and np.all(c == identity):
            continue
        if c is not None:
            v = imp.weight(f"{name}_per_channel", c.reshape(per_channel))
        else:
            v = imp.reshape(f"{name}_per_channel", imp.value(name), per_channel)
        steps.append((op, v, f"{out}_{what}"))
    # The last op carries the ONNX name.
    names = [f"{out}_normalized"] + [n for _, _, n in steps]
    names = names[:-1] + [out]
    acc = imp.layer_norm(names[0], imp.value(node.input[0]), axis=2, epsilon=eps)
    for (op, v, _), name in zip(steps, names[1:]):
        acc = imp.binary(op, name, acc, v)
    return acc


@converter("GlobalAveragePool")
def global_avg_pool(imp, node):
    return imp.global_avg_pool(node.output[0], imp.value(node.input[0]))


@converter("MaxPool", "AveragePool")
def pool(imp, node):
    a = attrs(node)
    if len([o for o in node.output if o]) > 1:
        raise imp.fail("the Indices output is not supported")
    kernel = list(a["kernel_shape"])
    k = len(kernel)
    if k not in (1, 2):
        raise imp.fail(f"{k}-D pooling is not supported")
    if any(d != 1 for d in a.get("dilations", [1] * k)):
        raise imp.fail("dilated pooling is not supported")
    strides = list(a.get("strides", [1] * k))
    pads = _spatial_pads(imp, node, a, imp.shape(node.input[0]), kernel, strides, [1] * k)
    return imp.pool("max" if node.op_type == "MaxPool" else "avg", node.output[0],
                    imp.value(node.input[0]), kernel=kernel, strides=strides, pads=pads,
                    ceil_mode=bool(a.get("ceil_mode", 0)),
                    count_include_pad=bool(a.get("count_include_pad", 0)))


@converter("Concat")
def concat(imp, node):
    return imp.concat(node.output[0], [imp.value(i) for i in node.input], attrs(node)["axis"])


@converter("Split")
def split(imp, node):
    a = attrs(node)
    shape = imp.shape(node.input[0])
    axis = a.get("axis", 0)
    if not -len(shape) <= axis < len(shape):
        raise imp.fail(f"axis {axis} out of range for rank {len(shape)}")
    axis %= len(shape)
    dim, n = shape[axis], len(node.output)
    if _input(node, 1):
        sizes = [int(v) for v in imp.require_const(node.input[1], "Split split").tolist()]
    elif "split" in a:
        sizes = [int(v) for v in a["split"]]
    else:
        # Opset 18 num_outputs (or the output count): equal chunks of
        # ceil(dim / n), the last one smaller.
        n = a.get("num_outputs", n)
        chunk = -(-dim // n)
        sizes = [max(0, min(chunk, dim - i * chunk)) for i in range(n)]
    if len(sizes) != len(node.output) or sum(sizes) != dim or min(sizes) < 0:
        raise imp.fail(f"split sizes {sizes} do not divide dim {dim} into "
                       f"{len(node.output)} outputs")
    x = imp.value(node.input[0])
    results, start = [], 0
    for name, size in zip(node.output, sizes):
        results.append(imp.slice(name or f"{node.output[0]}_split{start}", x, starts=[start],
                                 ends=[start + size], axes=[axis], steps=[1]))
        start += size
    return results


@converter("Tile")
def tile(imp, node):
    repeats = [int(r) for r in imp.require_const(node.input[1], "Tile repeats").tolist()]
    shape = imp.shape(node.input[0])
    if len(repeats) != len(shape) or min(repeats, default=1) < 1:
        raise imp.fail(f"repeats {repeats} must be >= 1, one per dim of {shape}")
    axes = [ax for ax, r in enumerate(repeats) if r > 1]
    acc, out = imp.value(node.input[0]), node.output[0]
    # One concat of copies per repeated axis.
    for i, ax in enumerate(axes):
        name = out if i == len(axes) - 1 else f"{out}_tile{ax}"
        acc = imp.concat(name, [acc] * repeats[ax], ax)
    return acc


@converter("Expand")
def expand(imp, node):
    return imp.expand(node.output[0], imp.value(node.input[0]), imp.shape(node.input[0]),
                      imp.shape(node.output[0]))


@converter("Slice")
def slice_(imp, node):
    rank = len(imp.shape(node.input[0]))
    starts = imp.require_const(node.input[1], "Slice starts").tolist()
    ends = imp.require_const(node.input[2], "Slice ends").tolist()
    axes = (imp.require_const(node.input[3], "Slice axes").tolist()
            if _input(node, 3) else list(range(len(starts))))
    steps = (imp.require_const(node.input[4], "Slice steps").tolist()
             if _input(node, 4) else [1] * len(starts))
    big = 2 ** 62  # ONNX uses INT64_MAX/MIN for "to the end"
    clamp = [max(-big, min(big, int(v))) for v in ends]
    if any(s == 0 for s in steps):
        raise imp.fail("Slice step 0 is invalid")
    if any(not -rank <= ax < rank for ax in axes):
        raise imp.fail(f"Slice axes {axes} out of range for rank {rank}")
    return imp.slice(node.output[0], imp.value(node.input[0]), starts=starts, ends=clamp,
                     axes=axes, steps=steps)


@converter("Gather")
def gather(imp, node):
    idx = imp.const(node.input[1])
    axis = attrs(node).get("axis", 0)
    if idx is not None:
        dim = imp.shape(node.input[0])[axis]
        if idx.size and not (-dim <= idx.min() and idx.max() < dim):
            raise imp.fail(f"constant indices {idx.min()}..{idx.max()} are out of range "
                           f"for a dim of {dim}")
    indices = (imp.weight(node.input[1], idx.astype(np.float32)) if idx is not None
               else imp.value(node.input[1]))
    return imp.gather(node.output[0], imp.value(node.input[0]), indices, axis)


@converter("Pad")
def pad(imp, node):
    rank = len(imp.shape(node.input[0]))
    mode = _str(attrs(node).get("mode", "constant"))
    if mode not in ("constant", "reflect", "edge"):
        raise imp.fail(f"pad mode '{mode}' is not supported")
    pads = imp.require_const(node.input[1], "Pad pads").astype(np.int64).tolist()
    value = (imp.require_scalar(node.input[2], "Pad constant_value")
             if _input(node, 2) else 0.0)
    if _input(node, 3):
        axes = [a % rank for a in imp.require_const(node.input[3], "Pad axes").tolist()]
        full = [0] * (2 * rank)
        for i, ax in enumerate(axes):
            full[ax], full[rank + ax] = pads[i], pads[len(axes) + i]
        pads = full
    if len(pads) != 2 * rank:
        raise imp.fail(f"pads has {len(pads)} values, expected {2 * rank}")
    if any(p < 0 for p in pads):
        raise imp.fail("negative pads (cropping) are not supported")
    return imp.pad(node.output[0], imp.value(node.input[0]), pads, mode, value)


_REDUCE = {"ReduceMean": "mean", "ReduceMax": "max", "ReduceSum": "sum",
           "ReduceMin": "min"}


@converter(*_REDUCE)
def reduce(imp, node):
    a = attrs(node)
    rank = len(imp.shape(node.input[0]))
    if _input(node, 1):
        axes = imp.require_const(node.input[1], "reduce axes").tolist()
    else:
        axes = list(a.get("axes", []))
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            return imp.value(node.input[0])
        axes = list(range(rank))
    return imp.reduce(node.output[0], imp.value(node.input[0]), _REDUCE[node.op_type], axes,
                      bool(a.get("keepdims", 1)))


_RESIZE_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _nearest_index(in_len, out_len, scale, coord, nearest):
    """Input index each output takes (float32, as top.Interp computes it)."""
    i = np.arange(out_len, dtype=np.float32)
    s = np.float32(scale)
    if coord == "align_corners":
        x = i * np.float32(in_len - 1) / np.float32(max(out_len - 1, 1))
    elif coord == "asymmetric":
        x = i / s
    else:
        x = (i + np.float32(0.5)) / s - np.float32(0.5)
        if coord == "pytorch_half_pixel" and out_len == 1:
            x = np.zeros_like(x)
    if nearest == "round_prefer_floor":
        r = np.where(x == np.floor(x) + 0.5, np.floor(x), np.round(x))
    elif nearest == "round_prefer_ceil":
        r = np.floor(x + 0.5)
    else:
        r = np.floor(x) if nearest == "floor" else np.ceil(x)
    return np.clip(r, 0, in_len - 1).astype(np.int64)


@converter("Resize", "Upsample")
def resize(imp, node):
    a = attrs(node)
    mode = _str(a.get("mode", "nearest"))
    if mode not in ("nearest", "linear"):
        raise imp.fail(f"mode '{mode}' is not supported (nearest and linear are)")
    coord = _str(a.get("coordinate_transformation_mode", "half_pixel"))
    if coord not in _RESIZE_COORDS:
        raise imp.fail(f"coordinate_transformation_mode '{coord}' is not supported")
    nearest = _str(a.get("nearest_mode", "round_prefer_floor"))
    if mode == "nearest" and nearest not in _NEAREST_MODES:
        raise imp.fail(f"nearest_mode '{nearest}' is not supported")
    in_shape, out_shape = imp.shape(node.input[0]), imp.shape(node.output[0])
    if len(in_shape) != 4 or in_shape[:2] != out_shape[:2]:
        raise imp.fail("only H/W resizing of NCHW tensors is supported")
    scales = imp.const(node.input[2]) if _input(node, 2) else None
    if scales is not None and scales.size:
        scales = [float(x) for x in scales.reshape(-1)]
        if "axes" in a:
            full = [1.0] * 4
            for ax, v in zip(a["axes"], scales):
                full[ax % 4] = v
            scales = full
        sh, sw = scales[2], scales[3]
    else:  # sizes: ONNX derives the scale as output / input
        sh, sw = out_shape[2] / in_shape[2], out_shape[3] / in_shape[3]
    if a.get("antialias", 0) and (sh < 1 or sw < 1):
        raise imp.fail("antialias=1 when downscaling is not supported")
    out, x = node.output[0], imp.value(node.input[0])
    if mode == "nearest":
        # Integer upscaling that picks input i // s is the plain Upsample.
        fh, fw = out_shape[2] // in_shape[2], out_shape[3] // in_shape[3]
        if fh >= 1 and fw >= 1 and fh * in_shape[2] == out_shape[2] \
                and fw * in_shape[3] == out_shape[3] and all(
                    np.array_equal(_nearest_index(n, n * f, s, coord, nearest),
                                   np.arange(n * f) // f)
                    for n, f, s in ((in_shape[2], fh, sh), (in_shape[3], fw, sw))):
            return imp.upsample(out, x, fh, fw)
    return imp.interp(out, x, mode=mode, coord_mode=coord, nearest_mode=nearest,
                      target_h=out_shape[2], target_w=out_shape[3], scale_h=sh, scale_w=sw)
