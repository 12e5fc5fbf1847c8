"""Progress bars: the cmodel reports committed instructions to a callback,
bars show on a terminal only, and --no_progress switches them off."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tpuc import progress
from tpuc import runtime as rt
from tpuc.deploy import deploy
from tpuc.transform import transform

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress")
    t = transform("m", REPO / "models" / "mobilenetv2_tiny.onnx", d / "m.mlir")
    return rt.Model(deploy(t.mlir, "F32", "tpu_edge", d / "m.bmodel").bmodel)


def _inputs(m):
    return {s.name: np.zeros(s.shape, s.numpy_dtype).tobytes() for s in m.inputs}


def test_runtime_reports_progress(model):
    seen = []
    model._rt.run(_inputs(model), 0, False, lambda done, total: seen.append((done, total)))
    net = model.bmodel.networks[0]
    total = len(net.tiu) + len(net.gdma)
    assert seen[-1] == (total, total)
    assert 1 < len(seen) <= 101
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_callback_error_propagates(model):
    def boom(done, total):
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        model._rt.run(_inputs(model), 0, False, boom)


def test_bar_only_on_terminal(model, capsys, monkeypatch):
    model.run({s.name: np.zeros(s.shape, np.float32) for s in model.inputs})
    assert "cmodel" not in capsys.readouterr().err  # stderr is no terminal here
    monkeypatch.setattr(progress, "DELAY", 0)
    monkeypatch.setattr(progress, "enabled", lambda: True)
    model.run({s.name: np.zeros(s.shape, np.float32) for s in model.inputs})
    assert "cmodel main" in capsys.readouterr().err


def test_switch_off(monkeypatch):
    monkeypatch.setattr(progress, "_enabled", True)
    progress.set_enabled(False)
    assert not progress.enabled()
    assert progress.bar(range(3)).disable
