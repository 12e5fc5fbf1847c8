"""tpuc.compare and npz_tool.py: metrics against hand-computed values, edge cases, CLI contract."""

import logging
import math
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tpuc.compare import NpzError, Status, Tolerance, compare, compare_arrays, load_npz, tensor_stats
from tpuc.tools import npz_tool

TOOL = Path(__file__).resolve().parents[2] / "python" / "tools" / "npz_tool.py"
REL = 1e-9  # metrics are float64; hand values below are exact expressions


def row(target, reference, tol=Tolerance()):
    return compare_arrays("t", np.asarray(target), np.asarray(reference), tol)


# ----------------------------------------------------------------------------- metrics


def test_metrics_hand_computed():
    # reference r = [1,2,2] (|r| = 3), target a = [1,2,3] (|a| = sqrt 14), a - r = [0,0,1]
    r = row([1.0, 2.0, 3.0], [1.0, 2.0, 2.0])
    assert r.cosine == pytest.approx(11 / (3 * math.sqrt(14)), rel=REL)  # 0.979958
    assert r.cosine == pytest.approx(0.979958, abs=1e-6)
    assert r.euclid == pytest.approx(1 - 1 / ((3 + math.sqrt(14)) / 2), rel=REL)  # 0.703337
    assert r.euclid == pytest.approx(0.703337, abs=1e-6)
    assert r.sqnr_db == pytest.approx(10 * math.log10(9), rel=REL)  # 9.542 dB
    assert r.max_abs_diff == 1.0
    assert r.status is Status.FAIL and "below tolerance" in r.reason


def test_identical_passes_with_infinite_sqnr():
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    r = row(x, x.copy())
    assert (r.cosine, r.euclid, r.sqnr_db, r.max_abs_diff) == (1.0, 1.0, math.inf, 0.0)
    assert r.passed and r.reason == ""


def test_scaled_tensor_fails_on_euclid_only():
    # a = 2r: cosine 1, euclid 1 - |r| / (1.5 |r|) = 1/3, SQNR 10 log10(|r|^2 / |r|^2) = 0 dB
    r = row([2.0, 4.0, -6.0], [1.0, 2.0, -3.0])
    assert r.cosine == pytest.approx(1.0, rel=REL)
    assert r.euclid == pytest.approx(1 / 3, rel=REL)
    assert r.sqnr_db == pytest.approx(0.0, abs=1e-12)
    assert r.failed


def test_negated_and_orthogonal_clamp_euclid_at_zero():
    neg = row([-1.0, -2.0], [1.0, 2.0])
    assert neg.cosine == pytest.approx(-1.0, rel=REL)
    assert neg.euclid == 0.0  # raw value 1 - 2|r| / |r| = -1
    assert neg.sqnr_db == pytest.approx(10 * math.log10(1 / 4), rel=REL)  # -6.02 dB
    ortho = row([1.0, 0.0], [0.0, 1.0])
    assert ortho.cosine == 0.0 and ortho.euclid == 0.0  # raw euclid 1 - sqrt 2
    assert ortho.sqnr_db == pytest.approx(10 * math.log10(1 / 2), rel=REL)  # noise |a - r|^2 = 2


def test_all_zero_tensors():
    both = row(np.zeros(5), np.zeros(5))
    assert (both.cosine, both.euclid, both.sqnr_db) == (1.0, 1.0, math.inf) and both.passed
    ref_zero = row([0.0, 1.0], [0.0, 0.0])
    assert ref_zero.cosine == 0.0 and ref_zero.euclid == 0.0 and ref_zero.sqnr_db == -math.inf and ref_zero.failed
    tgt_zero = row([0.0, 0.0], [3.0, 4.0])
    assert tgt_zero.cosine == 0.0 and tgt_zero.sqnr_db == pytest.approx(0.0, abs=1e-12) and tgt_zero.failed


def test_tolerance_boundary_is_inclusive():
    r = row([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], Tolerance(0.979, 0.70))
    assert r.passed
    assert row([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], Tolerance(0.98, 0.70)).failed


# ----------------------------------------------------------------------------- shapes and dtypes


def test_reshape_with_same_element_count_is_compared_flat():
    x = np.arange(6, dtype=np.float32)
    r = row(x.reshape(2, 3), x.reshape(1, 6))
    assert r.passed and "reshaped" in r.reason
    assert (r.shape_target, r.shape_reference) == ((2, 3), (1, 6))


def test_different_element_count_fails():
    r = row(np.ones((2, 3)), np.ones((2, 4)))
    assert r.failed and "shape mismatch" in r.reason and math.isnan(r.cosine)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float16, ml_dtypes.bfloat16])
def test_integer_and_low_precision_dtypes(dtype):
    ref = np.array([[1, 2, 3], [4, 5, 7]], dtype=np.float32)
    r = row(ref.astype(dtype), ref)  # values exactly representable in every dtype
    assert r.passed and r.sqnr_db == math.inf and r.dtype_target == str(np.dtype(dtype))


