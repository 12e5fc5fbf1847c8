"""Real architectures (torchvision and transformers definitions, random
weights, small inputs) exported to ONNX the usual way: each transforms with
every Top tensor matching onnxruntime, compiles in F32 for both chips, and
the cmodel's outputs, which keep the ONNX output names, match onnxruntime
at cosine >= 0.99999."""
import numpy as np
import pytest

from tpuc.compare import Tolerance, load_npz
from tpuc.deploy import deploy
from tpuc.testing import real_models
from tpuc.transform import transform

COSINE_MIN = 0.99999
# Layer-wise Top vs onnxruntime: float32 both, only summation order differs.
TOL = Tolerance(COSINE_MIN, 0.999)
CHIPS = ("tpu_edge", "tpu_pro")


def _params():
    return [pytest.param(name, marks=[pytest.mark.slow] if spec.slow else [])
            for name, spec in real_models.MODELS.items()]


def _cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def transformed(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            try:
                real_models.torchvision_models()
            except ImportError as e:
                pytest.skip(str(e))
            d = tmp_path_factory.mktemp(name)
            path, inputs = real_models.export(name, d)
            np.savez(d / "in.npz", **inputs)
            t = transform(name, path, d / f"{name}.mlir", test_input=d / "in.npz",
                          test_result=d / "top.npz", tolerance=TOL)
            assert t.comparison.passed, t.comparison.summary()
            cache[name] = (d, t)
        return cache[name]

    return get


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", _params())
def test_real_model_matches_onnxruntime(name, chip, transformed):
    d, t = transformed(name)
    spec = real_models.MODELS[name]
    assert t.output_names == list(spec.output_names)
    r = deploy(t.mlir, "F32", chip, d / f"{name}_{chip}.bmodel", test_input=d / "in.npz",
               test_reference=t.top_outputs, tolerance=TOL)
    assert r.model_comparison.passed, r.model_comparison.summary()
    cmodel, ref = load_npz(r.model_outputs), load_npz(t.ref_outputs)
    for out in spec.output_names:  # the ONNX graph's output names
        assert cmodel[out].shape == ref[out].shape
        assert _cosine(cmodel[out], ref[out]) >= COSINE_MIN, out


@pytest.mark.parametrize("mode,cos_min", [("F16", 0.9999), ("BF16", 0.9995)])
def test_masked_bert_in_half_precision(mode, cos_min, transformed):
    """The attention mask's -FLT_MAX stays finite when the weights become
    F16 / BF16 (it saturates to their largest value): no NaN."""
    d, t = transformed("bert")
    r = deploy(t.mlir, mode, "tpu_edge", d / f"bert_{mode}.bmodel", test_input=d / "in.npz",
               test_reference=t.top_outputs, tolerance=Tolerance(0.999, 0.9))
    assert r.model_comparison.passed, r.model_comparison.summary()
    cmodel, ref = load_npz(r.model_outputs), load_npz(t.ref_outputs)
    for out in ("last_hidden_state", "pooler_output"):
        assert not np.isnan(cmodel[out]).any()
        assert _cosine(cmodel[out], ref[out]) >= cos_min, out


def test_masked_bert_in_int8(transformed):
    """The additive mask's extreme calibrated range sends the ops producing
    it (Where, the masked scores' Add) to the F16 fallback: a calibrated
    INT8 BERT with a mask stays close to onnxruntime."""
    from tpuc.calibration.driver import calibrate
    d, t = transformed("bert")
    (d / "cali").mkdir(exist_ok=True)
    (d / "cali" / "a.npz").write_bytes((d / "in.npz").read_bytes())
    calibrate(t.mlir, d / "cali", d / "cali_table", input_num=1, progress=False)
    r = deploy(t.mlir, "INT8", "tpu_edge", d / "bert_int8.bmodel", test_input=d / "in.npz",
               test_reference=t.top_outputs, calibration_table=d / "cali_table",
               tolerance=Tolerance(0.9, 0.5))
    assert not r.int_mismatches
    cmodel, ref = load_npz(r.model_outputs), load_npz(t.ref_outputs)
    for out in ("last_hidden_state", "pooler_output"):
        assert _cosine(cmodel[out], ref[out]) >= 0.99, out
    fallbacks = r.tpu_mlir.read_text().split("tpu.fallback_ops = [")[1].split("]")[0]
    assert "layer.0/attention/self/Where_output_0 (tpu.Mul)" in fallbacks
    assert "layer.0/attention/self/Add_output_0 (tpu.Add)" in fallbacks


@pytest.mark.slow
@pytest.mark.parametrize("chip", CHIPS)
def test_convnext_compiles_at_224(chip, tmp_path):
    """At 224x224 ConvNeXt's channels-last Linear layers tile to fill local
    memory; their buffers must fit whatever bank placement the codegen
    prefers (this once failed with "local memory exhausted")."""
    try:
        real_models.torchvision_models()
    except ImportError as e:
        pytest.skip(str(e))
    path, _ = real_models.export("convnext", tmp_path, image_size=224)
    t = transform("convnext", path, tmp_path / "convnext.mlir")
    r = deploy(t.mlir, "F32", chip, tmp_path / "convnext.bmodel", run=False)
    assert r.bmodel.exists()
