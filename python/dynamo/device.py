"""One device subgraph: FX → Top → Tpu → bmodel, run on the cmodel.

`compile_graph` imports the graph (constants bound as weights handed to
the compiler's weight store in memory, no weight file), lowers it in
process through `tpuc.deploy` without a check run on the cmodel (the
stage files `<name>_tpu.mlir`, `<name>_final.mlir` and `<name>.bmodel` go
into a cache directory) and returns a `DeviceProgram` that
takes the runtime inputs as tensors and returns the graph's outputs in its
order and dtypes.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import torch
from torch.fx import GraphModule

from .. import compiler
from .. import runtime as rt
from ..deploy import deploy
from ..frontend.fx import Output, import_graph
from ..transform import TOP_PIPELINE
from . import cache

log = logging.getLogger(__name__)

_DTYPES = {str(d): d for d in (torch.float32, torch.float16, torch.bfloat16, torch.float64,
                               torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool)}


@dataclass
class RunStats:
    """Device subgraph calls and the cmodel's simulated cycles, summed."""
    calls: int = 0
    cycles: int = 0


RUNS = RunStats()


class DeviceProgram:
    """A loaded bmodel plus how its results map to the graph's outputs."""

    def __init__(self, directory: Path, entry: dict):
        self.directory = directory
        self.name = entry["name"]
        # A graph of identity ops only has no bmodel: its outputs are inputs.
        self.model = rt.Model(directory / entry["bmodel"]) if entry["bmodel"] else None
        self.input_names = entry["inputs"]
        self.outputs = entry["outputs"]
        consts = entry.get("consts")
        self.consts = torch.load(directory / consts) if consts else {}
        self.result_names = [s.name for s in self.model.outputs] if self.model else []
        self.fed = {s.name for s in self.model.inputs} if self.model else set()
        self.last_cycles = 0
        self.last_stats = None  # RunStats of the last run

    def __call__(self, *inputs: torch.Tensor) -> list:
        if self.model is not None:
            # Inputs only passed through to outputs are not arguments; masks
            # enter as 0.0 / 1.0.
            feeds = {n: (t.float() if t.dtype == torch.bool else t).detach().cpu()
                     .contiguous().numpy()
                     for n, t in zip(self.input_names, inputs) if n in self.fed}
            run = self.model.run(feeds)
            self.last_cycles, self.last_stats = run.stats.total_cycles, run.stats
            RUNS.calls += 1
            RUNS.cycles += self.last_cycles
        out = []
        for spec in self.outputs:
            kind, dtype = spec["kind"], _DTYPES.get(spec.get("dtype"), torch.float32)
            if kind == "result":
                # The chip has no 0-d tensors: give results the graph's shape.
                t = torch.from_numpy(run.outputs[self.result_names[spec["index"]]])
                t = t.reshape(spec["shape"]) if spec.get("shape") is not None else t
            elif kind == "input":
                t = inputs[spec["index"]]
            elif kind == "const":
                t = self.consts[str(len(out))]
            else:
                out.append(None)
                continue
            out.append(t.to(dtype))
        return out


def _output_entry(o: Output) -> dict:
    return {"kind": o.kind, "index": o.index, "dtype": str(o.dtype) if o.dtype else None,
            "shape": o.shape}


def compile_graph(gm: GraphModule, example_inputs: Sequence[torch.Tensor],
                  constants: Mapping[str, torch.Tensor], chip: str,
                  name: str = "graph") -> DeviceProgram:
    """Compiles `gm` (ATen-level, `meta['val']` on every node) for `chip`,
    or finds it in the cache; placeholders named in `constants` become
    weights, the others (`example_inputs`, in order) runtime inputs."""
    key = cache.graph_key(gm.code, example_inputs, dict(constants), chip)

    def compile_to(directory: Path) -> dict:
        start = time.perf_counter()
        ctx = compiler.make_context()
        imported = import_graph(gm, ctx, name, constants, source=name)
        entry = {"name": name, "bmodel": None, "inputs": imported.input_names,
                 "outputs": [_output_entry(o) for o in imported.outputs]}
        consts = {str(i): o.tensor for i, o in enumerate(imported.outputs) if o.kind == "const"}
        if consts:
            torch.save(consts, directory / "consts.pt")
            entry["consts"] = "consts.pt"
        if not any(o.kind == "result" for o in imported.outputs):
            return entry
        # Weights go to the compiler's store in memory; the bmodel holds them.
        weight_file = compiler.hold_weights(imported.module, imported.weights,
                                            f"{directory}/{name}")
        try:
            with ctx:
                compiler.run_pipeline(imported.module, TOP_PIPELINE)
            deploy(imported.module, "F32", chip, directory / f"{name}.bmodel", run=False)
        finally:
            compiler.release_weights(weight_file)
        entry["bmodel"] = f"{name}.bmodel"
        seconds = time.perf_counter() - start
        cache.STATS.compile_seconds.append(seconds)
        log.debug("compiled %s for %s in %.2f s into %s", name, chip, seconds, directory)
        return entry

    return cache.lookup_or_compile(key, compile_to, DeviceProgram)
