"""OpTimeMeasure: per selected op its simulated cycles and µs at the chip
clock, forward and backward, against the op's own roofline bound, with the
host wall time beside it; a CSV and a top-10 summary.

By default the ops are timed where they run, inside the fused device
subgraphs: every op whose result the program stores is charged the cycles
from the previous stored result's completion to its own (ops kept in a
layer group's local memory are charged to the group's stored result), and
what follows the last one (the final stores) is the graph's tail, so the
per-op cycles of a run add up to its total. `alone=True` instead runs each
selected op as its own one-op program (cycles of the op in isolation, with
its own loads and stores).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import torch

from ..frontend.fx import op_name, packet_name
from .tool import OpCall, OpTool, write_csv

TAIL = "(graph tail)"
UNSELECTED = "(ops not selected)"
HELPER = "(helper ops)"


def _bytes(val) -> int:
    vals = val if isinstance(val, (list, tuple)) else [val]
    return sum(v.numel() * v.element_size() for v in vals if isinstance(v, torch.Tensor))


def _macs(node) -> int:
    """Multiply-accumulates of a matmul or convolution node, else 0."""
    out = node.meta.get("val")
    if not isinstance(out, torch.Tensor):
        return 0
    name = packet_name(node.target)
    args = [a.meta.get("val") if hasattr(a, "meta") else a for a in node.args]
    if name in ("aten.mm", "aten.addmm", "aten.bmm") and isinstance(args[-1], torch.Tensor):
        k = args[-2].shape[-1] if isinstance(args[-2], torch.Tensor) else 0
        return out.numel() * k
    if name == "aten.convolution" and isinstance(args[1], torch.Tensor):
        return out.numel() * math.prod(args[1].shape[1:])
    return 0


def op_work(node) -> tuple[int, int]:
    """(MACs, bytes of operands and results) of one FX node."""
    inputs = sum(_bytes(a.meta.get("val")) for a in node.all_input_nodes)
    return _macs(node), inputs + _bytes(node.meta.get("val"))


def roofline(work: tuple[int, int], target) -> tuple[float, str]:
    """The bound of an op's `work`: its MACs at the F32 peak against its
    bytes through DDR; (cycles, "compute" or "memory")."""
    macs, nbytes = work
    compute = macs / (target.lanes * target.eu_f32)
    memory = nbytes / target.ddr_bytes_per_cycle
    return (compute, "compute") if compute >= memory else (memory, "memory")


def _owner(tensor: str, nodes: dict):
    """The FX node a stored tensor belongs to: its name, or the longest
    node name it extends with `_...` (helper ops the lowering made)."""
    if tensor in nodes:
        return nodes[tensor]
    best = None
    for name, node in nodes.items():
        if tensor.startswith(name + "_") and (best is None or len(name) > len(best[0])):
            best = (name, node)
    return best[1] if best else None


class OpTimeMeasure(OpTool):
    NAME = "TIME_MEASURE"

    def __init__(self, csv_path: str | Path | None = "op_time_measure_result.csv", top: int = 10,
                 alone: bool = False):
        super().__init__()
        self.csv_path = Path(csv_path) if csv_path else None
        self.top = top
        self.isolates = alone
        self.calls: list[OpCall] = []
        self.graph_cycles: Counter = Counter()  # graph kind -> simulated cycles of its runs
        self.graph_seconds: Counter = Counter()  # graph kind -> host seconds of those runs
        self._index: Counter = Counter()

    def record(self, call: OpCall) -> None:  # an op run alone
        # Keep the figures, not the tensors.
        self.calls.append(replace(call, inputs=[], outputs=None, cpu_outputs=None, kwargs={}))
        self.graph_cycles[call.kind] += call.cycles
        self.graph_seconds[call.kind] += call.host_seconds

    def device_run(self, program, graph: str, kind: str, nodes: dict, seconds: float) -> None:
        stats = program.last_stats
        if self.isolates or stats is None or program.model is None:
            return
        target = program.model.target
        ends = {(r["engine"], r["id"]): r["end"] for r in stats.raw.records}
        marks = sorted((ends.get((str(t.engine).split(".")[-1], t.after_id), 0), t.info.name)
                       for t in program.model.bmodel.networks[0].tensors)
        mhz = stats.raw.clock_mhz or 1.0
        prev = 0

        def charge(op: str, node_name: str, cycles: int, roof=(0.0, "")):
            k = (graph, op)
            self.calls.append(OpCall(graph, kind, node_name, op, self._index[k], [], None, "tpu",
                                     cycles=cycles, microseconds=cycles / mhz,
                                     roofline_cycles=roof[0], bound=roof[1]))
            self._index[k] += 1

        for end, tensor in marks:
            cycles, prev = max(0, end - prev), max(prev, end)
            node = _owner(tensor, nodes)
            if node is None:
                charge(HELPER, tensor, cycles)
            elif self.selects(packet_name(node.target), op_name(node.target)):
                charge(op_name(node.target), node.name, cycles, roofline(op_work(node), target))
            else:
                charge(UNSELECTED, node.name, cycles)
        charge(TAIL, program.name, max(0, stats.total_cycles - prev))
        self.graph_cycles[kind] += stats.total_cycles
        self.graph_seconds[kind] += seconds

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
        for kind, total in sorted(self.graph_cycles.items()):
            charged = sum(c.cycles for c in self.calls if c.kind == kind)
            lines.append(f"{kind}: {charged} cycles charged to ops, graph runs {total} cycles "
                         f"({1e3 * self.graph_seconds[kind]:.1f} ms host time on the cmodel)")
        return "\n".join(lines)

    def finish(self) -> None:
        if self.csv_path:
            write_csv(self.csv_path, ["graph", "kind", "node", "op", "call", "device", "cycles",
                                      "microseconds", "roofline_cycles", "bound", "host_seconds"],
                      ([c.graph, c.kind, c.node, c.op, c.index, c.device, c.cycles,
                        f"{c.microseconds:.3f}", f"{c.roofline_cycles:.1f}", c.bound,
                        f"{c.host_seconds:.6f}"] for c in self.calls))
        if self.calls:
            where = "each run alone on the chip" if self.isolates else "inside the compiled graphs"
            print(f"top {self.top} ops by simulated time ({where}):\n" + self.summary())
