"""model_transform.py --model_def model.pt2: a torch.export program through
the FX importer, then deployed; every stage matches PyTorch."""
import numpy as np
import pytest
import torch

from tpuc.compare import Tolerance
from tpuc.deploy import deploy
from tpuc.tools import model_transform

TOL = Tolerance(0.99999, 0.999)


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return torch.softmax(self.fc(y.flatten(1)), -1)


def test_pt2_through_model_transform_and_deploy(tmp_path):
    model = SmallNet().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 8, 8)
    pt2 = tmp_path / "small.pt2"
    torch.export.save(torch.export.export(model, (x,)), pt2)
    np.savez(tmp_path / "in.npz", x=x.numpy())
    mlir = tmp_path / "small.mlir"
    rc = model_transform.main(["--model_name", "small", "--model_def", str(pt2),
                               "--test_input", str(tmp_path / "in.npz"),
                               "--test_result", str(tmp_path / "top.npz"), "--mlir", str(mlir),
                               "--tolerance", "0.99999,0.999"])
    assert rc == 0
    assert (tmp_path / "small_origin.mlir").is_file()
    # Tensors are named after the FX nodes.
    assert 'loc("convolution")' in (tmp_path / "small_origin.mlir").read_text()
    ref = np.load(tmp_path / "small_ref_outputs.npz")
    with torch.no_grad():
        np.testing.assert_allclose(next(iter(ref.values())), model(x).numpy(), rtol=1e-6)
    r = deploy(mlir, "F32", "tpu_edge", tmp_path / "small.bmodel",
               test_input=tmp_path / "in.npz", test_reference=tmp_path / "top.npz",
               tolerance=TOL)
    assert r.passed, (r.tpu_comparison.summary(), r.model_comparison.summary())


def test_pt2_unsupported_op_is_named(tmp_path, capsys):
    class Sorts(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x, dim=-1).values

    pt2 = tmp_path / "sorts.pt2"
    torch.export.save(torch.export.export(Sorts(), (torch.randn(2, 5),)), pt2)
    rc = model_transform.main(["--model_name", "sorts", "--model_def", str(pt2),
                               "--mlir", str(tmp_path / "sorts.mlir")])
    assert rc == 1
    err = capsys.readouterr().err
    assert "aten.sort" in err and "no Top converter" in err


def test_help_names_both_model_formats(capsys):
    with pytest.raises(SystemExit):
        model_transform.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ".onnx (ONNX) or .pt2 (a torch.export program)" in text
    assert "ONNX model → " not in text
