"""Every ATen op of the converter registry, compiled alone for each chip and
run on the cmodel, matches eager PyTorch (rtol/atol 1e-4). The cases come
from the registry's samples, so the list of supported ops and its tests
cannot drift apart."""
import pytest
import torch

from tpuc.dynamo.device import compile_graph
from tpuc.frontend.fx import REGISTRY, op_name, unsupported_reason
from tpuc.frontend.fx.samples import sample_graph

CHIPS = ("tpu_edge", "tpu_pro")
CASES = [(target, i) for target, entry in REGISTRY.items()
         for i in range(len(entry.samples() if entry.samples else []))]


def test_every_registered_op_has_samples():
    missing = [op_name(t) for t, e in REGISTRY.items() if not (e.samples and e.samples())]
    assert not missing


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("target,index", CASES,
                         ids=[f"{op_name(t)}-{i}" for t, i in CASES])
def test_op_matches_eager(target, index, chip):
    sg = sample_graph(target, REGISTRY[target].samples()[index])
    node = next(n for n in sg.gm.graph.nodes if n.target is target)
    for p in sg.gm.graph.nodes:
        if p.name in sg.constants:
            p.meta["tpuc_constant"] = True
    # The partitioner would send this node to the chip.
    assert unsupported_reason(node) is None
    program = compile_graph(sg.gm, sg.inputs, sg.constants, chip, name="op")
    outs = program(*sg.inputs)
    assert len(outs) == len(sg.expected)
    for got, want in zip(outs, sg.expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
