"""Layer groups (tpu-layer-group + grouped tpu-codegen): the cmodel matches
the Tpu interpreter on every stored tensor (INT8 ones bit for bit), only
stored tensors are named, and groups hold whole tensors when they fit local
memory, slices of rows when they do not."""
import re
from pathlib import Path

import numpy as np
import pytest

from tpuc import compiler
from tpuc import runtime as rt
from tpuc.testing.groups import group_slices, grouped_lines, layer_groups

from backendutil import CHIPS, MIN_COSINE, REL_TOL, Net
from test_codegen_int8 import (dequant, q8, q8_channels, qconv, qmatmul, quant_input,
                               quantize_multiplier)
from test_codegen_ops import conv

LANE_BYTES = {"tpu_edge": 65536, "tpu_pro": 262144}
LANES = {"tpu_edge": 16, "tpu_pro": 64}


def run(net: Net, outputs, chip: str, tmp: Path, layer_group: bool = True,
        rel_tol: float = REL_TOL):
    tmp = Path(tmp)
    wfile = tmp / "weights.npz"
    np.savez(wfile, **net.weights)
    with compiler.make_context() as ctx:
        m = compiler.parse_module(net.text(outputs, str(wfile)), ctx)
        inputs = {n: a for n, a in net.args}
        ref = compiler.interpret(m, inputs, all_tensors=True)
        bm = tmp / f"net_{chip}_{layer_group}.bmodel"
        group = f"tpu-layer-group{{chip={chip}}}," if layer_group else ""
        compiler.run_pipeline(m, f"{group}tpu-assign-address{{chip={chip}}},"
                                 f"tpu-codegen{{chip={chip} bmodel={bm}}}")
        text = str(m)
        # The interpreter runs a tpu.Group's body: every member's tensor is
        # computed as before grouping (a group sits where its last member
        # was, so the order of the tensors may differ).
        again = compiler.interpret(m, inputs, all_tensors=True)
        assert sorted(again) == sorted(ref)
        for name in ref:
            np.testing.assert_array_equal(again[name], ref[name], err_msg=name)
    r = rt.Model(bm).run(inputs, dump_all_tensors=True)
    got = {**r.tensors, **r.outputs}
    for name, g in got.items():
        ref_v = ref[name].astype(np.float64).ravel()
        g = g.astype(np.float64).ravel()
        if np.issubdtype(ref[name].dtype, np.integer):
            bad = np.flatnonzero(ref_v != g)
            assert bad.size == 0, f"{name} on {chip}: {bad.size} of {g.size} INT8 values differ"
            continue
        diff = np.abs(g - ref_v).max()
        assert diff <= rel_tol * max(1.0, np.abs(ref_v).max()), f"{name} on {chip}"
        cos = ref_v @ g / (np.linalg.norm(ref_v) * np.linalg.norm(g))
        assert cos >= MIN_COSINE, f"{name}: cosine {cos} on {chip}"
    return text, r, set(r.tensors)


