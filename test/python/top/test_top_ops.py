"""Reference inference of every Top op against an independent implementation.

Each case builds a one-op Top module from text (operands are network inputs
or weights from an npz the test writes), runs top-shape-infer and the
interpreter, and compares with onnxruntime running the matching one-node ONNX
model, or with numpy/torch where ONNX has no matching op.
"""
import numpy as np
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from tpuc import compiler

RNG = np.random.default_rng(0)
TOL = dict(rtol=1e-5, atol=1e-5)       # elementwise and data movement
ACC_TOL = dict(rtol=1e-4, atol=1e-4)   # reductions, conv, matmul, norms


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def tensor_type(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def attr_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i64"
    if isinstance(v, float):
        return f"{v:.17e} : f64"
    if isinstance(v, str):
        return f'"{v}"'
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def run_top(op, operands, attrs=None, tmp_path=None, pipeline="top-shape-infer"):
    """Runs `top.<op>` on operands: (name, array) for network inputs,
    ("@name", array) for weights, None for an absent optional operand."""
    args, body, names, feeds, weights = [], [], [], {}, {}
    for i, spec in enumerate(operands):
        if spec is None:
            body.append(f'%o{i} = "top.None"() : () -> none')
            names.append((f"%o{i}", "none"))
            continue
        name, arr = spec
        t = tensor_type(arr.shape)
        if name.startswith("@"):
            weights[name[1:]] = arr
            body.append(f'%o{i} = "top.Weight"() : () -> {t} loc("{name[1:]}")')
        else:
            args.append(f"%a{i}: {t}")
            feeds[name] = arr
            body.append(f'%o{i} = "top.Input"(%a{i}) : ({t}) -> {t} loc("{name}")')
        names.append((f"%o{i}", t))
    wfile = tmp_path / "w.npz"
    np.savez(wfile, **weights)
    attr = ", ".join(f"{k} = {attr_text(v)}" for k, v in (attrs or {}).items())
    body.append(f'%y = "top.{op}"({", ".join(n for n, _ in names)}) {{{attr}}} : '
                f'({", ".join(t for _, t in names)}) -> tensor<*xf32> loc("y")')
    text = (f'module attributes {{top.weight_file = "{wfile}"}} {{\n'
            f'func.func @main({", ".join(args)}) -> tensor<*xf32> {{\n  '
            + "\n  ".join(body) + "\n  return %y : tensor<*xf32>\n}\n}\n")
    ctx = compiler.make_context()
    module = compiler.parse_module(text, ctx)
    compiler.run_pipeline(module, pipeline)
    return compiler.interpret(module, feeds, all_tensors=True)["y"]


def run_onnx(op_type, inputs, attrs=None, opset=20, out_type=TensorProto.FLOAT):
    """One-node ONNX model: `inputs` maps names to arrays fed at run time;
    names starting with "#" become initializers (for attribute-like inputs);
    None leaves an optional input out."""
    feeds, inits, in_names, vis = {}, [], [], []
    for name, arr in inputs.items():
        if arr is None:
            in_names.append("")
            continue
        if name.startswith("#"):
            inits.append(numpy_helper.from_array(np.asarray(arr), name[1:]))
            in_names.append(name[1:])
            continue
        feeds[name] = arr
        in_names.append(name)
        vis.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
    while in_names and not in_names[-1]:
        in_names.pop()  # trailing optional inputs are left out, not named ""
    node = helper.make_node(op_type, in_names, ["y"], **(attrs or {}))
    graph = helper.make_graph([node], "g", vis,
                              [helper.make_tensor_value_info("y", out_type, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def check(got, want, tol=TOL):
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want.astype(np.float32), **tol)


# --------------------------------------------------------------------------
# Elementwise binary, with broadcasting
# --------------------------------------------------------------------------

BINARY = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "Div",
          "Max": "Max", "Min": "Min"}


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (3, 1)),
                                   ((4,), (2, 3, 4)), ((1, 3, 1, 5), (2, 1, 4, 1))])
