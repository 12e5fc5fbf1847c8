"""Target descriptions: loading, round trip and error reporting."""
import json

import pytest

from tpuc import runtime as rt
import chiputil


@pytest.mark.parametrize("name,lanes,lmem", [("tpu_edge", 16, 65536), ("tpu_pro", 64, 262144)])
def test_load_chips(name, lanes, lmem):
    t = rt.load_target(str(chiputil.CHIPS / f"{name}.json"))
    assert t.name == name and t.lanes == lanes and t.lmem_bytes_per_lane == lmem
    assert t.eu_for(rt.DType.INT8) >= t.eu_for(rt.DType.F16) >= t.eu_for(rt.DType.F32)
    # by chip name as well
    assert rt.load_target(name).lanes == lanes


def test_roundtrip(edge):
    t2 = rt.parse_target(edge.to_json())
    assert t2.to_json() == edge.to_json()


def _mutate(fn):
    d = json.loads((chiputil.CHIPS / "tpu_edge.json").read_text())
    fn(d)
    return json.dumps(d)


@pytest.mark.parametrize("mut,msg", [
    (lambda d: d.pop("lanes"), "target.lanes: missing"),
    (lambda d: d.__setitem__("lanez", 3), 'unknown key "lanez"'),
    (lambda d: d.__setitem__("version", 7), "unsupported version 7"),
    (lambda d: d["lmem"].__setitem__("banks", 3), "power of two"),
    (lambda d: d["eu_per_lane"].__setitem__("f32", 1.5), "expected an integer"),
    (lambda d: d["ddr"].__setitem__("bandwidth_bytes_per_cycle", "fast"), "expected a number"),
])
def test_bad_descriptions(mut, msg):
    with pytest.raises(rt.ChipError, match=msg):
        rt.parse_target(_mutate(mut))


def test_bad_json_syntax():
    with pytest.raises(rt.ChipError, match=r"line 2, column"):
        rt.parse_target('{\n  "a": }')


def test_missing_file(tmp_path):
    with pytest.raises(rt.ChipError, match="cannot open"):
        rt._rt.load_target(str(tmp_path / "nope.json"))
