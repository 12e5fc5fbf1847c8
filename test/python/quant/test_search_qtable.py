"""search_qtable on models with one planted outlier layer (planted.py): plain
INT8 misses cos 0.99, the search reaches it, names the planted layer and
keeps no layer in float without need; the table then deploys through
model_deploy. The end-to-end cosines here are recomputed independently of
the search (Top interpreter against the lowered Tpu module)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import planted
from tpuc import compiler
from tpuc.compare import cosine
from tpuc.quant import read_qtable, write_qtable
from tpuc.tools import model_deploy, search_qtable

TARGET = 0.99
SAMPLES = 4  # the search's default --input_num
# The planted layer's tensors (torch's ONNX names): the CNN's second conv
# (fused with its ReLU), the attention's value projection (MatMul + Add).
PLANTED = {"outlier_cnn": {"/Relu_1_output_0"},
           "outlier_attention": {"/value/MatMul_output_0", "/value/Add_output_0"}}


@pytest.fixture(scope="module", params=sorted(planted.MODELS))
def model(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    mlir, data, table = planted.prepare(request.param, out)
    return request.param, mlir, data, table


def end_to_end(mlir, data, table, modes, tmp_path) -> float:
    """Mean over the first SAMPLES samples of the lowest output cosine."""
    ctx = compiler.make_context()
    opts = f"mode=INT8 chip=tpu_edge calibration-table={table}"
    if modes:
        opts += f" quantize-table={write_qtable(tmp_path / 'candidate', modes)}"
    cos = []
    with ctx:
        top = compiler.load_module(mlir, ctx)
        tpu = compiler.load_module(mlir, ctx)
        compiler.run_pipeline(tpu, f"top-to-tpu-pipeline{{{opts}}}")
        for f in sorted(data.iterdir())[:SAMPLES]:
            x = dict(np.load(f))
            ref, got = compiler.interpret(top, x), compiler.interpret(tpu, x)
            cos.append(min(cosine(got[n], ref[n]) for n in ref))
    return sum(cos) / len(cos)


def run_search(mlir, data, table, out, *extra):
    return search_qtable.main([str(mlir), "--dataset", str(data), "--calibration_table",
                               str(table), "--expected_cos", str(TARGET), "-o", str(out),
                               *extra])


def test_search_reaches_target_with_planted_layer_only_as_needed(model, tmp_path, capsys):
    name, mlir, data, table = model
    assert end_to_end(mlir, data, table, {}, tmp_path) < TARGET  # plain INT8 misses

    out = tmp_path / "qtable"
    assert run_search(mlir, data, table, out, "--no_cycles") == 0
    modes = read_qtable(out)
    assert modes and set(modes.values()) == {"F16"}
    assert PLANTED[name] & set(modes), modes
    assert end_to_end(mlir, data, table, modes, tmp_path) >= TARGET
    # None without need: dropping any one layer misses the target.
    for layer in modes:
        rest = {n: m for n, m in modes.items() if n != layer}
        assert end_to_end(mlir, data, table, rest, tmp_path) < TARGET, layer

    report = (tmp_path / "qtable.report.txt").read_text().splitlines()
    rows = {line.split()[1]: line.split() for line in report if line[:4].strip().isdigit()}
    for layer in modes:
        assert rows[layer][4] in ("clipping", "rounding") and rows[layer][6] == "F16"
    # The planted outliers are clipped (KL keeps the bulk of the values).
    assert any(rows[n][4] == "clipping" for n in PLANTED[name] if n in rows)


def test_table_deploys_on_the_cmodel(model, tmp_path):
    name, mlir, data, table = model
    out = tmp_path / "qtable"
    assert run_search(mlir, data, table, out) == 0
    report = (tmp_path / "qtable.report.txt").read_text()
    assert "# cycles: all INT8" in report
    sample = sorted(data.iterdir())[0]
    ref = tmp_path / "ref.npz"
    ctx = compiler.make_context()
    with ctx:
        top = compiler.load_module(mlir, ctx)
        np.savez(ref, **compiler.interpret(top, dict(np.load(sample)), all_tensors=True))
    assert model_deploy.main(["--mlir", str(mlir), "--quantize", "INT8", "--calibration_table",
                              str(table), "--quantize_table", str(out), "--chip", "tpu_edge",
                              "--model", str(tmp_path / "m.bmodel"), "--test_input",
                              str(sample), "--test_reference", str(ref),
                              "--tolerance", "0.98,0.8", "--excepts",
                              ",".join(n for n in np.load(ref).files if n != "y")]) == 0


def test_unreachable_target_says_best_and_fails(model, tmp_path, capsys):
    name, mlir, data, table = model
    code = run_search(mlir, data, table, tmp_path / "qtable", "--max_float_layers", "1",
                      "--no_cycles")
    err = capsys.readouterr().err.strip()
    assert code == search_qtable.UNREACHABLE
    assert len(err.splitlines()) == 1 and "the best reached is 0." in err
    assert not (tmp_path / "qtable").exists()


def test_bad_input(model, tmp_path, capsys):
    name, mlir, data, table = model
    other = tmp_path / "other_table"
    other.write_text("# another model\nconv_x 1.0 -1.0 1.0\n")
    assert run_search(mlir, data, other, tmp_path / "q") == 1
    assert "names none of" in capsys.readouterr().err
    assert run_search(mlir, tmp_path / "missing", table, tmp_path / "q") == 1
    assert "no such dataset directory" in capsys.readouterr().err


@pytest.mark.parametrize("text,message", [
    ("# comment\n/Relu_1_output_0 F16\nno_such_op F16\n", "no op named 'no_such_op' in the model"),
    ("/Relu_1_output_0 F8\n", "unknown mode 'F8'"),
    ("encoder.0 F16\nencoder.1 BF16\n", "names none of this model's ops"),
])
def test_model_deploy_rejects_bad_qtables(tmp_path, capsys, text, message):
    mlir, data, table = planted.prepare("outlier_cnn", tmp_path)
    q = tmp_path / "bad_qtable"
    q.write_text(text)
    assert model_deploy.main(["--mlir", str(mlir), "--quantize", "INT8", "--calibration_table",
                              str(table), "--quantize_table", str(q),
                              "--model", str(tmp_path / "m.bmodel")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_local_mode_isolates_each_op(tmp_path):
    """F32 on float references gives the references back; INT8 local errors
    are each op's own, never the accumulated ones."""
    mlir, data, table = planted.prepare("outlier_cnn", tmp_path)
    x = dict(np.load(sorted(data.iterdir())[0]))
    ctx = compiler.make_context()
    with ctx:
        top = compiler.load_module(mlir, ctx)
        ref = compiler.interpret(top, x, all_tensors=True)
        f32 = compiler.load_module(mlir, ctx)
        compiler.run_pipeline(f32, "top-to-tpu-pipeline{mode=F32 chip=tpu_edge}")
        local = compiler.interpret(f32, x, all_tensors=True, references=ref)
        for n in ref:
            np.testing.assert_allclose(local[n], ref[n], rtol=1e-5, atol=1e-5)
        with pytest.raises(compiler.CompileError, match="reference '/Relu_output_0' has shape"):
            compiler.interpret(f32, x, references={"/Relu_output_0": np.zeros(3)})


