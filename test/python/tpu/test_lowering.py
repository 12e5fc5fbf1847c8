"""convert-top-to-tpu{mode=F32}: the Tpu interpreter reproduces the Top one.

Each module runs in the Top interpreter, is lowered in place, and runs again
in the Tpu interpreter on the same inputs. Every tensor both dumps name must
agree within TOL relative to the reference's scale:
max|tpu - top| <= TOL * max(1, max|top|). Both interpreters call the same
float kernels, so the F32 lowering is expected to be exact up to float
rounding of reassociated arithmetic (BatchNorm as Mul + Add).
"""
from pathlib import Path

import numpy as np
import pytest

from tpuc import compiler

TOL = 1e-5


def _check_lowering(text: str, inputs: dict, weights: dict | None = None,
                    tmp_path: Path | None = None,
                    top_pipeline: str = "top-shape-infer") -> dict:
    """Lowers `text` and compares both interpreters; returns the Tpu dump."""
    if weights is not None:
        wfile = tmp_path / "weights.npz"
        np.savez(wfile, **weights)
        text = text.replace("WEIGHTS", str(wfile))
    ctx = compiler.make_context()
    module = compiler.parse_module(text, ctx)
    return _compare(module, inputs, top_pipeline)


def _compare(module, inputs: dict, top_pipeline: str) -> dict:
    compiler.run_pipeline(module, top_pipeline)
    top = compiler.interpret(module, inputs, all_tensors=True)
    compiler.run_pipeline(module, "convert-top-to-tpu{mode=F32}")
    text = compiler.module_text(module)
    assert '"top.' not in text.replace('"top.Input"', "").replace(
        '"top.Weight"', "").replace('"top.None"', ""), text
    assert 'tpu.mode = #tpu.mode<F32>' in text
    tpu = compiler.interpret(module, inputs, all_tensors=True)
    common = sorted(set(top) & set(tpu))
    # Every Top tensor keeps its name through the lowering.
    assert set(top) <= set(tpu), set(top) - set(tpu)
    for name in common:
        ref, got = top[name], tpu[name]
        assert ref.shape == got.shape, name
        scale = max(1.0, float(np.max(np.abs(ref)))) if ref.size else 1.0
        err = float(np.max(np.abs(ref - got))) if ref.size else 0.0
        assert err <= TOL * scale, f"{name}: max abs diff {err} (scale {scale})"
    return tpu


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_conv_relu_pool(tmp_path):
    text = """
module attributes {top.weight_file = "WEIGHTS"} {
func.func @main(%arg0: tensor<1x3x9x9xf32>, %arg1: tensor<1x2x11xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x3x9x9xf32>) -> tensor<1x3x9x9xf32> loc("x")
  %s = "top.Input"(%arg1) : (tensor<1x2x11xf32>) -> tensor<1x2x11xf32> loc("s")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %dw = "top.Weight"() : () -> tensor<4x1x3x3xf32> loc("dw")
  %w1 = "top.Weight"() : () -> tensor<3x2x3xf32> loc("w1")
  %g = "top.Weight"() : () -> tensor<4xf32> loc("gamma")
  %be = "top.Weight"() : () -> tensor<4xf32> loc("beta")
  %m = "top.Weight"() : () -> tensor<4xf32> loc("mean")
  %v = "top.Weight"() : () -> tensor<4xf32> loc("var")
  %n = "top.None"() : () -> none
  %0 = "top.Conv"(%x, %w, %b) {kernel_shape = [3, 3], strides = [2, 1], pads = [1, 0, 2, 1], dilations = [1, 1]} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<*xf32> loc("conv")
  %1 = "top.BatchNorm"(%0, %g, %be, %m, %v) {epsilon = 1.0e-3 : f64} : (tensor<*xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("bn")
  %2 = "top.Relu"(%1) {relu_limit = 1.5} : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
  %3 = "top.Conv"(%2, %dw, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [2, 2], group = 4, do_relu = true} : (tensor<*xf32>, tensor<4x1x3x3xf32>, none) -> tensor<*xf32> loc("dwconv")
  %4 = "top.MaxPool"(%3) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], ceil_mode = true} : (tensor<*xf32>) -> tensor<*xf32> loc("maxpool")
  %5 = "top.AvgPool"(%2) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true, count_include_pad = true} : (tensor<*xf32>) -> tensor<*xf32> loc("avgpool_inc")
  %6 = "top.AvgPool"(%2) {kernel_shape = [3, 2], strides = [2, 2], pads = [1, 0, 1, 1], ceil_mode = true} : (tensor<*xf32>) -> tensor<*xf32> loc("avgpool")
  %7 = "top.GlobalAvgPool"(%3) : (tensor<*xf32>) -> tensor<*xf32> loc("gap")
  %8 = "top.Conv"(%s, %w1, %n) {kernel_shape = [3], strides = [2], pads = [1, 2], dilations = [1]} : (tensor<1x2x11xf32>, tensor<3x2x3xf32>, none) -> tensor<*xf32> loc("conv1d")
  %9 = "top.MaxPool"(%8) {kernel_shape = [2], strides = [2], pads = [1, 0], ceil_mode = true} : (tensor<*xf32>) -> tensor<*xf32> loc("maxpool1d")
  %10 = "top.AvgPool"(%8) {kernel_shape = [3], strides = [2], pads = [1, 1], ceil_mode = true, count_include_pad = true} : (tensor<*xf32>) -> tensor<*xf32> loc("avgpool1d")
  %11 = "top.GlobalAvgPool"(%8) : (tensor<*xf32>) -> tensor<*xf32> loc("gap1d")
  return %4, %5, %6, %7, %9 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}
}
"""
    rng = np.random.default_rng(3)
    weights = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(4).astype(np.float32),
        "dw": rng.standard_normal((4, 1, 3, 3)).astype(np.float32),
        "w1": rng.standard_normal((3, 2, 3)).astype(np.float32),
        "gamma": rng.uniform(0.5, 2, 4).astype(np.float32),
        "beta": rng.standard_normal(4).astype(np.float32),
        "mean": rng.standard_normal(4).astype(np.float32),
        "var": rng.uniform(0.1, 3, 4).astype(np.float32),
    }
    tpu = _check_lowering(text, {"x": _rand(1, 3, 9, 9), "s": _rand(1, 2, 11, seed=1)},
                          weights, tmp_path)
    for name in ["conv", "bn", "relu", "dwconv", "maxpool", "avgpool_inc", "avgpool",
                 "gap", "conv1d", "maxpool1d", "avgpool1d", "gap1d"]:
        assert name in tpu


