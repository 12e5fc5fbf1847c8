"""model_tool.py --info / --weight on a bmodel compiled from the shipped model,
checked against what the runtime module reads from the same file."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tpuc import runtime as rt
from tpuc.bmodel_info import describe, weight_reads
from tpuc.deploy import deploy
from tpuc.tools import model_tool
from tpuc.transform import transform

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def bmodel(tmp_path_factory):
    d = tmp_path_factory.mktemp("model_tool")
    t = transform("m", REPO / "models" / "mobilenetv2_tiny.onnx", d / "m.mlir")
    return deploy(t.mlir, "F16", "tpu_pro", d / "m.bmodel").bmodel


def test_info(bmodel, capsys):
    assert model_tool.main(["--info", str(bmodel)]) == 0
    out = capsys.readouterr().out
    bm = rt.read_bmodel(str(bmodel))
    net = bm.networks[0]
    assert "chip: tpu_pro" in out
    assert f"format version: {rt.BMODEL_VERSION}, ISA version: {rt.ISA_VERSION}" in out
    assert f"weight memory: " in out and f"({bm.plan.weight_size} bytes" in out
    assert f"({bm.plan.activation_size} bytes" in out
    assert "    input: [1, 3, 64, 64] f32" in out
    assert "    output: [1, 10] f32" in out
    assert f"TIU instructions: {len(net.tiu)} (" in out
    assert f"GDMA instructions: {len(net.gdma)} (" in out
    # Compute runs in F16 between the F32 input/output casts.
    assert "modes: F16" in out
    info = describe(bmodel)
    assert sum(info.networks[0].opcodes["TIU"].values()) == len(net.tiu)


def test_weight_dump(bmodel, tmp_path, capsys):
    out_npz = tmp_path / "w.npz"
    assert model_tool.main(["--weight", str(bmodel), "-o", str(out_npz)]) == 0
    bm = rt.read_bmodel(str(bmodel))
    reads = weight_reads(bm)
    assert reads and f"{len(reads)} GDMA loads" in capsys.readouterr().out
    with np.load(out_npz) as d:
        assert d["weight_blob"].tobytes() == bm.weights
        r = reads[0]
        a = d[f"w{r.offset:#x}_gdma{r.instruction}"]
        assert a.shape == r.shape and a.dtype == np.float16
        # The first element is the blob's bytes at the load's offset.
        assert a.ravel()[0] == np.frombuffer(bm.weights, np.float16, 1, r.offset)[0]


@pytest.mark.parametrize("args", [["--info", "missing.bmodel"], ["--weight", "missing.bmodel"]])
def test_bad_file_is_one_line_error(args, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "junk.bmodel").write_bytes(b"not a bmodel")
    for a in (args, [args[0], "junk.bmodel"]):
        assert model_tool.main(a) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("model_tool: error:") and "\n" not in err
