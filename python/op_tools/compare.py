"""OpAutoCompare: each selected op on the chip against the CPU (in float64
for matmul, convolution and the norms), a table of allclose, max abs/rel
difference and cosine, the failing calls' inputs saved, a CSV."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from .capture import OpCapture
from .tool import OpCall, OpTool, write_csv

# Ops whose float32 CPU result is itself too rounded to judge the chip's.
FLOAT64_REFERENCE = ("aten.mm", "aten.bmm", "aten.addmm", "aten.matmul", "aten.convolution",
                     "aten.native_layer_norm", "aten.native_batch_norm",
                     "aten._native_batch_norm_legit", "aten._native_batch_norm_legit_no_training",
                     "aten.native_group_norm", "aten.linear")


@dataclass
class CompareRow:
    graph: str
    op: str
    index: int
    output: int
    allclose: bool
    max_abs: float
    max_rel: float
    cosine: float
    note: str = ""


def compare_tensors(got: torch.Tensor, want: torch.Tensor, atol: float,
                    rtol: float) -> tuple[bool, float, float, float]:
    """(allclose, max abs diff, max rel diff, cosine); integer and bool
    results must be equal."""
    g, w = got.detach().double().flatten(), want.detach().double().flatten()
    if g.numel() == 0:
        return True, 0.0, 0.0, 1.0
    diff = (g - w).abs()
    max_abs = float(diff.max())
    max_rel = float((diff / w.abs().clamp_min(1e-12)).max())
    na, nb = float(g.norm()), float(w.norm())
    cos = 1.0 if na == nb == 0 else (float(g @ w) / (na * nb) if na * nb else 0.0)
    if got.is_floating_point():
        ok = bool(torch.allclose(g, w, atol=atol, rtol=rtol))
    else:
        ok = bool(torch.equal(g, w))
    return ok, max_abs, max_rel if math.isfinite(max_rel) else float("inf"), cos


def reference(call_target, inputs: list, kwargs: dict, op: str):
    """The CPU result an op is judged against (float64 for `FLOAT64_REFERENCE`)."""
    if any(op.startswith(p + ".") for p in FLOAT64_REFERENCE):
        return call_target(*_to64(inputs), **_to64(kwargs))
    return call_target(*inputs, **kwargs)


def _to64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.double()
    if isinstance(x, (list, tuple)):
        return type(x)(_to64(v) for v in x)
    if isinstance(x, dict):
        return {k: _to64(v) for k, v in x.items()}
    return x


def _flat(x) -> list:
    return list(x) if isinstance(x, (tuple, list)) else [x]


class OpAutoCompare(OpTool):
    NAME = "AUTOCOMPARE"
    wants_cpu = True

    def __init__(self, atol: float = 1e-4, rtol: float = 1e-4, csv_path: str | Path | None =
                 "op_autocompare_result.csv", failures_dir: str | Path = "op_autocompare_failures"):
        super().__init__()
        self.atol, self.rtol = atol, rtol
        self.csv_path = Path(csv_path) if csv_path else None
        self.failures = OpCapture(failures_dir)
        self.rows: list[CompareRow] = []

    def record(self, call: OpCall) -> None:
        if call.device != "tpu":
            self.rows.append(CompareRow(call.graph, call.op, call.index, 0, True, 0.0, 0.0, 1.0,
                                        f"runs on the CPU: {call.reason}"))
            return
        ref = call.cpu_outputs
        if any(call.op.startswith(p + ".") for p in FLOAT64_REFERENCE):
            ref = reference(call.target, call.inputs, call.kwargs, call.op)
        ok_all = True
        for i, (got, want) in enumerate(zip(_flat(call.outputs), _flat(ref))):
            if not isinstance(got, torch.Tensor) or not isinstance(want, torch.Tensor):
                continue
            row = self._compare(call, i, got, want)
            ok_all &= row.allclose
            self.rows.append(row)
        if not ok_all:
            self.failures.record(call)

    def _compare(self, call: OpCall, i: int, got: torch.Tensor, want: torch.Tensor) -> CompareRow:
        return CompareRow(call.graph, call.op, call.index, i,
                          *compare_tensors(got, want, self.atol, self.rtol))

    def table(self) -> str:
        head = (f"{'graph':<12} {'op':<36} {'call':>4} {'out':>3} {'allclose':>8} "
                f"{'max_abs':>10} {'max_rel':>10} {'cosine':>9}  note")
        lines = [head]
        for r in self.rows:
            lines.append(f"{r.graph:<12} {r.op:<36} {r.index:4d} {r.output:3d} "
                         f"{'True' if r.allclose else 'FALSE':>8} {r.max_abs:10.3e} "
                         f"{r.max_rel:10.3e} {r.cosine:9.6f}  {r.note}")
        return "\n".join(lines)

    def finish(self) -> None:
        if self.csv_path:
            write_csv(self.csv_path, ["graph", "op", "call", "output", "allclose", "max_abs",
                                      "max_rel", "cosine", "note"],
                      ([r.graph, r.op, r.index, r.output, r.allclose, r.max_abs, r.max_rel,
                        r.cosine, r.note] for r in self.rows))
        if self.rows:
            print(self.table())
