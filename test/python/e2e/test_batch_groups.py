"""Batched zoo models end to end: layer groups whose maps do not fit local
memory for the whole batch run as a loop over slices of the batch (N). The
cmodel's outputs match onnxruntime, and in INT8 every stored tensor equals
the Tpu interpreter's bit for bit."""
import numpy as np
import pytest

from tpuc.calibration.driver import calibrate
from tpuc.compare import Tolerance, load_npz
from tpuc.deploy import deploy
from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import zoo
from tpuc.testing.groups import group_slices
from tpuc.transform import transform

CHIPS = ("tpu_edge", "tpu_pro")
# F32: every stage computes in float32; INT8: min-max calibration on two
# random samples, so only closeness to onnxruntime is asked.
COSINE = {"F32": 0.99999, "INT8": 0.999}


@pytest.fixture(scope="module")
def batched(tmp_path_factory):
    """(model name, batch) -> (workdir, transform result, calibration table)."""
    cache = {}

    def get(name, batch):
        if (name, batch) not in cache:
            d = tmp_path_factory.mktemp(f"{name}_b{batch}")
            onnx_path = zoo.export(name, d, batch=batch)
            inputs = make_test_inputs(onnx_path, seed=0)
            np.savez(d / "in.npz", **inputs)
            t = transform(name, onnx_path, d / f"{name}.mlir", test_input=d / "in.npz",
                          test_result=d / "top.npz", tolerance=Tolerance(COSINE["F32"], 0.999))
            assert t.comparison.passed, t.comparison.summary()
            (d / "cali").mkdir()
            rng = np.random.default_rng(1)
            for k in range(2):
                np.savez(d / "cali" / f"{k}.npz",
                         **{n: rng.standard_normal(a.shape).astype(np.float32)
                            for n, a in inputs.items()})
            calibrate(t.mlir, d / "cali", d / "cali_table", input_num=2, method="minmax",
                      progress=False)
            cache[(name, batch)] = (d, t, d / "cali_table")
        return cache[(name, batch)]

    return get


def _cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))


def check(name, batch, mode, chip, batched):
    d, t, table = batched(name, batch)
    r = deploy(t.mlir, mode, chip, d / f"{chip}_{mode}.bmodel", test_input=d / "in.npz",
               test_reference=t.top_outputs, compare_all=mode == "INT8",
               calibration_table=table if mode == "INT8" else None,
               tolerance=Tolerance(COSINE[mode], 0.9))
    assert not r.int_mismatches, r.int_mismatches
    assert r.model_comparison.passed, r.model_comparison.summary()
    cmodel, ref = load_npz(r.model_outputs), load_npz(t.ref_outputs)
    assert cmodel["output"].shape == ref["output"].shape
    assert _cosine(cmodel["output"], ref["output"]) >= COSINE[mode]
    return r


@pytest.mark.parametrize("mode", ["F32", "INT8"])
def test_resnet18_batch4_slices_the_batch(mode, batched):
    """On tpu_edge some of ResNet-18's groups hold one slice of the batch of
    4 at a time."""
    r = check("resnet18", 4, mode, "tpu_edge", batched)
    assert max(group_slices(r.final_mlir.read_text(), "n")) > 1


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["F32", "INT8"])
@pytest.mark.parametrize("chip,name,batch", [("tpu_pro", "resnet18", 4),
                                             ("tpu_edge", "mobilenetv2", 8),
                                             ("tpu_pro", "mobilenetv2", 8)])
def test_batched_zoo_models(chip, name, batch, mode, batched):
    check(name, batch, mode, chip, batched)
