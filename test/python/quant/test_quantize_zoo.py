"""convert-top-to-tpu in F16, BF16 and INT8 on zoo models: the Tpu
interpreter's outputs against the Top (float) interpreter's, with INT8
calibrated on 16 random samples (KL). The figures are what the lowering
reaches today; a change that loses accuracy fails here."""
from __future__ import annotations

import numpy as np
import pytest

from tpuc import compiler
from tpuc.testing.quant import prepare

# (model, mode, asymmetric) -> lowest accepted cosine.
CASES = {
    ("cnn_bn", "F16", False): 0.9999, ("cnn_bn", "BF16", False): 0.9999,
    ("cnn_bn", "INT8", False): 0.999, ("cnn_bn", "INT8", True): 0.999,
    ("resnet18", "F16", False): 0.9999, ("resnet18", "BF16", False): 0.9999,
    ("resnet18", "INT8", False): 0.999, ("resnet18", "INT8", True): 0.999,
    ("mobilenetv2", "F16", False): 0.9999, ("mobilenetv2", "BF16", False): 0.9999,
    ("mobilenetv2", "INT8", False): 0.999, ("mobilenetv2", "INT8", True): 0.999,
    ("bert_layer", "F16", False): 0.9999, ("bert_layer", "BF16", False): 0.9999,
    ("bert_layer", "INT8", False): 0.999, ("bert_layer", "INT8", True): 0.999,
    ("mlp", "F16", False): 0.9999, ("mlp", "BF16", False): 0.9999,
    ("mlp", "INT8", False): 0.999, ("mlp", "INT8", True): 0.999,
}


def _cos(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = prepare(name, tmp_path_factory.mktemp(name))
        return cache[name]
    return get


@pytest.mark.parametrize("model,mode,asym", sorted(CASES))
def test_quantized_outputs_match_float(prepared, model, mode, asym):
    p = prepared(model)
    ctx = compiler.make_context()
    opts = f"mode={mode} chip=tpu_edge"
    if mode == "INT8":
        opts += f" calibration-table={p.table}" + (" asymmetric=true" if asym else "")
    with ctx:
        module = compiler.load_module(p.mlir, ctx)
        compiler.run_pipeline(module, f"convert-top-to-tpu{{{opts}}},canonicalize")
        got = compiler.interpret(module, dict(np.load(p.test_input)))
    ref = np.load(p.reference)
    for name, value in got.items():
        assert value.dtype == np.float32  # outputs stay f32
        assert _cos(value, ref[name]) >= CASES[(model, mode, asym)], name


def test_int8_transformer_falls_back_by_op(prepared):
    p = prepared("bert_layer")
    ctx = compiler.make_context()
    with ctx:
        module = compiler.load_module(p.mlir, ctx)
        compiler.run_pipeline(module, "convert-top-to-tpu{mode=INT8 "
                              f"calibration-table={p.table}}}")
        text = compiler.module_text(module)
    fallback = str(module.operation.attributes["tpu.fallback_ops"])
    for kind in ("tpu.Softmax", "tpu.LayerNorm"):
        assert kind in fallback
    # Matmuls run in INT8 with (multiplier, shift) tables; the fallen-back
    # ops sit between casts.
    assert '"tpu.MatMul"' in text and "x!quant.uniform<i8:f32" in text
    assert "-> tensor<1x16x64xf16>" in text