@pytest.mark.slow
def test_workers_and_ray_choose_the_same_table(tmp_path):
    mlir, data, table = planted.prepare("outlier_attention", tmp_path)
    one, two, ray = tmp_path / "q1", tmp_path / "q2", tmp_path / "qray"
    assert run_search(mlir, data, table, one, "--no_cycles") == 0
    assert run_search(mlir, data, table, two, "--no_cycles", "--workers", "2") == 0
    pytest.importorskip("ray")
    assert run_search(mlir, data, table, ray, "--no_cycles", "--ray", "local") == 0
    assert read_qtable(one) == read_qtable(two) == read_qtable(ray)


class FakeProbe:
    """End-to-end cosine that reaches the target once `needed` are float."""

    def __init__(self, needed):
        self.needed, self.calls = set(needed), 0

    def __call__(self, tables):
        self.calls += len(tables)
        return [0.995 if self.needed <= set(t) else 0.98 for t in tables]


@pytest.mark.parametrize("width", [1, 2, 3])
@pytest.mark.parametrize("k", [1, 2, 5, 17, 40])
def test_prefix_search_finds_the_shortest_prefix(width, k):
    from tpuc.quant.search import _shortest_prefix
    order = [f"l{i}" for i in range(40)]
    probe = FakeProbe(order[:k])
    assert _shortest_prefix(probe, order, "F16", TARGET, width) == (k, 0.995)
    assert probe.calls <= width * (2 * math.ceil(math.log2(40)) + 1)


def test_prefix_search_unreachable_and_prune():
    from tpuc.quant.search import _prune, _shortest_prefix
    order = [f"l{i}" for i in range(10)]
    assert _shortest_prefix(FakeProbe(["missing"]), order, "F16", TARGET, 2) == (None, 0.98)
    # l1 and l3 are not needed: the prune drops both.
    assert _prune(FakeProbe(["l0", "l2"]), order[:4], "F16", TARGET) == ["l0", "l2"]


def test_prune_in_blocks_keeps_only_needed_layers():
    from tpuc.quant.search import PRUNE_LIMIT, _prune
    order = [f"l{i}" for i in range(30)]
    probe = FakeProbe(["l0", "l5", "l29"])
    assert _prune(probe, order, "F16", TARGET) == ["l0", "l5", "l29"]
    assert probe.calls <= 2 * (PRUNE_LIMIT + 1)
