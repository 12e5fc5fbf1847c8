"""model_transform on the zoo: every tensor of the Top interpreter matches
onnxruntime, and broken input fails with one clear line."""
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from tpuc.compare import Tolerance
from tpuc.frontend.onnx_reference import make_test_inputs
from tpuc.testing import zoo
from tpuc.tools import model_transform
from tpuc.transform import transform

# The Top interpreter computes in float32 like onnxruntime; differences are
# accumulation order only, so every tensor must agree to cosine 0.99999.
COSINE_MIN = 0.99999


@pytest.fixture(scope="module")
def zoo_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("zoo")


@pytest.mark.parametrize("name", sorted(zoo.ZOO))
def test_zoo_model_matches_onnxruntime(name, zoo_dir, tmp_path):
    spec = zoo.ZOO[name]
    path = zoo.export(name, zoo_dir)
    inputs = make_test_inputs(path, seed=0, int_ranges=spec.int_ranges)
    np.savez(tmp_path / "in.npz", **inputs)
    result = transform(name, path, tmp_path / f"{name}.mlir",
                       test_input=tmp_path / "in.npz",
                       test_result=tmp_path / f"{name}_top_outputs.npz",
                       tolerance=Tolerance(COSINE_MIN, 0.999))
    cmp = result.comparison
    bad = [(r.name, r.cosine, r.reason) for r in cmp.failures]
    assert not bad, f"{name}: {bad}"
    compared = [r for r in cmp.rows if r.passed]
    assert len(compared) >= 2
    assert all(r.cosine >= COSINE_MIN for r in compared)
    # Graph outputs are always among the compared tensors.
    model = onnx.load(path)
    assert {o.name for o in model.graph.output} <= {r.name for r in compared}
    text = result.mlir.read_text()
    assert "tensor<*x" not in text, "every shape must be inferred"
    weights = np.load(result.weight_file)
    assert len(weights.files) > 0 or name.startswith("ops_")


def test_batchnorm_is_folded_and_names_survive(zoo_dir, tmp_path):
    path = zoo.export("cnn_bn", zoo_dir)
    result = transform("cnn", path, tmp_path / "cnn.mlir")
    text = result.mlir.read_text()
    assert "top.BatchNorm" not in text
    assert "top.Relu" not in text  # fused into the convs and the add
    origin = (tmp_path / "cnn_origin.mlir").read_text()
    assert "top.BatchNorm" in origin


def _run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tpuc.tools.model_transform", *args],
                          capture_output=True, text=True)