def test_binary(op, sa, sb, tmp_path):
    a, b = randn(*sa), randn(*sb)
    if op == "Div":
        b = np.where(np.abs(b) < 0.1, 0.5, b).astype(np.float32)
    got = run_top(op, [("a", a), ("b", b)], tmp_path=tmp_path)
    check(got, run_onnx(BINARY[op], {"a": a, "b": b}))


def test_binary_weight_operand_and_do_relu(tmp_path):
    a, b = randn(2, 3, 4), randn(3, 1)
    got = run_top("Add", [("a", a), ("@b", b)], {"do_relu": True}, tmp_path=tmp_path)
    check(got, np.maximum(a + b, 0))


# --------------------------------------------------------------------------
# Elementwise unary
# --------------------------------------------------------------------------

UNARY_ONNX = ["Relu", "Sigmoid", "Tanh", "Erf", "Abs", "Exp"]


@pytest.mark.parametrize("op", UNARY_ONNX)
def test_unary_onnx(op, tmp_path):
    x = randn(2, 3, 5) * 2
    check(run_top(op, [("x", x)], tmp_path=tmp_path), run_onnx(op, {"x": x}))


@pytest.mark.parametrize("op", ["Log", "Sqrt"])
def test_unary_positive(op, tmp_path):
    x = np.abs(randn(3, 7)) + 0.05
    check(run_top(op, [("x", x)], tmp_path=tmp_path), run_onnx(op, {"x": x}))


def test_rsqrt_silu(tmp_path):
    x = np.abs(randn(4, 5)) + 0.05
    check(run_top("Rsqrt", [("x", x)], tmp_path=tmp_path), 1 / np.sqrt(x))
    y = randn(4, 5) * 3
    check(run_top("SiLU", [("x", y)], tmp_path=tmp_path),
          torch.nn.functional.silu(torch.from_numpy(y)).numpy())


def test_relu_limit(tmp_path):
    x = randn(2, 8) * 4
    check(run_top("Relu", [("x", x)], {"relu_limit": 1.5}, tmp_path=tmp_path),
          np.clip(x, 0, 1.5))


def test_clip(tmp_path):
    x = randn(3, 4) * 3
    got = run_top("Clip", [("x", x)], {"min": -0.5, "max": 1.25}, tmp_path=tmp_path)
    ref = run_onnx("Clip", {"x": x, "#lo": np.float32(-0.5), "#hi": np.float32(1.25)})
    check(got, ref)


@pytest.mark.parametrize("approx", ["none", "tanh"])
def test_gelu(approx, tmp_path):
    x = randn(4, 9) * 3
    got = run_top("GELU", [("x", x)], {"approximate": approx}, tmp_path=tmp_path)
    check(got, run_onnx("Gelu", {"x": x}, {"approximate": approx}))


@pytest.mark.parametrize("e", [2.0, 0.5, 3.0, -1.0])
def test_pow(e, tmp_path):
    x = np.abs(randn(3, 5)) + 0.1
    got = run_top("Pow", [("x", x)], {"exponent": e}, tmp_path=tmp_path)
    check(got, run_onnx("Pow", {"x": x, "#e": np.float32(e)}))


def test_cast(tmp_path):
    x = np.array([-300.7, -128.5, -2.5, -1.5, -0.7, 0.0, 0.4, 1.5, 2.5, 127.9,
                  254.6, 300.2, 1.0009765625, 65519.0, 70000.0, 1e-8],
                 np.float32)
    trunc = np.trunc(x)
    with np.errstate(over="ignore"):  # 70000 overflows f16 to inf on purpose
        f16 = x.astype(np.float16).astype(np.float32)
    refs = {
        "f32": x,
        "f16": f16,
        "bf16": torch.from_numpy(x).to(torch.bfloat16).float().numpy(),
        "i32": trunc,
        "i8": np.clip(trunc, -128, 127),
        "ui8": np.clip(trunc, 0, 255),
        "bool": (x != 0).astype(np.float32),
    }
    for to, ref in refs.items():
        got = run_top("Cast", [("x", x)], {"to": to}, tmp_path=tmp_path)
        np.testing.assert_array_equal(got, ref, err_msg=to)
    # In range, ONNX Cast agrees.
    small = (randn(10) * 50).astype(np.float32)
    ort_i8 = run_onnx("Cast", {"x": small}, {"to": TensorProto.INT32},
                      out_type=TensorProto.INT32)
    check(run_top("Cast", [("x", small)], {"to": "i32"}, tmp_path=tmp_path),
          ort_i8.astype(np.float32))