def test_matmul_gelu_softmax():
    text = """
func.func @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<5xf32>) -> tensor<*xf32> {
  %a = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("a")
  %b = "top.Input"(%arg1) : (tensor<4x5xf32>) -> tensor<4x5xf32> loc("b")
  %c = "top.Input"(%arg2) : (tensor<5xf32>) -> tensor<5xf32> loc("c")
  %0 = "top.MatMul"(%a, %b, %c) : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<*xf32> loc("mm")
  %1 = "top.GELU"(%0) : (tensor<*xf32>) -> tensor<*xf32> loc("gelu")
  %2 = "top.GELU"(%0) {approximate = "tanh"} : (tensor<*xf32>) -> tensor<*xf32> loc("gelu_tanh")
  %3 = "top.Add"(%1, %2) {do_relu = true} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("add")
  %4 = "top.Sub"(%3, %c) : (tensor<*xf32>, tensor<5xf32>) -> tensor<*xf32> loc("sub")
  %5 = "top.Mul"(%4, %0) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("mul")
  %6 = "top.Abs"(%5) : (tensor<*xf32>) -> tensor<*xf32> loc("abs")
  %7 = "top.Sqrt"(%6) : (tensor<*xf32>) -> tensor<*xf32> loc("sqrt")
  %8 = "top.Exp"(%7) : (tensor<*xf32>) -> tensor<*xf32> loc("exp")
  %9 = "top.Log"(%8) : (tensor<*xf32>) -> tensor<*xf32> loc("log")
  %10 = "top.Rsqrt"(%8) : (tensor<*xf32>) -> tensor<*xf32> loc("rsqrt")
  %11 = "top.Div"(%9, %10) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("div")
  %12 = "top.Max"(%11, %0) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("max")
  %13 = "top.Min"(%12, %4) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("min")
  %14 = "top.Clip"(%13) {min = -1.0, max = 2.0} : (tensor<*xf32>) -> tensor<*xf32> loc("clip")
  %15 = "top.Sigmoid"(%14) : (tensor<*xf32>) -> tensor<*xf32> loc("sigmoid")
  %16 = "top.Tanh"(%15) : (tensor<*xf32>) -> tensor<*xf32> loc("tanh")
  %17 = "top.SiLU"(%0) : (tensor<*xf32>) -> tensor<*xf32> loc("silu")
  %18 = "top.Erf"(%17) : (tensor<*xf32>) -> tensor<*xf32> loc("erf")
  %19 = "top.Pow"(%18) {exponent = 3.0} : (tensor<*xf32>) -> tensor<*xf32> loc("pow")
  %20 = "top.Add"(%16, %19) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("sum")
  %21 = "top.Relu"(%20) : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
  %22 = "top.Softmax"(%21) {axis = -2} : (tensor<*xf32>) -> tensor<*xf32> loc("softmax")
  return %22 : tensor<*xf32>
}
"""
    _check_lowering(text, {"a": _rand(2, 3, 4), "b": _rand(4, 5, seed=1),
                           "c": _rand(5, seed=2)})


