"""Ops decomposed at import into existing Top ops: LSTM, GRU and RNN
unrolled (directions, initial states, every output; onnxruntime has no
layout=1), the mask arithmetic of attention models (comparisons of integer
tensors, logic, Where with infinite constants, IsNaN), Einsum, CumSum,
GatherElements, ScatterElements/ScatterND, GlobalMaxPool, TopK, and a
GlobalAveragePool too large for one window in local memory. Each tiny model
matches onnxruntime on every tensor, and compiles and runs on the cmodel of
both chips matching the Tpu interpreter tensor by tensor."""
import numpy as np
import onnx
import pytest
from onnx import helper

from tpuc.frontend.errors import FrontendError
from tpuc.transform import transform

from onnx_cases import CHIPS, Runner, case_model, const

_n = helper.make_node

_rng = np.random.default_rng(11)


def _f32(*shape, scale=0.5):
    return (_rng.standard_normal(shape) * scale).astype(np.float32)


def _recurrent(op, direction="forward", layout=0, bias=True, states=True, seq=3, batch=2,
               inp=4, hidden=5, outputs=("y", "y_h"), **attrs):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    dirs = 2 if direction == "bidirectional" else 1
    inits = [const("W", _f32(dirs, gates * hidden, inp)),
             const("R", _f32(dirs, gates * hidden, hidden))]
    names = ["x", "W", "R"]
    names.append("B" if bias else "")
    if bias:
        inits.append(const("B", _f32(dirs, 2 * gates * hidden)))
    names.append("")  # sequence_lens
    inputs = [("x", [seq, batch, inp] if layout == 0 else [batch, seq, inp])]
    if states:
        shape = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
        names.append("h0")
        inputs.append(("h0", shape))
        if op == "LSTM":
            names.append("c0")
            inputs.append(("c0", shape))
    node = helper.make_node(op, names, list(outputs), name=op.lower(), hidden_size=hidden,
                            direction=direction, layout=layout, **attrs)
    return dict(nodes=[node], inits=inits, outputs=[o for o in outputs if o], opset=17,
                inputs=inputs)


def _mask_case():
    """ids and a 0/1 attention mask (int64) make a bool mask through every
    comparison and logic op; Where turns it into an additive -inf mask for
    a softmax, and picks between two float tensors."""
    n = helper.make_node
    nodes = [
        n("Cast", ["mask"], ["mask_b"], to=onnx.TensorProto.BOOL, name="mask_b"),
        n("Equal", ["ids", "three"], ["is3"], name="is3"),
        n("Greater", ["ids", "one"], ["gt1"], name="gt1"),
        n("LessOrEqual", ["ids", "one"], ["le1"], name="le1"),
        n("GreaterOrEqual", ["ids", "three"], ["ge3"], name="ge3"),
        n("Less", ["ids", "three"], ["lt3"], name="lt3"),
        n("Xor", ["gt1", "le1"], ["always"], name="always"),
        n("And", ["always", "mask_b"], ["keep0"], name="keep0"),
        n("Not", ["ge3"], ["not_ge3"], name="not_ge3"),
        n("Or", ["keep0", "is3"], ["keep1"], name="keep1"),
        n("Or", ["keep1", "first"], ["keep"], name="keep"),
        n("Where", ["keep", "zero", "ninf"], ["additive"], name="additive"),
        n("Add", ["x", "additive"], ["scores"], name="scores"),
        n("Softmax", ["scores"], ["probs"], axis=-1, name="probs"),
        n("IsNaN", ["probs"], ["nan"], name="nan"),
        n("Where", ["nan", "zero", "probs"], ["p"], name="p"),
        n("Where", ["lt3", "x", "x2"], ["picked"], name="picked"),
        n("Cast", ["not_ge3"], ["not_ge3_f"], to=onnx.TensorProto.FLOAT, name="not_ge3_f"),
        n("Mul", ["picked", "not_ge3_f"], ["y"], name="y"),
    ]
    first = np.zeros((1, 8), bool)
    first[0, 0] = True  # no row is masked entirely
    return dict(nodes=nodes, opset=17, outputs=["p", "y"],
                inits=[const("three", np.array(3, np.int64)), const("one", np.array(1, np.int64)),
                       const("zero", np.array(0.0, np.float32)),
                       const("ninf", np.array(-np.inf, np.float32)), const("first", first)],
                inputs=[("ids", [2, 8]), ("mask", [2, 8]), ("x", [2, 8]), ("x2", [2, 8])],
                int_inputs={"ids": (0, 5), "mask": (0, 2)})


