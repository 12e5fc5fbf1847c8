"""The whole F32 flow on every zoo model and both chips: ONNX → Top → Tpu →
bmodel → cmodel. The cmodel's outputs match onnxruntime and every tensor it
dumps matches the Tpu interpreter, and the simulated cycles (deterministic)
equal the pins in zoo_cycles.json, so a change that loses performance is seen.
After a deliberate change, rewrite the pins with
``TPUC_UPDATE_CYCLE_PINS=1 python -m pytest test/python/e2e/test_zoo_e2e.py``."""
import fcntl
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tpuc.compare import Tolerance, compare, load_npz
from tpuc.deploy import deploy
from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import zoo
from tpuc.transform import transform

# Every stage computes in float32; only accumulation order differs.
COSINE_MIN = 0.99999
TOL = Tolerance(COSINE_MIN, 0.999)
CHIPS = ("tpu_edge", "tpu_pro")
PINS = Path(__file__).with_name("zoo_cycles.json")


def check_cycles(key: str, cycles: int) -> None:
    """Compares with the pin, or (TPUC_UPDATE_CYCLE_PINS set) rewrites it;
    the lock keeps parallel workers' updates."""
    if not os.environ.get("TPUC_UPDATE_CYCLE_PINS"):
        pins = json.loads(PINS.read_text())
        assert pins.get(key) == cycles, (
            f"{key}: {cycles} simulated cycles, pinned {pins.get(key)}; "
            "if the change is deliberate, update the pins (see the module doc)")
        return
    with open(Path(tempfile.gettempdir()) / "tpuc_zoo_cycles.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pins = json.loads(PINS.read_text()) if PINS.exists() else {}
        pins[key] = cycles
        PINS.write_text(json.dumps(dict(sorted(pins.items())), indent=1) + "\n")


@pytest.fixture(scope="module")
def transformed(tmp_path_factory):
    """model name -> (workdir, top.mlir, inputs npz, ref npz, top outputs npz)."""
    cache = {}

    def get(name):
        if name not in cache:
            d = tmp_path_factory.mktemp(name)
            onnx_path = zoo.export(name, d)
            inputs = make_test_inputs(onnx_path, seed=0, int_ranges=zoo.ZOO[name].int_ranges)
            np.savez(d / "in.npz", **inputs)
            t = transform(name, onnx_path, d / f"{name}.mlir", test_input=d / "in.npz",
                          test_result=d / "top_outputs.npz", tolerance=TOL)
            assert t.comparison.passed, t.comparison.summary()
            cache[name] = (d, t.mlir, d / "in.npz", t.ref_outputs, t.top_outputs)
        return cache[name]

    return get


@pytest.mark.parametrize("layer_group", [True, False], ids=["groups", "per_op"])
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", sorted(zoo.ZOO))
def test_zoo_deploys_and_matches(name, chip, layer_group, transformed):
    """With layer groups the cmodel dumps the tensors that reach DDR; without,
    every layer's."""
    d, mlir, inputs, ref, top_out = transformed(name)
    r = deploy(mlir, "F32", chip, d / f"{name}_{chip}_{layer_group}.bmodel", test_input=inputs,
               test_reference=top_out, compare_all=True, tolerance=TOL, layer_group=layer_group)
    assert r.tpu_comparison.passed, r.tpu_comparison.summary()
    # Every tensor the cmodel dumps is compared with the Tpu interpreter.
    assert r.model_comparison.passed, r.model_comparison.summary()
    assert not r.model_comparison.only_in_target
    compared = {row.name for row in r.model_comparison.rows if row.passed}
    assert compared
    if not layer_group:
        # Every tensor the Tpu interpreter computes (but the inputs) was dumped.
        missing = set(load_npz(r.tpu_outputs)) - compared - set(zoo.ZOO[name].inputs)
        assert not missing, sorted(missing)
    # And the network outputs match onnxruntime directly.
    outputs = zoo.ZOO[name].outputs
    cmodel = load_npz(r.model_outputs)
    onnx_ref = load_npz(ref)
    final = compare({k: cmodel[k] for k in outputs}, {k: onnx_ref[k] for k in outputs},
                    tolerance=TOL)
    assert final.passed and len(final.rows) == len(outputs), final.summary()
    assert r.cycles > 0 and r.roofline.cycles > 0
    assert r.cycles >= r.roofline.cycles * 0.999, "faster than the roofline bound?"
    check_cycles(f"{name}/{chip}/{'groups' if layer_group else 'per_op'}", r.cycles)
