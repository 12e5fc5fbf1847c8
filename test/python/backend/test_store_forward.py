"""Store forwarding (CodegenContext::forwardFor): a tensor an op stores from
local memory and a later op loads back, its bytes still in place, is copied
within local memory (or read where it is) instead of waiting for the store
and the DDR latency twice. On the zoo's cnn_bn in INT8 on tpu_pro some load
becomes a local copy of a stored buffer, and the cmodel stays bit for bit
the Tpu interpreter."""
from __future__ import annotations

from tpuc import runtime as rt
from tpuc.deploy import deploy
from tpuc.testing.quant import prepare


def test_reload_is_a_local_copy_and_bit_exact(tmp_path):
    p = prepare("cnn_bn", tmp_path, samples=2, seed=3)
    r = deploy(p.mlir, quantize="INT8", chip="tpu_pro", model_path=tmp_path / "m.bmodel",
               calibration_table=p.table, test_input=p.test_input, tolerance=(0.9, 0.5))
    assert r.passed and not r.int_mismatches
    gdma = rt.read_bmodel(str(r.bmodel)).networks[0].gdma
    LMEM, DDR = rt.Space.LMEM, rt.Space.DDR

    def key(o):
        return (o.addr, o.start_lane, tuple(o.shape), tuple(o.stride))
    stored, copies = set(), 0
    for g in gdma:
        src = g.src[0]
        if g.dst.space == DDR and src.space == LMEM:
            stored.add(key(src))
        elif g.dst.space == LMEM and src.space == LMEM and key(src) in stored:
            copies += 1
    assert copies > 0
