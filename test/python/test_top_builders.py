"""Top IR built with the typed Python builders, run through passes in-process
and checked numerically against numpy."""
import numpy as np
import pytest

from tpuc import compiler
from tpuc.mlir import ir
from tpuc.mlir.dialects import func, top


def conv_ref(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out + b.reshape(1, -1, 1, 1)


@pytest.fixture
def conv_bn_module(tmp_path):
    rng = np.random.default_rng(0)
    weights = {
        "conv.w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
        "bn.gamma": (rng.random(8) + 0.5).astype(np.float32),
        "bn.beta": rng.standard_normal(8).astype(np.float32),
        "bn.mean": rng.standard_normal(8).astype(np.float32),
        "bn.var": (rng.random(8) + 0.5).astype(np.float32),
    }
    wfile = tmp_path / "w.npz"
    np.savez(wfile, **weights)
    ctx = compiler.make_context()
    with ctx, ir.Location.unknown():
        f32 = ir.F32Type.get()
        unranked = ir.UnrankedTensorType.get(f32)
        module = ir.Module.create()
        module.operation.attributes["top.weight_file"] = ir.StringAttr.get(str(wfile))

        def weight(name):
            t = ir.RankedTensorType.get(list(weights[name].shape), f32)
            return top.WeightOp(t, loc=ir.Location.name(name)).result

        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(
                ir.RankedTensorType.get([2, 3, 9, 9], f32), name="main")
            def main(x):
                inp = top.InputOp(unranked, x, loc=ir.Location.name("x")).result
                none = top.NoneOp(ir.NoneType.get()).result
                conv = top.ConvOp(unranked, inp, weight("conv.w"), none,
                                  kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1], dilations=[1, 1],
                                  loc=ir.Location.name("conv")).result
                bn = top.BatchNormOp(unranked, conv, weight("bn.gamma"),
                                     weight("bn.beta"), weight("bn.mean"),
                                     weight("bn.var"), epsilon=1e-5,
                                     loc=ir.Location.name("bn")).result
                return top.ReluOp(unranked, bn, loc=ir.Location.name("relu")).result
    yield ctx, module, weights


def test_typed_builders_give_typed_opviews(conv_bn_module):
    ctx, module, _ = conv_bn_module
    with ctx:
        ops = [op.opview for op in module.body.operations[0].regions[0].blocks[0].operations]
        conv = next(op for op in ops if isinstance(op, top.ConvOp))
        assert [ir.IntegerAttr(a).value for a in conv.strides] == [2, 2]
        assert conv.group.value == 1


