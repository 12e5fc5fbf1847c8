"""Comparing a quantized run with the float reference: int8 dequantized by the
calibration table, the layer whose cosine drops most named in the summary."""
import numpy as np
import pytest

from tpuc.calibration.table import CalibrationTable, TensorRange
from tpuc.compare import compare, dequantize

from calib_helpers import run_cli

TABLE = CalibrationTable({"a": TensorRange(1.27, -1.0, 1.55), "b": TensorRange(2.54, 0.0, 2.54)})


def test_dequantize_symmetric_and_asymmetric():
    q = {"a": np.array([-127, 0, 5, 127], np.int8), "f": np.array([1.5], np.float32)}
    sym, done, missing = dequantize(q, TABLE)
    assert done == ["a"] and missing == []
    assert np.allclose(sym["a"], [-1.27, 0.0, 0.05, 1.27], rtol=1e-12)
    assert sym["f"] is q["f"]  # floats pass through
    # asymmetric: scale (1.55 + 1) / 255 = 0.01, zp round(-128 + 100) = -28
    asym, _, _ = dequantize(q, TABLE, asymmetric=True)
    assert np.allclose(asym["a"], (np.array([-127, 0, 5, 127]) + 28) * 0.01, rtol=1e-12)
    _, _, missing = dequantize({"z": np.zeros(2, np.int8)}, TABLE)
    assert missing == ["z"]


def chain(cosines, rng):
    """Float reference and a target whose rows have the given cosines."""
    ref, tgt = {}, {}
    for k, c in enumerate(cosines):
        r = rng.standard_normal(64)
        r /= np.linalg.norm(r)
        noise = rng.standard_normal(64)
        noise -= noise @ r * r  # orthogonal to r
        noise /= np.linalg.norm(noise)
        ref[f"l{k}"] = r
        tgt[f"l{k}"] = c * r + np.sqrt(1 - c * c) * noise
    return tgt, ref


def test_largest_drop_is_relative_to_the_previous_layer():
    # l3 is the worst layer (0.90) but most of that was lost at l2 (0.999 -> 0.93).
    tgt, ref = chain([1.0, 0.999, 0.93, 0.90, 0.95], np.random.default_rng(0))
    res = compare(tgt, ref, calibration_table=TABLE)
    row, prev = res.largest_drop
    assert row.name == "l2" and prev == pytest.approx(0.999) and row.cosine == pytest.approx(0.93)


def test_largest_drop_ties_go_to_the_first_and_the_first_row_counts_from_one():
    tgt, ref = chain([0.98, 0.99, 0.98], np.random.default_rng(1))
    row, prev = compare(tgt, ref).largest_drop
    assert row.name == "l0" and prev == 1.0  # 1.0 -> 0.98 before the equal 0.99 -> 0.98


def test_quantized_compare_dequantizes_and_names_the_drop():
    rng = np.random.default_rng(2)
    ref = {"a": rng.uniform(-1, 1.25, 100), "b": rng.uniform(0, 2.5, 100)}
    # a quantizes well; b is stored with a wrong sign on some values
    scale_a = 1.27 / 127
    qa = np.clip(np.round(ref["a"] / scale_a), -127, 127).astype(np.int8)
    qb = np.clip(np.round(ref["b"] / (2.54 / 127)), -127, 127).astype(np.int8)
    qb[::3] = -qb[::3]
    res = compare({"a": qa, "b": qb}, ref, calibration_table=TABLE)
    assert res.dequantized == ["a", "b"]
    a, b = res.rows
    assert a.passed and a.cosine > 0.9999 and "dequantized" in a.reason
    assert b.failed
    assert f"largest cosine drop: b ({a.cosine:.6f} -> {b.cosine:.6f})" in res.summary()
    # without the table the int8 codes are compared raw: cosine fine, scale off
    assert "largest cosine drop" not in compare({"a": qa}, ref).summary()


def test_npz_tool_compare_with_a_table(tmp_path):
    rng = np.random.default_rng(3)
    ref = {"a": rng.uniform(-1, 1.5, 50), "b": rng.uniform(0, 2.5, 50)}
    scale, zp = TABLE.qparams("a", asymmetric=True)
    qa = np.clip(np.round(ref["a"] / scale) + zp, -128, 127).astype(np.int8)
    sb, zb = TABLE.qparams("b", asymmetric=True)
    qb = np.clip(np.round(ref["b"] / sb) + zb, -128, 127).astype(np.int8)
    qb[::2] = zb  # half of b lost
    np.savez(tmp_path / "q.npz", a=qa, b=qb)
    np.savez(tmp_path / "f.npz", **ref)
    TABLE.save(tmp_path / "t", model="m", method="minmax", inputs=1)
    code, out, err = run_cli("npz_tool", "compare", tmp_path / "q.npz", tmp_path / "f.npz",
                             "--calibration_table", tmp_path / "t", "--asymmetric", "-v")
    assert code == 1, err  # b is below tolerance
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("FAIL:") and "largest cosine drop: b" in summary
    assert "dequantized" in out


def test_npz_tool_bad_table(tmp_path):
    np.savez(tmp_path / "q.npz", a=np.zeros(2, np.int8))
    (tmp_path / "t").write_text("a 1 2\n")
    code, _, err = run_cli("npz_tool", "compare", tmp_path / "q.npz", tmp_path / "q.npz",
                           "--calibration_table", tmp_path / "t")
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "t:1: expected 'name threshold min max'" in err
    code, _, err = run_cli("npz_tool", "compare", tmp_path / "q.npz", tmp_path / "q.npz",
                           "--asymmetric")
    assert code == 2 and "--asymmetric needs --calibration_table" in err
