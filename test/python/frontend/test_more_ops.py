"""ONNX ops that map to new Top ops (LeakyRelu, HardSigmoid, HardSwish) or
decompose at import (PRelu, Split, Tile, Expand, Sum, Mean,
InstanceNormalization): each tiny model matches onnxruntime on every tensor
through model_transform, and compiles and runs on the cmodel of both chips,
with and without layer groups, matching the Tpu interpreter tensor by tensor."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tpuc.frontend.errors import FrontendError
from tpuc.testing.groups import grouped_lines
from tpuc.transform import transform

from onnx_cases import CHIPS, Runner, const

X = [1, 4, 6, 6]
_rng = np.random.default_rng(7)


def _f32(*shape, scale=1.0):
    return (_rng.standard_normal(shape) * scale).astype(np.float32)


def _conv(out="c"):
    """A 1x1 conv from `x` so activations have a producer to group with."""
    return ([helper.make_node("Conv", ["x", "w"], [out], name=out)],
            [const("w", _f32(4, 4, 1, 1))])


def _case(nodes, inits=(), outputs=("y",), opset=17, inputs=(("x", X),)):
    return dict(nodes=nodes, inits=list(inits), outputs=list(outputs), opset=opset,
                inputs=[(n, list(s)) for n, s in inputs])


def _act_case(op, extra=(), opset=17, **attrs):
    """conv -> op -> add(x): a 3-op run that layer groups keep in LMEM."""
    conv, w = _conv()
    nodes = conv + [helper.make_node(op, ["c", *[i.name for i in extra]], ["a"], name="a",
                                     **attrs),
                    helper.make_node("Add", ["a", "x"], ["y"], name="y")]
    return _case(nodes, w + list(extra), opset=opset)


CASES = {
    "leaky_relu": _act_case("LeakyRelu", alpha=0.15),
    "hard_sigmoid": _act_case("HardSigmoid", alpha=0.3, beta=0.4),
    "hard_swish": _act_case("HardSwish", opset=14),
    "prelu_channel": _act_case("PRelu", [const("slope", _f32(4, 1, 1, scale=0.3))]),
    "prelu_scalar": _act_case("PRelu", [const("slope1", np.array([0.2], np.float32))]),
    "split_input": _case([helper.make_node("Split", ["x", "sizes"], ["s0", "s1", "s2"],
                                           name="split", axis=1)],
                         [const("sizes", np.array([1, 2, 1], np.int64))],
                         outputs=("s0", "s1", "s2"), opset=13),
    "split_num_outputs": _case([helper.make_node("Split", ["x"], ["s0", "s1", "s2"],
                                                 name="split", axis=-1, num_outputs=3)],
                               outputs=("s0", "s1", "s2"), opset=18,
                               inputs=(("x", [1, 4, 3, 7]),)),
    "tile": _case([helper.make_node("Tile", ["x", "reps"], ["y"], name="tile")],
                  [const("reps", np.array([1, 2, 1, 3], np.int64))],
                  inputs=(("x", [1, 2, 3, 4]),)),
    "expand": _case([helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
                    [const("shape", np.array([2, 4, 5, 6], np.int64))],
                    inputs=(("x", [1, 4, 1, 6]),)),
    "expand_rank": _case([helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
                         [const("shape", np.array([2, 3, 4, 5], np.int64))],
                         inputs=(("x", [4, 1]),)),
    "sum": _case([helper.make_node("Sum", ["x", "x2", "b"], ["y"], name="sum")],
                 [const("b", _f32(4, 1, 1))], inputs=(("x", X), ("x2", X))),
    "mean": _case([helper.make_node("Mean", ["x", "x2", "b"], ["y"], name="mean")],
                  [const("b", _f32(4, 1, 1))], inputs=(("x", X), ("x2", X))),
    "instance_norm": _case(
        _conv()[0] + [helper.make_node("InstanceNormalization", ["c", "scale", "bias"], ["y"],
                                       name="inorm", epsilon=1e-3)],
        _conv()[1] + [const("scale", _f32(4)), const("bias", _f32(4))]),
    "instance_norm_plain": _case(
        [helper.make_node("InstanceNormalization", ["x", "one", "zero"], ["y"], name="inorm")],
        [const("one", np.ones(4, np.float32)), const("zero", np.zeros(4, np.float32))],
        inputs=(("x", [2, 4, 10]),)),
    "reduce_sum": _case([helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="rsum",
                                          keepdims=1)],
                        [const("axes", np.array([2, 3], np.int64))], opset=13),
}


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    # Inputs wide enough to reach every branch of the clamps.
    return Runner(CASES, tmp_path_factory, seed=7, input_scale=3.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnxruntime(name, runner):
    r = runner.check_transform(name)
    assert "tensor<*x" not in r.mlir.read_text()


@pytest.mark.parametrize("layer_group", [True, False], ids=["groups", "per_op"])
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_deploys_and_matches(name, chip, layer_group, runner):
    runner.check_deploy(name, chip, layer_group)


def test_mappings(runner):
    """How each op lands in Top and Tpu (after canonicalization)."""
    def top(name):
        return runner.transformed(name)[1].read_text()

    assert "top.LeakyRelu" in top("leaky_relu") and "top.HardSwish" in top("hard_swish")
    assert "top.HardSigmoid" in top("hard_sigmoid")
    assert "top.LeakyRelu" in top("prelu_scalar")  # a scalar slope is a LeakyRelu
    assert top("split_num_outputs").count("top.Slice") == 3
    assert top("tile").count("top.Concat") == 2
    assert "top.Mul" in top("expand") and "top.Mul" in top("expand_rank")
    assert top("mean").count("top.Add") == 2 and "top.Div" in top("mean")
    text = top("instance_norm_plain")  # identity affine is dropped
    assert "top.LayerNorm" in text and "top.Mul" not in text and "top.Add" not in text


@pytest.mark.parametrize("name,mode", [("leaky_relu", "leaky_relu"),
                                       ("hard_sigmoid", "hard_sigmoid"),
                                       ("hard_swish", "hard_swish")])
def test_new_active_modes_join_layer_groups(name, mode, runner):
    r = runner.check_deploy(name, "tpu_edge", layer_group=True)
    text = r.final_mlir.read_text()
    active = [l for l in text.splitlines() if "tpu.Active" in l and f'mode = "{mode}"' in l]
    assert len(active) == 1 and active[0].strip() in grouped_lines(text), active


def _single(op_type, inputs, inits, opset=17, **attrs):
    node = helper.make_node(op_type, [n for n, _ in inputs] + [i.name for i in inits], ["y"],
                            name="the_node", **attrs)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                               for n, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("model,fragments", [
    (_single("ConvTranspose", [("x", [1, 4, 3, 3, 3])], [const("w", _f32(4, 2, 2, 2, 2))]),
     ["node 'the_node' (ConvTranspose)", "3-D ConvTranspose is not supported"]),
    (_single("Resize", [("x", [1, 2, 4, 4])],
             [const("roi", np.zeros(0, np.float32)),
              const("scales", np.array([1, 1, 2, 2], np.float32))], mode="cubic"),
     ["node 'the_node' (Resize)", "mode 'cubic' is not supported"]),
], ids=["conv_transpose_3d", "resize_cubic"])
def test_unsupported_ops_fail_with_one_clear_line(model, fragments, tmp_path):
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(FrontendError) as e:
        transform("m", tmp_path / "m.onnx", tmp_path / "m.mlir")
    message = str(e.value)
    assert "\n" not in message and "m.onnx" in message
    for f in fragments:
        assert f in message, message
