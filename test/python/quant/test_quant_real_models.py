"""F16, BF16 and INT8 (KL-calibrated on 16 random samples, symmetric and
asymmetric) of real exported models through the cmodel of both chips, with
layer groups on, against onnxruntime: torchvision's ResNet-18 and a
transformers BERT encoder with attention mask and token types (random
weights). INT8 tensors are bit-exact between the cmodel and the Tpu
interpreter (checked by deploy)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from tpuc.calibration.driver import calibrate
from tpuc.deploy import deploy
from tpuc.testing import real_models
from tpuc.transform import transform

CHIPS = ("tpu_edge", "tpu_pro")
MODES = (("F16", False, 0.9999), ("BF16", False, 0.9999), ("INT8", False, 0.99),
         ("INT8", True, 0.99))


def cosine(a, b) -> float:
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def _sample(base: dict, rng) -> dict:
    out = {}
    for k, v in base.items():
        if k == "input_ids":
            out[k] = rng.integers(0, 100, v.shape).astype(np.int64)
        elif v.dtype.kind in "iub":
            out[k] = v  # masks and token types as exported
        else:
            out[k] = rng.standard_normal(v.shape).astype(np.float32)
    return out


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            d = tmp_path_factory.mktemp(name)
            path, base = real_models.export(name, d)
            rng = np.random.default_rng(0)
            (d / "ds").mkdir()
            for k in range(16):
                np.savez(d / "ds" / f"{k:02d}.npz", **_sample(base, rng))
            test = _sample(base, rng)
            np.savez(d / "in.npz", **test)
            transform(name, path, d / f"{name}.mlir")
            calibrate(d / f"{name}.mlir", d / "ds", d / "table", input_num=16, progress=False)
            sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            ref = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, test)))
            cache[name] = d, ref
        return cache[name]
    return get


def check(prepared, name, chip):
    d, ref = prepared(name)
    for mode, asym, minimum in MODES:
        r = deploy(d / f"{name}.mlir", quantize=mode, chip=chip,
                   model_path=d / f"{chip}_{mode}_{asym}.bmodel", test_input=d / "in.npz",
                   calibration_table=d / "table" if mode == "INT8" else None,
                   asymmetric=asym, tolerance=(0.9, 0.5))
        assert not r.int_mismatches, r.int_mismatches[:3]
        got = dict(np.load(r.model_outputs))
        for out, want in ref.items():
            c = cosine(got[out], want)
            assert c >= minimum, f"{name} {chip} {mode} asym={asym} {out}: cos {c:.6f}"


@pytest.mark.parametrize("chip", CHIPS)
def test_bert_with_mask(prepared, chip):
    check(prepared, "bert", chip)


@pytest.mark.slow
@pytest.mark.parametrize("chip", CHIPS)
def test_resnet18(prepared, chip):
    check(prepared, "resnet18", chip)
