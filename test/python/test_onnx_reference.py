"""tpuc.frontend.onnx_reference: every intermediate tensor, by name, in order, with numpy/torch references."""

import logging

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tpuc.frontend.onnx_reference import graph_inputs, make_test_inputs, run_reference, topological_nodes

ATOL = 1e-5  # float32 kernels vs float64/float32 numpy on tensors of magnitude ~1


def _model(nodes, inputs, outputs, inits=(), opset=17, ir_version=8, extra_opsets=()):
    graph = helper.make_graph(nodes, "t", inputs, outputs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset), *extra_opsets]
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


def _vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


@pytest.fixture
def linear_model():
    """y = relu(x @ W + b) with weights as initializers."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["biased"]),
             helper.make_node("Relu", ["biased"], ["y"])]
    model = _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 4])],
                   [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    return model, w, b


def test_every_intermediate_in_order_matches_numpy(linear_model):
    model, w, b = linear_model
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    out = run_reference(model, {"x": x})
    assert list(out) == ["x", "mm", "biased", "y"]
    np.testing.assert_array_equal(out["x"], x)
    mm = x.astype(np.float64) @ w
    np.testing.assert_allclose(out["mm"], mm, atol=ATOL)
    np.testing.assert_allclose(out["biased"], mm + b, atol=ATOL)
    np.testing.assert_allclose(out["y"], np.maximum(mm + b, 0), atol=ATOL)
    assert all(v.dtype == np.float32 for v in out.values())
    assert len(model.graph.output) == 1  # the caller's proto is not modified


def test_only_outputs_when_not_all_tensors(linear_model):
    model, _, _ = linear_model
    out = run_reference(model, {"x": np.ones((2, 3), np.float32)}, all_tensors=False)
    assert list(out) == ["x", "y"]


def test_model_from_file(linear_model, tmp_path):
    model, _, _ = linear_model
    path = tmp_path / "linear.onnx"
    onnx.save(model, str(path))
    x = np.ones((2, 3), np.float32)
    from_file = run_reference(str(path), {"x": x})
    from_proto = run_reference(model, {"x": x})
    assert list(from_file) == list(from_proto)
    for k in from_file:
        np.testing.assert_array_equal(from_file[k], from_proto[k])
    with pytest.raises(FileNotFoundError, match="nope.onnx"):
        run_reference(tmp_path / "nope.onnx", {"x": x})


def test_conv_batchnorm_intermediates_are_not_fused():
    """Conv -> BatchNormalization -> Relu: the Conv output keeps its name and its unfused value."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(4).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w, "w"), (scale, "scale"), (bias, "bias"), (mean, "mean"), (var, "var")]]
    nodes = [helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["conv", "scale", "bias", "mean", "var"], ["bn"], epsilon=1e-5),
             helper.make_node("Relu", ["bn"], ["y"])]
    model = _model(nodes, [_vi("x", [1, 3, 6, 6])], [_vi("y", [1, 4, 6, 6])], inits)
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    out = run_reference(model, {"x": x})
    assert list(out) == ["x", "conv", "bn", "y"]
    conv = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1).numpy()
    np.testing.assert_allclose(out["conv"], conv, atol=ATOL)
    c = (slice(None), None, None)
    bn = (conv - mean[c]) / np.sqrt(var[c] + 1e-5) * scale[c] + bias[c]
    np.testing.assert_allclose(out["bn"], bn, atol=ATOL)
    np.testing.assert_allclose(out["y"], np.maximum(bn, 0), atol=ATOL)


