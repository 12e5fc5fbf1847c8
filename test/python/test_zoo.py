"""tpuc.testing.zoo: every model exports, is valid ONNX, runs in onnxruntime, and matches an independent reference.

Tolerances: torch models vs PyTorch eager, 1e-4 absolute on the outputs (same
float32 math in a different runtime); onnx.helper models vs a numpy
re-implementation, 1e-5 absolute.
"""


import numpy as np
import onnx
import pytest

from tpuc.frontend.onnx_reference import make_test_inputs, run_reference
from tpuc.testing.zoo import ZOO, export, export_all

TORCH_ATOL = 1e-4
NUMPY_ATOL = 1e-5
TORCH_MODELS = [n for n, s in ZOO.items() if s.is_torch]
HELPER_MODELS = [n for n, s in ZOO.items() if not s.is_torch]


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """All zoo models exported once per session."""
    return export_all(tmp_path_factory.mktemp("zoo"))


@pytest.fixture(scope="session")
def reference_runs(exported):
    runs = {}
    for name, path in exported.items():
        inputs = make_test_inputs(path, seed=1, int_ranges=ZOO[name].int_ranges)
        runs[name] = inputs, run_reference(path, inputs)
    return runs


def test_zoo_contents():
    assert {"cnn_bn", "resnet18", "mobilenetv2", "bert_layer", "mlp"} <= set(TORCH_MODELS)
    assert {ZOO[n].opset for n in HELPER_MODELS} == {13, 21}
    assert len(HELPER_MODELS) >= 2


@pytest.mark.parametrize("name", list(ZOO))
def test_export_is_valid_and_runs(name, exported, reference_runs):
    spec = ZOO[name]
    path = exported[name]
    assert path.name == f"{name}.onnx"
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == spec.opset
    assert {vi.name: tuple(d.dim_value for d in vi.type.tensor_type.shape.dim) for vi in model.graph.input
            if vi.name not in {i.name for i in model.graph.initializer}} == spec.inputs
    assert [o.name for o in model.graph.output] == list(spec.outputs)
    ops = {n.op_type for n in model.graph.node}
    assert set(spec.required_ops) <= ops

    _, out = reference_runs[name]
    node_outputs = [o for n in model.graph.node for o in n.output if o]
    assert set(node_outputs) <= set(out)  # every intermediate was captured
    for key, value in out.items():
        if value.dtype.kind == "f":
            assert np.isfinite(value).all(), key


@pytest.mark.parametrize("name", TORCH_MODELS)
def test_torch_models_match_eager(name, reference_runs):
    torch = pytest.importorskip("torch")
    spec = ZOO[name]
    inputs, out = reference_runs[name]
    module = spec.make_module(0)
    with torch.no_grad():
        expected = module(*(torch.from_numpy(inputs[k]) for k in spec.inputs)).numpy()
    assert out[spec.outputs[0]].shape == expected.shape
    np.testing.assert_allclose(out[spec.outputs[0]], expected, rtol=0, atol=TORCH_ATOL)


def test_batchnorm_is_kept_not_folded(exported):
    for name in ("cnn_bn", "resnet18", "mobilenetv2"):
        graph = onnx.load(str(exported[name])).graph
        convs = [n for n in graph.node if n.op_type == "Conv"]
        bns = [n for n in graph.node if n.op_type == "BatchNormalization"]
        assert len(bns) == len(convs) > 0, name  # one BN after every conv
        conv_outputs = {n.output[0] for n in convs}
        assert all(bn.input[0] in conv_outputs for bn in bns)


def test_model_specific_structure(exported):
    mb = onnx.load(str(exported["mobilenetv2"])).graph
    inits = {i.name: i for i in mb.initializer}
    depthwise = [n for n in mb.node if n.op_type == "Conv"
                 and next(a.i for a in n.attribute if a.name == "group") > 1]
    assert depthwise
    for n in depthwise:  # groups == channels, one input channel per group
        assert next(a.i for a in n.attribute if a.name == "group") == inits[n.input[1]].dims[0]
        assert inits[n.input[1]].dims[1] == 1
    rn = onnx.load(str(exported["resnet18"])).graph
    kernels = sorted({tuple(next(a.ints for a in n.attribute if a.name == "kernel_shape"))
                      for n in rn.node if n.op_type == "Conv"})
    assert kernels == [(1, 1), (3, 3), (7, 7)]
    assert sum(n.op_type == "Add" for n in rn.node) == 8  # 8 BasicBlocks
    bert_ops = {n.op_type for n in onnx.load(str(exported["bert_layer"])).graph.node}
    assert "Erf" in bert_ops or "Gelu" in bert_ops


def test_torch_init_is_deterministic(tmp_path):
    a = onnx.load(str(export("cnn_bn", tmp_path / "a")))
    b = onnx.load(str(export("cnn_bn", tmp_path / "b")))
    for ia, ib in zip(a.graph.initializer, b.graph.initializer):
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(ia), onnx.numpy_helper.to_array(ib))
    torch = pytest.importorskip("torch")
    m0, m1 = ZOO["mlp"].make_module(0), ZOO["mlp"].make_module(1)
    assert not torch.equal(m0.net[0].weight, m1.net[0].weight)


# ----------------------------------------------------------------------------- numpy references


def _np_reduce(op, x, axes):
    return op(x, axis=tuple(axes), keepdims=True)


def ref_ops_shape(x, idx):
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (2, 2)], constant_values=0.5)
    sliced = padded[:, :, 8:0:-2, ::-1]  # H start -2 (=8) step -2 to 0; W reversed
    gathered = sliced[:, idx]
    resized = gathered.repeat(2, axis=2).repeat(2, axis=3)  # nearest, asymmetric, floor, x2
    mean_hw = _np_reduce(np.mean, resized, [2, 3])
    max_w = _np_reduce(np.max, resized, [3])
    return {"padded": padded, "sliced": sliced, "gathered": gathered, "resized": resized,
            "y": np.concatenate([max_w, max_w - mean_hw], axis=-1)}


def ref_ops_math(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    pos = np.abs(a) + 0.5
    ratio = pos / (np.abs(b) + 1)
    diff = a - b
    m = np.maximum(ratio, diff)
    lo = np.minimum(np.minimum(ratio, diff), 1.5)
    logits = m - pos ** 1.5 * np.sqrt(pos) + np.log(pos) + np.exp(lo)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return {"ratio": ratio, "m": m, "lo": lo, "logits": logits, "y": e / e.sum(axis=-1, keepdims=True)}


@pytest.mark.parametrize("name", HELPER_MODELS)
def test_helper_models_match_numpy(name, reference_runs):
    inputs, out = reference_runs[name]
    ref = ref_ops_shape(**inputs) if name.startswith("ops_shape") else ref_ops_math(**inputs)
    assert out["y"].shape == ref["y"].shape
    for key, value in ref.items():
        np.testing.assert_allclose(out[key], value, rtol=0, atol=NUMPY_ATOL, err_msg=f"{name}:{key}")


def test_helper_model_at_another_opset(tmp_path):
    path = export("ops_shape_op13", tmp_path, opset=18)  # axes move from attribute to input at 18
    assert path.name == "ops_shape_op13_opset18.onnx"
    model = onnx.load(str(path))
    assert model.opset_import[0].version == 18
    inputs = make_test_inputs(path, int_ranges={"idx": (0, 4)})
    np.testing.assert_allclose(run_reference(path, inputs)["y"], ref_ops_shape(**inputs)["y"], atol=NUMPY_ATOL)


def test_unknown_model():
    with pytest.raises(KeyError, match="no_such_model"):
        export("no_such_model", "/nonexistent")
