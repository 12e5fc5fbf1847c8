"""A short coverage-guided run (atheris/libFuzzer) of each reader from the
checked-in corpus: no unexpected exception, crash or hang. Longer runs:
`python -m tpuc.testing.atheris_fuzz --target T DIR -max_total_time=S`
(docs/reliability.md)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tpuc.testing.atheris_fuzz import CORPUS

pytest.importorskip("atheris")

RUNS = {"npz": 1500, "bmodel": 1500, "onnx": 150}


@pytest.mark.parametrize("target", sorted(RUNS))
def test_short_atheris_run(target, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS / target, corpus)
    p = subprocess.run(
        [sys.executable, "-m", "tpuc.testing.atheris_fuzz", "--target", target, str(corpus),
         f"-runs={RUNS[target]}", "-seed=1", f"-artifact_prefix={tmp_path}/"],
        capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    assert re.search(rf"Done {RUNS[target]} runs", p.stderr), p.stderr[-2000:]
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*"))


@pytest.mark.parametrize("target", ["bmodel", "npz", "onnx"])
def test_seed_corpus_is_accepted(target, tmp_path):
    # The corpus starts from valid inputs; a format change must regenerate it
    # (python -m tpuc.testing.atheris_fuzz --write_seeds <corpus>/atheris).
    from tpuc.testing import fuzz

    make_seed, _, run, _ = fuzz.TARGETS[target]
    ctx = make_seed(tmp_path)[1] if target == "npz" else {}
    for seed in sorted((CORPUS / target).iterdir()):
        case = tmp_path / seed.name
        case.write_bytes(seed.read_bytes())
        run(case, ctx)