# --------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------

CONV_CASES = [
    # x shape, w shape, strides, pads, dilations, group
    ((1, 3, 9, 9), (4, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ((2, 4, 10, 11), (6, 2, 3, 2), [2, 1], [0, 1, 2, 0], [1, 2], 2),
    ((1, 6, 8, 8), (6, 1, 3, 3), [1, 2], [1, 2, 1, 0], [2, 1], 6),   # depthwise
    ((1, 4, 7, 7), (8, 1, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], 4),   # multiplier 2
    ((2, 3, 12), (5, 3, 4), [3], [2, 1], [2], 1),                  # 1-D
]


@pytest.mark.parametrize("xs,ws,strides,pads,dil,group", CONV_CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv(xs, ws, strides, pads, dil, group, bias, tmp_path):
    x, w, b = randn(*xs), randn(*ws), randn(ws[0])
    ops = [("x", x), ("@w", w), ("@b", b) if bias else None]
    attrs = {"kernel_shape": list(ws[2:]), "strides": strides, "pads": pads,
             "dilations": dil, "group": group}
    got = run_top("Conv", ops, attrs, tmp_path=tmp_path)
    ref = run_onnx("Conv", {"x": x, "w": w, "b": b if bias else None}, attrs)
    check(got, ref, ACC_TOL)


def test_conv_relu_limit(tmp_path):
    x, w = randn(1, 2, 5, 5), randn(3, 2, 3, 3)
    attrs = {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1],
             "dilations": [1, 1], "do_relu": True, "relu_limit": 0.5}
    got = run_top("Conv", [("x", x), ("@w", w), None], attrs, tmp_path=tmp_path)
    ref = run_onnx("Conv", {"x": x, "w": w}, {k: attrs[k] for k in list(attrs)[:4]})
    check(got, np.clip(ref, 0, 0.5), ACC_TOL)


# --------------------------------------------------------------------------
# MatMul
# --------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((2, 3, 4), (4, 6)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 4, 3))])
def test_matmul(sa, sb, tmp_path):
    a, b = randn(*sa), randn(*sb)
    got = run_top("MatMul", [("a", a), ("b", b), None], tmp_path=tmp_path)
    check(got, run_onnx("MatMul", {"a": a, "b": b}), ACC_TOL)


def test_matmul_weight_bias_relu(tmp_path):
    a, w, b = randn(2, 3, 8), randn(8, 5), randn(5)
    got = run_top("MatMul", [("a", a), ("@w", w), ("@b", b)], {"do_relu": True},
                  tmp_path=tmp_path)
    check(got, np.maximum(a @ w + b, 0), ACC_TOL)


# --------------------------------------------------------------------------
# Normalization
# --------------------------------------------------------------------------

def test_batchnorm(tmp_path):
    x = randn(2, 3, 4, 5)
    s, b, m = randn(3), randn(3), randn(3)
    v = np.abs(randn(3)) + 0.5
    got = run_top("BatchNorm", [("x", x), ("@s", s), ("@b", b), ("@m", m), ("@v", v)],
                  {"epsilon": 1e-3}, tmp_path=tmp_path)
    ref = run_onnx("BatchNormalization", {"x": x, "#s": s, "#b": b, "#m": m, "#v": v},
                   {"epsilon": 1e-3})
    check(got, ref, ACC_TOL)


@pytest.mark.parametrize("axis,affine", [(-1, True), (1, True), (2, False), (-2, True)])
def test_layernorm(axis, affine, tmp_path):
    x = randn(2, 3, 4, 5) * 2 + 1
    shape = x.shape[axis:]
    w, b = randn(*shape), randn(*shape)
    ops = [("x", x), ("@w", w) if affine else None, ("@b", b) if affine else None]
    got = run_top("LayerNorm", ops, {"axis": axis, "epsilon": 1e-5}, tmp_path=tmp_path)
    scale = w if affine else np.ones(shape, np.float32)
    inputs = {"x": x, "#w": scale, "#b": b if affine else None}
    ref = run_onnx("LayerNormalization", inputs, {"axis": axis, "epsilon": 1e-5})
    check(got, ref, ACC_TOL)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(axis, tmp_path):
    x = randn(3, 4, 5) * 5
    x[0, 0, 0] = 1000.0  # numerically stable: no overflow
    got = run_top("Softmax", [("x", x)], {"axis": axis}, tmp_path=tmp_path)
    check(got, run_onnx("Softmax", {"x": x}, {"axis": axis}), ACC_TOL)


# --------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------

POOL_CASES = [
    # x shape, kernel, strides, pads, ceil_mode
    ((1, 2, 7, 7), [3, 3], [2, 2], [0, 0, 0, 0], False),
    ((1, 2, 7, 7), [3, 3], [2, 2], [0, 0, 0, 0], True),
    ((2, 3, 8, 9), [2, 3], [2, 2], [1, 0, 0, 2], True),
    ((1, 1, 6, 6), [3, 3], [2, 2], [1, 1, 1, 1], False),
    ((1, 2, 5, 6), [2, 2], [3, 3], [1, 1, 1, 1], True),
    ((1, 1, 8, 8), [3, 3], [2, 2], [0, 0, 0, 0], True),         # last window overhangs
    ((2, 3, 11), [3], [2], [1, 1], True),                       # 1-D
]


@pytest.mark.parametrize("xs,k,s,p,ceil", POOL_CASES)
def test_maxpool(xs, k, s, p, ceil, tmp_path):
    x = randn(*xs) - 3  # negative values: padding must never win
    attrs = {"kernel_shape": k, "strides": s, "pads": p, "ceil_mode": ceil}
    got = run_top("MaxPool", [("x", x)], attrs, tmp_path=tmp_path)
    ref = run_onnx("MaxPool", {"x": x}, {**attrs, "ceil_mode": int(ceil)})
    check(got, ref)


@pytest.mark.parametrize("xs,k,s,p,ceil", POOL_CASES)
@pytest.mark.parametrize("include", [False, True])
def test_avgpool(xs, k, s, p, ceil, include, tmp_path):
    x = randn(*xs)
    attrs = {"kernel_shape": k, "strides": s, "pads": p, "ceil_mode": ceil,
             "count_include_pad": include}
    got = run_top("AvgPool", [("x", x)], attrs, tmp_path=tmp_path)
    ref = run_onnx("AveragePool", {"x": x}, {**attrs, "ceil_mode": int(ceil),
                                             "count_include_pad": int(include)})
    check(got, ref)


def test_global_avgpool(tmp_path):
    for shape in [(2, 3, 4, 5), (2, 3, 7)]:
        x = randn(*shape)
        got = run_top("GlobalAvgPool", [("x", x)], tmp_path=tmp_path)
        check(got, run_onnx("GlobalAveragePool", {"x": x}), ACC_TOL)


# --------------------------------------------------------------------------
# Reduce
# --------------------------------------------------------------------------

REDUCE_ONNX = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax",
               "min": "ReduceMin"}


@pytest.mark.parametrize("mode", REDUCE_ONNX)
@pytest.mark.parametrize("axes,keep", [([1], True), ([-1, 0], False), ([0, 2, 3], True),
                                       ([], False)])
def test_reduce(mode, axes, keep, tmp_path):
    x = randn(2, 3, 4, 5)
    got = run_top("Reduce", [("x", x)], {"mode": mode, "axes": axes, "keepdims": keep},
                  tmp_path=tmp_path)
    inputs = {"x": x, "#axes": np.array(axes, np.int64)} if axes else {"x": x}
    ref = run_onnx(REDUCE_ONNX[mode], inputs, {"keepdims": int(keep)})
    check(got, ref, ACC_TOL)


# --------------------------------------------------------------------------
# Data movement
# --------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [[6, 4], [-1, 3, 2], [2, 3, 4], [24], [4, -1]])
def test_reshape(shape, tmp_path):
    x = randn(2, 3, 4)
    got = run_top("Reshape", [("x", x)], {"shape": shape}, tmp_path=tmp_path)
    check(got, x.reshape(shape))


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [0, 2, 3, 1], [3, 2, 1, 0], [1, 0, 3, 2]])
def test_permute(order, tmp_path):
    x = randn(2, 3, 4, 5)
    got = run_top("Permute", [("x", x)], {"order": order}, tmp_path=tmp_path)
    check(got, run_onnx("Transpose", {"x": x}, {"perm": order}))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis, tmp_path):
    base = [2, 3, 4]
    arrays = []
    for i, extra in enumerate([1, 2, 3]):
        s = list(base)
        s[axis] = extra
        arrays.append(randn(*s))
    ops = [(f"x{i}", a) for i, a in enumerate(arrays[:2])] + [("@c", arrays[2])]
    got = run_top("Concat", ops, {"axis": axis}, tmp_path=tmp_path)
    check(got, np.concatenate(arrays, axis=axis))
    got = run_top("Concat", ops, {"axis": axis, "do_relu": True}, tmp_path=tmp_path)
    check(got, np.maximum(np.concatenate(arrays, axis=axis), 0))