def test_layernorm(tmp_path):
    text = """
module attributes {top.weight_file = "WEIGHTS"} {
func.func @main(%arg0: tensor<2x3x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<8xf32> loc("ln_w")
  %b = "top.Weight"() : () -> tensor<8xf32> loc("ln_b")
  %n = "top.None"() : () -> none
  %0 = "top.LayerNorm"(%x, %w, %b) {axis = -1, epsilon = 1.0e-5 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<*xf32> loc("ln")
  %1 = "top.LayerNorm"(%x, %n, %n) {axis = -2} : (tensor<2x3x8xf32>, none, none) -> tensor<*xf32> loc("ln2")
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
}
"""
    weights = {"ln_w": _rand(8, seed=4), "ln_b": _rand(8, seed=5)}
    _check_lowering(text, {"x": _rand(2, 3, 8) * 3 + 1}, weights, tmp_path)


def test_data_movement(tmp_path):
    text = """
module attributes {top.weight_file = "WEIGHTS"} {
func.func @main(%arg0: tensor<1x4x6x6xf32>, %arg1: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("x")
  %i = "top.Input"(%arg1) : (tensor<3xf32>) -> tensor<3xf32> loc("i")
  %ci = "top.Weight"() : () -> tensor<2x2xf32> loc("ci")
  %0 = "top.Slice"(%x) {starts = [-1, 100, 0], ends = [-100, -7, 6], axes = [1, -1, 2], steps = [-1, -2, 2]} : (tensor<1x4x6x6xf32>) -> tensor<*xf32> loc("slice")
  %1 = "top.Concat"(%0, %0) {axis = -3, do_relu = true} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("concat")
  %2 = "top.Gather"(%x, %ci) {axis = -1} : (tensor<1x4x6x6xf32>, tensor<2x2xf32>) -> tensor<*xf32> loc("gather_const")
  %3 = "top.Gather"(%1, %i) {axis = 1} : (tensor<*xf32>, tensor<3xf32>) -> tensor<*xf32> loc("gather")
  %4 = "top.Pad"(%x) {pads = [0, 0, 1, 2, 0, 0, 2, 1], mode = "reflect"} : (tensor<1x4x6x6xf32>) -> tensor<*xf32> loc("pad_reflect")
  %5 = "top.Pad"(%4) {pads = [0, 1, 0, 1, 0, 0, 1, 0], mode = "edge"} : (tensor<*xf32>) -> tensor<*xf32> loc("pad_edge")
  %6 = "top.Pad"(%5) {pads = [0, 0, 1, 1, 0, 0, 0, 0], value = 2.5} : (tensor<*xf32>) -> tensor<*xf32> loc("pad_const")
  %7 = "top.Upsample"(%6) {scale_h = 2, scale_w = 3} : (tensor<*xf32>) -> tensor<*xf32> loc("upsample")
  %8 = "top.Reduce"(%7) {mode = "mean", axes = [-1, -2], keepdims = false} : (tensor<*xf32>) -> tensor<*xf32> loc("reduce_mean")
  %9 = "top.Reduce"(%3) {mode = "max", axes = []} : (tensor<*xf32>) -> tensor<*xf32> loc("reduce_max")
  %10 = "top.Reduce"(%2) {mode = "sum", axes = [0, 3]} : (tensor<*xf32>) -> tensor<*xf32> loc("reduce_sum")
  %11 = "top.Reduce"(%x) {mode = "min", axes = [1]} : (tensor<1x4x6x6xf32>) -> tensor<*xf32> loc("reduce_min")
  %12 = "top.Permute"(%2) {order = [0, 3, 1, 4, 2]} : (tensor<*xf32>) -> tensor<*xf32> loc("permute")
  %13 = "top.Reshape"(%12) {shape = [2, -1]} : (tensor<*xf32>) -> tensor<*xf32> loc("reshape")
  %14 = "top.Cast"(%13) {to = "i8"} : (tensor<*xf32>) -> tensor<*xf32> loc("cast_i8")
  %15 = "top.Cast"(%8) {to = "f16"} : (tensor<*xf32>) -> tensor<*xf32> loc("cast_f16")
  return %9, %10, %11, %14, %15 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}
}
"""
    weights = {"ci": np.array([[0, -1], [-6, 5]], np.float32)}
    inputs = {"x": _rand(1, 4, 6, 6) * 40, "i": np.array([1, 0, 3], np.float32)}
    tpu = _check_lowering(text, inputs, weights, tmp_path)
    assert tpu["slice"].shape == (1, 4, 3, 3)


