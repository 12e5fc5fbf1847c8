"""Layer groups (tpu-layer-group + grouped tpu-codegen): the cmodel matches
the Tpu interpreter on every stored tensor (INT8 ones bit for bit), only
stored tensors are named, and groups hold whole tensors when they fit local
memory, slices of rows when they do not."""
from pathlib import Path

import numpy as np
import pytest

from tpuc import compiler
from tpuc import runtime as rt
from tpuc.testing.groups import group_slices, layer_groups

from backendutil import CHIPS, MIN_COSINE, REL_TOL, Net
from test_codegen_int8 import dequant, q8, qconv, quant_input
from test_codegen_ops import conv

LANE_BYTES = {"tpu_edge": 65536, "tpu_pro": 262144}
LANES = {"tpu_edge": 16, "tpu_pro": 64}


def run(net: Net, outputs, chip: str, tmp: Path, layer_group: bool = True):
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
        # computed as before grouping.
        again = compiler.interpret(m, inputs, all_tensors=True)
        assert list(again) == list(ref)
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
        assert diff <= REL_TOL * max(1.0, np.abs(ref_v).max()), f"{name} on {chip}"
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
    q = net.op("tpu.AvgPool", [act], (1, 16, s2[2] // 2, s2[3] // 2),
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
    """Two F32 tensors of half a lane each fit exactly (the input's space is
    reused by the second result); one more element per row does not, and
    the group runs sliced along H."""
    lanes, lane = LANES[chip], LANE_BYTES[chip]
    h = 16
    w = lane // 2 // 4 // h + extra
    rng = np.random.default_rng(1)
    net = Net()
    x = net.input("x", rng.standard_normal((1, lanes, h, w)))
    a = net.op("tpu.Active", [x], (1, lanes, h, w), 'mode = "abs"', "a")
    b = net.op("tpu.Active", [a], (1, lanes, h, w), 'mode = "sigmoid"', "b")
    text, _, named = run(net, [b], chip, tmp_path)
    assert len(layer_groups(text)) == 1, text
    assert (group_slices(text)[0] > 1) == (extra == 1), text
    assert "a" not in named


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


@pytest.mark.parametrize("chip", CHIPS)
def test_sliced_int8_bit_exact(chip, tmp_path):
    """INT8 convolutions (3x3 padded, 1x1) around a 3x3/2 max pool on maps
    larger than local memory run sliced along H, bit-exact to the Tpu
    interpreter."""
    rng = np.random.default_rng(5)
    shape = (1, 32, 96, 96)
    net = Net()
    x, xs = quant_input(net, "x", shape, rng, 0.03)
    y, s, ys = qconv(net, x, xs, shape, shape[1], (3, 3), rng, "c0", pads=(1, 1, 1, 1),
                     relu=True)
    ps = (s[0], s[1], (s[2] + 1) // 2, (s[3] + 1) // 2)
    p = net.op("tpu.MaxPool", [y], ps, "kernel_shape = [3, 3], strides = [2, 2], "
               "pads = [1, 1, 1, 1]", "p", elem=q8(*ys))
    z, zs, _ = qconv(net, p, ys, ps, 16, (1, 1), rng, "c1", out=(0.2, 0))
    text, _, named = run(net, [dequant(net, z, zs, "out")], chip, tmp_path)
    if chip == "tpu_edge":
        assert max(group_slices(text)) > 1, text
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
