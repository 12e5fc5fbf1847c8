"""The `tpuc-opt` console script (tpuc.tools.tpuc_opt) runs the build's (or
the installed package's) binary with the caller's arguments and exit status."""
from __future__ import annotations

import subprocess
import sys

from tpuc.tools import tpuc_opt


def _run(*args):
    return subprocess.run([sys.executable, "-m", "tpuc.tools.tpuc_opt", *args],
                          capture_output=True, text=True)


def test_runs_binary_and_passes_exit_status(tmp_path):
    assert tpuc_opt.binary().is_file()
    ok = _run("--help")
    assert ok.returncode == 0 and "tpuc optimizer driver" in ok.stdout
    bad = _run(str(tmp_path / "missing.mlir"))
    assert bad.returncode != 0 and "missing.mlir" in bad.stderr


def test_missing_binary_is_one_line_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(tpuc_opt, "PACKAGE", tmp_path / "tpuc")
    monkeypatch.setenv("TPUC_BUILD_DIR", str(tmp_path / "nobuild"))
    assert tpuc_opt.main() == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tpuc-opt: tpuc-opt binary not found") and "\n" not in err
