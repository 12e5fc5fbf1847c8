"""OP_<TOOL>_LIST / OP_<TOOL>_DISABLE_LIST: names, overloads, regular expressions."""
import pytest

from tpuc.op_tools.selection import Selection


def sel(monkeypatch, select="", exclude=""):
    monkeypatch.setenv("OP_CAPTURE_LIST", select)
    monkeypatch.setenv("OP_CAPTURE_DISABLE_LIST", exclude)
    return Selection.from_env("CAPTURE")


def test_empty_list_selects_every_op(monkeypatch):
    assert sel(monkeypatch).matches("aten.mm", "aten.mm.default")


def test_op_name_selects_every_overload(monkeypatch):
    s = sel(monkeypatch, "aten.add, aten.convolution")
    assert s.matches("aten.add", "aten.add.Tensor") and s.matches("aten.add", "aten.add.Scalar")
    assert s.matches("aten.convolution", "aten.convolution.default")
    assert not s.matches("aten.addmm", "aten.addmm.default")  # whole-name match


def test_overload_name_selects_one_overload(monkeypatch):
    s = sel(monkeypatch, "aten::add.Tensor")
    assert s.matches("aten.add", "aten.add.Tensor")
    assert not s.matches("aten.add", "aten.add.Scalar")


def test_regular_expressions_and_exclusion(monkeypatch):
    s = sel(monkeypatch, r"aten\..*norm.*", "aten.native_layer_norm")
    assert s.matches("aten.native_batch_norm", "aten.native_batch_norm.default")
    assert not s.matches("aten.native_layer_norm", "aten.native_layer_norm.default")
    assert not s.matches("aten.mm", "aten.mm.default")
    s = sel(monkeypatch, "", "aten.mm.default")
    assert not s.matches("aten.mm", "aten.mm.default") and s.matches("aten.relu", "aten.relu.default")


def test_bad_expression_is_named(monkeypatch):
    with pytest.raises(ValueError, match=r"'aten\.\(' is not a regular expression"):
        sel(monkeypatch, "aten.(")
