"""OpFallback: the selected ops run on the CPU; a table of what fell back."""
from __future__ import annotations

from collections import Counter

from .tool import OpCall, OpTool


class OpFallback(OpTool):
    NAME = "FALLBACK"
    forces_cpu = True

    def __init__(self):
        super().__init__()
        self.calls: Counter = Counter()  # (graph, op) -> calls

    def record(self, call: OpCall) -> None:
        self.calls[(call.graph, call.op)] += 1

    def table(self) -> str:
        rows = [f"{'graph':<14} {'op':<40} {'calls':>6}"]
        rows += [f"{g:<14} {op:<40} {n:6d}" for (g, op), n in sorted(self.calls.items())]
        return "\n".join(rows)

    def finish(self) -> None:
        if self.calls:
            print("ops run on the CPU by OpFallback:\n" + self.table())
