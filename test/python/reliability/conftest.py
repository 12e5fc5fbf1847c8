"""Shared artefacts for the bad-input tests: the shipped model transformed
and deployed once, and a runner for the CLIs in their own process."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
MODEL = REPO / "models" / "mobilenetv2_tiny.onnx"
INPUT = REPO / "models" / "mobilenetv2_tiny_input.npz"
TPUC_OPT = REPO / "build" / "bin" / "tpuc-opt"


@dataclass
class Run:
    code: int
    out: str
    err: str

    def assert_clean_error(self, *needles: str) -> None:
        """Exit 1, no traceback, one error line naming every needle."""
        assert self.code == 1, (self.code, self.out[-2000:], self.err[-2000:])
        assert "Traceback" not in self.err, self.err
        errors = [ln for ln in self.err.splitlines() if "error" in ln]
        assert errors, self.err
        for n in needles:
            assert n in errors[-1], (n, errors[-1])


def run(*argv, timeout: float = 120, cwd=None) -> Run:
    """A command in its own process (a crash cannot take pytest down)."""
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                       timeout=timeout, cwd=cwd, env={**os.environ, "PYTHONFAULTHANDLER": ""})
    return Run(p.returncode, p.stdout, p.stderr)


def tool(name: str, *args, **kw) -> Run:
    return run(sys.executable, "-m", f"tpuc.tools.{name}", *args, **kw)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """top.mlir, weights, reference outputs and an F32 bmodel of the shipped model."""
    from tpuc.deploy import deploy
    from tpuc.transform import transform

    d = tmp_path_factory.mktemp("tiny")
    t = transform("tiny", MODEL, d / "tiny.mlir", test_input=INPUT,
                  test_result=d / "tiny_top.npz")
    deploy(t.mlir, "F32", "tpu_edge", d / "tiny.bmodel")
    return d
