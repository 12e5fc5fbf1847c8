"""calibrate() and run_calibration.py end to end on a small zoo CNN: the table
covers every tensor, the cache spares the model, bad input gets one line."""
import numpy as np
import pytest
from PIL import Image

from tpuc import compiler
from tpuc.calibration import CalibrationError, CalibrationTable, calibrate
from tpuc.calibration.thresholds import METHODS

from calib_helpers import run_cli


def interpret_all(mlir, samples):
    ctx = compiler.make_context()
    module = compiler.load_module(mlir, ctx)
    with ctx:
        return [compiler.interpret(module, s, all_tensors=True) for s in samples]


def load_samples(dataset):
    return [dict(np.load(p)) for p in sorted(dataset.glob("*.npz"))]


def test_table_covers_every_tensor_with_its_min_and_max(cnn, dataset, tmp_path):
    mlir, _, _ = cnn
    r = calibrate(mlir, dataset, tmp_path / "t", method="minmax", progress=False)
    assert not r.from_cache and r.samples == 4
    runs = interpret_all(mlir, load_samples(dataset))
    table = CalibrationTable.load(tmp_path / "t")
    assert list(table.ranges) == list(runs[0])  # network order, the input first
    assert "input" in table
    for name in runs[0]:
        lo = min(float(run[name].min()) for run in runs)
        hi = max(float(run[name].max()) for run in runs)
        assert (table.min(name), table.max(name)) == (lo, hi)
        assert table.threshold(name) == max(abs(lo), abs(hi))
    assert table.header_value("model") == "cnn_bn"
    assert table.header_value("input number") == "4"
    assert table.header_value("method").startswith("minmax")


@pytest.mark.parametrize("method", METHODS)
def test_every_method_gives_a_threshold_within_the_range(cnn, dataset, tmp_path, method):
    calibrate(cnn[0], dataset, tmp_path / "t", method=method, progress=False)
    table = CalibrationTable.load(tmp_path / "t")
    for name, r in table.ranges.items():
        assert 0 < r.threshold <= max(abs(r.min), abs(r.max)), name
    assert table.header_value("method").startswith(method)