def test_shape_infer_then_canonicalize_folds_batchnorm(conv_bn_module, tmp_path):
    ctx, module, w = conv_bn_module
    with ctx:
        compiler.run_pipeline(module, "top-shape-infer")
        text = str(module)
        assert "tensor<2x8x5x5xf32>" in text and "tensor<*xf32>" not in text

        x = np.random.default_rng(1).standard_normal((2, 3, 9, 9)).astype(np.float32)
        before = compiler.interpret(module, {"x": x}, all_tensors=True)
        assert list(before) == ["x", "conv", "bn", "relu"]

        compiler.run_pipeline(module, "canonicalize")
        text = str(module)
        assert "top.BatchNorm" not in text and "top.Relu" not in text
        assert "do_relu = true" in text
        after = compiler.interpret(module, {"x": x})

    scale = w["bn.gamma"] / np.sqrt(w["bn.var"] + 1e-5)
    conv = conv_ref(x.astype(np.float64), w["conv.w"].astype(np.float64),
                    np.zeros(8), stride=2, pad=1)
    ref = np.maximum(
        (conv - w["bn.mean"].reshape(1, -1, 1, 1)) * scale.reshape(1, -1, 1, 1)
        + w["bn.beta"].reshape(1, -1, 1, 1), 0)
    # float32 accumulation over 27 products: 1e-4 relative is ample.
    np.testing.assert_allclose(before["relu"], ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(after["relu"], ref, rtol=1e-4, atol=1e-4)

    # Folded weights are saved with the module and equal w * s, (0 - mean) * s + beta.
    with ctx:
        compiler.save_weights(module, tmp_path / "folded.npz")
    saved = np.load(tmp_path / "folded.npz")
    np.testing.assert_allclose(saved["bn_filter_bn"],
                               w["conv.w"] * scale.reshape(-1, 1, 1, 1), rtol=1e-6)
    np.testing.assert_allclose(saved["bn_bias_bn"],
                               -w["bn.mean"] * scale + w["bn.beta"], rtol=1e-5, atol=1e-6)


def test_verifier_error_reaches_python():
    ctx = compiler.make_context()
    bad = """
    func.func @f(%a: tensor<1x3x4x4xf32>, %w: tensor<1x3x1x1xf32>, %n: none) -> tensor<*xf32> {
      %0 = "top.Conv"(%a, %w, %n) {kernel_shape=[1,1], strides=[1,1], pads=[0,0], dilations=[1,1]}
          : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>, none) -> tensor<*xf32>
      return %0 : tensor<*xf32>
    }"""
    with pytest.raises(compiler.CompileError, match="pads needs 4 values"):
        compiler.parse_module(bad, ctx)


def test_interpreter_errors_name_the_input(conv_bn_module):
    ctx, module, _ = conv_bn_module
    with ctx:
        compiler.run_pipeline(module, "top-shape-infer")
        with pytest.raises(compiler.CompileError, match="no input given for 'x'"):
            compiler.interpret(module, {"y": np.zeros((2, 3, 9, 9))})
        with pytest.raises(compiler.CompileError, match=r"input 'x' has shape \[1, 3, 9, 9\]"):
            compiler.interpret(module, {"x": np.zeros((1, 3, 9, 9))})


def test_load_module_error_names_the_file(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("garbage {\n")
    with pytest.raises(compiler.CompileError, match=r"(?s)bad\.mlir: .*custom op 'garbage' is unknown"):
        compiler.load_module(bad, compiler.make_context())
    with pytest.raises(FileNotFoundError, match="missing.mlir"):
        compiler.load_module(tmp_path / "missing.mlir", compiler.make_context())


def test_weights_held_in_memory_through_lowering_and_codegen(conv_bn_module, tmp_path):
    """Typed arrays handed to the weight store directly: no npz is read or
    written, canonicalization's folded weights stay in memory too, and
    deploy(run=False) compiles the module in place without a cmodel run."""
    from tpuc import runtime as rt
    from tpuc.deploy import deploy

    ctx, module, w = conv_bn_module
    (tmp_path / "w.npz").unlink()  # the fixture's file: nothing may read it
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 9)).astype(np.float32)
    file = compiler.hold_weights(module, w, "test/conv_bn")
    try:
        with ctx:
            compiler.run_pipeline(module, "top-shape-infer,canonicalize")
            top_out = compiler.interpret(module, {"x": x})
        r = deploy(module, "F32", "tpu_edge", tmp_path / "m.bmodel", run=False)
    finally:
        compiler.release_weights(file)
    assert r.cycles == 0 and r.bmodel.is_file()
    assert not list(tmp_path.glob("*.npz"))
    run = rt.Model(r.bmodel).run({"x": x})
    got = next(iter(run.outputs.values())).reshape(top_out["relu"].shape)
    np.testing.assert_allclose(got, top_out["relu"], rtol=1e-4, atol=1e-4)
    # Released: the module's weights are gone from the store.
    with ctx, pytest.raises(compiler.CompileError, match="not found"):
        compiler.interpret(module, {"x": x})


def test_held_weights_keep_their_dtype(conv_bn_module):
    """An int8 array reaches the store as int8: a float32 Top weight of the
    same name reads the integers as their values."""
    ctx, module, w = conv_bn_module
    typed = dict(w, **{"conv.w": np.arange(-40, 41, 1, np.int8)[:72].reshape(8, 3, 3, 1)
                       .repeat(3, axis=3)[:, :, :, :3]})
    typed["conv.w"] = np.ascontiguousarray(typed["conv.w"])
    file = compiler.hold_weights(module, typed, "test/typed")
    try:
        with ctx:
            compiler.run_pipeline(module, "top-shape-infer")
            x = np.random.default_rng(2).standard_normal((2, 3, 9, 9)).astype(np.float32)
            out = compiler.interpret(module, {"x": x}, all_tensors=True)
    finally:
        compiler.release_weights(file)
    ref = conv_ref(x.astype(np.float64), typed["conv.w"].astype(np.float64), np.zeros(8),
                   stride=2, pad=1)
    np.testing.assert_allclose(out["conv"], ref, rtol=1e-4, atol=1e-3)
