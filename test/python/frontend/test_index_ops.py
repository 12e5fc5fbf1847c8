"""Einsum, CumSum, GatherElements, ScatterElements and ScatterND, decomposed
at import: each tiny model matches onnxruntime on every tensor, and compiles
and runs on the cmodel of both chips matching the Tpu interpreter."""
import numpy as np
import onnx
import pytest
from onnx import helper

from tpuc.frontend.errors import FrontendError
from tpuc.transform import transform

from onnx_cases import CHIPS, Runner, case_model, const

_n = helper.make_node


def _case(nodes, inputs, inits=(), outputs=("y",), **extra):
    return dict(nodes=nodes, inits=list(inits), outputs=list(outputs), opset=17,
                inputs=inputs, **extra)


def _einsum(eq, inputs, inits=()):
    names = [n for n, _ in inputs] + [i.name for i in inits]
    return _case([_n("Einsum", names, ["y"], name="y", equation=eq)], inputs, inits)


def _cumsum(axis, **attrs):
    return _case([_n("CumSum", ["x", "axis"], ["y"], name="y", **attrs)], [("x", [2, 3, 5])],
                 [const("axis", np.array(axis, np.int64))])


CASES = {
    "einsum_attention": _einsum("bhid,bhjd->bhij", [("x", [1, 2, 3, 4]), ("x2", [1, 2, 5, 4])]),
    "einsum_ellipsis": _einsum("...ij,jk->...ik", [("x", [2, 3, 4])],
                               [const("w", np.random.default_rng(0).standard_normal(
                                   (4, 6)).astype(np.float32))]),
    "einsum_outer_implicit": _einsum("i,j", [("x", [3]), ("x2", [4])]),
    "einsum_contract_permute": _einsum("bij,bjk->kbi", [("x", [2, 3, 4]), ("x2", [2, 4, 5])]),
    "einsum_transpose_sum": _einsum("ijk->ki", [("x", [2, 3, 4])]),
    "cumsum_last": _cumsum(-1),
    "cumsum_exclusive_reverse": _cumsum(1, exclusive=1, reverse=1),
    "cumsum_positions": _case(  # position ids from an attention mask
        [_n("CumSum", ["mask", "axis"], ["cs"], name="cs"),
         _n("Mul", ["cs", "mask"], ["pos"], name="pos"),
         _n("Cast", ["pos"], ["y"], to=onnx.TensorProto.FLOAT, name="y")],
        [("mask", [2, 7])], [const("axis", np.array(1, np.int64))], int_inputs={"mask": (0, 2)}),
    "gather_elements_const": _case(
        [_n("GatherElements", ["x", "idx"], ["y"], name="y", axis=1)], [("x", [2, 4, 3])],
        [const("idx", np.array([[[0, 3, -1], [2, 2, 1]], [[1, 0, 0], [-4, 3, 2]]], np.int64))]),
    "gather_elements_runtime": _case(
        [_n("GatherElements", ["x", "idx"], ["y"], name="y", axis=-1)],
        [("x", [3, 5]), ("idx", [3, 4])], int_inputs={"idx": (-5, 5)}),
    "scatter_elements": _case(
        [_n("ScatterElements", ["x", "idx", "u"], ["y"], name="y", axis=0)],
        [("x", [4, 3]), ("u", [2, 3])], [const("idx", np.array([[1, 0, 3], [2, -1, 0]],
                                                               np.int64))]),
    "scatter_nd": _case(
        [_n("ScatterND", ["x", "idx", "u"], ["y"], name="y")],
        [("x", [4, 3, 2]), ("u", [2, 3, 2])], [const("idx", np.array([[3], [0]], np.int64))]),
    "embedding": _case([_n("Gather", ["table", "ids"], ["y"], name="y")], [("ids", [2, 3])],
                       [const("table", np.random.default_rng(1).standard_normal(
                           (500, 16)).astype(np.float32))], int_inputs={"ids": (0, 500)}),
}


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    return Runner(CASES, tmp_path_factory, seed=5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnxruntime(name, runner):
    r = runner.check_transform(name)
    assert "tensor<*x" not in r.mlir.read_text()


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_deploys_and_matches(name, chip, runner):
    runner.check_deploy(name, chip, layer_group=True)


def test_einsum_is_one_matmul(runner):
    text = runner.transformed("einsum_attention")[1].read_text()
    assert text.count("top.MatMul") == 1 and "top.Permute" in text


def test_runtime_scatter_indices_are_refused(tmp_path):
    case = _case([_n("ScatterND", ["x", "idx", "u"], ["y"], name="the_node")],
                 [("x", [4, 3]), ("idx", [2, 1]), ("u", [2, 3])], int_inputs={"idx": (0, 4)})
    onnx.save(case_model(case), tmp_path / "m.onnx")
    with pytest.raises(FrontendError, match=r"node 'the_node' \(ScatterND\): .* must be a const"):
        transform("m", tmp_path / "m.onnx", tmp_path / "m.mlir")


def test_roofline_counts_the_rows_a_gather_reads(runner):
    """An embedding lookup reads 6 rows of 16 floats, not the 500-row table:
    the DDR bytes of the bound are the ids, those rows and the output."""
    r = runner.check_deploy("embedding", "tpu_edge", layer_group=True)
    ids, rows, out = 2 * 3 * 4, 6 * 16 * 4, 2 * 3 * 16 * 4  # ids enter as 32-bit
    assert r.roofline.ddr_bytes == ids + rows + out
    assert r.cycles >= r.roofline.cycles