def block_net(rng, shape=(1, 8, 16, 16)):
    """conv -> depthwise conv (relu6) -> maxpool -> residual-free add / mul by
    a per-channel weight -> avgpool; the middle result is also returned."""
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    c0, s0 = conv(net, x, shape, 16, (1, 1), rng=rng, name="c0")
    c1, s1 = conv(net, c0, s0, 16, (3, 3), pads=(1, 1, 1, 1), group=16, relu=True,
                  limit=6.0, rng=rng, name="c1")
    c2, s2 = conv(net, c1, s1, 16, (3, 3), stride=(2, 2), pads=(1, 1, 1, 1), rng=rng,
                  name="c2")
    p = net.op("tpu.MaxPool", [c1], s2, "kernel_shape = [3, 3], strides = [2, 2], "
               "pads = [1, 1, 1, 1]", "p")
    a = net.op("tpu.Add", [c2, p], s2, "do_relu = true", "a")
    w = net.weight("scale", rng.standard_normal((1, 16, 1, 1)))
    m = net.op("tpu.Mul", [a, w], s2, "", "m")
    act = net.op("tpu.Active", [m], s2, 'mode = "pow", exponent = 3.0 : f64', "act")
    q = net.op("tpu.AvgPool", [act], (s2[0], 16, s2[2] // 2, s2[3] // 2),
               "kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]", "q")
    return net, [q, c1]


@pytest.mark.parametrize("chip", CHIPS)
def test_block_grouped_matches_and_stores_less(chip, tmp_path):
    net, outs = block_net(np.random.default_rng(0))
    text, grouped, named = run(net, outs, chip, tmp_path)
    assert len(layer_groups(text)[0]) == 8, text
    # Only results used outside the group (here the returned ones) are named.
    assert named <= {"q", "c1"}
    _, plain, all_named = run(net, outs, chip, tmp_path, layer_group=False)
    assert {"c0", "c2", "p", "a", "m", "act"} <= all_named
    assert grouped.stats.gdma_bytes < plain.stats.gdma_bytes
    assert grouped.stats.total_cycles < plain.stats.total_cycles


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("extra", [0, 1])
def test_exact_fit(chip, extra, tmp_path):
    """Two F32 tensors of half a lane each fit exactly (the sum is written
    over its dying operand `a`); one more element per row does not, and the
    group runs sliced along H."""
    lanes, lane = LANES[chip], LANE_BYTES[chip]
    h = 16
    w = lane // 2 // 4 // h + extra
    rng = np.random.default_rng(1)
    net = Net()
    x = net.input("x", rng.standard_normal((1, lanes, h, w)))
    a = net.op("tpu.Active", [x], (1, lanes, h, w), 'mode = "abs"', "a")
    b = net.op("tpu.Add", [a, x], (1, lanes, h, w), "", "b")
    text, _, named = run(net, [b], chip, tmp_path)
    assert len(layer_groups(text)) == 1, text
    assert (group_slices(text)[0] > 1) == (extra == 1), text
    assert "a" not in named


@pytest.mark.parametrize("chip", CHIPS)
def test_results_over_dying_operands(chip, tmp_path):
    """An activation, a folded BatchNorm (1x1 depthwise conv) and another
    activation on a tensor of more than half a lane: each writes its result
    over its operand, which dies there, so the group holds one tensor and
    runs whole; the cmodel matches the interpreter."""
    lanes, lane = LANES[chip], LANE_BYTES[chip]
    h = 16
    w = lane // 4 // h * 3 // 4
    shape = (1, lanes, h, w)
    rng = np.random.default_rng(2)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    e = net.op("tpu.Active", [x], shape, 'mode = "exp"', "e")
    bn, _ = conv(net, e, shape, lanes, (1, 1), group=lanes, rng=rng, name="bn")
    y = net.op("tpu.Active", [bn], shape, 'mode = "sigmoid"', "y")
    text, _, named = run(net, [y], chip, tmp_path)
    assert len(layer_groups(text)) == 1 and len(layer_groups(text)[0]) == 3, text
    assert group_slices(text) == [1], text
    assert named == {"y"}


@pytest.mark.parametrize("chip", CHIPS)
def test_sliced_block_matches(chip, tmp_path):
    """The conv block on 128x128 maps (a whole lane per tensor on tpu_edge)
    runs sliced along H: strided and padded windows (the pool's halo rows
    recomputed by neighbouring slices), a result stored while the group
    goes on, all equal to the interpreter's."""
    net, outs = block_net(np.random.default_rng(4), shape=(1, 8, 128, 128))
    text, grouped, named = run(net, outs, chip, tmp_path)
    if chip == "tpu_edge":
        assert max(group_slices(text)) > 1, text
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False)
    assert grouped.stats.gdma_bytes < plain.stats.gdma_bytes


def _run_int8_pool_block(chip, tmp_path, shape, seed):
    """INT8 3x3 conv, 3x3/2 max pool and 1x1 conv on `shape`, compiled and
    checked bit-exact by `run`: (Tpu IR text, names the bmodel dumps)."""
    rng = np.random.default_rng(seed)
    net = Net()
    x, xs = quant_input(net, "x", shape, rng, 0.03)
    y, s, ys = qconv(net, x, xs, shape, shape[1], (3, 3), rng, "c0", pads=(1, 1, 1, 1),
                     relu=True)
    ps = (s[0], s[1], (s[2] + 1) // 2, (s[3] + 1) // 2)
    p = net.op("tpu.MaxPool", [y], ps, "kernel_shape = [3, 3], strides = [2, 2], "
               "pads = [1, 1, 1, 1]", "p", elem=q8(*ys))
    z, zs, _ = qconv(net, p, ys, ps, 16, (1, 1), rng, "c1", out=(0.2, 0))
    text, _, named = run(net, [dequant(net, z, zs, "out")], chip, tmp_path)
    return text, named


@pytest.mark.parametrize("chip", CHIPS)
def test_sliced_int8_bit_exact(chip, tmp_path):
    """INT8 convolutions (3x3 padded, 1x1) around a 3x3/2 max pool on maps
    larger than local memory run sliced along H, bit-exact to the Tpu
    interpreter."""
    text, named = _run_int8_pool_block(chip, tmp_path, (1, 32, 96, 96), seed=5)
    if chip == "tpu_edge":
        assert max(group_slices(text)) > 1, text
        assert "c0" not in named and "p" not in named


@pytest.mark.parametrize("chip", CHIPS)
def test_batch_sliced_block_matches(chip, tmp_path):
    """The conv block on a batch of 4 whose maps do not fit local memory
    together runs as a loop over slices of the batch (no halo), the middle
    result stored per slice, all equal to the interpreter's."""
    net, outs = block_net(np.random.default_rng(6), shape=(4, 8, 48, 48))
    text, grouped, named = run(net, outs, chip, tmp_path)
    assert max(group_slices(text, "n")) > 1, text
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False)
    assert grouped.stats.gdma_bytes < plain.stats.gdma_bytes
    assert grouped.stats.total_cycles < plain.stats.total_cycles


