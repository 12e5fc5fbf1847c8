"""The torch.compile backend: CPU fallback named in the log, OP_FALLBACK_LIST,
dynamic shapes and unsupported dtypes on the CPU without errors, outputs in
the graph's order and dtypes, and the compile cache (memory and disk)."""
import json
import os
import subprocess
import sys
import textwrap
import time
from importlib.metadata import entry_points

import pytest
import torch

from tpuc.dynamo import aot_backend, cache

from conftest import cosine


class ConvCumsumConv(torch.nn.Module):
    """A conv, an op the chip lacks (cumsum), another conv."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.a(x))
        y = torch.cumsum(y, dim=-1) * 0.1
        return torch.sigmoid(self.b(y))


def _run(model, *inputs, **kw):
    with torch.no_grad():
        return model(*inputs), torch.compile(model, backend=aot_backend, dynamic=False,
                                             **kw)(*inputs)


def test_unsupported_op_in_the_middle_runs_on_the_cpu(tpuc_log):
    want, got = _run(ConvCumsumConv().eval(), torch.randn(1, 3, 8, 8))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    lines = [r.getMessage() for r in tpuc_log.records if r.name == "tpuc.dynamo"]
    assert len(lines) == 1, lines  # one line per compiled graph
    assert "2 device subgraph(s)" in lines[0]
    assert "aten.cumsum.default (no Top converter)" in lines[0]


def test_op_fallback_list_forces_ops_to_the_cpu(tpuc_log, monkeypatch):
    monkeypatch.setenv("OP_FALLBACK_LIST", "aten.sort, aten.relu")
    want, got = _run(ConvCumsumConv().eval(), torch.randn(1, 3, 8, 8))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert "aten.relu.default (forced by OP_FALLBACK_LIST)" in tpuc_log.text


def test_dynamic_shapes_run_on_the_cpu(tpuc_log):
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
    compiled = torch.compile(model, backend=aot_backend, dynamic=True)
    with torch.no_grad():
        for batch in (2, 5):
            x = torch.randn(batch, 8)
            torch.testing.assert_close(compiled(x), model(x))
    assert "runs on the CPU" in tpuc_log.text and "symbolic" in tpuc_log.text
    assert cache.STATS.compiles == 0


def test_unsupported_dtype_runs_on_the_cpu(tpuc_log):
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh()).double().eval()
    want, got = _run(model, torch.randn(3, 8, dtype=torch.float64))
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, want)
    assert "torch.float64" in tpuc_log.text


class MixedOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 5)

    def forward(self, x):
        y = self.fc(x)
        return y.argmax(-1), torch.relu(y), x, y.sum()


def test_outputs_keep_the_graph_order_and_dtypes():
    want, got = _run(MixedOutputs().eval(), torch.randn(4, 6))
    assert [t.dtype for t in got] == [t.dtype for t in want]
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)


def test_string_backend_name():
    if "tpuc" not in entry_points(group="torch_dynamo_backends").names:
        pytest.skip("the 'tpuc' entry point is installed by `pip install -e .` (bootstrap)")
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.GELU()).eval()
    x = torch.randn(2, 8)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend="tpuc")(x), model(x),
                                   rtol=1e-4, atol=1e-4)


WARM_SCRIPT = textwrap.dedent("""
    import json, sys, time, torch
    sys.path.insert(0, {here!r})
    from test_fx_backend import ConvCumsumConv
    from tpuc.dynamo import aot_backend, cache
    model = ConvCumsumConv().eval()
    start = time.perf_counter()
    with torch.no_grad():
        torch.compile(model, backend=aot_backend, dynamic=False)(torch.randn(2, 3, 8, 8))
    print(json.dumps({{"compiles": cache.STATS.compiles, "disk_hits": cache.STATS.disk_hits,
                      "seconds": time.perf_counter() - start}}))
""")


def test_cache_same_shapes_new_batch_and_new_process(fresh_cache):
    model = ConvCumsumConv().eval()
    compiled = torch.compile(model, backend=aot_backend, dynamic=False)
    timings = {}
    with torch.no_grad():
        for label, batch in (("cold", 2), ("same shapes", 2), ("new batch", 3)):
            x = torch.randn(batch, 3, 8, 8)
            start = time.perf_counter()
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
            timings[label] = (time.perf_counter() - start, cache.STATS.compiles)
    # Two device subgraphs per graph: batch 2 compiles them once, batch 3 once more.
    assert timings["cold"][1] == 2, timings
    assert timings["same shapes"][1] == 2
    assert timings["new batch"][1] == 4
    # A new process finds the batch-2 binaries on disk and compiles nothing.
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run([sys.executable, "-c", WARM_SCRIPT.format(here=here)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TPUC_CACHE_DIR": str(fresh_cache)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    warm = json.loads(proc.stdout.strip().splitlines()[-1])
    assert warm["compiles"] == 0 and warm["disk_hits"] == 2, warm
    print(f"cold {timings['cold'][0]:.2f} s, same shapes {timings['same shapes'][0]:.3f} s, "
          f"new batch {timings['new batch'][0]:.2f} s, new process (warm) {warm['seconds']:.2f} s")


def test_a_failing_compile_runs_on_the_cpu(tpuc_log, monkeypatch):
    from tpuc.dynamo import backend

    def broken(*args, **kwargs):
        raise RuntimeError("simulated codegen failure\nsecond line")

    monkeypatch.setattr(backend, "compile_graph", broken)
    want, got = _run(ConvCumsumConv().eval(), torch.randn(1, 3, 8, 8))
    torch.testing.assert_close(got, want)
    assert "compiling failed, running on the CPU: simulated codegen failure" in tpuc_log.text
    assert "Traceback" not in tpuc_log.text


def test_a_failing_pass_pipeline_names_its_diagnostic(tpuc_log, monkeypatch):
    from tpuc.compiler import CompileError
    from tpuc.dynamo import backend

    def too_big(*args, **kwargs):
        raise CompileError("Failure while executing pass pipeline\n"
                           "  loc(unknown): network needs 2548143616 bytes of DDR")

    monkeypatch.setattr(backend, "compile_graph", too_big)
    _run(ConvCumsumConv().eval(), torch.randn(1, 3, 8, 8))
    assert ("compiling failed, running on the CPU: Failure while executing pass pipeline: "
            "loc(unknown): network needs 2548143616 bytes of DDR") in tpuc_log.text


def test_device_compile_writes_no_weight_file_and_runs_nothing(fresh_cache, monkeypatch):
    """Constants reach the compiler in memory (no npz) and compiling does not
    run the bmodel: the only cmodel runs are the model's own calls."""
    from tpuc import runtime as rt

    runs = []
    real_run = rt.Model.run
    monkeypatch.setattr(rt.Model, "run", lambda self, *a, **k: runs.append(1)
                        or real_run(self, *a, **k))
    model = ConvCumsumConv().eval()
    want, got = _run(model, torch.randn(1, 3, 8, 8))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert cache.STATS.compiles == 2
    assert len(runs) == 2  # one call of each of the two device subgraphs
    assert list(fresh_cache.rglob("*.bmodel")) and not list(fresh_cache.rglob("*.npz"))
