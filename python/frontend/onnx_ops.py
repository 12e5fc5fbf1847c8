"""Converters from ONNX nodes to Top ops, one function per ONNX op type.

Each converter receives the importer (for operands, constants, types and
error reporting) and the node, and returns the Value(s) of the node's
outputs. Ops it emits carry the ONNX output name as their location; helper
ops of a one-to-many mapping get that name with a suffix.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import helper

from ..mlir.dialects import top

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


def _out(imp, node, i=0):
    name = node.output[i]
    return imp.type_of(name), imp.loc(name)


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
    t, loc = _out(imp, node)
    return top.ConvOp(t, imp.value(node.input[0]), imp.value(node.input[1]), bias,
                      kernel_shape=kernel, strides=strides, pads=pads,
                      dilations=dilations, group=a.get("group", 1), loc=loc).result


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
    t, loc = _out(imp, node)
    return top.DeconvOp(t, imp.value(node.input[0]), imp.value(node.input[1]), bias,
                        kernel_shape=kernel, strides=strides, pads=pads,
                        dilations=dilations, output_padding=out_pad,
                        group=a.get("group", 1), loc=loc).result


@converter("BatchNormalization")
def batch_norm(imp, node):
    a = attrs(node)
    if a.get("training_mode", 0):
        raise imp.fail("training_mode=1 is not supported (export in eval mode)")
    t, loc = _out(imp, node)
    x, s, b, m, v = (imp.value(i) for i in node.input[:5])
    return top.BatchNormOp(t, x, s, b, m, v, epsilon=a.get("epsilon", 1e-5), loc=loc).result


_BINARY = {"Add": top.AddOp, "Sub": top.SubOp, "Mul": top.MulOp,
           "Div": top.DivOp, "Max": top.MaxOp, "Min": top.MinOp}


def _chain(imp, op, names, out):
    """op applied left to right over `names`; the last op is named `out`,
    the others `out_1`, `out_2`, ...; one input is returned as is."""
    acc = imp.value(names[0])
    for i, name in enumerate(names[1:], start=1):
        last = i == len(names) - 1
        loc_name = out if last else f"{out}_{i}"
        acc = op(imp.type_of(out if last else None), acc, imp.value(name),
                 loc=imp.loc(loc_name)).result
    return acc


@converter(*_BINARY)
def binary(imp, node):
    # Variadic Max/Min (and Sum) fold left; one input is the input.
    return _chain(imp, _BINARY[node.op_type], list(node.input), node.output[0])


@converter("Sum")
def sum_(imp, node):
    return _chain(imp, top.AddOp, list(node.input), node.output[0])


@converter("Mean")
def mean(imp, node):
    names, out = list(node.input), node.output[0]
    if len(names) == 1:
        return imp.value(names[0])
    total = _chain(imp, top.AddOp, names, f"{out}_sum")
    n = imp.weight(f"{out}_count", np.array(float(len(names)), np.float32))
    t, loc = _out(imp, node)
    return top.DivOp(t, total, n, loc=loc).result


_UNARY = {"Relu": top.ReluOp, "Sigmoid": top.SigmoidOp, "Tanh": top.TanhOp,
          "Erf": top.ErfOp, "Exp": top.ExpOp, "Log": top.LogOp,
          "Sqrt": top.SqrtOp, "Abs": top.AbsOp}


@converter(*_UNARY)
def unary(imp, node):
    t, loc = _out(imp, node)
    return _UNARY[node.op_type](t, imp.value(node.input[0]), loc=loc).result


@converter("LeakyRelu")
def leaky_relu(imp, node):
    t, loc = _out(imp, node)
    return top.LeakyReluOp(t, imp.value(node.input[0]),
                           alpha=float(attrs(node).get("alpha", 0.01)), loc=loc).result


@converter("HardSigmoid")
def hard_sigmoid(imp, node):
    a = attrs(node)
    t, loc = _out(imp, node)
    return top.HardSigmoidOp(t, imp.value(node.input[0]), alpha=float(a.get("alpha", 0.2)),
                             beta=float(a.get("beta", 0.5)), loc=loc).result


@converter("HardSwish")
def hard_swish(imp, node):
    t, loc = _out(imp, node)
    return top.HardSwishOp(t, imp.value(node.input[0]), loc=loc).result


@converter("PRelu")
def prelu(imp, node):
    slope = imp.const(node.input[1])
    t, loc = _out(imp, node)
    x = imp.value(node.input[0])
    if slope is not None and slope.size == 1:
        return top.LeakyReluOp(t, x, alpha=float(slope.reshape(())), loc=loc).result
    # max(x, 0) + slope * min(x, 0): exact, since one of the terms is zero.
    out = node.output[0]
    unranked = imp.type_of(None)
    zero = imp.weight(f"{out}_zero", np.array(0.0, np.float32))
    pos = top.ReluOp(unranked, x, loc=imp.loc(f"{out}_pos")).result
    neg = top.MinOp(unranked, x, zero, loc=imp.loc(f"{out}_neg")).result
    neg = top.MulOp(unranked, neg, imp.value(node.input[1]),
                    loc=imp.loc(f"{out}_neg_scaled")).result
    return top.AddOp(t, pos, neg, loc=loc).result


@converter("Identity", "Dropout")
def identity(imp, node):
    return imp.value(node.input[0])


@converter("Clip")
def clip(imp, node):
    a = attrs(node)
    lo = a.get("min", -np.inf)
    hi = a.get("max", np.inf)
    if _input(node, 1):
        lo = float(imp.require_const(node.input[1], "Clip min"))
    if _input(node, 2):
        hi = float(imp.require_const(node.input[2], "Clip max"))
    t, loc = _out(imp, node)
    x = imp.value(node.input[0])
    if lo == 0.0:  # ReLU / ReLU6: fuses into the producer
        return top.ReluOp(t, x, relu_limit=float(hi) if np.isfinite(hi) else -1.0,
                          loc=loc).result
    return top.ClipOp(t, x, min=float(lo), max=float(hi), loc=loc).result


@converter("Gelu")
def gelu(imp, node):
    t, loc = _out(imp, node)
    return top.GELUOp(t, imp.value(node.input[0]),
                      approximate=_str(attrs(node).get("approximate", "none")),
                      loc=loc).result


@converter("Neg")
def neg(imp, node):
    t, loc = _out(imp, node)
    minus = imp.weight(f"{node.output[0]}_neg_one", np.array(-1.0, np.float32))
    return top.MulOp(t, imp.value(node.input[0]), minus, loc=loc).result


@converter("Reciprocal")
def reciprocal(imp, node):
    t, loc = _out(imp, node)
    one = imp.weight(f"{node.output[0]}_one", np.array(1.0, np.float32))
    return top.DivOp(t, one, imp.value(node.input[0]), loc=loc).result


@converter("Pow")
def power(imp, node):
    e = imp.require_const(node.input[1], "Pow exponent")
    if e.size != 1:
        raise imp.fail("Pow exponent must be a scalar constant")
    t, loc = _out(imp, node)
    return top.PowOp(t, imp.value(node.input[0]), exponent=float(e.reshape(())),
                     loc=loc).result


@converter("Cast")
def cast(imp, node):
    to = helper.tensor_dtype_to_np_dtype(attrs(node)["to"])
    names = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
             np.dtype(np.int32): "i32", np.dtype(np.int64): "i32",
             np.dtype(np.int8): "i8", np.dtype(np.uint8): "ui8",
             np.dtype(np.bool_): "bool", np.dtype(np.float64): "f32"}
    if np.dtype(to) not in names:
        raise imp.fail(f"cast to {np.dtype(to)} is not supported")
    t, loc = _out(imp, node)
    return top.CastOp(t, imp.value(node.input[0]), to=names[np.dtype(to)], loc=loc).result


@converter("MatMul")
def matmul(imp, node):
    a_shape, b_shape = imp.shape(node.input[0]), imp.shape(node.input[1])
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise imp.fail("MatMul of 1-D operands is not supported")
    t, loc = _out(imp, node)
    return top.MatMulOp(t, imp.value(node.input[0]), imp.value(node.input[1]),
                        imp.none(), loc=loc).result


@converter("Gemm")
def gemm(imp, node):
    a = attrs(node)
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    out = node.output[0]
    x = imp.value(node.input[0])
    if a.get("transA", 0):
        x = top.PermuteOp(imp.type_of(None), x, order=[1, 0],
                          loc=imp.loc(f"{out}_transA")).result
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
            right = top.PermuteOp(imp.type_of(None), right, order=[1, 0],
                                  loc=imp.loc(f"{out}_transB")).result
    n = imp.shape(out)[1]
    bias = imp.none()
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
    t, loc = _out(imp, node)
    if add_c is None:
        return top.MatMulOp(t, x, right, bias, loc=loc).result
    mm = top.MatMulOp(imp.type_of(None), x, right, bias, loc=imp.loc(f"{out}_matmul")).result
    return top.AddOp(t, mm, add_c, loc=loc).result


def _reshape_to_output(imp, node):
    t, loc = _out(imp, node)
    return top.ReshapeOp(t, imp.value(node.input[0]), shape=imp.shape(node.output[0]),
                         loc=loc).result


for _t in ("Reshape", "Flatten", "Squeeze", "Unsqueeze"):
    CONVERTERS[_t] = _reshape_to_output


@converter("Transpose")
def transpose(imp, node):
    rank = len(imp.shape(node.input[0]))
    perm = list(attrs(node).get("perm", list(range(rank))[::-1]))
    t, loc = _out(imp, node)
    return top.PermuteOp(t, imp.value(node.input[0]), order=perm, loc=loc).result


@converter("Softmax")
def softmax(imp, node):
    # Opset >= 13 semantics (a single axis, default -1); older opsets are refused.
    t, loc = _out(imp, node)
    return top.SoftmaxOp(t, imp.value(node.input[0]), axis=attrs(node).get("axis", -1),
                         loc=loc).result


@converter("LayerNormalization")
def layer_norm(imp, node):
    a = attrs(node)
    if len([o for o in node.output if o]) > 1:
        raise imp.fail("Mean/InvStdDev outputs are not supported")
    scale = imp.value(node.input[1])
    bias = imp.value(node.input[2]) if _input(node, 2) else imp.none()
    t, loc = _out(imp, node)
    return top.LayerNormOp(t, imp.value(node.input[0]), scale, bias,
                           axis=a.get("axis", -1), epsilon=a.get("epsilon", 1e-5),
                           loc=loc).result


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
    steps = []  # (op, per-channel operand, helper name)
    for name, identity, op, what in [(node.input[1], 1.0, top.MulOp, "scaled"),
                                     (node.input[2], 0.0, top.AddOp, "shifted")]:
        c = imp.const(name)
        if c is not None and np.all(c == identity):
            continue
        if c is not None:
            v = imp.weight(f"{name}_per_channel", c.reshape(per_channel))
        else:
            v = top.ReshapeOp(imp.type_of(None), imp.value(name), shape=per_channel,
                              loc=imp.loc(f"{name}_per_channel")).result
        steps.append((op, v, f"{out}_{what}"))
    # The last op carries the ONNX name.
    names = [f"{out}_normalized"] + [n for _, _, n in steps]
    names = names[:-1] + [out]
    acc = top.LayerNormOp(imp.type_of(None if steps else out), imp.value(node.input[0]), imp.none(),
                          imp.none(), axis=2, epsilon=eps, loc=imp.loc(names[0])).result
    for (op, v, _), name in zip(steps, names[1:]):
        acc = op(imp.type_of(name if name == out else None), acc, v, loc=imp.loc(name)).result
    return acc


@converter("GlobalAveragePool")
def global_avg_pool(imp, node):
    t, loc = _out(imp, node)
    return top.GlobalAvgPoolOp(t, imp.value(node.input[0]), loc=loc).result


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
    t, loc = _out(imp, node)
    common = dict(kernel_shape=kernel, strides=strides, pads=pads,
                  ceil_mode=bool(a.get("ceil_mode", 0)), loc=loc)
    x = imp.value(node.input[0])
    if node.op_type == "MaxPool":
        return top.MaxPoolOp(t, x, **common).result
    return top.AvgPoolOp(t, x, count_include_pad=bool(a.get("count_include_pad", 0)),
                         **common).result


@converter("Concat")
def concat(imp, node):
    t, loc = _out(imp, node)
    return top.ConcatOp(t, [imp.value(i) for i in node.input],
                        axis=attrs(node)["axis"], loc=loc).result


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
        results.append(top.SliceOp(imp.type_of(name or None), x, starts=[start],
                                   ends=[start + size], axes=[axis], steps=[1],
                                   loc=imp.loc(name or f"{node.output[0]}_split{start}")).result)
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
        last = i == len(axes) - 1
        name = out if last else f"{out}_tile{ax}"
        acc = top.ConcatOp(imp.type_of(out if last else None), [acc] * repeats[ax],
                           axis=ax, loc=imp.loc(name)).result
    return acc


@converter("Expand")
def expand(imp, node):
    in_shape, out_shape = imp.shape(node.input[0]), imp.shape(node.output[0])
    t, loc = _out(imp, node)
    x = imp.value(node.input[0])
    aligned = [1] * (len(out_shape) - len(in_shape)) + list(in_shape)
    if aligned == list(out_shape):
        if list(in_shape) == list(out_shape):
            return x
        return top.ReshapeOp(t, x, shape=list(out_shape), loc=loc).result
    # x * 1 is exact; the ones span only the dims the broadcast adds.
    ones = [o if a == 1 else 1 for a, o in zip(aligned, out_shape)]
    w = imp.weight(f"{node.output[0]}_ones", np.ones(ones, np.float32))
    return top.MulOp(t, x, w, loc=loc).result


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
    t, loc = _out(imp, node)
    if any(s == 0 for s in steps):
        raise imp.fail("Slice step 0 is invalid")
    if any(not -rank <= ax < rank for ax in axes):
        raise imp.fail(f"Slice axes {axes} out of range for rank {rank}")
    return top.SliceOp(t, imp.value(node.input[0]), starts=[int(s) for s in starts],
                       ends=clamp, axes=[int(a) for a in axes],
                       steps=[int(s) for s in steps], loc=loc).result


@converter("Gather")
def gather(imp, node):
    axis = attrs(node).get("axis", 0)
    t, loc = _out(imp, node)
    idx = imp.const(node.input[1])
    indices = (imp.weight(node.input[1], idx.astype(np.float32)) if idx is not None
               else imp.value(node.input[1]))
    return top.GatherOp(t, imp.value(node.input[0]), indices, axis=axis, loc=loc).result


@converter("Pad")
def pad(imp, node):
    rank = len(imp.shape(node.input[0]))
    mode = _str(attrs(node).get("mode", "constant"))
    if mode not in ("constant", "reflect", "edge"):
        raise imp.fail(f"pad mode '{mode}' is not supported")
    pads = imp.require_const(node.input[1], "Pad pads").astype(np.int64).tolist()
    value = (float(imp.require_const(node.input[2], "Pad constant_value"))
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
    t, loc = _out(imp, node)
    return top.PadOp(t, imp.value(node.input[0]), pads=pads, mode=mode, value=value,
                     loc=loc).result


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
    t, loc = _out(imp, node)
    return top.ReduceOp(t, imp.value(node.input[0]), mode=_REDUCE[node.op_type],
                        axes=[int(x) for x in axes],
                        keepdims=bool(a.get("keepdims", 1)), loc=loc).result


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
    t, loc = _out(imp, node)
    x = imp.value(node.input[0])
    if mode == "nearest":
        # Integer upscaling that picks input i // s is the plain Upsample.
        fh, fw = out_shape[2] // in_shape[2], out_shape[3] // in_shape[3]
        if fh >= 1 and fw >= 1 and fh * in_shape[2] == out_shape[2] \
                and fw * in_shape[3] == out_shape[3] and all(
                    np.array_equal(_nearest_index(n, n * f, s, coord, nearest),
                                   np.arange(n * f) // f)
                    for n, f, s in ((in_shape[2], fh, sh), (in_shape[3], fw, sw))):
            return top.UpsampleOp(t, x, scale_h=fh, scale_w=fw, loc=loc).result
    return top.InterpOp(t, x, mode=mode, coord_mode=coord, nearest_mode=nearest,
                        target_h=out_shape[2], target_w=out_shape[3],
                        scale_h=sh, scale_w=sw, loc=loc).result
