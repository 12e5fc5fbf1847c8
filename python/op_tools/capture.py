"""OpCapture: every selected op call's inputs and outputs (gradients too,
in backward graphs) saved under `<root>/<graph>/<op>/<n>/` for replay."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from .tool import OpCall, OpTool, log

DEFAULT_ROOT = "op_capture_result"


def _cpu(x):
    return x.detach().cpu().clone() if isinstance(x, torch.Tensor) else x


def _describe(x):
    if isinstance(x, torch.Tensor):
        return {"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")}
    if isinstance(x, (tuple, list)):
        return [_describe(v) for v in x]
    return repr(x)


class OpCapture(OpTool):
    NAME = "CAPTURE"

    def __init__(self, root: str | Path = DEFAULT_ROOT):
        super().__init__()
        self.root = Path(root)
        self.saved: list[Path] = []

    def record(self, call: OpCall) -> None:
        d = self.root / call.graph / call.op / str(call.index)
        d.mkdir(parents=True, exist_ok=True)
        outs = call.outputs if isinstance(call.outputs, (tuple, list)) else [call.outputs]
        torch.save({"op": call.op, "inputs": [_cpu(a) for a in call.inputs],
                    "kwargs": {k: _cpu(v) for k, v in call.kwargs.items()},
                    "outputs": [_cpu(o) for o in outs],
                    "constant_leaves": call.constant_leaves}, d / "call.pt")
        meta = {"op": call.op, "graph": call.graph, "kind": call.kind, "node": call.node,
                "index": call.index, "device": call.device, "chip": call.chip,
                "inputs": _describe(call.inputs), "outputs": _describe(list(outs))}
        (d / "meta.json").write_text(json.dumps(meta, indent=1))
        self.saved.append(d)

    def finish(self) -> None:
        log.info("tpuc.op_tools: OpCapture saved %d op call(s) under %s", len(self.saved), self.root)
