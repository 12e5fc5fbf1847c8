"""Single-operand edits of a compiled bmodel, each classified by what the
verifier and the cmodel make of it: rejected at load, rejected while
running, accepted with bit-identical outputs, or accepted with other
outputs (a silent wrong answer, which the verifier must make impossible).

Edits per class: the start lane of a TIU destination shifted by 1 and by 3,
of each TIU local-memory source by 1, a TIU destination's H stride negated,
a GDMA local-memory operand's start lane shifted by 1 and a GDMA DDR
operand's address moved by one element."""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Tuple

import numpy as np

from tpuc import runtime as rt

log = logging.getLogger(__name__)

Edit = Callable[[rt._rt.Instruction], bool]
ACCEPTED_SAME, ACCEPTED_DIFFERENT = "accepted, same outputs", "accepted, other outputs"
REJECTED_LOAD, REJECTED_RUN = "rejected at load", "rejected at run"


def _operand_edit(operand: str, space, change) -> Edit:
    """Applies `change` to the named operand when it lies in `space`."""
    def edit(inst) -> bool:
        o = inst.dst if operand == "dst" else inst.src[int(operand[3:])]
        if o.space != space:
            return False
        change(o)
        if operand == "dst":
            inst.dst = o
        else:
            inst.set_src(int(operand[3:]), o)
        return True
    return edit


def _lane_shift(operand: str, by: int) -> Edit:
    def shift(o):
        o.start_lane = o.start_lane + by
    return _operand_edit(operand, rt._rt.Space.LMEM, shift)


def _ddr_shift(operand: str) -> Edit:
    def shift(o):
        o.addr = o.addr + rt._rt.dtype_size(o.dtype)
    return _operand_edit(operand, rt._rt.Space.DDR, shift)


def _negate_h_stride(inst) -> bool:
    o = inst.dst
    if o.space == rt._rt.Space.NONE or o.shape[2] < 2 or o.stride[2] == 0:
        return False
    s = list(o.stride)
    s[2] = -s[2]
    o.stride = s
    inst.dst = o
    return True


OPERANDS = ("dst", "src0", "src1", "src2")
CLASSES: Dict[str, Tuple[str, List[Edit]]] = {
    "tiu dst start lane +1": ("tiu", [_lane_shift("dst", 1)]),
    "tiu dst start lane +3": ("tiu", [_lane_shift("dst", 3)]),
    "tiu src start lane +1": ("tiu", [_lane_shift(s, 1) for s in OPERANDS[1:]]),
    "tiu dst H stride negated": ("tiu", [_negate_h_stride]),
    "gdma start lane +1": ("gdma", [_lane_shift(s, 1) for s in OPERANDS]),
    "gdma DDR address +1 element": ("gdma", [_ddr_shift(s) for s in OPERANDS]),
}


@dataclass
class Report:
    counts: Dict[str, Counter] = field(default_factory=dict)
    silent: List[str] = field(default_factory=list)


def _edited(bm, engine: str, index: int, edit: Edit):
    net = bm.networks[0]
    stream = list(getattr(net, engine))
    inst = stream[index]
    if not edit(inst):
        return None
    stream[index] = inst
    setattr(net, engine, stream)
    bm.networks = [net]
    return bytes(rt._rt.serialize_bmodel(bm, validate=False))


def edits(raw: bytes, classes=CLASSES) -> Iterator[Tuple[str, str, bytes]]:
    """(class, description, edited bmodel bytes) for every applicable edit."""
    base = rt._rt.parse_bmodel(raw)
    net = base.networks[0]
    for name, (engine, fns) in classes.items():
        n = len(getattr(net, engine))
        for index in range(n):
            for k, fn in enumerate(fns):
                data = _edited(rt._rt.parse_bmodel(raw), engine, index, fn)
                if data is not None:
                    yield name, f"{engine} #{index} edit {k}", data


def classify(raw: bytes, inputs: Dict[str, np.ndarray], classes=CLASSES) -> Report:
    """Runs every edit of `raw` and counts the outcomes per class."""
    expected = rt.Model(raw).run(inputs).outputs
    report = Report()
    for name, what, data in edits(raw, classes):
        counts = report.counts.setdefault(name, Counter())
        try:
            model = rt.Model(data)
        except rt.ChipError:
            counts[REJECTED_LOAD] += 1
            continue
        try:
            got = model.run(inputs).outputs
        except rt.ChipError:
            counts[REJECTED_RUN] += 1
            continue
        same = all(np.array_equal(got[k], v, equal_nan=True) for k, v in expected.items())
        counts[ACCEPTED_SAME if same else ACCEPTED_DIFFERENT] += 1
        if not same:
            report.silent.append(f"{name}: {what}")
            log.info("silent wrong answer: %s: %s", name, what)
    return report
