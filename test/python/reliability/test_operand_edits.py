"""Edited operands of a compiled model are either refused by the verifier or
harmless: every start-lane shift of a TIU or GDMA local-memory operand,
every negated TIU destination H stride and every GDMA DDR operand moved by
one element of the shipped model, on both chips, is rejected at load or
runs with bit-identical outputs, except loads of a part of a prefetched
weight tile moved within its weight. On the zoo ResNet-18 every GDMA DDR
operand moved by one element is too, except loads of a weight slice moved
within its weight tensor, and loads and stores of an activation moved
within a larger named tensor that shares its DDR buffer at another time:
such an access is a valid program reading other defined weights (or
reading and writing defined bytes of another tensor), which no check of
the code alone can tell from the compiled one."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import INPUT, MODEL
from tpuc import runtime as rt
from tpuc.testing import operand_edits as oe

DDR_SHIFT = "gdma DDR address +1 element"


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
    raw = bm.read_bytes()
    report = oe.classify(raw, dict(np.load(INPUT)))
    assert set(report.counts) == set(oe.CLASSES)
    for name, counts in report.counts.items():
        assert sum(counts.values()) > 0, name
    # A weight prefetch loads a weight tile in parts (prefetchParts): a part
    # moved by one element reads other bytes of its weight, as a moved slice
    # of a large weight does (test_ddr_operand_edits_of_resnet18).
    parsed = rt._rt.parse_bmodel(raw)
    silent = [s for s in report.silent
              if not (s.startswith(DDR_SHIFT) and _weight_load(parsed, s.split(": ")[1]))]
    assert not silent, silent[:10]


@pytest.fixture(scope="module")
def resnet18(tmp_path_factory):
    from tpuc.testing import zoo
    from tpuc.transform import transform
    d = tmp_path_factory.mktemp("resnet18")
    rng = np.random.default_rng(0)
    inputs = {k: rng.standard_normal(s).astype(np.float32)
              for k, s in zoo.ZOO["resnet18"].inputs.items()}
    np.savez(d / "input.npz", **inputs)
    mlir = transform("resnet18", zoo.export("resnet18", d), d / "resnet18.mlir",
                     test_input=d / "input.npz", test_result=d / "top.npz").mlir
    return mlir, inputs


def _weight_load(bm, what: str) -> bool:
    """Whether the edit `what` ("gdma #i edit k") moved a source in the weight region."""
    index, k = int(what.split("#")[1].split()[0]), int(what.split()[-1])
    o = bm.networks[0].gdma[index].src[k - 1] if k else None
    p = bm.plan
    return o is not None and p.weight_addr <= o.addr < p.weight_addr + p.weight_size


def _moved(bm, what: str):
    """The DDR operand the edit `what` ("gdma #i edit k") moved, or None."""
    index, k = int(what.split("#")[1].split()[0]), int(what.split()[-1])
    inst = bm.networks[0].gdma[index]
    return inst.dst if k == 0 else inst.src[k - 1]


def _inside_shared_activation(bm, what: str) -> bool:
    """Whether the edit `what` moved a DDR operand to bytes lying inside a
    named activation tensor (one sharing its buffer)."""
    o = _moved(bm, what)
    size = rt._rt.dtype_size(o.dtype)
    lo = o.addr + size  # the edit moved it by one element
    hi = lo + size * (1 + sum((n - 1) * abs(st) for n, st in zip(o.shape, o.stride)))
    net = bm.networks[0]
    named = [t.info for t in net.tensors] + list(net.inputs) + list(net.outputs)
    return any(t.ddr_addr <= lo and hi <= t.ddr_addr + t.byte_size for t in named)


@pytest.mark.parametrize("chip", ["tpu_edge", "tpu_pro"])
def test_ddr_operand_edits_of_resnet18(resnet18, tmp_path, chip):
    from tpuc.deploy import deploy
    mlir, inputs = resnet18
    bm = tmp_path / "resnet18.bmodel"
    deploy(mlir, "F32", chip, bm)
    raw = bm.read_bytes()
    report = oe.classify(raw, inputs, {DDR_SHIFT: oe.CLASSES[DDR_SHIFT]})
    assert sum(report.counts[DDR_SHIFT].values()) > 0
    parsed = rt._rt.parse_bmodel(raw)
    silent = [s.split(": ")[1] for s in report.silent]
    assert all(_weight_load(parsed, s) or _inside_shared_activation(parsed, s)
               for s in silent), silent
