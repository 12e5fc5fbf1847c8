"""Small onnx.helper test models ("cases") run through transform and deploy.

A case is a dict: nodes, inputs [(name, shape)], outputs (default ["y"]),
inits (initializers), opset and optionally int_inputs {name: (low, high)}
(int64 inputs drawn from [low, high)) and int_outputs [name] (int64
outputs). `Runner` builds and transforms each case once per test module and
deploys it on a chip, with or without layer groups.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tpuc.compare import Tolerance
from tpuc.deploy import deploy
from tpuc.transform import transform

# Every stage computes in float32; only accumulation order differs.
COSINE_MIN = 0.99999
TOL = Tolerance(COSINE_MIN, 0.999)
CHIPS = ("tpu_edge", "tpu_pro")


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def case_model(case) -> onnx.ModelProto:
    graph = helper.make_graph(
        case["nodes"], "g",
        [helper.make_tensor_value_info(
            n, TensorProto.INT64 if n in case.get("int_inputs", {}) else TensorProto.FLOAT, s)
         for n, s in case["inputs"]],
        [helper.make_tensor_value_info(
            o, TensorProto.INT64 if o in case.get("int_outputs", ()) else TensorProto.FLOAT, None)
         for o in case.get("outputs", ["y"])],
        initializer=case["inits"])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", case["opset"])])


class Runner:
    """Transforms each case once (random inputs times `input_scale`)."""

    def __init__(self, cases, tmp_path_factory, seed=0, input_scale=1.0):
        self.cases, self.tmp, self.scale = cases, tmp_path_factory, input_scale
        self.rng = np.random.default_rng(seed)
        self.cache = {}

    def transformed(self, name):
        """(workdir, top.mlir, inputs npz, top outputs npz, TransformResult)."""
        if name not in self.cache:
            case = self.cases[name]
            d = self.tmp.mktemp(name)
            onnx.save(case_model(case), d / f"{name}.onnx")
            ints = case.get("int_inputs", {})  # name -> [low, high)
            np.savez(d / "in.npz", **{
                n: (self.rng.integers(*ints[n], s).astype(np.int64) if n in ints else
                    (self.rng.standard_normal(s) * self.scale).astype(np.float32))
                for n, s in case["inputs"]})
            r = transform(name, d / f"{name}.onnx", d / f"{name}.mlir", test_input=d / "in.npz",
                          test_result=d / "top_outputs.npz", tolerance=TOL)
            self.cache[name] = (d, r.mlir, d / "in.npz", r.top_outputs, r)
        return self.cache[name]

    def check_transform(self, name):
        """Every tensor matches onnxruntime; returns the TransformResult."""
        r = self.transformed(name)[4]
        assert r.comparison.passed, r.comparison.summary()
        compared = {row.name for row in r.comparison.rows if row.passed}
        assert set(self.cases[name].get("outputs", ["y"])) <= compared
        assert all(row.cosine >= COSINE_MIN for row in r.comparison.rows if row.passed)
        return r

    def check_deploy(self, name, chip, layer_group):
        """Tpu interpreter matches Top; every dumped cmodel tensor matches Tpu."""
        d, mlir, inputs, top_out, _ = self.transformed(name)
        r = deploy(mlir, "F32", chip, d / f"{name}_{chip}_{layer_group}.bmodel",
                   test_input=inputs, test_reference=top_out, compare_all=True,
                   tolerance=TOL, layer_group=layer_group)
        assert r.tpu_comparison.passed, r.tpu_comparison.summary()
        assert r.model_comparison.passed, r.model_comparison.summary()
        compared = {row.name for row in r.model_comparison.rows if row.passed}
        assert set(self.cases[name].get("outputs", ["y"])) <= compared
        return r