@pytest.mark.parametrize("chip", CHIPS)
def test_batch_sliced_int8_bit_exact(chip, tmp_path):
    """INT8 convolutions and a max pool on a batch of 8 run sliced along N
    (and along H where one image's maps do not fit), bit-exact to the Tpu
    interpreter."""
    text, named = _run_int8_pool_block(chip, tmp_path, (8, 32, 64, 64), seed=7)
    assert max(group_slices(text, "n")) > 1, text
    assert "c0" not in named and "p" not in named


@pytest.mark.parametrize("chip", CHIPS)
def test_group_input_used_outside_and_broadcast(chip, tmp_path):
    """A group result consumed after an unsupported op is stored; the group
    reads an input twice and broadcasts a [C,1,1] activation and weight."""
    rng = np.random.default_rng(2)
    net = Net()
    shape = (2, 24, 6, 5)
    x = net.input("x", rng.standard_normal(shape))
    s = net.input("s", rng.standard_normal((24, 1, 1)))
    a = net.op("tpu.Sub", [x, s], shape, "", "a")
    b = net.op("tpu.Max", [a, x], shape, "", "b")
    bias = net.weight("bias", rng.standard_normal((24, 1, 1)))
    c = net.op("tpu.Min", [b, bias], shape, "", "c")
    r = net.op("tpu.Reshape", [c], (2, 24, 30), "", "r")
    red = net.op("tpu.Reduce", [r], (2, 1, 30), 'mode = "sum", axes = [1], keepdims = true',
                 "red")
    d = net.op("tpu.Active", [b], shape, 'mode = "tanh"', "d")
    text, _, named = run(net, [red, d], chip, tmp_path)
    assert layer_groups(text), text
    assert "b" in named and "c" in named and "a" not in named


def gelu_net(rng, shape):
    """Bias add and exact GELU as BERT exports it: Div, Erf, Add, Mul, Mul
    on a 2-D/3-D tensor with row-broadcast and scalar weights."""
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    b = net.weight("b", rng.standard_normal(shape[-1:]))
    y = net.op("tpu.Add", [b, x], shape, "", "y")
    d = net.op("tpu.Div", [y, net.weight("s", [np.sqrt(2.0)])], shape, "", "d")
    e = net.op("tpu.Active", [d], shape, 'mode = "erf"', "e")
    a = net.op("tpu.Add", [e, net.weight("one", [1.0])], shape, "", "a")
    m = net.op("tpu.Mul", [y, a], shape, "", "m")
    o = net.op("tpu.Mul", [m, net.weight("h", [0.5])], shape, "", "o")
    return net, [o]


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("shape", [(1, 32, 256), (7, 33)])
def test_gelu_rows_group(chip, shape, tmp_path):
    """Elementwise chains on tensors that are not NCHW form one group (rows
    spread over the lanes, any row count) and match the interpreter."""
    net, outs = gelu_net(np.random.default_rng(3), shape)
    text, grouped, named = run(net, outs, chip, tmp_path)
    assert len(layer_groups(text)[0]) == 6, text
    assert named <= {"o"}
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False)
    assert grouped.stats.gdma_bytes < plain.stats.gdma_bytes
    assert grouped.stats.total_cycles < plain.stats.total_cycles


@pytest.mark.parametrize("chip", CHIPS)
def test_gelu_rows_group_chunked(chip, tmp_path):
    """Rows groups too big for local memory run as a loop over chunks of
    rows (the last one partial) and still match the interpreter."""
    rows = 29  # prime: the last chunk is partial; 116 KiB per lane per tensor
    shape = (LANES[chip] * rows, 1024)
    net, outs = gelu_net(np.random.default_rng(4), shape)
    text, grouped, _ = run(net, outs, chip, tmp_path)
    assert len(layer_groups(text)[0]) == 6, text
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False)
    assert grouped.stats.gdma_bytes < plain.stats.gdma_bytes
    assert grouped.stats.total_cycles < plain.stats.total_cycles


