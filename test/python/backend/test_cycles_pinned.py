"""Simulated cycles of the zoo models are pinned: the functional part of the
cmodel may change (faster kernels, another summation order) while the timing
model stays put, so total, TIU-busy and GDMA-busy cycles of every model on
both chips in F32, F16, INT8 and asymmetric INT8 must equal the figures in
cycles_pinned.json.

A deliberate change of the timing model or of the code generator regenerates
the file:

    python test/python/backend/test_cycles_pinned.py --update
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tpuc import compiler
from tpuc import runtime as rt
from tpuc.testing.quant import prepare

CHIPS = ("tpu_edge", "tpu_pro")
MODELS = ("cnn_bn", "resnet18", "mobilenetv2", "bert_layer", "mlp")
MODES = ("F32", "F16", "INT8", "INT8_ASYM")
PINNED = Path(__file__).with_name("cycles_pinned.json")


def cycles(p, name: str, chip: str, mode: str) -> dict[str, int]:
    """Compiles the prepared model and runs it once on the cmodel."""
    ctx = compiler.make_context()
    with ctx:
        m = compiler.load_module(p.mlir, ctx)
        opts = f"mode={mode.split('_')[0]} chip={chip}"
        if mode.startswith("INT8"):
            opts += f" calibration-table={p.table} asymmetric={str(mode == 'INT8_ASYM').lower()}"
        bm = p.mlir.parent / f"{name}_{chip}_{mode}.bmodel"
        # The passes model_deploy runs, in its order.
        compiler.run_pipeline(m, f"convert-top-to-tpu{{{opts}}},canonicalize,"
                                 f"tpu-codegen-pipeline{{chip={chip} bmodel={bm}}}")
    s = rt.Model(bm).run(dict(np.load(p.test_input))).stats
    return {"total": s.total_cycles, "tiu": s.tiu_cycles, "gdma": s.gdma_cycles}


def key(name, chip, mode) -> str:
    return f"{name}/{chip}/{mode}"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = prepare(name, tmp_path_factory.mktemp(name), seed=3)
        return cache[name]

    return get


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", MODELS)
def test_cycles_unchanged(prepared, name, chip, mode):
    pinned = json.loads(PINNED.read_text())[key(name, chip, mode)]
    assert cycles(prepared(name), name, chip, mode) == pinned


def update() -> None:
    table = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in MODELS:
            p = prepare(name, Path(tmp) / name, seed=3)
            for chip in CHIPS:
                for mode in MODES:
                    table[key(name, chip, mode)] = cycles(p, name, chip, mode)
    PINNED.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(table)} entries to {PINNED}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(__doc__)
    update()
