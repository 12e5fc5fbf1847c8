"""The tool base: started and stopped as a context manager or by hand, and
the list of active tools the torch.compile backend consults."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from .selection import Selection

log = logging.getLogger("tpuc.op_tools")

_ACTIVE: list["OpTool"] = []


@dataclass
class OpCall:
    """One execution of a selected op inside a compiled graph."""
    graph: str            # the compiled graph's name (forward_0, backward_1, ...)
    kind: str             # forward / backward / inference
    node: str             # the FX node's name
    op: str               # aten.mm.default
    index: int            # how many calls of this op in this graph came before
    inputs: list[Any]     # the op's arguments, tensors and scalars
    outputs: Any          # what the op returned to the graph (tensor or tuple)
    device: str           # "tpu" or "cpu": where `outputs` were computed
    reason: str = ""      # why it ran on the CPU
    chip: str = ""
    cycles: int = 0
    microseconds: float = 0.0
    roofline_cycles: float = 0.0
    bound: str = ""
    host_seconds: float = 0.0
    cpu_outputs: Any = None  # the CPU's result when a tool asked for it
    target: Any = None       # the ATen op (an OpOverload)
    kwargs: dict = field(default_factory=dict)
    constant_leaves: list[int] = field(default_factory=list)  # args that were weights
    extra: dict = field(default_factory=dict)


class OpTool:
    """Base of the op tools. `NAME` is the environment lists' stem."""
    NAME = ""

    def __init__(self):
        self.selection = Selection([], [])
        self.running = False

    def start(self) -> "OpTool":
        self.selection = Selection.from_env(self.NAME)
        if self not in _ACTIVE:
            _ACTIVE.append(self)
        self.running = True
        return self

    def stop(self) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        self.running = False
        self.finish()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def selects(self, packet: str, overload: str) -> bool:
        return self.selection.matches(packet, overload)

    # What a tool needs of every selected call.
    isolates = True         # selected ops run alone (one-op programs)
    wants_cpu = False       # the CPU's result beside the chip's
    forces_cpu = False      # the op runs on the CPU only

    def record(self, call: OpCall) -> None:  # noqa: B027  (optional hook)
        pass

    def finish(self) -> None:  # noqa: B027  (optional hook)
        pass

    def device_run(self, program, graph: str, kind: str, nodes: dict,  # noqa: B027
                   seconds: float) -> None:
        """A fused device subgraph ran in `seconds` of host time (`nodes`:
        its FX nodes by name)."""


def write_csv(path, header: list[str], rows) -> None:
    """A tool's CSV (its parent directory made)."""
    import csv
    from pathlib import Path
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def device_run(program, graph: str, kind: str, nodes: dict, seconds: float) -> None:
    for tool in _ACTIVE:
        tool.device_run(program, graph, kind, nodes, seconds)


def active() -> list[OpTool]:
    return list(_ACTIVE)


def signature() -> tuple:
    """What the active tools select: a compiled graph is rebuilt when it changes."""
    return tuple((type(t).__name__, t.selection.key()) for t in _ACTIVE)
