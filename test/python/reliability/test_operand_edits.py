"""Edited operands of a compiled model are either refused by the verifier or
harmless: every start-lane shift of a TIU or GDMA local-memory operand,
every negated TIU destination H stride and every GDMA DDR operand moved by
one element of the shipped model, on both chips, is rejected at load or
runs with bit-identical outputs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import INPUT, MODEL
from tpuc.testing import operand_edits as oe

@pytest.fixture(scope="module")
def tiny_mlir(tmp_path_factory):
    from tpuc.transform import transform
    d = tmp_path_factory.mktemp("edits")
    return transform("tiny", MODEL, d / "tiny.mlir", test_input=INPUT,
                     test_result=d / "tiny_top.npz").mlir


@pytest.mark.parametrize("chip", ["tpu_edge", "tpu_pro"])
def test_no_operand_edit_is_a_silent_wrong_answer(tiny_mlir, tmp_path, chip):
    from tpuc.deploy import deploy
    bm = tmp_path / "tiny.bmodel"
    deploy(tiny_mlir, "F32", chip, bm)
    report = oe.classify(bm.read_bytes(), dict(np.load(INPUT)))
    assert set(report.counts) == set(oe.CLASSES)
    for name, counts in report.counts.items():
        assert sum(counts.values()) > 0, name
    assert not report.silent, report.silent[:10]
