"""Permutes that move the innermost dim go through LMEM: contiguous input
blocks are loaded, scattered into output order on the LMEM side and stored
as output rows, so DDR sees long bursts instead of one burst per element.
The result is a copy: the cmodel must match the interpreter bit for bit,
also when the tensor exceeds the lane (tiling) or the whole LMEM."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from backendutil import CHIPS, Net, check

pytestmark = pytest.mark.parametrize("chip", CHIPS)

CHIP_DIR = Path(__file__).resolve().parents[3] / "chips"


def target(chip):
    return json.loads((CHIP_DIR / f"{chip}.json").read_text())


def permute(shape, order, chip, tmp_path, seed=3):
    net = Net()
    x = net.input("x", np.random.default_rng(seed).standard_normal(shape))
    out_shape = tuple(shape[d] for d in order)
    y = net.op("tpu.Permute", [x], out_shape, f"order = [{', '.join(map(str, order))}]", "p")
    o = check(net, [y], chip, tmp_path, rel_tol=0.0)
    ref = np.transpose(net.args[0][1], order)
    assert np.array_equal(o.got["p"].reshape(out_shape), ref)
    return o


def per_element_burst_cycles(chip, elems):
    """What a DDR-to-DDR move costs when every element is its own run."""
    ddr = target(chip)["ddr"]
    return elems * ddr["burst_bytes"] / ddr["bandwidth_bytes_per_cycle"]


@pytest.mark.parametrize("shape, order", [
    ((1, 12, 128, 64), (0, 1, 3, 2)),   # BERT key transpose
    ((1, 12, 64, 128), (0, 1, 3, 2)),
    ((1000, 3), (1, 0)),                # short rows
    ((4, 256, 300), (2, 0, 1)),         # > tpu_edge LMEM: tiled
])
def test_innermost_moved_is_burst_friendly(chip, shape, order, tmp_path):
    o = permute(shape, order, chip, tmp_path)
    elems = int(np.prod(shape))
    assert o.stats.total_cycles < 0.5 * per_element_burst_cycles(chip, elems)


@pytest.mark.parametrize("shape, order", [
    ((1, 128, 12, 64), (0, 2, 1, 3)),   # BERT head split (innermost kept)
    ((1, 12, 128, 64), (0, 2, 1, 3)),   # and merge
    ((3, 5, 7, 11), (3, 0, 2, 1)),
    ((2, 3, 4, 5, 6), (4, 2, 0, 3, 1)),
    ((5, 1, 7, 1, 9), (4, 3, 0, 1, 2)),
    ((2, 3, 70, 1031), (0, 3, 1, 2)),   # rows longer than a tile chunk
    ((37, 41, 43), (1, 2, 0)),
])
def test_permute_exact(chip, shape, order, tmp_path):
    permute(shape, order, chip, tmp_path)


def test_larger_than_lmem(chip, tmp_path):
    lmem = target(chip)["lanes"] * target(chip)["lmem"]["bytes_per_lane"]
    n = lmem // 4 // (64 * 33) + 1
    o = permute((n, 64, 33), (2, 0, 1), chip, tmp_path)
    assert o.stats.total_cycles < 0.5 * per_element_burst_cycles(chip, n * 64 * 33)
