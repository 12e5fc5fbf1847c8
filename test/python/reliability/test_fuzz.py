"""A short mutation-fuzzing run of every reader and the checked-in corpus
(each case in its own forked process): no crash, hang or unexpected
exception. Longer campaigns:
`python -m tpuc.testing.fuzz --target T --runs N` (docs/reliability.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tpuc.testing import fuzz
from tpuc.testing.bad_inputs import BN_MODULE

RUNS = {"npz": 60, "bmodel": 40, "onnx": 30}


@pytest.mark.parametrize("target", sorted(RUNS))
def test_short_fuzz_run(target, tmp_path):
    counts = fuzz.fuzz(target, RUNS[target], seed=7, workdir=tmp_path, timeout=60)
    assert sum(counts.values()) == RUNS[target]
    bad = {k: counts[k] for k in ("traceback", "crash", "hang") if counts.get(k)}
    kept = sorted(p.name for p in tmp_path.glob(f"{target}-*"))
    assert not bad, (bad, kept)
    assert counts["rejected"] > 0


CORPUS = Path(__file__).with_name("corpus")


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.iterdir() if p.is_file()),
                         ids=lambda p: p.name)
def test_corpus_is_rejected_cleanly(path, tmp_path):
    # Checked-in damaged files (one per known class, and what fuzzing found):
    # each ends in an expected one-line error, in its own process.
    target = path.suffix[1:]
    _, _, run, _ = fuzz.TARGETS[target]
    case = tmp_path / path.name
    case.write_bytes(path.read_bytes())
    assert fuzz.run_case(run, case, {"module": BN_MODULE}, timeout=60) == "rejected", \
        (tmp_path / f"{path.name}.err").read_text()