@pytest.mark.parametrize("chip", CHIPS)
def test_cast_rows_group(chip, tmp_path):
    """Casts (an attention mask's bool casts, one through a reshape) join a
    rows group with the ops after them, and match the interpreter."""
    rng = np.random.default_rng(6)
    net = Net()
    x = net.input("x", np.concatenate([rng.standard_normal((4, 30)) * 300,
                                       [[0.0, -0.0]] * 4], axis=1))
    outs = []
    for to in ("f32", "f16", "bf16", "i8", "ui8", "bool"):
        c = net.op("tpu.Cast", [x], (4, 32), f'to = "{to}"', f"c_{to}")
        outs.append(net.op("tpu.Mul", [c, net.weight(f"h_{to}", [0.5])], (4, 32), "",
                           f"m_{to}"))
    b = net.op("tpu.Cast", [x], (4, 32), 'to = "bool"', "b")
    r = net.op("tpu.Reshape", [b], (4, 1, 1, 32), "", "r")
    b2 = net.op("tpu.Cast", [r], (4, 1, 1, 32), 'to = "bool"', "b2")
    outs.append(net.op("tpu.Mul", [b2, net.weight("h", [2.0])], (4, 1, 1, 32), "", "m"))
    text, _, named = run(net, outs, chip, tmp_path)
    assert [len(g) for g in layer_groups(text)] == [16], text
    assert not named & {"c_bool", "b", "b2"}


@pytest.mark.parametrize("chip", CHIPS)
def test_embedding_gather_group(chip, tmp_path):
    """An embedding lookup by the model's token ids (negative ones count
    from the end) joins the group of the layer after it: the group gathers
    the table's rows straight into local memory, so the looked-up rows
    never reach DDR."""
    rng = np.random.default_rng(7)
    net = Net()
    ids = net.input("ids", rng.integers(-50, 50, (2, 8)).astype(np.float64))
    table = net.weight("table", rng.standard_normal((50, 32)))
    e = net.op("tpu.Gather", [table, ids], (2, 8, 32), "axis = 0 : i64", "e")
    pos = net.weight("pos", rng.standard_normal((1, 8, 32)))
    a = net.op("tpu.Add", [e, pos], (2, 8, 32), "", "a")
    g = net.weight("g", 1 + 0.1 * rng.standard_normal(32))
    b = net.weight("b", 0.1 * rng.standard_normal(32))
    n = net.op("tpu.LayerNorm", [a, g, b], (2, 8, 32),
               "axis = 2 : i64, epsilon = 1.0e-5 : f64", "n")
    w = net.weight("w", rng.standard_normal((32, 32)) / 6)
    m = net.op("tpu.MatMul", [n, w, net.none()], (2, 8, 32), "", "m")
    text, grouped, named = run(net, [m], chip, tmp_path)
    assert [len(g) for g in layer_groups(text)] == [4], text
    assert named == {"m"}
    _, plain, _ = run(net, [m], chip, tmp_path, layer_group=False)
    assert grouped.stats.total_cycles < plain.stats.total_cycles


def add_norm_net(rng, shape, elem="f32"):
    """Residual add then LayerNorm along the last axis (a transformer
    layer's epilogue), in one float dtype."""
    net = Net()
    d = shape[-1]
    x = net.input("x", rng.standard_normal(shape))
    r = net.input("r", rng.standard_normal(shape))
    if elem != "f32":
        x = net.op("tpu.QuantCast", [x], shape, "", "x_h", elem=elem)
        r = net.op("tpu.QuantCast", [r], shape, "", "r_h", elem=elem)
    wt = {"f32": np.float32, "f16": np.float16}[elem]
    g = net.weight("g", (1 + 0.1 * rng.standard_normal(d)).astype(wt), elem)
    b = net.weight("b", (0.1 * rng.standard_normal(d)).astype(wt), elem)
    a = net.op("tpu.Add", [x, r], shape, "", "a", elem=elem)
    n = net.op("tpu.LayerNorm", [a, g, b], shape,
               f"axis = {len(shape) - 1} : i64, epsilon = 1.0e-5 : f64", "n", elem=elem)
    return net, [n]


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("elem", ["f32", "f16"])
def test_add_layernorm_rows_group(chip, elem, tmp_path):
    """A residual add and the LayerNorm after it group in the rows view
    (chunked on tpu_edge: the whole tensors do not fit) and match the
    interpreter (F16: within an F16 rounding, as the tiled LayerNorm);
    the sum never reaches DDR."""
    net, outs = add_norm_net(np.random.default_rng(5), (1, 128, 768), elem)
    tol = REL_TOL if elem == "f32" else 2 ** -9
    text, grouped, named = run(net, outs, chip, tmp_path, rel_tol=tol)
    assert "a" not in named and "n" in named
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False, rel_tol=tol)
    assert grouped.stats.gdma_bytes < plain.stats.gdma_bytes
    assert grouped.stats.total_cycles < plain.stats.total_cycles


