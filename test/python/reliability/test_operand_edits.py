"""Edited operands of a compiled model are either refused by the verifier or
harmless: every start-lane shift of a TIU or GDMA local-memory operand and
every negated TIU destination H stride of the shipped model, on both chips,
is rejected at load or runs with bit-identical outputs. (Moving a DDR
operand by one element is not covered: the verifier has no DDR def-use.)"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import INPUT, MODEL
from tpuc.testing import operand_edits as oe

LOCAL = {k: v for k, v in oe.CLASSES.items() if "DDR" not in k}


@pytest.fixture(scope="module")
def tiny_mlir(tmp_path_factory):
    from tpuc.transform import transform
    d = tmp_path_factory.mktemp("edits")
    return transform("tiny", MODEL, d / "tiny.mlir", test_input=INPUT,
                     test_result=d / "tiny_top.npz").mlir


@pytest.mark.parametrize("chip", ["tpu_edge", "tpu_pro"])
def test_no_local_operand_edit_is_a_silent_wrong_answer(tiny_mlir, tmp_path, chip):
    from tpuc.deploy import deploy
    bm = tmp_path / "tiny.bmodel"
    deploy(tiny_mlir, "F32", chip, bm)
    report = oe.classify(bm.read_bytes(), dict(np.load(INPUT)), LOCAL)
    assert set(report.counts) == set(LOCAL)
    for name, counts in report.counts.items():
        assert sum(counts.values()) > 0, name
    assert not report.silent, report.silent[:10]
