"""Transposes and reshapes inside layer groups: the multi-head split of an
attention block (copies within lanes for Q and V, a strided load for the
transpose of K, which moves elements across lanes) is one group; the
cmodel matches the Tpu interpreter and an independent numpy reference."""
import json

import numpy as np
import pytest

from tpuc.testing.groups import layer_groups

from backendutil import CHIPS, Net
from test_layer_group import run

T, D, HEADS = 12, 64, 4


def heads_net(rng, k_from_input: bool, right_transpose: bool = False):
    """Q, K, V projections, the split into heads, softmax(Q K^T) V and the
    output projection. With `k_from_input` K^T transposes a network input
    (loaded transposed from outside the group), else the K projection
    (stored by the group and loaded back transposed). With `right_transpose`
    the scores read K through the matmul's transposed right operand, as the
    Tpu canonicalization leaves them: K keeps its rows in lanes."""
    net = Net()
    x = net.input("x", rng.standard_normal((1, T, D)))
    none = net.none()
    w = {n: rng.standard_normal((D, D)) / np.sqrt(D) for n in "qkvo"}
    wv = {n: net.weight(f"w{n}", a) for n, a in w.items()}
    hd = D // HEADS

    def split(v, name):
        r = net.op("tpu.Reshape", [v], (1, T, HEADS, hd), "", f"{name}r")
        return r

    q = net.op("tpu.MatMul", [x, wv["q"], none], (1, T, D), "", "q")
    qt = net.op("tpu.Permute", [split(q, "q")], (1, HEADS, T, hd), "order = [0, 2, 1, 3]", "qt")
    if k_from_input:
        k_in = rng.standard_normal((1, T, D))
        kr = split(net.input("kin", k_in), "k")
    else:
        kr = split(net.op("tpu.MatMul", [x, wv["k"], none], (1, T, D), "", "k"), "k")
    v = net.op("tpu.MatMul", [x, wv["v"], none], (1, T, D), "", "v")
    vt = net.op("tpu.Permute", [split(v, "v")], (1, HEADS, T, hd), "order = [0, 2, 1, 3]", "vt")
    if right_transpose:
        kt = net.op("tpu.Permute", [kr], (1, HEADS, T, hd), "order = [0, 2, 1, 3]", "kt")
        s = net.op("tpu.MatMul", [qt, kt, none], (1, HEADS, T, T), "right_transpose = true", "s")
    else:
        kt = net.op("tpu.Permute", [kr], (1, HEADS, hd, T), "order = [0, 2, 3, 1]", "kt")
        s = net.op("tpu.MatMul", [qt, kt, none], (1, HEADS, T, T), "", "s")
    p = net.op("tpu.Softmax", [s], (1, HEADS, T, T), "axis = 3 : i64", "p")
    c = net.op("tpu.MatMul", [p, vt, none], (1, HEADS, T, hd), "", "c")
    ct = net.op("tpu.Permute", [c], (1, T, HEADS, hd), "order = [0, 2, 1, 3]", "ct")
    cr = net.op("tpu.Reshape", [ct], (1, T, D), "", "cr")
    o = net.op("tpu.MatMul", [cr, wv["o"], none], (1, T, D), "", "o")

    # Independent reference in float64.
    xa = net.args[0][1].astype(np.float64)
    heads = lambda a: a.reshape(T, HEADS, hd).transpose(1, 0, 2)  # noqa: E731
    qh, vh = heads(xa[0] @ w["q"]), heads(xa[0] @ w["v"])
    kh = heads(k_in[0] if k_from_input else xa[0] @ w["k"])
    sc = qh @ kh.transpose(0, 2, 1)
    e = np.exp(sc - sc.max(-1, keepdims=True))
    ctx = (e / e.sum(-1, keepdims=True)) @ vh
    ref = ctx.transpose(1, 0, 2).reshape(T, D) @ w["o"]
    return net, [o], ref[None]


@pytest.mark.parametrize("k_from_input", [False, True], ids=["k_stored", "k_input"])
@pytest.mark.parametrize("chip", CHIPS)
def test_heads_in_one_group(chip, k_from_input, tmp_path):
    net, outs, ref = heads_net(np.random.default_rng(3), k_from_input)
    text, r, stored = run(net, outs, chip, tmp_path)
    groups = layer_groups(text)
    assert len(groups) == 1, groups
    members = groups[0]
    assert sum('"tpu.Permute"' in line for line in members) == 4, members
    assert any("order = [0, 2, 3, 1]" in line for line in members), members
    # K computed in the group is stored for the transposed load, and named.
    assert ("kr" in stored) != k_from_input, stored
    np.testing.assert_allclose(r.outputs["o"], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layer_group", [True, False], ids=["grouped", "tiled"])
@pytest.mark.parametrize("chip", CHIPS)
def test_heads_right_transpose(chip, layer_group, tmp_path):
    """Grouped, K never leaves local memory (only the result is stored);
    alone, the tiled matmul reads K transposed from DDR. Both match the
    interpreter (in run) and numpy."""
    net, outs, ref = heads_net(np.random.default_rng(3), False, right_transpose=True)
    text, r, stored = run(net, outs, chip, tmp_path, layer_group=layer_group)
    if layer_group:
        groups = layer_groups(text)
        assert len(groups) == 1, groups
        assert not any("order = [0, 2, 3, 1]" in line for line in groups[0])
        assert "kr" not in stored and "kt" not in stored, stored
    np.testing.assert_allclose(r.outputs["o"], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("chip", CHIPS)
def test_transposed_reload_reads_contiguous_runs(chip, tmp_path):
    """K^T's reload walks the stored K in its DDR order: one move per head
    (a dense row of every token), not one per token, so the reload costs
    one round of DDR latency rather than a round per full GDMA queue."""
    net, outs, _ = heads_net(np.random.default_rng(3), False)
    _, r, _ = run(net, outs, chip, tmp_path)
    r.stats.write_trace(str(tmp_path / "trace.json"))
    events = json.loads((tmp_path / "trace.json").read_text())
    moves = [e["args"]["work"] for e in events.get("traceEvents", events)
             if e.get("name") == "dma_move"]
    head_bytes = T * (D // HEADS) * 4
    assert moves.count(head_bytes) == HEADS, moves
    assert D * 4 not in moves, moves
