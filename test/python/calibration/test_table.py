"""The calibration table: round trip, tpu-mlir's format, INT8 parameters."""
import pytest

from tpuc.calibration.table import ZERO_RANGE_SCALE, CalibrationTable, TableError, TensorRange


def make_table():
    return CalibrationTable({"input": TensorRange(2.54, -2.54, 1.0),
                             "/conv/Conv_output_0": TensorRange(0.1 + 0.2, -1.0, 3.0),
                             "out": TensorRange(1e-6, 0.0, 0.0)})


def test_round_trip_is_exact_and_keeps_order(tmp_path):
    t = make_table()
    t.save(tmp_path / "t", model="net", method="kl (EntropyCalibrator2)", inputs=16,
           extra={"histogram number": 2048})
    back = CalibrationTable.load(tmp_path / "t")
    assert list(back.ranges) == list(t.ranges)
    assert back.ranges == t.ranges  # repr round-trips doubles exactly (0.1 + 0.2 too)
    assert back.header_value("model") == "net"
    assert back.header_value("method") == "kl (EntropyCalibrator2)"
    assert back.header_value("input number") == "16"
    assert back.header_value("histogram number") == "2048"
    assert back.header_value("generated time")


def test_format_is_tpu_mlirs(tmp_path):
    make_table().save(tmp_path / "t", model="net", method="minmax", inputs=2)
    lines = (tmp_path / "t").read_text().splitlines()
    body = [line for line in lines if not line.startswith("#")]
    assert lines[lines.index("###") + 1] == "# op_name    threshold    min    max"
    assert all(line.startswith("# ") for line in lines[:lines.index("###")])
    assert body[0] == "input 2.54 -2.54 1.0"
    assert [line.split()[0] for line in body] == ["input", "/conv/Conv_output_0", "out"]


def test_reads_a_tpu_mlir_table(tmp_path):
    (tmp_path / "t").write_text(
        "# genetated time: 2023-03-15 10:00:00\n# histogram number: 2048\n"
        "# sample number: 100\n###\n# op_name    threshold    min    max\n"
        "images 1.0000080 0.0000000 1.0000080\n122_Conv 6.5 -5.0 6.5\n"
        "#int4_th\nimages 0.5 0.0 0.5\n")
    t = CalibrationTable.load(tmp_path / "t")
    assert list(t.ranges) == ["images", "122_Conv"]  # the int4 section is not read
    assert t.threshold("images") == 1.000008 and t.min("122_Conv") == -5.0
    assert t.max("122_Conv") == 6.5
    assert t.header_value("sample number") == "100"


def test_symmetric_qparams():
    t = make_table()
    assert t.qparams("input") == (2.54 / 127, 0)
    assert t.qparams("/conv/Conv_output_0", asymmetric=False) == ((0.1 + 0.2) / 127, 0)


@pytest.mark.parametrize("lo, hi, scale, zp", [
    (-1.0, 3.0, 4 / 255, -64),         # -128 + 1 / (4/255) = -64.25 -> -64
    (0.5, 2.0, 2 / 255, -128),          # min clamped up to 0: lo = 0
    (-2.0, -1.0, 2 / 255, 127),         # max clamped down to 0: -128 + 255
    (-63.5, 191.5, 1.0, -65),           # -64.5: half away from zero (half-even would give -64)
    (-64.5, 190.5, 1.0, -64),           # -63.5 -> -64
    (0.0, 0.0, ZERO_RANGE_SCALE, -128),  # all-zero tensor: scale 1e-8
])
def test_asymmetric_qparams(lo, hi, scale, zp):
    t = CalibrationTable({"x": TensorRange(max(-lo, hi), lo, hi)})
    s, z = t.qparams("x", asymmetric=True)
    assert s == pytest.approx(scale, rel=1e-15) and z == zp
    assert isinstance(z, int)


def test_zero_threshold_gets_the_floor_scale():
    t = CalibrationTable({"x": TensorRange(0.0, 0.0, 0.0)})
    assert t.qparams("x") == (ZERO_RANGE_SCALE, 0)


def test_missing_tensor_is_named():
    with pytest.raises(KeyError, match="no tensor 'nope'"):
        make_table().threshold("nope")


@pytest.mark.parametrize("text, message", [
    ("a 1.0 -1.0\n", r"t:1: expected 'name threshold min max'"),
    ("# h\na 1.0 x 2\n", r"t:2: expected"),
    ("a nan -1 1\n", r"t:1: bad range for 'a'"),
    ("a 1 2 1\n", r"t:1: bad range for 'a'"),
    ("a 1 -1 1\na 2 -2 2\n", r"t:2: tensor 'a' is listed twice"),
    ("# only a header\n", r"t: no 'name threshold min max' lines"),
])
def test_bad_tables_name_file_and_line(tmp_path, text, message):
    (tmp_path / "t").write_text(text)
    with pytest.raises(TableError, match=message):
        CalibrationTable.load(tmp_path / "t")


def test_missing_table(tmp_path):
    with pytest.raises(TableError, match="no such calibration table"):
        CalibrationTable.load(tmp_path / "none")


def test_names_with_spaces_cannot_be_written(tmp_path):
    with pytest.raises(ValueError, match="white space"):
        CalibrationTable({"a b": TensorRange(1, -1, 1)}).save(tmp_path / "t", "m", "kl", 1)
