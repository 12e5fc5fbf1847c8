"""OpTimeMeasure: per selected op call its simulated cycles and µs at the
chip clock (run alone), against the op's own roofline bound, forward and
backward, with the host wall time beside it; a CSV and a top-10 summary."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from .tool import OpCall, OpTool, write_csv


class OpTimeMeasure(OpTool):
    NAME = "TIME_MEASURE"

    def __init__(self, csv_path: str | Path | None = "op_time_measure_result.csv", top: int = 10):
        super().__init__()
        self.csv_path = Path(csv_path) if csv_path else None
        self.top = top
        self.calls: list[OpCall] = []

    def record(self, call: OpCall) -> None:
        # Keep the figures, not the tensors.
        self.calls.append(replace(call, inputs=[], outputs=None, cpu_outputs=None, kwargs={}))

    def per_op(self) -> list[dict]:
        """Totals per (graph kind, op), most simulated time first."""
        acc: dict = defaultdict(lambda: {"calls": 0, "cycles": 0, "us": 0.0, "roofline": 0.0,
                                         "host_s": 0.0, "device": set()})
        for c in self.calls:
            a = acc[(c.kind, c.op)]
            a["calls"] += 1
            a["cycles"] += c.cycles
            a["us"] += c.microseconds
            a["roofline"] += c.roofline_cycles
            a["host_s"] += c.host_seconds
            a["device"].add(c.device)
        rows = [{"kind": k, "op": op, **v, "device": "/".join(sorted(v["device"])),
                 "ratio": v["cycles"] / v["roofline"] if v["roofline"] else 0.0}
                for (k, op), v in acc.items()]
        return sorted(rows, key=lambda r: (-r["us"], r["op"]))

    def summary(self) -> str:
        rows = self.per_op()
        lines = [f"{'kind':<9} {'op':<36} {'calls':>5} {'cycles':>10} {'us':>9} "
                 f"{'x roof':>7} {'host ms':>8} device"]
        for r in rows[:self.top]:
            lines.append(f"{r['kind']:<9} {r['op']:<36} {r['calls']:5d} {r['cycles']:10d} "
                         f"{r['us']:9.1f} {r['ratio']:7.2f} {1e3 * r['host_s']:8.1f} {r['device']}")
        return "\n".join(lines)

    def finish(self) -> None:
        if self.csv_path:
            write_csv(self.csv_path, ["graph", "kind", "node", "op", "call", "device", "cycles",
                                      "microseconds", "roofline_cycles", "bound", "host_seconds"],
                      ([c.graph, c.kind, c.node, c.op, c.index, c.device, c.cycles,
                        f"{c.microseconds:.3f}", f"{c.roofline_cycles:.1f}", c.bound,
                        f"{c.host_seconds:.6f}"] for c in self.calls))
        if self.calls:
            print(f"top {self.top} ops by simulated time (each run alone on the chip):\n"
                  + self.summary())
