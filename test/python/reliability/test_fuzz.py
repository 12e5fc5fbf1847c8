"""A short mutation-fuzzing run of every reader (each case in its own forked
process): no crash, hang or unexpected exception. Longer campaigns:
`python -m tpuc.testing.fuzz --target T --runs N` (docs/reliability.md)."""
from __future__ import annotations

import pytest

from tpuc.testing import fuzz

RUNS = {"npz": 60, "bmodel": 40, "onnx": 30}


@pytest.mark.parametrize("target", sorted(RUNS))
def test_short_fuzz_run(target, tmp_path):
    counts = fuzz.fuzz(target, RUNS[target], seed=7, workdir=tmp_path, timeout=60)
    assert sum(counts.values()) == RUNS[target]
    bad = {k: counts[k] for k in ("traceback", "crash", "hang") if counts.get(k)}
    kept = sorted(p.name for p in tmp_path.glob(f"{target}-*"))
    assert not bad, (bad, kept)
    assert counts["rejected"] > 0
