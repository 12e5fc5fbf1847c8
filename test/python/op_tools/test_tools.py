"""The four op tools inside graphs compiled by the torch.compile backend:
each as a context manager and started/stopped by hand, selected by the
environment lists, on an inference graph and on a training step (forward
and backward graphs)."""
import csv
import json
import os

import pytest
import torch

from tpuc import op_tools
from tpuc.dynamo import aot_backend
from tpuc.op_tools import replay


def cnn():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                            torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 4))
    with torch.no_grad():
        m[1].running_var.uniform_(0.5, 1.5)
    return m.eval()


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


X = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1))


def infer():
    m = cnn()
    cm = torch.compile(m, backend=aot_backend, dynamic=False)
    with torch.no_grad():
        want = m(X)

    def run():
        with torch.no_grad():
            return cm(X)
    return run, want


class Trainer:
    """A few SGD steps of the MLP compiled with tpuc, beside an eager twin."""

    def __init__(self):
        self.model, self.eager = mlp(), mlp()
        self.compiled = torch.compile(self.model, backend=aot_backend, dynamic=False)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.opt_eager = torch.optim.SGD(self.eager.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(2)
        self.x, self.y = torch.randn(4, 8, generator=g), torch.randn(4, 4, generator=g)

    def step(self):
        losses = []
        for model, opt in ((self.compiled, self.opt), (self.eager, self.opt_eager)):
            opt.zero_grad()
            loss = ((model(self.x) - self.y) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses


def test_time_measure_inside_the_graph_adds_up(tmp_path, capsys):
    run, want = infer()
    torch.testing.assert_close(run(), want, rtol=1e-4, atol=1e-5)  # compiled without tools
    with op_tools.OpTimeMeasure(csv_path=tmp_path / "t.csv") as tm:
        got = run()
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    rows = list(csv.DictReader(open(tmp_path / "t.csv")))
    ops = {r["op"] for r in rows}
    # BatchNorm and ReLU fold into the convolution: the stored result is relu's.
    assert {"aten.addmm.default", "aten.relu.default", "(graph tail)"} <= ops
    # The ops' cycles add up to the graph run's total, which is what the
    # graph takes without the tool (nothing was split off).
    assert sum(int(r["cycles"]) for r in rows) == tm.graph_cycles["inference"] > 0
    addmm = next(r for r in rows if r["op"] == "aten.addmm.default")
    assert float(addmm["roofline_cycles"]) > 0
    out = capsys.readouterr().out
    assert "inside the compiled graphs" in out and "cycles charged to ops" in out


def test_time_measure_alone(tmp_path, capsys):
    run, want = infer()
    with op_tools.OpTimeMeasure(csv_path=tmp_path / "t.csv", alone=True) as tm:
        got = run()
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    rows = list(csv.DictReader(open(tmp_path / "t.csv")))
    ops = {r["op"] for r in rows}
    assert {"aten.convolution.default", "aten.addmm.default"} <= ops
    conv = next(r for r in rows if r["op"] == "aten.convolution.default")
    # Simulated cycles are deterministic; the op alone is slower than its bound.
    assert int(conv["cycles"]) > float(conv["roofline_cycles"]) > 0 and conv["device"] == "tpu"
    out = capsys.readouterr().out
    assert "top 10 ops by simulated time" in out and "aten.convolution.default" in out
    assert tm.per_op()[0]["us"] >= tm.per_op()[-1]["us"]
    # Stopped: the graph is rebuilt without the tool and no row is added.
    run()
    assert len(tm.calls) == len(rows)


def test_autocompare_start_stop_and_lists(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OP_AUTOCOMPARE_LIST", r"aten\.(convolution|addmm|relu)")
    monkeypatch.setenv("OP_AUTOCOMPARE_DISABLE_LIST", "aten.relu")
    run, want = infer()
    tool = op_tools.OpAutoCompare(csv_path=tmp_path / "c.csv", failures_dir=tmp_path / "fail")
    tool.start()
    torch.testing.assert_close(run(), want, rtol=1e-4, atol=1e-5)
    tool.stop()
    ops = [r.op for r in tool.rows]
    assert sorted(ops) == ["aten.addmm.default", "aten.convolution.default"]
    assert all(r.allclose and r.cosine > 0.99999 for r in tool.rows)
    assert len(list(csv.DictReader(open(tmp_path / "c.csv")))) == 2
    assert not (tmp_path / "fail").exists()  # nothing failed, nothing saved
    assert "allclose" in capsys.readouterr().out


def test_autocompare_saves_failing_inputs(tmp_path):
    run, _ = infer()
    # A tolerance no float computation meets: every float op fails and is saved.
    with op_tools.OpAutoCompare(atol=0, rtol=0, csv_path=None,
                                failures_dir=tmp_path / "fail") as tool:
        run()
    failed = [r for r in tool.rows if not r.allclose]
    assert failed
    assert (tmp_path / "fail" / failed[0].graph / failed[0].op / "0" / "call.pt").is_file()


def test_capture_and_replay(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OP_CAPTURE_LIST", "aten.convolution")
    run, _ = infer()
    with op_tools.OpCapture(tmp_path / "cap") as cap:
        run()
        run()
    saved = [p.relative_to(tmp_path / "cap").parts for p in cap.saved]
    assert [s[1:] for s in saved] == [("aten.convolution.default", "0"),
                                      ("aten.convolution.default", "1")]
    assert saved[0][0].startswith("inference_")
    meta = json.loads((cap.saved[0] / "meta.json").read_text())
    assert meta["inputs"][0] == {"shape": [2, 3, 8, 8], "dtype": "float32"}
    assert meta["device"] == "tpu" and meta["kind"] == "inference"
    lines = replay.replay(cap.saved[0], acc_check=True, run_times=2)
    assert "cycles" in lines[1] and "allclose True" in lines[2]
    assert replay.main([str(tmp_path / "nothing")]) == 1
    assert "no captured op call" in capsys.readouterr().err


def test_fallback_runs_selected_ops_on_the_cpu(monkeypatch, capsys):
    monkeypatch.setenv("OP_FALLBACK_LIST", "aten.addmm.default,aten.relu")
    run, want = infer()
    with op_tools.OpFallback() as fb:
        torch.testing.assert_close(run(), want, rtol=1e-4, atol=1e-5)
    assert sorted(op for _, op in fb.calls) == ["aten.addmm.default", "aten.relu.default"]
    assert "ops run on the CPU by OpFallback" in capsys.readouterr().out




@pytest.fixture
def trainer():
    t = Trainer()
    t.step()  # compiles the forward and backward graphs without tools
    return t


def test_tools_on_a_training_step(trainer, tmp_path, monkeypatch):
    # Linear is addmm in the forward graph, its gradients mm in the backward.
    monkeypatch.setenv("OP_CAPTURE_LIST", "aten.mm,aten.addmm")
    with op_tools.OpTimeMeasure(csv_path=tmp_path / "t.csv") as tm, \
            op_tools.OpAutoCompare(csv_path=tmp_path / "c.csv") as ac, \
            op_tools.OpCapture(tmp_path / "cap") as cap:
        got, want = trainer.step()
    assert got == pytest.approx(want, rel=1e-4)
    kinds = {c.kind for c in tm.calls}
    assert kinds == {"forward", "backward"}
    # The backward graph's mm calls compute gradients: captured too.
    graphs = {p.relative_to(tmp_path / "cap").parts[0] for p in cap.saved}
    assert any(g.startswith("backward") for g in graphs) and any(g.startswith("forward") for g in graphs)
    assert all(r.allclose for r in ac.rows if not r.note), ac.table()
    assert os.path.getsize(tmp_path / "c.csv") > 0


def test_fallback_on_a_training_step(trainer, monkeypatch):
    monkeypatch.setenv("OP_FALLBACK_LIST", "aten.mm")
    with op_tools.OpFallback() as fb:
        got, want = trainer.step()
    assert got == pytest.approx(want, rel=1e-4)
    assert {op for _, op in fb.calls} == {"aten.mm.default"}
    assert any(g.startswith("backward") for g, _ in fb.calls)


def test_autocompare_finds_a_planted_wrong_kernel(monkeypatch):
    # The cmodel corrupts every convolution's result (test-only switch).
    monkeypatch.setenv("TPUC_CMODEL_FAULT", "conv")
    run, _ = infer()
    with op_tools.OpAutoCompare(csv_path=None, failures_dir="fail") as tool:
        run()
    bad = {r.op for r in tool.rows if not r.allclose}
    # A BatchNorm on its own runs as a depthwise 1x1 convolution: wrong too.
    assert bad == {"aten.convolution.default",
                   "aten._native_batch_norm_legit_no_training.default"}, tool.table()


def test_time_measure_training_step_inside_graphs(trainer):
    with op_tools.OpTimeMeasure(csv_path=None) as tm:
        got, want = trainer.step()
    assert got == pytest.approx(want, rel=1e-4)
    for kind in ("forward", "backward"):
        charged = sum(c.cycles for c in tm.calls if c.kind == kind)
        assert charged == tm.graph_cycles[kind] > 0
    assert any(c.op == "aten.mm.default" and c.kind == "backward" for c in tm.calls)
