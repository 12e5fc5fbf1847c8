"""model_deploy.py / tpuc.deploy end to end: zoo model → top.mlir → bmodel on
both chips, the Tpu interpreter checked against the Top reference and the
cmodel against the Tpu interpreter."""
from __future__ import annotations

import numpy as np
import pytest

from backendutil import CHIPS
from tpuc.deploy import deploy
from tpuc.testing import zoo
from tpuc.tools import model_deploy
from tpuc.transform import transform


@pytest.fixture(scope="module")
def cnn(tmp_path_factory):
    d = tmp_path_factory.mktemp("cnn_bn")
    onnx_path = zoo.export("cnn_bn", d)
    spec = zoo.ZOO["cnn_bn"]
    rng = np.random.default_rng(3)
    np.savez(d / "in.npz", **{k: rng.standard_normal(s).astype(np.float32)
                              for k, s in spec.inputs.items()})
    transform("cnn_bn", onnx_path, d / "cnn_bn.mlir", test_input=d / "in.npz",
              test_result=d / "top.npz")
    return d


@pytest.mark.parametrize("chip", CHIPS)
def test_deploy(cnn, chip):
    # Without layer groups every layer's tensor reaches DDR and is compared.
    r = deploy(cnn / "cnn_bn.mlir", chip=chip, model_path=cnn / f"cnn_{chip}.bmodel",
               test_input=cnn / "in.npz", test_reference=cnn / "top.npz", compare_all=True,
               layer_group=False)
    assert r.passed, r.model_comparison.summary()
    assert len(r.model_comparison.rows) > 3
    assert r.tpu_mlir.is_file() and r.final_mlir.is_file() and r.bmodel.is_file()
    assert r.cycles >= r.roofline.cycles > 0
    assert 0 < r.tiu_utilization < 1 and 0 < r.gdma_utilization <= 1
    assert r.roofline.macs > 0 and r.roofline.ddr_bytes > 0
    assert r.not_dumped == []


def test_cli(cnn, capsys):
    rc = model_deploy.main(["--mlir", str(cnn / "cnn_bn.mlir"), "--quantize", "F32",
                            "--chip", "tpu_pro", "--model", str(cnn / "cli.bmodel"),
                            "--test_input", str(cnn / "in.npz"),
                            "--test_reference", str(cnn / "top.npz"), "--compare_all",
                            "--tolerance", "0.99,0.99"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "PASS" in out and "cycles:" in out and "roofline:" in out
    # Layer groups (the default) keep inner tensors in local memory: the
    # comparison says how many it could not see and how to see them.
    assert "were not compared (--disable_layer_group dumps every layer)" in out


@pytest.mark.parametrize("args, message", [
    (["--chip", "no_such_chip"], "no_such_chip"),
    (["--quantize", "INT4"], "INT4"),
    (["--test_input", "/nonexistent/in.npz"], "no such test input"),
])
def test_cli_errors(cnn, capsys, args, message):
    rc = model_deploy.main(["--mlir", str(cnn / "cnn_bn.mlir"),
                            "--model", str(cnn / "bad.bmodel")] + args)
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert len(err.splitlines()) == 1 and message in err, err


def test_cli_missing_mlir(tmp_path, capsys):
    rc = model_deploy.main(["--mlir", str(tmp_path / "none.mlir"), "--model",
                            str(tmp_path / "x.bmodel")])
    assert rc == 1 and "none.mlir" in capsys.readouterr().err


def test_cli_int8_reports_weights_against_f32(cnn, capsys):
    from tpuc.calibration.driver import calibrate
    rng = np.random.default_rng(4)
    (cnn / "ds").mkdir(exist_ok=True)
    for k in range(4):
        np.savez(cnn / "ds" / f"{k}.npz", **{n: rng.standard_normal(s).astype(np.float32)
                                              for n, s in zoo.ZOO["cnn_bn"].inputs.items()})
    calibrate(cnn / "cnn_bn.mlir", cnn / "ds", cnn / "table", progress=False)
    rc = model_deploy.main(["--mlir", str(cnn / "cnn_bn.mlir"), "--quantize", "INT8",
                            "--calibration_table", str(cnn / "table"), "--chip", "tpu_edge",
                            "--model", str(cnn / "int8.bmodel"), "--test_input", str(cnn / "in.npz"),
                            "--test_reference", str(cnn / "top.npz"), "--tolerance", "0.99,0.9"])
    out = capsys.readouterr().out
    assert rc == 0, out
    # int8 filters and int32 biases, plus the requantization tables.
    line = next(x for x in out.splitlines() if x.startswith("weights:"))
    ratio = float(line.split(",")[1].split("x")[0])
    assert 0.2 < ratio < 0.35, line


def test_roofline_counts_the_models_work_only(tmp_path):
    # On tpu_pro the MLP's few-token linear layers compute transposed, an
    # identity matmul bringing the tokens back: the identity's MACs and
    # bytes are the schedule's, so the bound keeps the three layers' MACs.
    onnx_path = zoo.export("mlp", tmp_path)
    transform("mlp", onnx_path, tmp_path / "mlp.mlir")
    r = deploy(tmp_path / "mlp.mlir", chip="tpu_pro", model_path=tmp_path / "mlp.bmodel")
    assert "tpu.data_movement" in r.final_mlir.read_text()
    assert r.roofline.macs == 4 * (32 * 64 + 64 * 64 + 64 * 16)
    weights = 4 * (32 * 64 + 64 + 64 * 64 + 64 + 64 * 16 + 16)
    io = 4 * (4 * 32 + 4 * 16)
    assert weights + io <= r.roofline.ddr_bytes < weights + io + 1024