def test_second_method_reads_the_cache_and_never_runs_the_model(cnn, dataset, tmp_path,
                                                                monkeypatch):
    calls = []
    real = compiler.interpret
    monkeypatch.setattr(compiler, "interpret", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = calibrate(cnn[0], dataset, tmp_path / "kl", method="kl", progress=False)
    assert len(calls) == 4 and not first.from_cache
    assert first.cache.parent == tmp_path and first.cache.is_file()
    second = calibrate(cnn[0], dataset, tmp_path / "pct", method="percentile", progress=False)
    assert len(calls) == 4 and second.from_cache and second.cache == first.cache
    # min/max come from the same histograms
    a, b = CalibrationTable.load(tmp_path / "kl"), CalibrationTable.load(tmp_path / "pct")
    assert all(a.min(n) == b.min(n) and a.max(n) == b.max(n) for n in a.ranges)
    # fewer samples is another dataset: another key, the model runs again
    third = calibrate(cnn[0], dataset, tmp_path / "t3", input_num=2, progress=False)
    assert len(calls) == 6 and not third.from_cache and third.cache != first.cache


def test_cache_dir_option(cnn, dataset, tmp_path):
    r = calibrate(cnn[0], dataset, tmp_path / "out" / "t", cache_dir=tmp_path / "cache",
                  progress=False)
    assert r.cache.parent == tmp_path / "cache" and r.cache.is_file()


def test_image_dataset_goes_through_the_recorded_preprocessing(tmp_path):
    from tpuc.preprocess import Preprocess
    from tpuc.testing import zoo
    from tpuc.transform import transform

    pre = Preprocess(mean=(128,), scale=(1 / 64,), pixel_format="bgr")
    onnx_path = zoo.export("cnn_bn", tmp_path)
    mlir = transform("cnn_bn", onnx_path, tmp_path / "cnn.mlir", preprocess=pre).mlir
    images = tmp_path / "images"
    images.mkdir()
    rng = np.random.default_rng(1)
    pixels = [rng.integers(0, 256, (40, 48, 3), dtype=np.uint8) for _ in range(3)]
    for k, p in enumerate(pixels):
        Image.fromarray(p).save(images / f"img{k}.png")
    calibrate(mlir, images, tmp_path / "t", method="minmax", progress=False)
    table = CalibrationTable.load(tmp_path / "t")
    expected = [pre.bind((1, 3, 32, 32)).load(p) for p in pixels]
    assert table.min("input") == min(float(x.min()) for x in expected)
    assert table.max("input") == max(float(x.max()) for x in expected)


# ----------------------------------------------------------------- bad input via the CLI


def one_line_error(code, err, *fragments):
    assert code != 0
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    assert len(lines) == 1, err
    for f in fragments:
        assert f in lines[0], lines[0]


def test_cli_writes_the_table(cnn, dataset, tmp_path):
    code, out, err = run_cli("run_calibration", cnn[0], "--dataset", dataset, "--input_num", 4,
                             "-o", tmp_path / "t", "--method", "mse", "--no_progress")
    assert code == 0, err
    assert "wrote" in out and "4 samples" in out
    assert CalibrationTable.load(tmp_path / "t").header_value("method").startswith("mse")
    code, out, err = run_cli("run_calibration", cnn[0], "--dataset", dataset,
                             "-o", tmp_path / "t2", "--method", "kl")
    assert code == 0 and "cached histograms" in out


def test_cli_missing_dataset(cnn, tmp_path):
    code, _, err = run_cli("run_calibration", cnn[0], "--dataset", tmp_path / "nope", "-o", tmp_path / "t")
    one_line_error(code, err, str(tmp_path / "nope"), "no such dataset directory")


def test_cli_empty_dataset(cnn, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.txt").write_text("not a sample")
    code, _, err = run_cli("run_calibration", cnn[0], "--dataset", tmp_path / "empty", "-o", tmp_path / "t")
    one_line_error(code, err, str(tmp_path / "empty"), "no .npz, .npy or image files")


def write_broken_jpeg(path):
    path.with_suffix(".jpg").write_bytes(b"\xff\xd8 not really a jpeg")


@pytest.mark.parametrize("name, write, message", [
    ("broken.jpg", write_broken_jpeg, "cannot read the image"),
    ("a.npz", lambda p: np.savez(p, image=np.zeros((1, 3, 32, 32), np.float32)),
     "has no array named 'input'"),
    ("a.npy", lambda p: np.save(p, np.zeros((1, 3, 8, 8), np.float32)),
     "has shape [1, 3, 8, 8] but the model expects [1, 3, 32, 32]"),
])
def test_cli_bad_sample_is_named(cnn, tmp_path, name, write, message):
    d = tmp_path / "ds"
    d.mkdir()
    write(d / name)
    code, _, err = run_cli("run_calibration", cnn[0], "--dataset", d, "-o", tmp_path / "t",
                           "--no_progress")
    one_line_error(code, err, str(d / name), message)


def test_cli_unknown_method(cnn, dataset, tmp_path):
    code, _, err = run_cli("run_calibration", cnn[0], "--dataset", dataset, "-o", tmp_path / "t",
                           "--method", "entropy")
    assert code == 2 and "Traceback" not in err
    assert "invalid choice: 'entropy'" in err.strip().splitlines()[-1]


def test_cli_missing_mlir(dataset, tmp_path):
    code, _, err = run_cli("run_calibration", tmp_path / "none.mlir", "--dataset", dataset,
                           "-o", tmp_path / "t")
    one_line_error(code, err, "none.mlir")


def test_cli_input_num_beyond_the_dataset_warns_and_uses_all(cnn, dataset, tmp_path):
    code, out, err = run_cli("run_calibration", cnn[0], "--dataset", dataset, "--input_num", 10,
                             "-o", tmp_path / "t", "--no_progress")
    assert code == 0
    assert "--input_num 10 but the dataset has 4 samples; using all of them" in err
    assert CalibrationTable.load(tmp_path / "t").header_value("input number") == "4"


def test_library_errors_are_calibration_errors(cnn, tmp_path):
    with pytest.raises(CalibrationError, match="no such dataset directory"):
        calibrate(cnn[0], tmp_path / "nope", tmp_path / "t")
    with pytest.raises(CalibrationError, match="unknown method 'x'"):
        calibrate(cnn[0], tmp_path, tmp_path / "t", method="x")
