"""The chip library's JSON (llvm::json): target descriptions and traces."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tpuc import runtime as rt

CHIPS = Path(__file__).resolve().parents[3] / "chips"


def test_parse_errors_name_line_and_column():
    with pytest.raises(rt.ChipError, match=r"target: JSON parse error at line 3, column 11: "):
        rt.parse_target('{\n  "format": "tpuc-target",\n  "name": ,\n}')
    with pytest.raises(rt.ChipError, match=r"line 1, column \d+: "):
        rt.parse_target('{"name": "unterminated')
    with pytest.raises(rt.ChipError, match="target: expected an object"):
        rt.parse_target("[1, 2]")


def test_unknown_keys_reported_in_sorted_order():
    d = json.loads((CHIPS / "tpu_edge.json").read_text())
    d["zeta"], d["alpha"] = 1, 2
    with pytest.raises(rt.ChipError, match='unknown key "alpha"'):
        rt.parse_target(json.dumps(d))


def test_unicode_and_comment_keys():
    d = json.loads((CHIPS / "tpu_edge.json").read_text())
    d["description"] = "edge \u00b5-TPU \u2014 \"quoted\"\n"
    d["_note"] = {"free": ["form"]}
    t = rt.parse_target(json.dumps(d))
    assert t.description == d["description"]
    assert rt.parse_target(t.to_json()).description == d["description"]


def test_trace_title_is_escaped(tmp_path):
    tgt = rt.load_target("tpu_edge")
    src = rt.ddr_tensor(0, [1, 1, 1, 4], rt.DType.F32)
    dst = rt.ddr_tensor(64, [1, 1, 1, 4], rt.DType.F32)
    sb = rt.StreamBuilder()
    sb.gdma(rt.make_dma_move(dst, src))
    bm = rt.build_bmodel(tgt, sb.tiu_stream, sb.gdma_stream,
                         [rt.TensorInfo("x", rt.DType.F32, [1, 1, 1, 4], 1.0, 0, 0)],
                         [rt.TensorInfo("y", rt.DType.F32, [1, 1, 1, 4], 1.0, 0, 64)])
    m = rt.Model(bm)
    m.run({"x": np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)})
    title = 'a "quoted"\ttitle\n\u00b5'
    m.last_stats.write_trace(tmp_path / "t.json", title)
    trace = json.loads((tmp_path / "t.json").read_text())
    assert trace["otherData"]["title"] == title