SLICE_CASES = [
    # starts, ends, axes, steps
    ([1], [3], [1], [1]),
    ([0, 1], [-1, 100], [0, -1], [1, 2]),
    ([-1], [-100], [2], [-1]),                       # full reverse
    ([4, -2], [0, -6], [2, 1], [-2, -1]),
    ([-100, 2], [100, 2], [0, 1], [1, 1]),          # clamped; empty axis
    ([5], [1], [-1], [-3]),
    ([2], [1], [0], [1]),                           # start past end: empty
]


@pytest.mark.parametrize("starts,ends,axes,steps", SLICE_CASES)
def test_slice(starts, ends, axes, steps, tmp_path):
    x = randn(3, 4, 6)
    got = run_top("Slice", [("x", x)], {"starts": starts, "ends": ends, "axes": axes,
                                        "steps": steps}, tmp_path=tmp_path)
    i64 = lambda v: np.array(v, np.int64)
    ref = run_onnx("Slice", {"x": x, "#s": i64(starts), "#e": i64(ends),
                             "#a": i64(axes), "#t": i64(steps)})
    check(got, ref)


@pytest.mark.parametrize("axis,idx", [(0, [2, -1, 0]), (1, [[0, 3], [-4, 1]]),
                                      (-1, 4), (2, [[-1]])])