def test_bool_tensors():
    a = np.array([True, False, True, True])
    assert row(a, a).passed
    r = row(a, ~a)  # [1,0,1,1] vs [0,1,0,0]: orthogonal
    assert r.cosine == 0.0 and r.failed


def test_bfloat16_survives_npz_round_trip(tmp_path):
    x = np.array([0.5, -1.25, 3.0], dtype=ml_dtypes.bfloat16)
    np.savez(tmp_path / "bf.npz", x=x)  # numpy stores it as raw 2-byte voids
    loaded = load_npz(tmp_path / "bf.npz")["x"]
    assert loaded.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(loaded.astype(np.float32), [0.5, -1.25, 3.0])


@pytest.mark.parametrize("bad, where", [("nan", "target"), ("inf", "reference"), ("-inf", "target")])
def test_nan_and_inf_fail_clearly(bad, where):
    good = np.ones(4, np.float32)
    poisoned = good.copy()
    poisoned[2] = float(bad)
    r = row(poisoned, good) if where == "target" else row(good, poisoned)
    assert r.failed
    assert r.reason == f"{'NaN' if bad == 'nan' else 'Inf'} in {where}"


@pytest.mark.parametrize("target", [-np.finfo(np.float32).max, -65504.0, -np.inf])
def test_saturated_values_match_an_infinite_reference(target):
    """An additive mask: -inf in the reference, the float32 or float16 limit
    (or -inf) in the target count as equal; a smaller value does not."""
    ref = np.array([0.0, -np.inf, 1.5, -np.inf], np.float32)
    got = ref.copy()
    got[[1, 3]] = target
    r = row(got, ref)
    assert r.passed and "2 saturated" in r.reason
    got[1] = -60000.0
    assert row(got, ref).failed


def test_unsupported_dtype_fails():
    r = row(np.array(["a", "b"]), np.array(["a", "b"]))
    assert r.failed and "unsupported dtype" in r.reason


# ----------------------------------------------------------------------------- whole-file comparison


def _net(rng=np.random.default_rng(1)):
    x = rng.standard_normal((1, 8)).astype(np.float32)
    return {"input": x, "fc": x * 2, "relu": np.maximum(x * 2, 0), "out": x + 1}


def test_rows_follow_reference_order_and_first_failure():
    ref = _net()
    tgt = {k: ref[k].copy() for k in reversed(list(ref))}  # target written in another order
    tgt["relu"] = -tgt["relu"] - 1.0
    tgt["out"] = tgt["out"] * 5
    res = compare(tgt, ref)
    assert [r.name for r in res.rows] == ["input", "fc", "relu", "out"]
    assert res.first_failure.name == "relu"
    assert [r.name for r in res.failures] == ["relu", "out"]
    assert not res.passed
    assert "first failure: relu" in res.summary()


def test_excepts_skip_and_keys_on_one_side(caplog):
    ref = _net()
    tgt = dict(ref, relu=-ref["relu"] - 1.0, extra=np.zeros(2))
    del tgt["fc"]
    with caplog.at_level(logging.WARNING, logger="tpuc.compare"):
        res = compare(tgt, ref, excepts=["relu", "no_such_tensor"])
    assert "no_such_tensor" in caplog.text
    assert res.passed  # the only bad tensor is excepted; one-sided keys are not failures
    assert [(r.name, r.status) for r in res.rows] == [("input", Status.PASS), ("relu", Status.SKIP),
                                                     ("out", Status.PASS)]
    assert res.only_in_reference == ["fc"] and res.only_in_target == ["extra"]
    strict = compare(tgt, ref, excepts=["relu"], fail_on_missing=True)
    assert not strict.passed
    assert strict.first_failure.name == "fc" and strict.first_failure.reason == "missing in target"
    assert [r.name for r in strict.failures] == ["fc", "extra"]


def test_compare_accepts_paths(tmp_path):
    ref = _net()
    np.savez(tmp_path / "ref.npz", **ref)
    np.savez(tmp_path / "tgt.npz", **ref)
    res = compare(tmp_path / "tgt.npz", str(tmp_path / "ref.npz"))
    assert res.passed and len(res.rows) == 4


def test_tolerance_parse():
    assert Tolerance.parse("0.95, 0.8") == Tolerance(0.95, 0.8)
    for bad in ["0.9", "a,b", "0.9,0.8,0.7", "", "2,0.9", "nan,0.9"]:
        with pytest.raises(ValueError):
            Tolerance.parse(bad)


def test_load_npz_errors(tmp_path):
    np.save(tmp_path / "plain.npy", np.ones(3))
    (tmp_path / "text.npz").write_text("not a zip")
    cases = {tmp_path / "missing.npz": "no such file", tmp_path / "plain.npy": "not an npz archive",
             tmp_path / "text.npz": "not an npz archive", tmp_path: "is a directory"}
    for path, reason in cases.items():
        with pytest.raises(NpzError, match=reason) as info:
            load_npz(path)
        assert str(path) in str(info.value)