_RUNTIME_GATHER = """
func.func @main(%arg0: tensor<2x4xf32>, %arg1: tensor<3xf32>) -> tensor<*xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("x")
  %i = "top.Input"(%arg1) : (tensor<3xf32>) -> tensor<3xf32> loc("i")
  %0 = "top.Gather"(%x, %i) {axis = 1} : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<*xf32> loc("gather")
  return %0 : tensor<*xf32>
}
"""


def test_tpu_gather_wraps_negative_runtime_index():
    ctx = compiler.make_context()
    module = compiler.parse_module(_RUNTIME_GATHER, ctx)
    compiler.run_pipeline(module, "top-shape-infer,convert-top-to-tpu")
    x = _rand(2, 4)
    out = compiler.interpret(module, {"x": x, "i": np.array([1, -1, -4], np.float32)})
    np.testing.assert_array_equal(out["gather"], x[:, [1, 3, 0]])


@pytest.mark.parametrize("bad,text", [(-5, "index -5"), (4, "index 4"), (1.5, r"index 1\.50*e\+00")])
def test_tpu_gather_rejects_bad_runtime_index(bad, text):
    ctx = compiler.make_context()
    module = compiler.parse_module(_RUNTIME_GATHER, ctx)
    compiler.run_pipeline(module, "top-shape-infer,convert-top-to-tpu")
    inputs = {"x": _rand(2, 4), "i": np.array([1, -1, bad], np.float32)}
    with pytest.raises(compiler.CompileError,
                       match=text + r" \(at position 2\) is not an integer in \[-4, 4\) for axis 1"):
        compiler.interpret(module, inputs)


def test_int8_needs_a_table():
    ctx = compiler.make_context()
    module = compiler.parse_module("module {}", ctx)
    with pytest.raises(compiler.CompileError, match="mode INT8 needs a calibration table"):
        compiler.run_pipeline(module, "convert-top-to-tpu{mode=INT8}")


# ----------------------------------------------------------------- zoo models

def _zoo():
    try:
        from tpuc.frontend.onnx_importer import import_onnx, write_top
        from tpuc.frontend.onnx_reference import make_test_inputs
        from tpuc.testing.zoo import ZOO, export
    except Exception as e:  # the importer or its dependencies are not ready
        pytest.skip(f"ONNX importer unavailable: {e}")
    return import_onnx, write_top, make_test_inputs, ZOO, export


# Small enough to keep the file under 30 s with the torch exports.
ZOO_MODELS = ["mlp", "cnn_bn", "mobilenetv2", "bert_layer", "resnet18",
              "ops_shape_op13", "ops_shape_op21", "ops_math_op13", "ops_math_op21"]


@pytest.mark.parametrize("name", ZOO_MODELS)
def test_zoo_model(name, tmp_path):
    import_onnx, write_top, make_test_inputs, zoo, export = _zoo()
    if name not in zoo:
        pytest.skip(f"{name} is not in the zoo")
    try:
        path = export(name, tmp_path)
    except Exception as e:  # e.g. torch missing
        pytest.skip(f"cannot export {name}: {e}")
    ctx = compiler.make_context()
    try:
        imported = import_onnx(path, name, ctx)
    except Exception as e:
        pytest.skip(f"ONNX importer cannot import {name} yet: {e}")
    write_top(imported, tmp_path / f"{name}_weights.npz")
    inputs = make_test_inputs(path, seed=1, int_ranges=zoo[name].int_ranges)
    inputs = {k: np.asarray(v, np.float32) for k, v in inputs.items()}
    _compare(imported.module, inputs, "top-shape-infer,canonicalize")
