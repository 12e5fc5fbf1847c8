"""`pip wheel .` builds a wheel that works outside the source tree: installed
into a fresh virtual environment, its console scripts run the main job's flow
(transform, deploy on both chips, run, inspect) from another directory, and
the chip descriptions and `tpuc-opt` come from the installed package.

The fresh environment sees the build environment's site-packages through a
.pth line (like --system-site-packages), so torch & co. are not installed
again; the editable tpuc there stays invisible (its finder hook is a .pth
*import* line, which a plain path entry does not run).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
MODEL = REPO / "models" / "mobilenetv2_tiny.onnx"
INPUT = REPO / "models" / "mobilenetv2_tiny_input.npz"


def _run(cmd, cwd, env):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh virtual environment with only the tpuc wheel installed."""
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TPUC_CHIP_DIR")}
    env["TPUC_BUILD_JOBS"] = "2"
    _run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
          "--disable-pip-version-check", "-q", "-w", root / "dist", REPO], REPO, env)
    wheels = list((root / "dist").glob("tpuc-*.whl"))
    assert len(wheels) == 1
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], root, env)
    py = venv / "bin" / "python"
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     root, env).strip())
    (site / "_build_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index",
          "--disable-pip-version-check", "-q", wheels[0]], root, env)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("VIRTUAL_ENV", None)
    return venv, site, env


def test_package_is_self_contained(venv, tmp_path):
    root, site, env = venv
    out = _run([root / "bin" / "python", "-c",
                "import tpuc, tpuc.runtime as rt; print(tpuc.__file__); "
                "print(rt.chip_path('tpu_edge'))"], tmp_path, env).split()
    assert out[0].startswith(str(site)), out
    assert out[1] == str(site / "tpuc" / "chips" / "tpu_edge.json")
    for tool in ("model_transform.py", "model_deploy.py", "model_runner.py", "model_tool.py",
                 "npz_tool.py", "run_calibration.py", "tpuc-opt"):
        assert (root / "bin" / tool).is_file(), tool
    # The C++ compiler looks for chips next to the installed package first.
    r = subprocess.run(["tpuc-opt", "--tpu-assign-address=chip=no_such_chip", "-"],
                       input="module {}\n", cwd=tmp_path, env=env, capture_output=True,
                       text=True)
    assert r.returncode != 0
    assert f"no_such_chip.json in {site / 'tpuc' / 'chips'}" in r.stderr, r.stderr


def test_main_flow_from_another_directory(venv, tmp_path):
    _, _, env = venv
    shutil.copy(MODEL, tmp_path / "m.onnx")
    shutil.copy(INPUT, tmp_path / "in.npz")
    _run(["model_transform.py", "--model_name", "m", "--model_def", "m.onnx",
          "--input_shapes", "[[1,3,64,64]]", "--test_input", "in.npz",
          "--test_result", "top.npz", "--mlir", "m.mlir"], tmp_path, env)
    for chip in ("tpu_edge", "tpu_pro"):
        _run(["model_deploy.py", "--mlir", "m.mlir", "--quantize", "F16", "--chip", chip,
              "--model", f"m_{chip}.bmodel", "--test_input", "in.npz",
              "--test_reference", "top.npz"], tmp_path, env)
    out = _run(["model_runner.py", "--model", "m_tpu_edge.bmodel", "--input", "in.npz",
                "--output", "out.npz"], tmp_path, env)
    assert "cycles" in out
    info = _run(["model_tool.py", "--info", "m_tpu_pro.bmodel"], tmp_path, env)
    assert "chip: tpu_pro" in info and "modes: F16" in info
    # tpuc-opt from the environment's bin/ parses what the flow wrote.
    _run(["tpuc-opt", "m.mlir", "-o", "roundtrip.mlir"], tmp_path, env)
    assert "top." in (tmp_path / "roundtrip.mlir").read_text()