def test_unsorted_graph_is_returned_in_topological_order():
    nodes = [helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Neg", ["x"], ["a"])]
    model = _model(nodes, [_vi("x", [2])], [_vi("y", [2])])
    assert [n.op_type for n in topological_nodes(model.graph)] == ["Neg", "Relu"]
    out = run_reference(model, {"x": np.array([1.0, -2.0], np.float32)})
    assert list(out) == ["x", "a", "y"]
    np.testing.assert_array_equal(out["y"], [0.0, 2.0])


def test_untyped_intermediate_is_skipped_and_logged(caplog):
    # com.microsoft::Gelu runs in onnxruntime but ONNX shape inference cannot type it.
    nodes = [helper.make_node("Gelu", ["x"], ["g"], domain="com.microsoft"), helper.make_node("Relu", ["g"], ["y"])]
    model = _model(nodes, [_vi("x", [3])], [_vi("y", [3])], extra_opsets=[helper.make_opsetid("com.microsoft", 1)])
    with caplog.at_level(logging.WARNING, logger="tpuc.frontend.onnx_reference"):
        out = run_reference(model, {"x": np.array([-1.0, 0.0, 2.0], np.float32)})
    assert list(out) == ["x", "y"]
    assert "'g'" in caplog.text and "cannot be inferred" in caplog.text
    # erf GELU: 0.5 x (1 + erf(x / sqrt 2)); values from tables: gelu(-1) = -0.158655, gelu(2) = 1.954500
    np.testing.assert_allclose(out["y"], [0.0, 0.0, 1.954500], atol=1e-5)


def test_initializers_listed_as_inputs_are_not_required():
    w = numpy_helper.from_array(np.full((2,), 3.0, np.float32), "w")
    model = _model([helper.make_node("Mul", ["x", "w"], ["y"])], [_vi("x", [2]), _vi("w", [2])], [_vi("y", [2])],
                   [w], opset=9, ir_version=3)
    assert [vi.name for vi in graph_inputs(model)] == ["x"]
    out = run_reference(model, {"x": np.array([1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(out["y"], [3.0, 6.0])
    assert set(make_test_inputs(model)) == {"x"}


@pytest.mark.parametrize("feeds, message", [
    ({}, "missing input 'x'"),
    ({"x": np.ones((3, 2), np.float32)}, r"input 'x' has shape \(3, 2\), the model expects \(2, 3\)"),
    ({"x": np.ones((2, 3, 1), np.float32)}, "input 'x' has shape"),
    ({"x": np.ones((2, 3), np.float64)}, "input 'x' has dtype float64, the model expects float32"),
    ({"x": np.ones((2, 3), np.float32), "z": np.ones(1)}, "unknown input 'z'"),
])
def test_bad_inputs_raise_value_error_naming_the_input(linear_model, feeds, message):
    model, _, _ = linear_model
    with pytest.raises(ValueError, match=message):
        run_reference(model, feeds)


def test_symbolic_dims_accept_any_size():
    model = _model([helper.make_node("Neg", ["x"], ["y"])], [_vi("x", ["batch", 2])], [_vi("y", ["batch", 2])])
    out = run_reference(model, {"x": np.ones((5, 2), np.float32)})
    assert out["y"].shape == (5, 2)


def test_make_test_inputs():
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"], axis=0),
             helper.make_node("Cast", ["flag"], ["flag_f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["emb", "x"], ["y"])]
    table = numpy_helper.from_array(np.arange(20, dtype=np.float16).reshape(5, 4), "table")
    model = _model(nodes, [_vi("ids", ["seq"], TensorProto.INT64), _vi("x", [1, 4], TensorProto.FLOAT16),
                           _vi("flag", [2], TensorProto.BOOL)],
                   [_vi("y", None, TensorProto.FLOAT16)], [table])
    inputs = make_test_inputs(model, seed=7, int_ranges={"ids": (0, 5)}, dim_values={"seq": 300})
    assert list(inputs) == ["ids", "x", "flag"]
    assert inputs["ids"].dtype == np.int64 and inputs["ids"].shape == (300,)
    assert inputs["ids"].min() >= 0 and inputs["ids"].max() <= 4 and len(np.unique(inputs["ids"])) == 5
    assert inputs["x"].dtype == np.float16 and inputs["x"].shape == (1, 4)
    assert inputs["flag"].dtype == np.bool_
    again = make_test_inputs(model, seed=7, int_ranges={"ids": (0, 5)}, dim_values={"seq": 300})
    other = make_test_inputs(model, seed=8, int_ranges={"ids": (0, 5)}, dim_values={"seq": 300})
    assert all(np.array_equal(inputs[k], again[k]) for k in inputs)
    assert not np.array_equal(inputs["x"], other["x"])
    assert make_test_inputs(model)["ids"].shape == (1,)  # symbolic dims default to 1
    # float inputs are standard normal
    big = make_test_inputs(_model([helper.make_node("Neg", ["x"], ["y"])], [_vi("x", [20000])], [_vi("y", [20000])]))
    assert abs(big["x"].mean()) < 0.05 and abs(big["x"].std() - 1) < 0.05
    with pytest.raises(ValueError, match="unknown inputs"):
        make_test_inputs(model, int_ranges={"nope": (0, 1)})
    with pytest.raises(ValueError, match="'ids'"):
        make_test_inputs(model, int_ranges={"ids": (3, 3)})
    out = run_reference(model, inputs)
    np.testing.assert_array_equal(out["emb"], np.arange(20, dtype=np.float16).reshape(5, 4)[inputs["ids"]])