CASES = {
    "lstm_bidirectional": _recurrent("LSTM", "bidirectional", outputs=("y", "y_h", "y_c")),
    "lstm_plain": _recurrent("LSTM", bias=False, states=False, outputs=("y", "", "y_c")),
    "lstm_reverse": _recurrent("LSTM", "reverse", outputs=("", "y_h")),
    "gru_linear_before_reset": _recurrent("GRU", "bidirectional", linear_before_reset=1),
    "gru": _recurrent("GRU", "reverse"),
    "gru_zero_state": _recurrent("GRU", states=False, seq=2),
    "rnn_bidirectional": _recurrent("RNN", "bidirectional", seq=4),
    "mask": _mask_case(),
    # One 112x112 plane does not fit tpu_edge's local memory: rows first.
    "global_avg_pool_112": dict(
        nodes=[helper.make_node("GlobalAveragePool", ["x"], ["y"], name="y")],
        inits=[], opset=17, inputs=[("x", [1, 8, 112, 112])]),
    "global_max_pool": dict(nodes=[helper.make_node("GlobalMaxPool", ["x"], ["y"], name="y")],
                            inits=[], opset=17, inputs=[("x", [1, 3, 5, 7])]),
}


def _case(nodes, inputs, inits=(), outputs=("y",), **extra):
    return dict(nodes=nodes, inits=list(inits), outputs=list(outputs), opset=17,
                inputs=inputs, **extra)


def _einsum(eq, inputs, inits=()):
    names = [n for n, _ in inputs] + [i.name for i in inits]
    return _case([_n("Einsum", names, ["y"], name="y", equation=eq)], inputs, inits)


def _cumsum(axis, **attrs):
    return _case([_n("CumSum", ["x", "axis"], ["y"], name="y", **attrs)], [("x", [2, 3, 5])],
                 [const("axis", np.array(axis, np.int64))])


