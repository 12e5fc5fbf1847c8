"""Einsum, CumSum and the element-indexed ops, decomposed at import.

* Einsum (one or two operands) is a Transpose/Reshape into one batched
  MatMul (or a ReduceSum), as compilers usually lower it.
* CumSum along an axis is a MatMul with a constant triangular 0/1 matrix
  (exact on the integer tensors position ids are made of).
* GatherElements is a Gather from the flattened data at flat indices
  `index * stride + offset` (exact integer arithmetic in f32 up to 2^24).
* ScatterElements / ScatterND with constant indices are a Gather from the
  concatenation of the flattened data and updates at a constant index map.
* Range and ConstantOfShape are constants: made from static shapes, they
  fold before import (this converter is the fallback when a fold is skipped);
  made from runtime values, their size depends on data and is refused.
"""
from __future__ import annotations

import string

import numpy as np

from onnx import numpy_helper

from .onnx_ops import _str, attrs, converter

_FLAT_INDEX_LIMIT = 1 << 24  # largest integer every f32 index below is exact


def _permute(imp, name, x, order):
    return x if list(order) == sorted(order) else imp.permute(name, x, order)


def _reshape(imp, name, x, from_shape, to_shape):
    return x if list(from_shape) == list(to_shape) else imp.reshape(name, x, to_shape)