def test_gather(axis, idx, tmp_path):
    x = randn(3, 4, 5)
    idx = np.array(idx, np.int64)
    # A scalar index drops the axis; it comes from a weight here.
    name = "@i" if idx.ndim == 0 else "i"
    got = run_top("Gather", [("x", x), (name, idx.astype(np.float32))], {"axis": axis},
                  tmp_path=tmp_path)
    check(got, run_onnx("Gather", {"x": x, "i": idx}, {"axis": axis}))


def test_gather_out_of_range_is_an_error(tmp_path):
    x = randn(3, 4)
    for bad in [3.0, -4.0, 1.5]:
        with pytest.raises(compiler.CompileError, match="is not an integer in"):
            run_top("Gather", [("x", x), ("i", np.array([0, bad], np.float32))],
                    {"axis": 0}, tmp_path=tmp_path)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("pads", [[0, 1, 2, 0, 2, 1], [1, 0, 0, 1, 2, 3]])
def test_pad(mode, pads, tmp_path):
    x = randn(2, 3, 4)
    got = run_top("Pad", [("x", x)], {"pads": pads, "mode": mode, "value": 1.5},
                  tmp_path=tmp_path)
    inputs = {"x": x, "#p": np.array(pads, np.int64)}
    if mode == "constant":
        inputs["#v"] = np.float32(1.5)
    check(got, run_onnx("Pad", inputs, {"mode": mode}))


