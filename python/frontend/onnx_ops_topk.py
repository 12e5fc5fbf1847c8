"""TopK with a constant K, decomposed at import into K selection rounds.

Each round takes the maximum along the axis (ReduceMax), finds the lowest
index holding it, and masks that position out for the next round:

* d = max - x is exactly 0 where x equals the maximum and > 0 elsewhere
  (even a subnormal gap, which two clamped scalings lift to >= 2), so
  key = iota + n * scaled(d) is the index itself where x is a maximum and
  >= 2n elsewhere; ReduceMin(key) is the lowest such index, as
  onnxruntime picks among ties.
* the one-hot of that index is 1 - min(|iota - index|, 1): exact integers.
* the picked position becomes -FLT_MAX through x * (1 - onehot) +
  onehot * -FLT_MAX (one of the two terms is always exactly 0).

largest=0 runs the same rounds on -x. The results come out sorted, which
also satisfies sorted=0 (whose order onnxruntime leaves unspecified).
"""
from __future__ import annotations

import numpy as np

from .onnx_ops import attrs, converter

F32_MAX = float(np.finfo(np.float32).max)
# Two clamped multiplications by 2^75 take any nonzero gap, down to the
# smallest subnormal 2^-149, to >= 2 without overflowing.
_LIFT = float(2.0 ** 75)
_ROUNDS_LIMIT = 256  # each round is ~14 ops


@converter("TopK")
def topk(imp, node):
    a = attrs(node)
    values_out = node.output[0]
    indices_out = node.output[1] if len(node.output) > 1 else ""
    shape = imp.shape(node.input[0])
    rank = len(shape)
    axis = a.get("axis", -1)
    if not -rank <= axis < rank:
        raise imp.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    n = shape[axis]
    if len(node.input) > 1:
        k = int(imp.require_scalar(node.input[1], "K"))
    else:
        k = int(a["k"])  # opset 1: an attribute
    if not 0 < k <= n:
        raise imp.fail(f"K={k} must be in [1, {n}] (the size of axis {axis})")
    if k > _ROUNDS_LIMIT:
        raise imp.fail(f"K={k} is above {_ROUNDS_LIMIT} (one selection round per K)")
    largest = a.get("largest", 1)

    p = values_out  # prefix of the intermediate names
    x = imp.value(node.input[0])
    if not largest:
        x = imp.neg(f"{p}_negated", x)
    iota_shape = [1] * rank
    iota_shape[axis] = n
    iota = imp.weight(f"{p}_iota", np.arange(n, dtype=np.float32).reshape(iota_shape))
    one = imp.scalar(f"{p}_one", 1.0)
    lift = imp.scalar(f"{p}_lift", _LIFT)
    size = imp.scalar(f"{p}_n", float(n))
    low = imp.scalar(f"{p}_lowest", -F32_MAX)
    values, indices = [], []
    for r in range(k):
        q = f"{p}_round{r}"
        last = k == 1  # the round's results are the node's outputs
        m = imp.reduce(values_out if last and largest else f"{q}_max", x, "max", [axis], True)
        d = imp.binary("min", f"{q}_gap", imp.binary("sub", f"{q}_diff", m, x), one)
        d = imp.binary("min", f"{q}_gap_lifted", imp.binary("mul", f"{q}_gap_x", d, lift), one)
        d = imp.binary("mul", f"{q}_gap_big", d, lift)
        key = imp.binary("add", f"{q}_key", iota, imp.binary("mul", f"{q}_penalty", d, size))
        idx = imp.reduce(indices_out if last and indices_out else f"{q}_index", key, "min",
                         [axis], True)
        values.append(m)
        indices.append(idx)
        if r + 1 == k:
            break
        far = imp.unary("abs", f"{q}_dist", imp.binary("sub", f"{q}_off", iota, idx))
        hot = imp.binary("sub", f"{q}_onehot", one,
                         imp.binary("min", f"{q}_far", far, one))
        keep = imp.binary("sub", f"{q}_keep", one, hot)
        x = imp.binary("add", f"{q}_rest",
                       imp.binary("mul", f"{q}_kept", x, keep),
                       imp.binary("mul", f"{q}_dropped", hot, low))

    def gather_rounds(name, parts):
        return parts[0] if len(parts) == 1 else imp.concat(name, parts, axis)

    if largest:
        v = gather_rounds(values_out, values)
    else:
        v = imp.neg(values_out, gather_rounds(f"{p}_negated_values", values))
    results = [v]
    if indices_out:
        results.append(gather_rounds(indices_out, indices))
    return results