INDEX_CASES = {
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

CASES.update(INDEX_CASES)


def _topk(shape, k, int_input=False, **attrs):
    """TopK of x (of small integers cast to float when `int_input`, so
    that rows hold ties) with K a constant; both outputs."""
    nodes = [_n("TopK", ["xf" if int_input else "x", "k"], ["values", "indices"],
                name="topk", **attrs)]
    extra = {}
    if int_input:
        nodes.insert(0, _n("Cast", ["x"], ["xf"], to=onnx.TensorProto.FLOAT, name="xf"))
        extra["int_inputs"] = {"x": (-3, 3)}
    return _case(nodes, [("x", shape)], [const("k", np.array([k], np.int64))],
                 outputs=("values", "indices"), int_outputs=["indices"], **extra)


TOPK_CASES = {
    "topk_last": _topk([2, 3, 10], 4),
    "topk_axis1_smallest": _topk([2, 6, 5], 3, axis=1, largest=0),
    "topk_ties": _topk([3, 12], 5, int_input=True),
    "topk_ties_smallest_all": _topk([4, 6], 6, int_input=True, axis=-1, largest=0),
    "topk_one": _topk([2, 7], 1, axis=0),
}

CASES.update(TOPK_CASES)


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    return Runner(CASES, tmp_path_factory, seed=3)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnxruntime(name, runner):
    r = runner.check_transform(name)
    assert "tensor<*x" not in r.mlir.read_text()


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_deploys_and_matches(name, chip, runner):
    runner.check_deploy(name, chip, layer_group=True)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", sorted(TOPK_CASES))
def test_topk_indices_are_exact(name, chip, runner):
    """Through the cmodel, TopK's values equal onnxruntime's and its indices
    too, ties resolved to the lowest index."""
    import onnxruntime as ort
    d, *_ = runner.transformed(name)
    inputs = dict(np.load(d / "in.npz"))
    sess = ort.InferenceSession(str(d / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    values, indices = sess.run(["values", "indices"], inputs)
    got = np.load(runner.check_deploy(name, chip, layer_group=True).model_outputs)
    np.testing.assert_array_equal(got["values"], values)
    np.testing.assert_array_equal(got["indices"], indices.astype(np.float32))


def test_runtime_topk_k_is_refused(tmp_path):
    case = _case([_n("TopK", ["x", "k"], ["values", "indices"], name="the_node")],
                 [("x", [2, 5]), ("k", [1])], outputs=("values", "indices"),
                 int_outputs=["indices"], int_inputs={"k": (1, 3)})
    onnx.save(case_model(case), tmp_path / "m.onnx")
    with pytest.raises(FrontendError, match=r"node 'the_node' \(TopK\): K .* must be a const"):
        transform("m", tmp_path / "m.onnx", tmp_path / "m.mlir")


def test_runtime_range_is_refused(tmp_path):
    case = _case([_n("Range", ["s", "lim", "one"], ["r"], name="the_node"),
                  _n("Cast", ["r"], ["y"], to=onnx.TensorProto.FLOAT, name="y")],
                 [("s", [])], [const("lim", np.array(5, np.int64)),
                               const("one", np.array(1, np.int64))], int_inputs={"s": (0, 3)})
    onnx.save(case_model(case), tmp_path / "m.onnx")
    with pytest.raises(FrontendError, match=r"node 'the_node' \(Range\): its output's size "
                                            r"depends on the runtime value of 's'"):
        transform("m", tmp_path / "m.onnx", tmp_path / "m.mlir")


def test_unfolded_range_and_constant_of_shape_are_constants():
    """Built straight from an unfolded model, both become weights."""
    from tpuc.compiler import make_context
    from tpuc.frontend.onnx_importer import OnnxImporter
    fill = helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [2.5])
    case = _case([_n("Range", ["a", "b", "c"], ["r"], name="r"),
                  _n("ConstantOfShape", ["shape"], ["z"], name="z", value=fill),
                  _n("Add", ["x", "z"], ["xz"], name="xz"),
                  _n("Cast", ["r"], ["rf"], to=onnx.TensorProto.FLOAT, name="rf"),
                  _n("Add", ["xz", "rf"], ["y"], name="y")],
                 [("x", [2, 3])], [const("a", np.array(4, np.int64)),
                                   const("b", np.array(-2, np.int64)),
                                   const("c", np.array(-2, np.int64)),
                                   const("shape", np.array([2, 3], np.int64))])
    imp = OnnxImporter(case_model(case), "m", make_context())
    imp.build()
    np.testing.assert_array_equal(imp.weights["r"], [4, 2, 0])
    np.testing.assert_array_equal(imp.weights["z"], np.full((2, 3), 2.5, np.float32))


def test_infinite_mask_constant_saturates(runner):
    """The -inf branch of Where becomes -FLT_MAX; the comparison notes it."""
    r = runner.transformed("mask")[4]
    rows = {row.name: row for row in r.comparison.rows}
    assert "saturated" in rows["additive"].reason and rows["additive"].passed


def test_float_comparison_is_refused(tmp_path):
    case = dict(nodes=[helper.make_node("Greater", ["x", "x2"], ["y"], name="the_node")],
                inits=[], opset=17, inputs=[("x", [2, 3]), ("x2", [2, 3])])
    model = case_model(case)
    model.graph.output[0].type.tensor_type.elem_type = onnx.TensorProto.BOOL
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(FrontendError, match=r"node 'the_node' \(Greater\): comparing float"):
        transform("m", tmp_path / "m.onnx", tmp_path / "m.mlir")


def test_lstm_peepholes_are_refused(tmp_path):
    case = _recurrent("LSTM", states=False)
    case["nodes"][0].input.extend(["", "", "P"])
    case["inits"].append(const("P", _f32(1, 15)))
    onnx.save(case_model(case), tmp_path / "m.onnx")
    with pytest.raises(FrontendError, match=r"node 'lstm' \(LSTM\): peephole"):
        transform("m", tmp_path / "m.onnx", tmp_path / "m.mlir")


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
