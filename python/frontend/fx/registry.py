"""The ATen converter registry: one entry per OpOverload the chip runs.

Each entry holds the converter (FX node → Top ops through the importer),
the positions of integer index operands (everything else must be float32),
an optional extra check of the node's arguments, and sample arguments. The
same table drives the importer, the CPU-fallback partitioner
(`unsupported_reason`) and the per-op conformance tests (`samples`), so the
list of supported ops and its tests cannot drift.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch
from torch.fx import Node

# Data the chip computes on; integer operands are only allowed as indices
# (carried as float32, exact below 2**24).
FLOAT_DTYPES = (torch.float32,)
INDEX_DTYPES = (torch.int64, torch.int32)
# Masks are carried as 0.0 / 1.0.
MASK_DTYPES = FLOAT_DTYPES + (torch.bool,)


class Param:
    """A sample argument that the compiled graph holds as a constant (a
    weight), not as a runtime input."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


@dataclass
class Sample:
    """Arguments for one conformance case; tensors are runtime inputs,
    `Param`s constants."""
    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass
class OpEntry:
    target: torch._ops.OpOverload
    convert: Callable
    index_args: tuple[int, ...] = ()
    check: Callable[[Node], str | None] | None = None
    samples: Callable[[], Sequence[Sample]] | None = None
    outputs: tuple[int, ...] = (0,)  # which results of a tuple-valued op exist
    mask_args: tuple[int, ...] = ()  # operands that may be bool
    mask_result: bool = False        # results may be bool


REGISTRY: dict[torch._ops.OpOverload, OpEntry] = {}


def converter(*targets, index_args=(), check=None, samples=None, outputs=(0,), mask_args=(),
              mask_result=False):
    """Registers `fn(imp, node)` for the OpOverloads `targets`."""
    def register(fn):
        for t in targets:
            if t in REGISTRY:
                raise ValueError(f"{t} registered twice")
            REGISTRY[t] = OpEntry(t, fn, tuple(index_args), check, samples, tuple(outputs),
                                  tuple(mask_args), mask_result)
        return fn
    return register


def op_name(target) -> str:
    """`aten.add.Tensor` style name of a call target."""
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._schema.name.split('::')[-1]}.{target._overloadname}"
    return getattr(target, "__name__", str(target))


def packet_name(target) -> str:
    """`aten.add` style name (what OP_FALLBACK_LIST names)."""
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._schema.name.split('::')[-1]}"
    return op_name(target)


def _val(arg):
    return arg.meta.get("val") if isinstance(arg, Node) else None


def _static(t) -> bool:
    return all(isinstance(d, int) for d in t.shape)


def _tensor_reason(what: str, t, allowed) -> str | None:
    if not _static(t):
        return f"{what} has a dynamic shape {tuple(t.shape)}"
    if t.dtype not in allowed:
        return f"{what} is {t.dtype} (supported: {', '.join(str(d) for d in allowed)})"
    return None


def unsupported_reason(node: Node) -> str | None:
    """Why `node` cannot run on the chip, or None when it can."""
    if node.op != "call_function":
        return None
    if node.target is operator.getitem:
        src, idx = node.args
        entry = REGISTRY.get(src.target) if isinstance(src, Node) else None
        if entry is None or idx not in entry.outputs:
            return f"result {idx} of {op_name(getattr(src, 'target', src))} is not computed"
        return None
    entry = REGISTRY.get(node.target)
    if entry is None:
        return "no Top converter"
    flat = list(node.args) + list(node.kwargs.values())
    for i, arg in enumerate(flat):
        for j, a in enumerate(arg if isinstance(arg, (list, tuple)) else [arg]):
            if isinstance(a, Node) and not isinstance(_val(a), torch.Tensor):
                if isinstance(_val(a), torch.SymInt) or _val(a) is None:
                    return f"argument {i} is symbolic"
                continue
            t = _val(a)
            if t is None:
                continue
            allowed = (INDEX_DTYPES if i in entry.index_args else
                       MASK_DTYPES if i in entry.mask_args else FLOAT_DTYPES)
            reason = _tensor_reason(f"argument {i}", t, allowed)
            if reason:
                return reason
        if isinstance(arg, torch.SymInt):
            return f"argument {i} is symbolic"
    outs = _val(node)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    for k in entry.outputs:
        if k < len(outs) and outs[k] is None and len(outs) > 1:
            continue  # a result the op does not produce (output_mask)
        if k >= len(outs) or not isinstance(outs[k], torch.Tensor):
            return f"result {k} is not a tensor"
        reason = _tensor_reason(f"result {k}", outs[k],
                                MASK_DTYPES if entry.mask_result else FLOAT_DTYPES)
        if reason:
            return reason
    if any(u.target is operator.getitem and u.args[1] not in entry.outputs
           for u in node.users):
        return "a result the chip does not compute is used"
    return entry.check(node) if entry.check else None