def test_load_npz_rejects_pickled_objects(tmp_path):
    np.savez(tmp_path / "obj.npz", x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(NpzError, match="obj.npz"):
        load_npz(tmp_path / "obj.npz")


def test_tensor_stats():
    s = tensor_stats(np.array([[1, 2], [3, 6]], dtype=np.int32))
    assert (s.shape, s.dtype, s.min, s.max, s.mean) == ((2, 2), "int32", 1.0, 6.0, 3.0)
    assert s.std == pytest.approx(math.sqrt(((1 - 3) ** 2 + 1 + 0 + 9) / 4), rel=REL)
    assert math.isnan(tensor_stats(np.zeros((0, 3))).mean)


# ----------------------------------------------------------------------------- CLI


@pytest.fixture
def npz_pair(tmp_path):
    ref = _net()
    good = tmp_path / "good.npz"
    bad = tmp_path / "bad.npz"
    reference = tmp_path / "ref.npz"
    np.savez(reference, **ref)
    np.savez(good, **ref)
    np.savez(bad, **dict(ref, relu=-ref["relu"] - 1.0))
    return good, bad, reference


def test_cli_compare_exit_codes_and_table(npz_pair, capsys):
    good, bad, ref = npz_pair
    assert npz_tool.main(["compare", str(good), str(ref)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: 4 compared, 4 passed, 0 failed")  # no table rows when all pass

    assert npz_tool.main(["compare", str(bad), str(ref)]) == 1
    out = capsys.readouterr().out
    assert "relu" in out and "FAIL" in out and "input " not in out  # only failing rows by default
    assert out.strip().splitlines()[-1].endswith("first failure: relu (below tolerance)")

    assert npz_tool.main(["compare", str(bad), str(ref), "-v"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:7] == ["name", "shape", "cosine", "euclid", "sqnr_db", "max_abs_diff", "status"]
    assert [ln.split()[0] for ln in lines[1:5]] == ["input", "fc", "relu", "out"]
    assert lines[1].split()[1:7] == ["1x8", "1.000000", "1.000000", "inf", "0.000000", "PASS"]

    assert npz_tool.main(["compare", str(bad), str(ref), "--excepts", "relu"]) == 0
    assert npz_tool.main(["compare", str(bad), str(ref), "--tolerance=-1,0"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("argv_tail, fragment", [
    (["missing.npz", "REF"], "missing.npz: no such file"),
    (["NOTNPZ", "REF"], "not.npz: not an npz archive"),
    (["REF", "REF", "--tolerance", "0.9"], "--tolerance"),
    (["REF", "REF", "--tolerance", "x,y"], "--tolerance"),
])
def test_cli_bad_input_exit_2(npz_pair, tmp_path, capsys, argv_tail, fragment):
    _, _, ref = npz_pair
    (tmp_path / "not.npz").write_bytes(b"\x00garbage")
    subst = {"REF": str(ref), "NOTNPZ": str(tmp_path / "not.npz"), "missing.npz": str(tmp_path / "missing.npz")}
    assert npz_tool.main(["compare"] + [subst.get(a, a) for a in argv_tail]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_cli_dump(npz_pair, capsys, tmp_path):
    np.savez(tmp_path / "d.npz", a=np.array([[1.0, 3.0]], np.float32), b=np.array([7], np.int64))
    assert npz_tool.main(["dump", str(tmp_path / "d.npz")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "shape", "dtype", "min", "max", "mean", "std"]
    assert lines[1].split() == ["a", "1x2", "float32", "1", "3", "2", "1"]
    assert lines[2].split() == ["b", "1", "int64", "7", "7", "7", "0"]
    assert npz_tool.main(["dump", str(tmp_path / "d.npz"), "b"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert npz_tool.main(["dump", str(tmp_path / "d.npz"), "zzz"]) == 2
    assert "zzz" in capsys.readouterr().err


def test_cli_plot_writes_png(npz_pair, tmp_path, capsys):
    good, bad, ref = npz_pair
    out = tmp_path / "plot.png"
    assert npz_tool.main(["plot", str(bad), str(ref), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    side = tmp_path / "side.png"
    assert npz_tool.main(["compare", str(good), str(ref), "--plot", str(side)]) == 0
    assert side.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert npz_tool.main(["plot", str(bad), str(ref), "-o", str(tmp_path / "no" / "dir.png")]) == 2
    capsys.readouterr()


def test_cli_runs_as_script(npz_pair):
    good, bad, ref = npz_pair
    proc = subprocess.run([sys.executable, str(TOOL), "compare", str(bad), str(ref)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "first failure: relu" in proc.stdout
    proc = subprocess.run([sys.executable, str(TOOL), "compare", str(bad), "nope.npz"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.strip() == "npz_tool.py: error: nope.npz: no such file"