@pytest.mark.parametrize("sh,sw", [(2, 2), (1, 3), (3, 1)])
def test_upsample(sh, sw, tmp_path):
    x = randn(2, 3, 4, 5)
    got = run_top("Upsample", [("x", x)], {"scale_h": sh, "scale_w": sw},
                  tmp_path=tmp_path)
    ref = run_onnx("Resize", {"x": x, "#roi": None, "#scales": np.array(
        [1, 1, sh, sw], np.float32)}, {"mode": "nearest"})
    check(got, ref)
    check(got, x.repeat(sh, axis=2).repeat(sw, axis=3))


# --------------------------------------------------------------------------
# Canonicalization keeps the numbers
# --------------------------------------------------------------------------

CHAIN = """
module attributes {top.weight_file = "WFILE"} {
func.func @main(%arg0: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %n = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<4x6xf32> loc("w")
  %0 = "top.Reshape"(%x) {shape = [6, 4]} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("r0")
  %1 = "top.Reshape"(%0) {shape = [3, 2, 4]} : (tensor<*xf32>) -> tensor<*xf32> loc("r1")
  %2 = "top.Permute"(%1) {order = [1, 0, 2]} : (tensor<*xf32>) -> tensor<*xf32> loc("p0")
  %3 = "top.Permute"(%2) {order = [2, 0, 1]} : (tensor<*xf32>) -> tensor<*xf32> loc("p1")
  %4 = "top.Permute"(%3) {order = [1, 2, 0]} : (tensor<*xf32>) -> tensor<*xf32> loc("p2")
  %5 = "top.MatMul"(%4, %w, %n) : (tensor<*xf32>, tensor<4x6xf32>, none) -> tensor<*xf32> loc("mm")
  %6 = "top.Relu"(%5) : (tensor<*xf32>) -> tensor<*xf32> loc("mm_relu")
  %7 = "top.Slice"(%6) {starts = [0], ends = [100], axes = [-1], steps = [1]} : (tensor<*xf32>) -> tensor<*xf32> loc("s")
  %8 = "top.Pad"(%7) {pads = [0, 0, 0, 0, 0, 0]} : (tensor<*xf32>) -> tensor<*xf32> loc("pad")
  %9 = "top.Add"(%8, %8) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("add")
  %10 = "top.Relu"(%9) : (tensor<*xf32>) -> tensor<*xf32> loc("out")
  return %10 : tensor<*xf32>
}
}
"""


def test_canonicalize_preserves_results(tmp_path):
    wfile = tmp_path / "w.npz"
    w = randn(4, 6)
    np.savez(wfile, w=w)
    x = randn(2, 3, 4)
    results = {}
    for pipeline in ["top-shape-infer", "top-shape-infer,canonicalize"]:
        ctx = compiler.make_context()
        module = compiler.parse_module(CHAIN.replace("WFILE", str(wfile)), ctx)
        compiler.run_pipeline(module, pipeline)
        results[pipeline] = (compiler.interpret(module, {"x": x}),
                             compiler.module_text(module))
    (plain, _), (canon, text) = results.values()
    check(canon["out"], plain["out"])
    xr = x.reshape(3, 2, 4).transpose(1, 0, 2)
    check(plain["out"], 2 * np.maximum(xr @ w, 0), ACC_TOL)
    body = text.split("func.func")[1]
    for gone in ["top.Slice", "top.Pad", "top.Relu"]:
        assert gone not in body, gone
    assert body.count("top.Reshape") == 1 and body.count("top.Permute") == 1
    assert 'loc("mm_relu")' in text or "mm_relu" in text