def _einsum_terms(imp, equation, shapes):
    """The equation's input terms and output term, ellipses spelled out with
    unused letters (right-aligned, as broadcasting aligns them)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise imp.fail(f"equation '{equation}' has {len(terms)} operands, the node "
                       f"{len(shapes)}")
    free = [c for c in string.ascii_letters if c not in eq]
    n_ell = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                 if "..." in t), default=0)
    ell = "".join(free[:n_ell])
    expanded = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - len(t.replace("...", ""))
            t = t.replace("...", ell[n_ell - k:] if k else "")
        if len(t) != len(s):
            raise imp.fail(f"term '{t}' does not match an operand of rank {len(s)}")
        if len(set(t)) != len(t):
            raise imp.fail(f"repeated index in '{t}' (diagonals) is not supported")
        expanded.append(t)
    if not arrow:
        once = sorted(c for c in set("".join(expanded)) if "".join(expanded).count(c) == 1
                      and c not in ell)
        out = ell + "".join(once)
    else:
        out = out.replace("...", ell)
    return expanded, out


def _sum_out(imp, name, x, term, shape, keep):
    """Sums the letters of `term` not in `keep`; returns (value, term, shape)."""
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term, shape
    x = imp.reduce(name, x, "sum", axes, False)
    return (x, "".join(c for c in term if c in keep),
            [d for c, d in zip(term, shape) if c in keep])


@converter("Einsum")
def einsum(imp, node):
    out = node.output[0]
    shapes = [imp.shape(n) for n in node.input]
    terms, o = _einsum_terms(imp, _str(attrs(node)["equation"]), shapes)
    values = [imp.value(n) for n in node.input]
    if len(terms) == 1:  # a transpose and/or a sum
        kept = "".join(c for c in terms[0] if c in o)
        x, t, _ = _sum_out(imp, out if kept == o else f"{out}_sum", values[0], terms[0],
                           shapes[0], o)
        return x if t == o else imp.permute(out, x, [t.index(c) for c in o])
    if len(terms) != 2:
        raise imp.fail(f"{len(terms)}-operand Einsum is not supported (1 and 2 are)")
    (a, ta, sa), (b, tb, sb) = (
        _sum_out(imp, f"{out}_sum{i}", v, t, s, o + terms[1 - i])
        for i, (v, t, s) in enumerate(zip(values, terms, shapes)))
    size = {**dict(zip(ta, sa)), **dict(zip(tb, sb))}
    for c in set(ta) & set(tb):
        if dict(zip(ta, sa))[c] != dict(zip(tb, sb))[c]:
            raise imp.fail(f"index '{c}' has sizes {dict(zip(ta, sa))[c]} and "
                           f"{dict(zip(tb, sb))[c]} (broadcasting is not supported)")
    batch = [c for c in o if c in ta and c in tb]
    contract = [c for c in ta if c in tb and c not in o]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    prod = lambda letters: int(np.prod([size[c] for c in letters], dtype=np.int64))  # noqa: E731
    a_order = batch + left + contract
    b_order = batch + contract + right
    a = _permute(imp, f"{out}_lhs_t", a, [ta.index(c) for c in a_order])
    b = _permute(imp, f"{out}_rhs_t", b, [tb.index(c) for c in b_order])
    a = _reshape(imp, f"{out}_lhs_3d", a, [size[c] for c in a_order],
                 [prod(batch), prod(left), prod(contract)])
    b = _reshape(imp, f"{out}_rhs_3d", b, [size[c] for c in b_order],
                 [prod(batch), prod(contract), prod(right)])
    mm_order = batch + left + right
    mm_shape = [size[c] for c in mm_order]
    perm = [mm_order.index(c) for c in o]
    needs_perm = perm != list(range(len(perm)))
    needs_reshape = [prod(batch), prod(left), prod(right)] != mm_shape
    y = imp.matmul(out if not (needs_perm or needs_reshape) else f"{out}_matmul", a, b)
    if needs_reshape:
        y = imp.reshape(out if not needs_perm else f"{out}_unflat", y, mm_shape)
    return imp.permute(out, y, perm) if needs_perm else y


@converter("CumSum")
def cumsum(imp, node):
    a = attrs(node)
    out = node.output[0]
    shape = imp.shape(node.input[0])
    rank = len(shape)
    axis = int(np.asarray(imp.require_const(node.input[1], "CumSum axis")).reshape(()))
    if not -rank <= axis < rank:
        raise imp.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    n = shape[axis]
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    # out[j] = sum_i x[i] * T[i, j]
    if a.get("reverse", 0):
        tri = (i > j) if a.get("exclusive", 0) else (i >= j)
    else:
        tri = (i < j) if a.get("exclusive", 0) else (i <= j)
    mask = imp.weight(f"{out}_triangle", tri.astype(np.float32))
    x = imp.value(node.input[0])
    if rank == 1:
        row = imp.matmul(f"{out}_matmul", imp.reshape(f"{out}_row", x, [1, n]), mask)
        return imp.reshape(out, row, [n])
    if axis == rank - 1:
        return imp.matmul(out, x, mask)
    order = list(range(rank))
    order[axis], order[-1] = order[-1], order[axis]
    y = imp.matmul(f"{out}_matmul", imp.permute(f"{out}_last", x, order), mask)
    return imp.permute(out, y, order)


def _flat_data(imp, node, out):
    shape = imp.shape(node.input[0])
    total = int(np.prod(shape, dtype=np.int64))
    if total >= _FLAT_INDEX_LIMIT:
        raise imp.fail(f"data of {total} elements is too large to index exactly")
    return imp.reshape(f"{out}_flat_data", imp.value(node.input[0]), [total]), shape, total


def _strides(shape):
    return [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]


@converter("GatherElements")
def gather_elements(imp, node):
    out = node.output[0]
    shape = imp.shape(node.input[0])
    idx_shape = imp.shape(node.input[1])
    rank = len(shape)
    axis = attrs(node).get("axis", 0) % rank
    data, shape, _ = _flat_data(imp, node, out)
    strides = _strides(shape)
    grid = np.indices(idx_shape, dtype=np.int64)
    offset = sum(grid[d] * strides[d] for d in range(rank) if d != axis)
    idx = imp.const(node.input[1])
    if idx is not None:
        idx = np.where(idx < 0, idx + shape[axis], idx)
        flat = imp.weight(f"{out}_flat_index", (idx * strides[axis] + offset).astype(np.float32))
    else:
        # A negative index counts from the end: idx + dim * clip(-idx, 0, 1).
        idx = imp.value(node.input[1])
        neg = imp.clip(f"{out}_is_negative", imp.neg(f"{out}_minus_index", idx), 0.0, 1.0)
        idx = imp.binary("add", f"{out}_index", idx, imp.binary(
            "mul", f"{out}_wrap", neg, imp.scalar(f"{out}_dim", float(shape[axis]))))
        flat = imp.binary("add", f"{out}_flat_index", imp.binary(
            "mul", f"{out}_scaled", idx, imp.scalar(f"{out}_stride", float(strides[axis]))),
            imp.weight(f"{out}_offset", offset.astype(np.float32)))
    return imp.gather(out, data, flat, 0)


@converter("ScatterElements", "ScatterND")
def scatter(imp, node):
    out = node.output[0]
    if _str(attrs(node).get("reduction", "none")) != "none":
        raise imp.fail("reduction other than 'none' is not supported")
    idx = imp.require_const(node.input[1], f"{node.op_type} indices").astype(np.int64)
    data, shape, total = _flat_data(imp, node, out)
    upd_shape = imp.shape(node.input[2])
    n_upd = int(np.prod(upd_shape, dtype=np.int64))
    if total + n_upd >= _FLAT_INDEX_LIMIT:
        raise imp.fail("data and updates are too large to index exactly")
    # Where each output element comes from: itself, or an update (the
    # last write wins, as in onnxruntime).
    source = np.arange(total, dtype=np.int64).reshape(shape)
    from_update = total + np.arange(n_upd, dtype=np.int64).reshape(upd_shape)
    try:
        if node.op_type == "ScatterElements":
            axis = attrs(node).get("axis", 0) % len(shape)
            idx = np.where(idx < 0, idx + shape[axis], idx)
            np.put_along_axis(source, idx, from_update, axis)
        else:
            k = idx.shape[-1]
            rows = from_update.reshape(-1, *shape[k:])
            for i, where in enumerate(idx.reshape(-1, k)):
                where = tuple(int(w) % int(d) for w, d in zip(where, shape))
                source[where] = rows[i]
    except (IndexError, ValueError) as e:
        raise imp.fail(f"indices do not fit the data: {e}") from None
    updates = imp.reshape(f"{out}_flat_updates", imp.value(node.input[2]), [n_upd])
    both = imp.concat(f"{out}_data_and_updates", [data, updates], 0)
    picked = imp.gather(f"{out}_flat", both,
                        imp.weight(f"{out}_source", source.reshape(-1).astype(np.float32)), 0)
    return imp.reshape(out, picked, shape)


@converter("Range", "ConstantOfShape")
def shape_generator(imp, node):
    runtime = [n for n in node.input if n and imp.const(n) is None]
    if runtime:
        raise imp.fail(f"its output's size depends on the runtime value of '{runtime[0]}' "
                       "(only static shapes compile)")
    if node.op_type == "Range":
        start, limit, delta = (np.asarray(imp.const(n)).reshape(()) for n in node.input[:3])
        if delta == 0:
            raise imp.fail("delta is 0")
        return imp.constant_result(node.output[0], np.arange(start, limit, delta))
    value = attrs(node).get("value")
    fill = numpy_helper.to_array(value).reshape(()) if value is not None else np.float32(0)
    shape = [int(d) for d in np.asarray(imp.const(node.input[0])).reshape(-1)]
    return imp.constant_result(node.output[0], np.full(shape, fill))