def int8_island_net(rng, shape, kind):
    """INT8 tensors through an F16 island between QuantCasts: a residual
    add (INT8) then LayerNorm, or Softmax along the last axis with a
    divisor; the island's result is quantized again."""
    net = Net()
    x, xs = quant_input(net, "x", shape, rng, 0.03)
    d = shape[-1]
    if kind == "layernorm":
        r, _ = quant_input(net, "r", shape, rng, 0.04)
        x = net.op("tpu.Add", [x, r], shape, "", "a", elem=q8(0.05))
        h = dequant(net, x, shape, "a_h", elem="f16")
        g = net.weight("g", (1 + 0.1 * rng.standard_normal(d)).astype(np.float16), "f16")
        b = net.weight("b", (0.1 * rng.standard_normal(d)).astype(np.float16), "f16")
        y = net.op("tpu.LayerNorm", [h, g, b], shape,
                   f"axis = {len(shape) - 1} : i64, epsilon = 1.0e-5 : f64", "n", elem="f16")
        out = (0.03, 0)
    else:
        h = dequant(net, x, shape, "x_h", elem="f16")
        y = net.op("tpu.Softmax", [h], shape,
                   f"axis = {len(shape) - 1} : i64, divisor = 8.0 : f64", "s", elem="f16")
        out = (1 / 127, 0)
    q = net.op("tpu.QuantCast", [y], shape, "", "q", elem=q8(*out))
    return net, [dequant(net, q, shape, "o")]


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("kind,shape", [("layernorm", (1, 128, 768)),
                                        ("softmax", (1, 12, 128, 128)),
                                        ("softmax", (1, 4, 12, 12))])
def test_int8_float_island_group_bit_exact(chip, kind, shape, tmp_path):
    """The QuantCasts around an F16 LayerNorm or Softmax, and an INT8 add
    before it, join one rows-view group. After Softmax the INT8 result
    equals the Tpu interpreter's bit for bit; the F16 LayerNorm (grouped
    or tiled alike) can differ from the interpreter's by an F16 rounding,
    which may move a quantized value by one step."""
    net, outs = int8_island_net(np.random.default_rng(6), shape, kind)
    if kind == "layernorm":
        text, _, named = run(net, outs, chip, tmp_path, rel_tol=0.01)
        assert {"a", "a_h", "n", "q"}.isdisjoint(named), named
        return
    text, grouped, named = run(net, outs, chip, tmp_path)
    for op in ("tpu.LayerNorm", "tpu.Softmax"):
        for line in text.splitlines():
            if f'"{op}"' in line:
                assert line.strip() in grouped_lines(text), line
    assert {"a_h", "x_h", "n", "s"}.isdisjoint(named)
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False)
    assert grouped.stats.total_cycles < plain.stats.total_cycles


def f16_attention_net(rng, heads=4, tokens=12, dim=16):
    """Scores, softmax (with the 1/sqrt(d) divisor) and the weighted sum of
    values of attention, then a projection with a bias, in F16."""
    net = Net()
    shapes = {"q": (1, heads, tokens, dim), "k": (1, heads, dim, tokens),
              "v": (1, heads, tokens, dim)}
    ins = {}
    for n, s in shapes.items():
        x = net.input(n, rng.standard_normal(s))
        ins[n] = net.op("tpu.QuantCast", [x], s, "", f"{n}_h", elem="f16")
    none = net.none()
    sc = net.op("tpu.MatMul", [ins["q"], ins["k"], none], (1, heads, tokens, tokens), "",
                "s", elem="f16")
    p = net.op("tpu.Softmax", [sc], (1, heads, tokens, tokens),
               f"axis = 3 : i64, divisor = {float(dim) ** 0.5!r} : f64", "p", elem="f16")
    o = net.op("tpu.MatMul", [p, ins["v"], none], shapes["v"], "", "o", elem="f16")
    w = net.weight("w", (0.2 * rng.standard_normal((dim, dim))).astype(np.float16), "f16")
    b = net.weight("b", (0.1 * rng.standard_normal(dim)).astype(np.float16), "f16")
    y = net.op("tpu.MatMul", [o, w, b], shapes["v"], "", "y", elem="f16")
    return net, [y]