def _one_line_error(proc, *fragments):
    assert proc.returncode != 0
    lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
    assert len(lines) == 1, proc.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def test_truncated_model(zoo_dir, tmp_path):
    data = zoo.export("mlp", zoo_dir).read_bytes()
    bad = tmp_path / "trunc.onnx"
    bad.write_bytes(data[: len(data) // 2])
    proc = _run_cli("--model_name", "t", "--model_def", str(bad), "--mlir", str(tmp_path / "t.mlir"))
    _one_line_error(proc, "trunc.onnx", "not a valid ONNX file")


def _tiny(op_type, opset=17, shape=(1, 4), **attrs):
    node = helper.make_node(op_type, ["x"], ["y"], name="the_node", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_unknown_op(tmp_path):
    onnx.save(_tiny("Hardmax"), tmp_path / "u.onnx")
    proc = _run_cli("--model_name", "u", "--model_def", str(tmp_path / "u.onnx"), "--mlir", str(tmp_path / "u.mlir"))
    _one_line_error(proc, "node 'the_node' (Hardmax)", "not supported")


def test_too_old_opset(tmp_path):
    onnx.save(_tiny("Relu", opset=10), tmp_path / "o.onnx")
    proc = _run_cli("--model_name", "o", "--model_def", str(tmp_path / "o.onnx"), "--mlir", str(tmp_path / "o.mlir"))
    _one_line_error(proc, "opset 10 is not supported", "converted to 13")


@pytest.mark.parametrize("opset", [11, 12])
def test_opset_11_12_are_converted(tmp_path, opset):
    """Opset-11 Softmax flattens from `axis` on; after conversion to 13 the
    result still matches onnxruntime on the original model."""
    model = _tiny("Softmax", opset=opset, shape=(2, 3, 4), axis=1)
    onnx.save(model, tmp_path / "s.onnx")
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    proc = _run_cli("--model_name", "s", "--model_def", str(tmp_path / "s.onnx"),
                    "--mlir", str(tmp_path / "s.mlir"), "--test_input", str(tmp_path / "in.npz"),
                    "--test_result", str(tmp_path / "out.npz"))
    assert proc.returncode == 0, proc.stderr
    assert f"converted opset {opset} to 13" in proc.stderr + proc.stdout
    want = ort.InferenceSession(str(tmp_path / "s.onnx")).run(None, {"x": x})[0]
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["y"], want, rtol=1e-5, atol=1e-6)


def test_dynamic_input_needs_shapes(tmp_path):
    model = _tiny("Relu", shape=("batch", 4))
    onnx.save(model, tmp_path / "d.onnx")
    proc = _run_cli("--model_name", "d", "--model_def", str(tmp_path / "d.onnx"), "--mlir", str(tmp_path / "d.mlir"))
    _one_line_error(proc, "input 'x' has a dynamic shape", "--input_shapes")
    # With a shape it imports.
    assert model_transform.main(["--model_name", "d", "--model_def", str(tmp_path / "d.onnx"),
                                 "--input_shapes", "[[3,4]]", "--mlir", str(tmp_path / "d.mlir")]) == 0
    assert "tensor<3x4xf32>" in (tmp_path / "d.mlir").read_text()


def test_input_shape_that_does_not_fit(zoo_dir, tmp_path):
    path = zoo.export("mlp", zoo_dir)
    proc = _run_cli("--model_name", "m", "--model_def", str(path), "--input_shapes", "[[4,32,1]]",
                    "--mlir", str(tmp_path / "m.mlir"))
    _one_line_error(proc, "has rank 2", "[4, 32, 1]")
    proc = _run_cli("--model_name", "m", "--model_def", str(path), "--input_shapes", "[[4,31]]",
                    "--mlir", str(tmp_path / "m.mlir"))
    _one_line_error(proc, "shape inference failed")


def test_test_input_missing_tensor(zoo_dir, tmp_path):
    path = zoo.export("mlp", zoo_dir)
    np.savez(tmp_path / "in.npz", wrong=np.zeros((4, 32), np.float32))
    proc = _run_cli("--model_name", "m", "--model_def", str(path), "--mlir", str(tmp_path / "m.mlir"),
                    "--test_input", str(tmp_path / "in.npz"), "--test_result", str(tmp_path / "o.npz"))
    _one_line_error(proc, "in.npz", "has no array named")


def test_model_runner_interprets_top_mlir(zoo_dir, tmp_path):
    from tpuc.tools import model_runner, npz_tool

    path = zoo.export("cnn_bn", zoo_dir)
    np.savez(tmp_path / "in.npz", **make_test_inputs(path, seed=3))
    transform("cnn", path, tmp_path / "cnn.mlir", test_input=tmp_path / "in.npz",
              test_result=tmp_path / "top.npz")
    assert model_runner.main(["--model", str(tmp_path / "cnn.mlir"), "--input", str(tmp_path / "in.npz"),
                              "--output", str(tmp_path / "run.npz"), "--dump_all_tensors"]) == 0
    assert npz_tool.main(["compare", str(tmp_path / "run.npz"), str(tmp_path / "top.npz"),
                          "--tolerance", "0.999999,0.999999"]) == 0


def test_check_lists_every_unsupported_node(tmp_path):
    """--check goes on past the first unsupported node: counts per op and
    reason, node names, exit 1; a supported model exits 0."""
    n = helper.make_node
    nodes = [n("Hardmax", ["x"], ["v"], name="hm1", axis=-1),
             n("Relu", ["v"], ["r"], name="relu"),
             n("Resize", ["r", "", "sc"], ["z"], name="rs", mode="cubic"),
             n("Hardmax", ["z"], ["y"], name="hm2")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "c.onnx")
    proc = _run_cli("--model_def", str(tmp_path / "c.onnx"), "--check")
    assert proc.returncode == 1
    assert "3 node(s) tpuc cannot compile" in proc.stdout
    assert "Hardmax x2: op type is not supported  [hm1, hm2]" in proc.stdout
    assert "Resize x1: mode 'cubic' is not supported" in proc.stdout and "[rs]" in proc.stdout
    onnx.save(_tiny("Relu"), tmp_path / "ok.onnx")
    proc = _run_cli("--model_def", str(tmp_path / "ok.onnx"), "--check")
    assert proc.returncode == 0 and "every node can be compiled" in proc.stdout
    onnx.save(_tiny("Relu", opset=9), tmp_path / "old.onnx")
    proc = _run_cli("--model_def", str(tmp_path / "old.onnx"), "--check")
    assert proc.returncode == 1 and "model x1: opset 9 is not supported" in proc.stdout


def test_a_node_that_cannot_be_folded_is_imported_and_named(tmp_path):
    """ONNX's reference evaluator fails on a Gather of constants with an
    index out of range: the node is left to the importer, whose error names
    it, instead of a bare evaluator exception."""
    n = helper.make_node
    nodes = [n("Gather", ["tab", "idx"], ["g"], name="bad_gather", axis=0),
             n("Add", ["x", "g"], ["y"], name="add")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[onnx.numpy_helper.from_array(np.ones((4, 3), np.float32), "tab"),
                     onnx.numpy_helper.from_array(np.array([1, 7], np.int64), "idx")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "f.onnx")
    proc = _run_cli("--model_name", "f", "--model_def", str(tmp_path / "f.onnx"),
                    "--mlir", str(tmp_path / "f.mlir"))
    _one_line_error(proc, "node 'bad_gather' (Gather)", "out of range")