@pytest.mark.parametrize("chip", CHIPS)
def test_f16_attention_group(chip, tmp_path):
    """F16 matmuls join groups with the softmax between them: one
    instruction sums all of K, so each result rounds once to F16, within an
    F16 rounding of the interpreter; the scores never reach DDR."""
    net, outs = f16_attention_net(np.random.default_rng(7))
    text, grouped, named = run(net, outs, chip, tmp_path, rel_tol=2 ** -9)
    grouped_ops = grouped_lines(text)
    for line in text.splitlines():
        if '"tpu.MatMul"' in line or '"tpu.Softmax"' in line:
            assert line.strip() in grouped_ops, line
    assert {"s", "p", "o"}.isdisjoint(named)
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False, rel_tol=2 ** -9)
    assert grouped.stats.total_cycles < plain.stats.total_cycles


def int8_attention_net(rng, heads=4, tokens=12, dim=16):
    """INT8 scores (activations on both sides), the F16 softmax island
    between QuantCasts, the INT8 weighted sum of values, then an INT8
    projection by a weight with a bias and a relu."""
    net = Net()
    q, qs = quant_input(net, "q", (1, heads, tokens, dim), rng, 0.04)
    k, ks = quant_input(net, "k", (1, heads, dim, tokens), rng, 0.05)
    v, vs = quant_input(net, "v", (1, heads, tokens, dim), rng, 0.03)
    ss = (1, heads, tokens, tokens)
    sc = qmatmul(net, q, qs, k, ks[0], ss, rng, "s", (0.2, 0), bias=False)
    h = dequant(net, sc, ss, "s_h", elem="f16")
    p = net.op("tpu.Softmax", [h], ss, "axis = 3 : i64, divisor = 4.0 : f64", "p", elem="f16")
    pq = net.op("tpu.QuantCast", [p], ss, "", "p_q", elem=q8(1 / 127))
    os_ = (1, heads, tokens, dim)
    o = qmatmul(net, pq, (1 / 127, 0), v, vs[0], os_, rng, "o", (0.05, 0), bias=False)
    w = net.weight("w", rng.integers(-127, 128, (dim, dim), dtype=np.int8), q8(0.01))
    y = qmatmul(net, o, (0.05, 0), w, 0.01, os_, rng, "y", (0.1, -3), relu=True)
    return net, [dequant(net, y, os_, "out")]


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_attention_group_bit_exact(chip, tmp_path):
    """INT8 matmuls (INT32 accumulator, bias, relu, per-tensor requant)
    join a group with the softmax island between them; every INT8 value
    equals the Tpu interpreter's, and the scores never reach DDR."""
    net, outs = int8_attention_net(np.random.default_rng(8))
    text, grouped, named = run(net, outs, chip, tmp_path)
    grouped_ops = grouped_lines(text)
    for line in text.splitlines():
        if '"tpu.MatMul"' in line or '"tpu.Softmax"' in line:
            assert line.strip() in grouped_ops, line
    assert {"s", "s_h", "p", "p_q", "o"}.isdisjoint(named)
    _, plain, _ = run(net, outs, chip, tmp_path, layer_group=False)
    assert grouped.stats.total_cycles < plain.stats.total_cycles


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_lut_rows_group_bit_exact(chip, tmp_path):
    """An INT8 add and a table lookup (an INT8 GELU) group in the rows view
    with the table held for every lane; bit-exact with the interpreter."""
    rng = np.random.default_rng(9)
    shape = (1, 24, 96)
    net = Net()
    x, _ = quant_input(net, "x", shape, rng, 0.03)
    r, _ = quant_input(net, "r", shape, rng, 0.04)
    a = net.op("tpu.Add", [x, r], shape, "", "a", elem=q8(0.05))
    t = net.weight("t", rng.integers(-128, 128, 256, dtype=np.int8), "i8")
    y = net.op("tpu.Lut", [a, t], shape, "", "y", elem=q8(0.02))
    text, grouped, named = run(net, [dequant(net, y, shape, "o")], chip, tmp_path)
    grouped_ops = grouped_lines(text)
    for line in text.splitlines():
        if '"tpu.Lut"' in line or '"tpu.Add"' in line:
            assert line.strip() in grouped_ops, line
    assert "a" not in named


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_channel_mean_group_bit_exact(chip, tmp_path):
    """An INT8 1x1 conv to one channel with equal weights (the mean of an
    INT8 LayerNorm over C) in a group sums across the lanes instead of
    running as a conv on one lane where the timing model makes that cheaper
    (tpu_pro here, not tpu_edge): bit-exact
    with the interpreter, and never more TIU cycles than the same conv with
    one weight changed."""
    def build(weights):
        rng = np.random.default_rng(11)
        shape = (1, 32, 24, 24)
        net = Net()
        x, xs = quant_input(net, "x", shape, rng, 0.03)
        y, s, ys = qconv(net, x, xs, shape, 32, (3, 3), rng, "c0", pads=(1, 1, 1, 1))
        w = net.weight("mean_w", weights.reshape(1, 32, 1, 1), q8_channels([0.0002]))
        b = net.weight("mean_b", np.array([-1234], np.int32), "i32")
        qt = net.weight("mean_q", np.array([quantize_multiplier(ys[0] * 0.0002 / 0.01)],
                                           np.int32), "i32")
        one = (1, 1, 24, 24)
        attrs = ("kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], "
                 "dilations = [1, 1], group = 1 : i64, do_relu = false")
        mean = net.op("tpu.Conv", [y, w, b, qt], one, attrs, "mean", elem=q8(0.01, 2))
        return run(net, [dequant(net, mean, one, "o")], chip, tmp_path)
    equal = np.full(32, 127, np.int8)
    text, r, named = build(equal)
    assert '"tpu.Conv"' in "".join(grouped_lines(text)), text
    other = equal.copy()
    other[5] = 126
    _, r_conv, _ = build(other)
    assert r.stats.tiu_cycles <= r_conv.stats.tiu_cycles
    if chip == "tpu_pro":
        assert r.stats.tiu_cycles < r_conv.stats.tiu_cycles


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_channel_scale_group_bit_exact(chip, tmp_path):
    """INT8 Mul and Add by per-channel weights ([C, 1, 1] first, a layer
    scale, and [1, C, 1, 1] with a zero point, a shift) after a conv join
    its group: each operand's rescale broadcasts it over the INT32 scratch.
    Bit-exact with the interpreter; the conv's result never reaches DDR."""
    rng = np.random.default_rng(10)
    shape = (1, 24, 32, 32)
    net = Net()
    x, xs = quant_input(net, "x", shape, rng, 0.03)
    y, s, ys = qconv(net, x, xs, shape, 24, (3, 3), rng, "c0", pads=(1, 1, 1, 1))
    g = net.weight("g", rng.integers(-127, 128, (24, 1, 1), dtype=np.int8), q8(0.01))
    m = net.op("tpu.Mul", [g, y], s, "", "m", elem=q8(0.05))
    b = net.weight("b", rng.integers(-127, 128, (1, 24, 1, 1), dtype=np.int8), q8(0.02, 5))
    a = net.op("tpu.Add", [m, b], s, "do_relu = true", "a", elem=q8(0.04, -3))
    text, grouped, named = run(net, [dequant(net, a, s, "o")], chip, tmp_path)
    grouped_ops = grouped_lines(text)
    for line in text.splitlines():
        if '"tpu.Mul"' in line or '"tpu.Add"' in line:
            assert line.strip() in grouped_ops, line
    assert "c0" not in named and "m" not in named


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("hw", [16, 128])
def test_channel_mean_conv_group(chip, hw, tmp_path):
    """A 1x1 conv to one channel with equal weights (LayerNorm over C as
    channel-first ops) in a group, whole or sliced along H, is a reduce
    across the lanes and scalar ops (not a conv on one lane), equal to the
    interpreter's conv; other weights stay a conv. (Priced as such, the
    mean may leave `other` to a group of its own.)"""
    rng = np.random.default_rng(7)
    c = 24
    net = Net()
    shape = (1, c, hw, hw)
    x = net.input("x", rng.standard_normal(shape))
    y, s = conv(net, x, shape, c, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c0")
    one = (1, 1, hw, hw)
    attrs = ("kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], "
             "dilations = [1, 1], group = 1 : i64, do_relu = {}")
    mw = net.weight("mean_w", np.full((1, c, 1, 1), 1.0 / c))
    mb = net.weight("mean_b", np.array([0.25]))
    mean = net.op("tpu.Conv", [y, mw, mb], one, attrs.format("true"), "mean")
    ow = net.weight("other_w", rng.standard_normal((1, c, 1, 1)))
    other = net.op("tpu.Conv", [y, ow, net.none()], one, attrs.format("false"), "other")
    out = net.op("tpu.Add", [mean, other], one, "", "out")
    text, r, _ = run(net, [out], chip, tmp_path)
    groups, slices = layer_groups(text), group_slices(text)
    assert sum(len(g) for g in groups) == 4, text
    if hw == 128 and chip == "tpu_edge":
        assert max(slices) > 1, text
    names = [rec["name"] for rec in r.stats.raw.records]
    # One reduce per slice of the mean's group; c0 and `other` stay convs.
    is_mean = lambda line: "do_relu = true" in line and "tpu.Conv" in line
    assert names.count("reduce.sum") == sum(
        n for g, n in zip(groups, slices) if any(map(is_mean, g)))
    assert names.count("conv") == sum(
        n * sum("tpu.Conv" in line and not is_mean(line) for line in g)
        for g, n in zip(groups, slices))


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("parts", [2, 4])
@pytest.mark.parametrize("hw", [16, 96])
def test_narrow_conv_spreads_over_idle_lanes(chip, parts, hw, tmp_path):
    """A 3x3 F32 conv to a fraction 1/parts of the lanes' channels (DenseNet's
    growth convs on tpu_pro) in a group, whole or sliced along H, computes
    on all the lanes: a grouped conv of partial sums over parts of the
    input channels (its filter rows moved to the idle lanes once), added
    either by LMEM moves of their upper half onto the lower lanes and an add
    per halving, then the bias and relu (tpu_pro), or, where those moves
    would queue behind the next slice's loads (tpu_edge's slow DDR), by a
    1x1 conv with the bias and relu. Equal to the interpreter's conv, in
    much less TIU time than one pass over all input channels."""
    lanes = LANES[chip]
    oc, ic = lanes // parts, 4 * lanes
    rng = np.random.default_rng(8)
    net = Net()
    shape = (1, ic, hw, hw)
    x = net.input("x", rng.standard_normal(shape))
    a = net.op("tpu.Active", [x], shape, 'mode = "abs"', "a")
    y, s = conv(net, a, shape, oc, (3, 3), pads=(1, 1, 1, 1), relu=True, limit=6.0,
                rng=rng, name="c")
    text, r, _ = run(net, [y], chip, tmp_path)
    assert len(layer_groups(text)) == 1, text
    slices = max(group_slices(text))
    recs = r.stats.raw.records
    convs = [q for q in recs if q["name"] == "conv"]
    adds = [q for q in recs if q["name"] == "binary.add"]
    if chip == "tpu_pro":
        assert len(convs) == slices
        halvings = parts.bit_length() - 1
        assert len(adds) == (halvings + 1) * slices  # the halvings, the bias
    else:
        assert len(convs) == 2 * slices
        adds = []  # the sum filter's ones, added once
    t = rt.load_target(chip)
    whole = t.tiu_issue_cycles + ic * 9 * hw * hw // t.eu_f32
    assert sum(q["end"] - q["start"] for q in convs + adds) < whole * 0.75
    # The filter rows of parts 1.. move once (LMEM to LMEM).
    assert sum(1 for q in recs if q["name"] == "dma_move" and q["work"] ==
               ic // parts * 9 * oc * 4) == parts - 1


def test_sliced_group_weights_load_while_previous_conv_computes(tmp_path):
    """A ResNet basic block on tpu_edge (F32, 128 channels of 28x28): the
    first conv runs on its own, the second with the residual add in a group
    sliced along H. The group's first input rows wait for the first conv's
    last store; the runs of its filter in LMEM the first conv's last tile
    leaves alone load before them, while that tile computes."""
    chip, shape = "tpu_edge", (1, 128, 28, 28)
    rng = np.random.default_rng(7)
    net = Net()
    x = net.input("x", rng.standard_normal(shape))
    c1, s1 = conv(net, x, shape, 128, (3, 3), pads=(1, 1, 1, 1), relu=True, rng=rng,
                  name="c1")
    c2, s2 = conv(net, c1, s1, 128, (3, 3), pads=(1, 1, 1, 1), rng=rng, name="c2")
    a = net.op("tpu.Add", [c2, x], s2, "do_relu = true", "a")
    text, r, _ = run(net, [a], chip, tmp_path)
    assert max(group_slices(text)) > 1, text

    # In order: c1's filter and bias, c1, c2's filter (its DDR addresses).
    addrs = [int(m) for m in re.findall(r'"(?:top.Weight|tpu.Conv)"[^\n]*?ddr.addr = (\d+)',
                                         text)]
    c1_out, filt = addrs[2], addrs[3]
    gdma = rt.Model(tmp_path / f"net_{chip}_True.bmodel").bmodel.networks[0].gdma
    ddr_src = [(k, i.src[0].addr) for k, i in enumerate(gdma)
               if i.src and i.src[0].space == rt.Space.DDR]
    first_filter = min(k for k, a in ddr_src if filt <= a < filt + 128 * 128 * 9 * 4)
    first_input = min(k for k, a in ddr_src if c1_out <= a < c1_out + 128 * 28 * 28 * 4)
    assert first_filter < first_input
